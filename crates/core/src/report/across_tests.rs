//! The answer across GPUs, over runs of two made-up GPUs, checked against values derived by
//! hand.

use super::*;
use crate::blocks::BlockSize;
use crate::sweep::SweepResult;
use crate::testing::{TEST_API_A as A, TEST_API_B as B};

/// One made-up GPU's sweep on one API: (threads, mean ms) per row, steady samples.
fn result(gpu: &str, api: Api, rows: &[(u32, f64)]) -> SweepResult {
    let mut r = crate::testing::empty_result(api);
    r.device.name = gpu.into();
    r.device.kind = DeviceKind::Gpu;
    for &(threads, ms) in rows {
        let mut row = crate::testing::empty_row(BlockSize::linear(threads));
        row.timing = Some(crate::testing::timing(ms));
        r.rows.push(row);
    }
    r.fill_relative();
    r
}

fn run(file: &str, results: Vec<SweepResult>) -> Vec<Input> {
    let mut rep = Report::new("t", "d");
    rep.results = results;
    rep.refresh_answer();
    Input::of_sweep(file, &rep)
}

/// GPU X and GPU Y, APIs A and B, blocks 64, 128, 256 (mean ms):
///
/// | column | 64   | 128  | 256  | best      |
/// |--------|------|------|------|-----------|
/// | X A    | 1.00 | 1.02 | 1.20 | 64 (1.00) |
/// | X B    | 2.00 | 1.88 | 1.80 | 256 (1.80)|
/// | Y A    | 1.50 | 1.00 | 1.04 | 128 (1.00)|
/// | Y B    | 1.00 | 1.03 | 1.01 | 64 (1.00) |
///
/// Regret (ms ÷ the column's best), good when ≤ 1/0.95 = 1.0526:
/// - 64:  X A 1.00, X B 2.00/1.80 = 1.1111, Y A 1.50, Y B 1.00 → worst 1.50, not portable;
/// - 128: X A 1.02, X B 1.88/1.80 = 1.0444, Y A 1.00, Y B 1.03 → worst 1.0444, portable;
/// - 256: X A 1.20, X B 1.00, Y A 1.04, Y B 1.01 → worst 1.20, not portable (X A 0.83).
///
/// So the portable set is {128}, and the least-regret choice is 128 with the regrets above,
/// though no column has 128 as its own best but Y A.
fn two_gpus() -> Vec<Input> {
    let mut inputs = run(
        "x",
        vec![
            result("GPU X", A, &[(64, 1.00), (128, 1.02), (256, 1.20)]),
            result("GPU X", B, &[(64, 2.00), (128, 1.88), (256, 1.80)]),
        ],
    );
    inputs.extend(run(
        "y",
        vec![
            result("GPU Y", A, &[(64, 1.50), (128, 1.00), (256, 1.04)]),
            result("GPU Y", B, &[(64, 1.00), (128, 1.03), (256, 1.01)]),
        ],
    ));
    inputs
}

fn block(threads: u32) -> BlockSize {
    BlockSize::linear(threads)
}

#[test]
fn two_gpus_answer_each_columns_best_the_portable_set_and_the_regrets_derived_by_hand() {
    let across = Across::of(two_gpus(), false).unwrap().expect("two GPUs");
    let a = &across.answer;
    assert_eq!(a.gpus, vec!["GPU X".to_string(), "GPU Y".to_string()]);
    assert_eq!(a.apis, vec![A, B]);
    // Each column's best, its mean in microseconds.
    let best: Vec<(Option<&str>, Api, u32, i64)> = a
        .best
        .iter()
        .map(|b| {
            (
                b.gpu.as_deref(),
                b.api,
                b.config.block.x,
                (b.ms * 1e3).round() as i64,
            )
        })
        .collect();
    assert_eq!(
        best,
        vec![
            (Some("GPU X"), A, 64, 1000),
            (Some("GPU X"), B, 256, 1800),
            (Some("GPU Y"), A, 128, 1000),
            (Some("GPU Y"), B, 64, 1000),
        ]
    );
    let portable: Vec<BlockSize> = a.portable.iter().map(|c| c.block).collect();
    assert_eq!(portable, vec![block(128)]);
    let choice = a.choice.as_ref().unwrap();
    assert_eq!(choice.config.block, block(128));
    assert!(choice.portable);
    let want = [
        ("GPU X", A, 1.02),
        ("GPU X", B, 1.88 / 1.80),
        ("GPU Y", A, 1.00),
        ("GPU Y", B, 1.03),
    ];
    assert_eq!(choice.regret.len(), want.len());
    for (r, (gpu, api, v)) in choice.regret.iter().zip(want) {
        assert_eq!((r.gpu.as_deref(), r.api), (Some(gpu), api));
        assert!((r.regret - v).abs() < 1e-9, "{gpu} {api}: {}", r.regret);
    }
    // 256 falls short on GPU X's A alone, at 1/1.20 of its best.
    let e = a
        .exceptions
        .iter()
        .find(|e| e.config.block == block(256))
        .unwrap();
    assert_eq!(e.short.len(), 1);
    assert_eq!(
        (e.short[0].gpu.as_deref(), e.short[0].api),
        (Some("GPU X"), A)
    );
    assert!((e.short[0].of_best.unwrap() - 1.0 / 1.20).abs() < 1e-9);
    assert_eq!(across.noun, "GPU");
    let said = a.sentences_on(across.noun).join(" ");
    assert!(said.contains("on every GPU (GPU X, GPU Y)"), "{said}");
    assert!(
        said.contains("256 (GPU X Alpha: 0.83 of its best)"),
        "{said}"
    );
}

/// The same runs on CPU devices (a CPU driver's), or with a tune's input whose file records no
/// kind: the words call them devices, and the JSON keeps its `gpu` names.
#[test]
fn runs_not_all_known_to_be_gpus_are_called_devices() {
    let mut cpus = two_gpus();
    for i in &mut cpus {
        i.kind = Some(DeviceKind::Cpu);
    }
    let across = Across::of(cpus, false).unwrap().unwrap();
    assert_eq!(across.noun, "device");
    let said = across.answer.sentences_on(across.noun).join(" ");
    assert!(said.contains("on every device (GPU X, GPU Y)"), "{said}");
    assert!(said.contains("each device's and each API's best"), "{said}");
    let json = serde_json::to_value(&across).unwrap();
    assert!(
        json["gpus"].is_array() && json["answer"]["gpus"].is_array(),
        "{json}"
    );
    assert!(json.get("noun").is_none(), "{json}");
    let mut unknown = two_gpus();
    unknown[1].kind = None;
    assert_eq!(Across::of(unknown, false).unwrap().unwrap().noun, "device");
    assert_eq!(device_noun([]), "device");
}

#[test]
fn the_maps_are_each_gpus_worst_fraction_and_the_portable_map_the_worst_of_them() {
    let across = Across::of(two_gpus(), false).unwrap().unwrap();
    let at = |gpu: Option<&str>, threads: u32| {
        let map = across
            .maps
            .iter()
            .find(|m| m.gpu.as_deref() == gpu)
            .unwrap();
        let cell = map.cells.iter().find(|c| c.config.block == block(threads));
        cell.unwrap().of_best.unwrap()
    };
    // GPU X at 64: A 1.00, B 1.80/2.00 = 0.90 → 0.90; GPU Y at 64: A 1/1.50 → 0.667.
    assert!((at(Some("GPU X"), 64) - 0.90).abs() < 1e-9);
    assert!((at(Some("GPU Y"), 64) - 1.0 / 1.5).abs() < 1e-9);
    assert!((at(None, 64) - 1.0 / 1.5).abs() < 1e-9);
    // 128: X min(1/1.02, 1.80/1.88) = 0.9574, Y min(1, 1/1.03) = 0.9709 → portable 0.9574.
    assert!((at(None, 128) - 1.80 / 1.88).abs() < 1e-9);
    assert_eq!(across.maps.len(), 3);
}

#[test]
fn runs_of_one_gpu_merge_and_give_no_answer_across() {
    let mut one = run("x", vec![result("GPU X", A, &[(64, 1.0), (128, 1.1)])]);
    one.extend(run(
        "x2",
        vec![result("GPU X", B, &[(64, 1.0), (128, 1.1)])],
    ));
    assert_eq!(Across::of(one, false).unwrap(), None);
}

#[test]
fn runs_of_different_kernels_or_specs_are_refused_by_name() {
    let mut inputs = two_gpus();
    inputs[1].kernel = "saxpy".into();
    let e = Across::of(inputs, false).unwrap_err();
    assert!(
        e.contains("different kernels (x: grayscale; y: saxpy)"),
        "{e}"
    );
    let mut inputs = two_gpus();
    for (i, h) in inputs.iter_mut().zip(["aaaa", "bbbb"]) {
        i.spec_hash = Some(h.into());
    }
    let e = Across::of(inputs, false).unwrap_err();
    assert!(e.contains("by hash: x: aaaa; y: bbbb"), "{e}");
    // One spec at two sizes differs by hash (it covers the sizes): warned as sizes, not
    // refused as two specs (it was, and a user could not compare sizes).
    let mut inputs = two_gpus();
    for (i, h) in inputs.iter_mut().zip(["aaaa", "bbbb"]) {
        i.spec_hash = Some(h.into());
    }
    for i in inputs.iter_mut().filter(|i| i.file == "y") {
        i.size = "n=8192".into();
    }
    let w = Across::of(inputs, false).unwrap().unwrap().warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("different sizes") && w.contains("spec hashes cover the sizes")),
        "{w:?}"
    );
    let mut inputs = two_gpus();
    inputs[0].spec_hash = Some("aaaa".into());
    let w = Across::of(inputs, false).unwrap().unwrap().warnings;
    assert!(
        w.iter().any(|w| w.starts_with("y records no spec hash")),
        "{w:?}"
    );
}

#[test]
fn runs_of_different_sizes_or_timing_are_warned_about_by_file() {
    let mut inputs = two_gpus();
    for i in inputs.iter_mut().filter(|i| i.file == "y") {
        i.size = "640x360 seed 1".into();
        i.discipline = Some("synced".into());
    }
    let w = Across::of(inputs, false).unwrap().unwrap().warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("different sizes (x: 4x4 seed 1; y: 640x360 seed 1)")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("timed differently (x: batch; y: synced)")),
        "{w:?}"
    );
}

/// A tune's file records no seed and no timing discipline: its size is compared without the
/// seed, and an unknown discipline is not a difference; a different seed still is.
#[test]
fn a_tunes_missing_seed_and_discipline_are_no_difference() {
    let mut inputs = two_gpus();
    for i in inputs.iter_mut().filter(|i| i.file == "y") {
        i.size = "4x4".into();
        i.discipline = None;
    }
    let w = Across::of(inputs, false).unwrap().unwrap().warnings;
    assert!(w.is_empty(), "{w:?}");
    let mut inputs = two_gpus();
    for i in inputs.iter_mut().filter(|i| i.file == "y") {
        i.size = "4x4 seed 2".into();
        i.discipline = Some("each".into());
    }
    let w = Across::of(inputs, false).unwrap().unwrap().warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("(x: 4x4 seed 1; y: 4x4 seed 2)")),
        "{w:?}"
    );
    let timed = w.iter().find(|w| w.contains("timed differently")).unwrap();
    assert!(
        timed.contains("(x: batch; y: each)") && !timed.contains("synced"),
        "{timed}"
    );
}

/// A sweep's `wave` grid and a tune's `1w` are one launch: mixed, they are one configuration
/// (block 128 at one wave, portable as in the sweeps alone), not two that each ran on one GPU.
#[test]
fn a_sweeps_wave_and_a_tunes_one_wave_are_one_configuration() {
    let mut inputs = two_gpus();
    let one = crate::answer::GridPolicyKey::from(crate::grid::GridPolicy::Waves(100));
    for i in inputs.iter_mut().filter(|i| i.file == "y") {
        assert!(i.measurements.iter().all(|m| m.config.grid.0 == "wave"));
        i.measurements
            .iter_mut()
            .for_each(|m| m.config.grid = one.clone());
    }
    let a = Across::of(inputs, false).unwrap().unwrap();
    let portable: Vec<_> = a
        .answer
        .portable
        .iter()
        .map(|c| (c.block, c.grid.0.clone()))
        .collect();
    assert_eq!(
        portable,
        [(block(128), "1w".to_string())],
        "{:?}",
        a.answer.portable
    );
    assert!(a.measurements.iter().all(|m| m.config.grid == one));
}

/// A configuration one GPU's runs never measured (a map's other grids beside a sweep) is not
/// ranked, and said once for the columns that did not run it, not as "not portable" with every
/// column's "did not run".
#[test]
fn configurations_one_gpu_never_measured_are_said_once_not_as_not_portable() {
    let mut inputs = two_gpus();
    let two = crate::answer::GridPolicyKey::from(crate::grid::GridPolicy::Waves(200));
    let y = inputs.iter_mut().find(|i| i.file == "y").unwrap();
    let extra: Vec<Measurement> = y
        .measurements
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.config.grid = two.clone();
            m
        })
        .collect();
    y.measurements.extend(extra);
    let a = Across::of(inputs, false).unwrap().unwrap();
    let said = a.answer.sentences_on("GPU");
    let not_portable = said.iter().find(|s| s.starts_with("Not portable")).unwrap();
    assert!(!not_portable.contains("did not run"), "{not_portable}");
    let unmeasured: Vec<&String> = said
        .iter()
        .filter(|s| s.starts_with("Not measured"))
        .collect();
    assert_eq!(unmeasured.len(), 1, "{said:?}");
    assert_eq!(
        unmeasured[0].as_str(),
        "Not measured by every API, so not ranked (GPU X Alpha, GPU X Beta: did not run them): \
         block 64 grid 2w, block 128 grid 2w, block 256 grid 2w."
    );
}

/// An API that failed to open on one GPU is no column of it: the answer is over the three
/// that ran (128 still portable, its regret on three columns). One that stopped part-way
/// leaves nothing known portable, as in one run, and is said with its GPU.
#[test]
fn a_failed_api_is_no_column_and_a_stopped_one_leaves_nothing_portable() {
    let x = || {
        run(
            "x",
            vec![
                result("GPU X", A, &[(64, 1.00), (128, 1.02), (256, 1.20)]),
                result("GPU X", B, &[(64, 2.00), (128, 1.88), (256, 1.80)]),
            ],
        )
    };
    let mut rep = Report::new("t", "d");
    rep.results = vec![result("GPU Y", A, &[(64, 1.50), (128, 1.00), (256, 1.04)])];
    rep.failures = vec![crate::report::Failure::new(
        B,
        crate::report::FailureKind::Other,
        "no device",
    )];
    rep.refresh_answer();
    let mut inputs = x();
    inputs.extend(Input::of_sweep("y", &rep));
    let a = Across::of(inputs, false).unwrap().unwrap().answer;
    assert_eq!(a.best.len(), 3);
    let portable: Vec<BlockSize> = a.portable.iter().map(|c| c.block).collect();
    assert_eq!(portable, vec![block(128)]);
    assert_eq!(a.choice.unwrap().regret.len(), 3);

    let mut stopped = result("GPU Y", B, &[(64, 1.00)]);
    stopped.error = Some("a mismatch at block 128".into());
    let mut inputs = x();
    inputs.extend(run(
        "y",
        vec![
            result("GPU Y", A, &[(64, 1.50), (128, 1.00), (256, 1.04)]),
            stopped,
        ],
    ));
    let a = Across::of(inputs, false).unwrap().unwrap().answer;
    assert!(a.portable.is_empty());
    let said = a.sentences().join(" ");
    assert!(
        said.contains("GPU Y Beta stopped: a mismatch at block 128"),
        "{said}"
    );
}
