//! Tests of values: expressions, the generator, comparison.

use super::super::*;
use crate::program::ScalarType;

#[test]
fn expressions_evaluate_with_precedence_and_functions() {
    let v = |s: &str| {
        Expr::parse(s).unwrap().eval(&|n| match n {
            "n" => Some(10),
            "w" => Some(3),
            _ => None,
        })
    };
    assert_eq!(v("n"), Ok(10));
    assert_eq!(v("1 + 2 * 3"), Ok(7));
    assert_eq!(v("(1 + 2) * 3"), Ok(9));
    assert_eq!(v("n - w - 1"), Ok(6));
    assert_eq!(v("n / w % 2"), Ok(1));
    assert_eq!(v("ceil_div(n, w) + min(n, w) * max(2, 1)"), Ok(10));
    assert_eq!(v("16_777_216"), Ok(16777216));
    assert!(v("w - n").unwrap_err().contains("below zero"));
    assert!(v("n / (w - 3)").unwrap_err().contains("divides by zero"));
    assert!(Expr::parse("n +").unwrap_err().contains("at the end"));
    assert!(Expr::parse("n $ 2").unwrap_err().contains("'$'"));
    assert!(Expr::parse("ceil_div(n)").unwrap_err().contains("','"));
    assert!(Expr::parse("(n").is_err() && Expr::parse("n)").is_err() && Expr::parse("").is_err());
    assert_eq!(Expr::parse("a * b + a").unwrap().names(), ["a", "b"]);
}

#[test]
fn generator_is_deterministic_and_chunk_independent() {
    // Fixed words: a change to the generator must be deliberate (it changes every input).
    assert_eq!(random_word(1, 0), random_word(1, 0));
    assert_ne!(random_word(1, 0), random_word(2, 0));
    let init = InitDecl::Random {
        seed: 7,
        range: None,
    };
    let big = generate(ScalarType::F32, &init, 300_000).unwrap();
    let small = generate(ScalarType::F32, &init, 1000).unwrap();
    assert_eq!(&big[..4000], &small[..]);
    assert_eq!(big, generate(ScalarType::F32, &init, 300_000).unwrap());
    let r = InitDecl::Random {
        seed: 7,
        range: Some((Number::Int(-3), Number::Int(4))),
    };
    let ints = generate(ScalarType::I32, &r, 10_000).unwrap();
    let vals: Vec<i32> = ints
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(vals.iter().all(|v| (-3..4).contains(v)));
    assert!(
        (-3..4).all(|k| vals.contains(&k)),
        "every value of the range appears"
    );
    let mean: f64 = big
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
        .sum::<f64>()
        / 300_000.0;
    assert!(mean.abs() < 0.01, "{mean}");
    let ramp = generate(ScalarType::F64, &InitDecl::Ramp, 3).unwrap();
    assert_eq!(&ramp[16..], &2.0f64.to_le_bytes());
    let c = generate(ScalarType::I64, &InitDecl::Constant(Number::Int(-2)), 2).unwrap();
    assert_eq!(&c[8..], &(-2i64).to_le_bytes());
}

fn decl(ty: ScalarType, compare: CompareMode) -> BufferDecl {
    BufferDecl {
        name: "out".into(),
        index: 0,
        ty,
        elements: Expr::constant(1),
        init: InitDecl::Zeros,
        written: true,
        compare,
        reference: None,
    }
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn compare_exact_ulps_and_nan() {
    let d = decl(ScalarType::F32, CompareMode::Exact);
    let exact = Tolerance::default();
    let one_up = f32::from_bits(1.0f32.to_bits() + 1);
    assert!(compare(&d, &f32s(&[1.0, 2.0]), &f32s(&[1.0, 2.0]), &exact).is_ok());
    let m = compare(&d, &f32s(&[1.0, 2.0, 3.0]), &f32s(&[1.0, 2.5, 4.0]), &exact).unwrap_err();
    assert_eq!((m.index, m.differing, m.elements), (Some(1), 2, 3));
    assert_eq!(
        m.to_string(),
        "element 1: expected 2e0 (0x40000000), got 2.5e0 (0x40200000) (2 of 3 elements differ)"
    );
    assert!(compare(&d, &f32s(&[1.0]), &f32s(&[one_up]), &exact).is_err());
    let ulp1 = Tolerance {
        ulps: 1,
        ..Tolerance::default()
    };
    assert!(compare(&d, &f32s(&[1.0]), &f32s(&[one_up]), &ulp1).is_ok());
    assert!(
        compare(&d, &f32s(&[0.0]), &f32s(&[-0.0]), &exact).is_ok(),
        "+0 and -0 are 0 ulps apart"
    );
    let any = Tolerance {
        ulps: u64::MAX,
        abs: Some(1e9),
        rel: Some(1.0),
    };
    assert!(
        compare(&d, &f32s(&[f32::NAN]), &f32s(&[f32::NAN]), &any).is_err(),
        "NaN equals nothing"
    );
    assert!(compare(&d, &f32s(&[1.0]), &f32s(&[f32::NAN]), &any).is_err());
    let abs = Tolerance {
        abs: Some(0.5),
        ..Tolerance::default()
    };
    assert!(compare(&d, &f32s(&[1.0]), &f32s(&[1.4]), &abs).is_ok());
    let rel = Tolerance {
        rel: Some(0.1),
        ..Tolerance::default()
    };
    assert!(compare(&d, &f32s(&[10.0]), &f32s(&[10.9]), &rel).is_ok());
    assert!(compare(&d, &f32s(&[10.0]), &f32s(&[11.1]), &rel).is_err());
    assert!(
        compare(&d, &f32s(&[1.0]), &f32s(&[1.0, 2.0]), &exact).is_err(),
        "lengths differ"
    );
    let i = decl(ScalarType::I32, CompareMode::Exact);
    let m = compare(&i, &(-5i32).to_le_bytes(), &7i32.to_le_bytes(), &any).unwrap_err();
    assert_eq!((m.expected.as_str(), m.got.as_str()), ("-5", "7"));
}

#[test]
fn compare_sum_uses_relative_tolerance_of_magnitudes() {
    let d = decl(ScalarType::F32, CompareMode::Sum);
    let tol = Tolerance::default();
    // Different partials, the same total: a sum comparison passes where exact would not.
    assert!(compare(
        &d,
        &f32s(&[1.0, 2.0, 3.0, 0.0]),
        &f32s(&[6.0, 0.0, 0.0, 0.0]),
        &tol
    )
    .is_ok());
    assert!(
        compare(&d, &f32s(&[1e5, 1e5]), &f32s(&[1e5, 1e5 + 1.0]), &tol).is_ok(),
        "5e-6 of 2e5"
    );
    let m = compare(&d, &f32s(&[1e5, 1e5]), &f32s(&[1e5, 1e5 + 8.0]), &tol).unwrap_err();
    assert_eq!((m.index, m.mode), (None, CompareMode::Sum));
    assert!(
        m.to_string()
            .starts_with("sum: expected 2e5, got 2.00008e5"),
        "{m}"
    );
    assert!(compare(&d, &f32s(&[1.0]), &f32s(&[f32::NAN]), &tol).is_err());
    let u = decl(ScalarType::U32, CompareMode::Sum);
    let b = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    assert!(compare(&u, &b(&[u32::MAX, 1]), &b(&[0, u32::MAX - 1]), &tol).is_err());
    assert!(compare(&u, &b(&[u32::MAX, 1]), &b(&[1, u32::MAX]), &tol).is_ok());
}

/// Equal bytes pass at once, unless they hold a NaN, found wherever it is (here past the first
/// chunk a core scans), in f32 and in f64; an infinity equal to itself matches.
#[test]
fn equal_buffers_match_unless_they_hold_a_nan() {
    let exact = Tolerance::default();
    let mut v = vec![1.5f32; 70_001];
    let d = decl(ScalarType::F32, CompareMode::Exact);
    assert!(compare(&d, &f32s(&v), &f32s(&v), &exact).is_ok());
    v[70_000] = f32::INFINITY;
    assert!(compare(&d, &f32s(&v), &f32s(&v), &exact).is_ok());
    v[69_999] = f32::NAN;
    let m = compare(&d, &f32s(&v), &f32s(&v), &exact).unwrap_err();
    assert_eq!((m.index, m.differing), (Some(69_999), 1), "{m}");
    let d = decl(ScalarType::F64, CompareMode::Exact);
    let w: Vec<u8> = [2.0f64, f64::NAN]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(compare(&d, &w, &w, &exact).unwrap_err().index, Some(1));
    assert!(compare(&d, &w[..8], &w[..8], &exact).is_ok());
}
