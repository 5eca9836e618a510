//! The spec module's tests: the examples parse, each bad input gives its one-line error,
//! expressions, the generator, comparison and `--size`.

use std::path::{Path, PathBuf};

use super::*;
use crate::blocks::BlockSize;
use crate::program::{Language, ProgramArg, ScalarType};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kernels")
}

/// A temporary folder holding `k.cu` (so sources resolve) for specs written inline.
fn scratch_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("blocksweep-spec-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("k.cu"), "extern \"C\" __global__ void k() {}").unwrap();
    d
}

const HEAD: &str = "name = \"k\"\nwork = \"n\"\nsizes = { n = 1000 }\n[sources]\ncuda = { file = \"k.cu\", entry = \"k\" }\n";

fn parse(body: &str) -> Result<KernelSpec, SpecError> {
    KernelSpec::parse("t/kernel.toml", &format!("{HEAD}{body}"), scratch_dir())
}

fn parse_err(body: &str) -> String {
    parse(body).unwrap_err().to_string()
}

#[test]
fn every_example_parses_and_instantiates_small() {
    for name in ["grayscale", "saxpy", "transpose", "reduce", "broken-stride"] {
        let spec = KernelSpec::load(examples().join(name).join("kernel.toml")).unwrap();
        assert_eq!(spec.apis(), ["cuda", "opencl", "vulkan"], "{name}");
        let size = if spec.work.len() == 2 {
            "67x45"
        } else {
            "5000"
        };
        let inst = spec.instantiate(&spec.with_size(size).unwrap()).unwrap();
        assert!(inst.written().count() >= 1, "{name}");
        for b in &inst.buffers {
            assert_eq!(b.initial.len() as u64, b.elements * b.decl.ty.size() as u64);
        }
    }
}

#[test]
fn saxpy_instance_matches_the_contract() {
    let spec = KernelSpec::load(examples().join("saxpy/kernel.toml")).unwrap();
    let cuda = spec.sources_for("cuda").unwrap();
    assert_eq!(
        (cuda.language, cuda.entry.as_str()),
        (Language::Cuda, "saxpy")
    );
    assert!(cuda.text().contains("extern \"C\" __global__"));
    let vk = spec.sources_for("vulkan").unwrap();
    assert_eq!((vk.language, vk.entry.as_str()), (Language::Glsl, "main"));
    assert!(spec.sources_for("metal").is_none());
    let inst = spec.instantiate(&spec.with_size("1000").unwrap()).unwrap();
    assert_eq!(inst.work, (1000, 1));
    assert_eq!(inst.bytes_moved, Some(12_000.0));
    assert_eq!(inst.args[0], ProgramArg::Buffer { bytes: 4000 });
    let a = ProgramArg::Scalar {
        ty: ScalarType::F32,
        bytes: 2.5f32.to_le_bytes().to_vec(),
    };
    assert_eq!(inst.args[2], a);
    let n = ProgramArg::Scalar {
        ty: ScalarType::U64,
        bytes: 1000u64.to_le_bytes().to_vec(),
    };
    assert_eq!(inst.args[3], n);
    // Different seeds: x and y differ; both in [-1, 1).
    assert_ne!(inst.buffers[0].initial, inst.buffers[1].initial);
    for c in inst.buffers[0].initial.chunks_exact(4) {
        let v = f32::from_le_bytes(c.try_into().unwrap());
        assert!((-1.0..1.0).contains(&v), "{v}");
    }
    assert_eq!(inst.tolerance.abs, Some(3e-7));
}

#[test]
fn reduce_has_local_arg_shared_bytes_and_max_grid() {
    let spec = KernelSpec::load(examples().join("reduce/kernel.toml")).unwrap();
    let inst = spec.instantiate_default().unwrap();
    assert_eq!(inst.args[3], ProgramArg::Local);
    assert_eq!(inst.max_grid, Some(65536));
    assert_eq!(inst.shared_bytes(BlockSize::linear(256)).unwrap(), 1024);
    assert_eq!(inst.buffers[1].decl.compare, CompareMode::Sum);
    let t = KernelSpec::load(examples().join("transpose/kernel.toml")).unwrap();
    assert_eq!(t.grid, GridMode::Data);
    assert_eq!(t.blocks.as_ref().map(Vec::len), Some(3));
    assert_eq!(
        t.instantiate_default()
            .unwrap()
            .shared_bytes(BlockSize::linear(64))
            .unwrap(),
        0
    );
}

#[test]
fn inline_table_args_parse() {
    let args = "args = [{ buffer = \"u32\", name = \"a\", elements = \"n\", init = \"ramp\", written = true }]\n";
    let spec = KernelSpec::parse("t/kernel.toml", &format!("{args}{HEAD}"), scratch_dir()).unwrap();
    let inst = spec.instantiate_default().unwrap();
    assert_eq!(&inst.buffers[0].initial[4..8], &1u32.to_le_bytes());
}

#[test]
fn unknown_key_is_named_with_its_table_and_line() {
    let e = parse_err("[[args]]\nscalar = \"u32\"\nname = \"a\"\nvalue = 1\nvalu = 2\n");
    assert!(e.starts_with("t/kernel.toml: args[0]: line 10"), "{e}");
    assert!(e.contains("unknown field `valu`"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let e = parse_err("[check]\ntolerance = 1\n");
    assert!(
        e.contains("check: line") && e.contains("`tolerance`"),
        "{e}"
    );
    let e = parse_err("[sources.metal]\nfile = \"k.cu\"\n");
    assert!(e.contains("unknown field `metal`"), "{e}");
}

#[test]
fn toml_syntax_error_has_line_and_column() {
    let e = parse_err("[[args]]\nbuffer = \"f32\"; name = \"x\"\n");
    assert!(e.contains("line 7, column"), "{e}");
}

#[test]
fn missing_source_file_names_file_and_key() {
    let text = HEAD.replace("k.cu", "nope.cu");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert_eq!(e.key, "sources.cuda.file");
    assert!(e.message.contains("nope.cu"), "{e}");
}

#[test]
fn no_sources_and_missing_entry_are_errors() {
    let text = "name = \"k\"\nwork = \"n\"\nsizes = { n = 1 }\n[sources]\n";
    let e = KernelSpec::parse("t/kernel.toml", text, scratch_dir()).unwrap_err();
    assert_eq!(e.key, "sources");
    let text = HEAD.replace(", entry = \"k\"", "");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert_eq!(e.key, "sources.cuda.entry");
    let text = format!("{HEAD}vulkan = {{ file = \"k.cu\" }}\n");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert!(e.message.contains(".comp or .glsl"), "{e}");
}

#[test]
fn unknown_element_type_lists_the_valid_ones() {
    let e = parse_err("[[args]]\nbuffer = \"f16\"\nname = \"x\"\nelements = \"n\"\n");
    assert_eq!(e, "t/kernel.toml: args[0].buffer: 'f16' is not an element type (i32, u32, i64, u64, f32, f64)");
}

#[test]
fn bad_init_is_named() {
    let e = parse_err("[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\nwritten = true\n[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\ninit = \"randm\"\n");
    assert_eq!(
        e,
        "t/kernel.toml: args[1].init: 'randm' is not an init (random, zeros, ramp, constant)"
    );
    let e = parse_err(
        "[[args]]\nbuffer = \"u32\"\nname = \"x\"\nelements = \"n\"\ninit = { constant = 1.5 }\n",
    );
    assert!(
        e.contains("args[0].init.constant: 1.5 is not an integer"),
        "{e}"
    );
    let e = parse_err(
        "[[args]]\nbuffer = \"u32\"\nname = \"x\"\nelements = \"n\"\ninit = { constant = -1 }\n",
    );
    assert!(e.contains("-1 does not fit u32"), "{e}");
    let e = parse_err("[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\nseed = 3\n");
    assert!(
        e.contains("args[0].seed: applies to init = \"random\" only"),
        "{e}"
    );
}

#[test]
fn misplaced_and_kindless_args_are_errors() {
    let e = parse_err("[[args]]\nscalar = \"f32\"\nname = \"a\"\nvalue = 1.0\nwritten = true\n");
    assert!(e.contains("args[0].written: does not apply"), "{e}");
    let e = parse_err("[[args]]\nname = \"a\"\n");
    assert!(e.contains("exactly one of"), "{e}");
    let e = parse_err("[[args]]\nlocal = true\nname = \"t\"\n");
    assert!(e.contains("needs launch.shared_bytes"), "{e}");
    let e = parse_err("[[args]]\nscalar = \"f32\"\nname = \"a\"\nvalue = \"m * 2\"\n");
    assert!(e.contains("uses 'm', which is not a size (n)"), "{e}");
}

#[test]
fn overflowing_expression_names_key_and_values() {
    let spec = parse("[[args]]\nscalar = \"u32\"\nname = \"a\"\nvalue = 1\n[[args]]\nscalar = \"u32\"\nname = \"b\"\nvalue = 1\n[[args]]\nscalar = \"u32\"\nname = \"c\"\nvalue = 1\n[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n * n * n\"\n").unwrap();
    let sizes = spec.with_size("n=4294967296").unwrap();
    let e = spec.instantiate(&sizes).unwrap_err().to_string();
    assert_eq!(
        e,
        "t/kernel.toml: args[3].elements: 'n * n * n' overflows 64 bits at n = 4294967296"
    );
    let spec = parse("[[args]]\nscalar = \"u32\"\nname = \"a\"\nvalue = \"n * 8\"\n").unwrap();
    let e = spec
        .instantiate(&spec.with_size("1000000000").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("args[0].value: 'n * 8' is 8000000000") && e.contains("does not fit u32"),
        "{e}"
    );
}

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

#[test]
fn with_size_forms_and_errors() {
    let spec = KernelSpec::load(examples().join("grayscale/kernel.toml")).unwrap();
    assert_eq!(spec.sizes.to_string(), "height=2160,width=3840");
    let s = spec.with_size("640x480").unwrap();
    assert_eq!((s.get("width"), s.get("height")), (Some(640), Some(480)));
    let s = spec.with_size("height=10").unwrap();
    assert_eq!((s.get("width"), s.get("height")), (Some(3840), Some(10)));
    let e = spec.with_size("1000").unwrap_err().to_string();
    assert!(
        e.contains(
            "--size: '1000' does not fit this kernel's 2-D work: give WxH for width x height"
        ),
        "{e}"
    );
    assert!(spec
        .with_size("depth=3")
        .unwrap_err()
        .to_string()
        .contains("'depth' is not a size"));
    assert!(spec
        .with_size("64xq")
        .unwrap_err()
        .to_string()
        .contains("'q' is not a whole number"));
    let r = KernelSpec::load(examples().join("reduce/kernel.toml")).unwrap();
    let s = r.with_size("1_000").unwrap();
    assert_eq!((s.get("n"), s.get("slots")), (Some(1000), Some(65536)));
    assert!(r.with_size("3x4").is_err());
}

#[test]
fn zero_sized_buffer_and_bad_work_are_errors() {
    let spec =
        parse("[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n - 1000\"\n").unwrap();
    assert!(spec
        .instantiate_default()
        .unwrap_err()
        .to_string()
        .contains("'n - 1000' is 0"));
    let text = HEAD.replace("work = \"n\"", "work = \"m\"");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t/kernel.toml: work: 'm' is not in sizes (n=1000)"
    );
}
