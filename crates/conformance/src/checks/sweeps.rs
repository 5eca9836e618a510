//! Sweeps over block sizes: the thirteen default ones, a launch one block short, a block above the
//! limit, 3-D and 2-D blocks.

use blocksweep_core::blocks::{default_blocks, BlockSize};
use blocksweep_core::builtin;
use blocksweep_core::grid::blocks_to_cover;
use blocksweep_core::sweep::{Plan, PlannedRow, Quiet, SweepConfig, SweepError, SweepResult};
use blocksweep_core::{Api, Backend, Discipline, Frame, GridPolicy, KernelVariant, Launch};
use libtest_mimic::Completion;

use super::{fixed, positive, run_and_verify, sweep, SMALL};

/// The thirteen default sizes on a small frame: every row that the device allows runs, is
/// verified and carries its timing (the batch interval and the per-dispatch samples); those
/// it does not allow are skipped with a reason.
pub fn full_sweep(b: &mut dyn Backend) -> SweepResult {
    let config = SweepConfig {
        blocks: default_blocks(),
        grid: GridPolicy::Wave,
        protocol: fixed(1, 3),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
        pairs: Vec::new(),
    };
    let result = sweep(b, &Frame::generate(SMALL.0, SMALL.1, 42), &config);
    assert_eq!(result.rows.len(), 13);
    let max = result
        .limits
        .max_threads_per_block
        .as_ref()
        .map_or(u64::MAX, |m| m.value);
    let kmax = result
        .kernel
        .max_block
        .as_ref()
        .map_or(u64::MAX, |m| m.value);
    for row in &result.rows {
        if row.threads <= max.min(kmax) {
            assert!(
                row.verified && row.ran(),
                "{} row {} did not run: {:?}",
                result.api,
                row.block,
                row.skipped
            );
            let t = row.timing.as_ref().expect("a row that ran has its timing");
            assert_eq!(t.discipline, Discipline::Batch);
            assert_eq!((t.reps, t.samples_ms.len()), (3, 3), "{t:?}");
            let batch = t.batch_ms.expect("a batch interval");
            assert!(
                t.samples_ms.iter().all(|&s| positive(s)) && positive(batch),
                "{t:?}"
            );
            assert!(
                (t.stats.mean - batch / 3.0).abs() <= 1e-9 * batch.max(1.0),
                "the mean is the batch interval over the count: {t:?}"
            );
            assert!(row.gbps.is_some_and(positive), "{row:?}");
        } else {
            assert!(
                row.skipped.is_some() && !row.verified,
                "row {} is above the limit but was not skipped",
                row.block
            );
        }
    }
    let best = result.best().expect("a fastest row");
    assert_eq!(best.of_best, Some(1.0));
    result
}

/// A launch that leaves pixels unwritten fails verification, naming block, grid and the
/// first bad index, which holds the NaN poison; a correct row just before it must not let it
/// pass on stale output; the grid-stride kernel at the same short grid is correct.
pub fn one_block_short(b: &mut dyn Backend) {
    let frame = Frame::generate(SMALL.0, SMALL.1, 7);
    let reference = frame.reference();
    let block = BlockSize::linear(64);
    let full = blocks_to_cover(frame.pixels(), 64);
    let config = SweepConfig {
        blocks: vec![block],
        grid: GridPolicy::Fixed(full as u32 - 1),
        protocol: fixed(0, 1),
        strict_kernel_limit: true,
        copy: false,
        // Each kernel is loaded here, before the rows that run it.
        frame_on_device: true,
        pairs: Vec::new(),
    };
    let plan = |grid| Plan {
        rows: vec![PlannedRow {
            block,
            grid,
            residency: None,
            policy: None,
        }],
        policy: config.grid,
        grid_source: "conformance".into(),
    };
    let execute = |b: &mut dyn Backend, grid| {
        blocksweep_core::sweep::execute(
            b,
            &frame,
            &reference,
            &plan(grid),
            &config,
            &mut Quiet,
            &mut |_| {},
        )
    };

    // 1. The one-pixel-per-thread kernel with a full grid passes...
    builtin::load(b, KernelVariant::OnePixelPerThread, &frame)
        .expect("the backend carries the one-pixel-per-thread kernel");
    let (_, err) = execute(b, full);
    assert!(err.is_none(), "a full grid must verify: {err:?}");
    // 2. ...and the same kernel one block short, right after it, fails: the poison shows.
    let (result, err) = execute(b, full - 1);
    builtin::load(b, KernelVariant::GridStride, &frame).unwrap();
    assert_one_block_short_caught(b.api(), &frame, block, full, result, err);
    // 3. The grid-stride kernel at that same short grid is correct again.
    let (_, err) = execute(b, full - 1);
    assert!(
        err.is_none(),
        "the grid-stride kernel must cover any grid: {err:?}"
    );
}

/// What a launch of `full - 1` blocks of `block` over `frame` must come to: a mismatch at the
/// first pixel of the missing block, which holds the NaN poison, with the rest of the frame
/// unwritten, recorded in the result under a message naming block, grid and index.
fn assert_one_block_short_caught(
    expected_api: Api,
    frame: &Frame,
    block: BlockSize,
    full: u64,
    result: SweepResult,
    err: Option<SweepError>,
) {
    match err {
        Some(SweepError::Mismatch {
            api,
            block: bad_block,
            grid,
            index,
            got,
            bad_pixels,
            ..
        }) => {
            assert_eq!(api, expected_api);
            assert_eq!(bad_block, block);
            assert_eq!(grid, full - 1);
            assert_eq!(
                index,
                (full - 1) * 64,
                "the first unwritten pixel is the first of the missing block"
            );
            assert_eq!(bad_pixels, frame.pixels() - index, "the tail is unwritten");
            assert!(
                got.is_nan(),
                "the unwritten pixel must hold the NaN poison, got {got}"
            );
            let msg = result.error.expect("the error is recorded in the result");
            // The API is named by whoever prints it (the failure line is "<API>: <message>").
            for part in [
                "block 64".to_string(),
                format!("grid {}", full - 1),
                format!("index {index}"),
            ] {
                assert!(msg.contains(&part), "message {msg:?} lacks {part:?}");
            }
        }
        other => panic!("a launch one block short was not caught: {other:?}"),
    }
}

/// A block above the device's limit is a skipped row naming the limit, never a driver error,
/// and the row after it still runs.
pub fn oversize_block(b: &mut dyn Backend) {
    let max = b
        .limits()
        .max_threads_per_block
        .clone()
        .expect("max threads per block");
    let too_big = BlockSize::linear((max.value + 1).min(u32::MAX as u64) as u32);
    let config = SweepConfig {
        blocks: vec![too_big, BlockSize::linear(1)],
        grid: GridPolicy::Wave,
        protocol: fixed(0, 1),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
        pairs: Vec::new(),
    };
    let result = sweep(b, &Frame::generate(64, 16, 1), &config);
    let reason = result.rows[0]
        .skipped
        .as_deref()
        .expect("the oversize block is skipped");
    assert!(
        reason.contains(&max.name),
        "reason {reason:?} should name {}",
        max.name
    );
    assert!(!result.rows[0].verified && result.rows[0].timing.is_none());
    assert!(result.rows[1].verified && result.rows[1].ran());
}

/// A 3-D block and a 2-D block within the device's limits run and verify (the 1-D kernels
/// index with x only; the extra threads repeat x's work), on frames of changing sizes: the
/// planes are reallocated and re-bound each time the size changes.
pub fn block_3d(b: &mut dyn Backend) -> Completion {
    let l = b.limits();
    let dims = l.max_block_dims.as_ref().expect("max block dims").value.0;
    let max = l.max_threads_per_block.as_ref().expect("max threads").value;
    let kmax = b
        .kernel_facts()
        .max_block
        .as_ref()
        .map_or(u64::MAX, |m| m.value);
    let cube = BlockSize {
        x: dims[0].min(8) as u32,
        y: dims[1].min(4) as u32,
        z: dims[2].min(2) as u32,
    };
    if cube.y < 2 || cube.z < 2 || cube.threads() > max.min(kmax) {
        return crate::skip(format!(
            "no 3-D block fits: max block dims {:?}, {max} threads, kernel {kmax}",
            dims
        ));
    }
    let flat = BlockSize {
        x: dims[0].min(32) as u32,
        y: 2,
        z: 1,
    };
    let config = SweepConfig {
        blocks: vec![cube, flat, BlockSize::linear(100.min(max.min(kmax)) as u32)],
        grid: GridPolicy::Data,
        protocol: fixed(0, 2),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
        pairs: Vec::new(),
    };
    // Two frame sizes in turn, then the first again.
    for (w, h, seed) in [(160, 90, 5), (33, 7, 6), (160, 90, 7)] {
        let result = sweep(b, &Frame::generate(w, h, seed), &config);
        assert_eq!(result.rows.len(), 3);
        assert!(
            result.rows.iter().all(|r| r.verified && r.ran()),
            "{w}x{h}: {:?}",
            result.rows
        );
    }
    // And once through run_batch directly, with a grid that covers the frame in strides.
    run_and_verify(b, &Frame::generate(128, 8, 4), Launch::linear(cube, 3), 2);
    Completion::Completed
}
