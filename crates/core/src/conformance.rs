//! Checks every backend must pass, written once and run by each backend's own tests on a real
//! driver (PoCL and lavapipe in CI, the NVIDIA driver on a GPU machine).
//!
//! Also home of [`required`]: CI sets `BLOCKSWEEP_REQUIRE=opencl,vulkan` so that a test whose
//! driver is missing fails instead of skipping.

use crate::backend::{Api, Backend, BackendResult, KernelVariant, Launch, Stamps, Work};
use crate::blocks::{default_blocks, BlockSize};
use crate::frame::Frame;
use crate::grid::{blocks_to_cover, GridPolicy};
use crate::measure::{Discipline, Protocol, Reps};
use crate::sweep::{self, Plan, PlannedRow, Quiet, SweepConfig, SweepError};

/// The backends named in `BLOCKSWEEP_REQUIRE` (comma-separated: cuda, vulkan, opencl).
pub fn required_apis() -> Vec<Api> {
    std::env::var("BLOCKSWEEP_REQUIRE")
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| Api::from_key(s.trim()))
        .collect()
}

/// Whether BLOCKSWEEP_REQUIRE names `api` (by key, so no registration is needed).
pub fn required(api: Api) -> bool {
    std::env::var("BLOCKSWEEP_REQUIRE")
        .unwrap_or_default()
        .split(',')
        .any(|s| s.trim().eq_ignore_ascii_case(api.key()))
}

/// What a test does when `api` has no usable device: fail if CI requires the API, else say so
/// on stderr and let the caller return early. Returns `true` when the caller should skip.
pub fn skip_unavailable(api: Api, why: &str) -> bool {
    if required(api) {
        panic!("{api} is required by BLOCKSWEEP_REQUIRE but unavailable: {why}");
    }
    eprintln!(
        "SKIPPED: {api} unavailable ({why}); set BLOCKSWEEP_REQUIRE={} to make this fail",
        api.key()
    );
    true
}

/// Warm-ups and an exact count of timed dispatches, under the default discipline.
fn fixed(warmups: u32, reps: u32) -> Protocol {
    Protocol {
        warmups,
        reps: Reps::Fixed(reps),
        discipline: Discipline::Batch,
    }
}

/// The small frame the conformance sweep uses: 640 x 360, the seed's aspect ratio.
pub const SMALL: (u32, u32) = (640, 360);

/// Limits must be internally consistent and name their native queries.
pub fn check_limits(backend: &dyn Backend) {
    let l = backend.limits();
    let bad = l.inconsistencies();
    assert!(
        bad.is_empty(),
        "{} limits are inconsistent: {bad:?}",
        backend.api()
    );
    let t = l
        .max_threads_per_block
        .as_ref()
        .expect("max threads per block must be queried");
    assert!(t.value >= 1 && !t.name.is_empty());
    assert!(l.max_block_dims.is_some(), "max block dims must be queried");
    assert!(
        backend.timer().resolution_ns > 0.0,
        "timer resolution must be positive"
    );
    assert!(!backend.identity().name.is_empty());
}

/// The seed's thirteen sizes on a small frame: every row that the device allows runs and is
/// verified; those it does not allow are skipped with a reason naming a limit.
pub fn check_full_sweep(backend: &mut dyn Backend) -> sweep::SweepResult {
    let frame = Frame::generate(SMALL.0, SMALL.1, 42);
    let reference = frame.reference();
    let config = SweepConfig {
        blocks: default_blocks(),
        grid: GridPolicy::Wave,
        protocol: fixed(1, 3),
        strict_kernel_limit: true,
        copy: false,
    };
    let (result, err) = sweep::run(
        backend,
        &frame,
        &reference,
        &config,
        None,
        &mut Quiet,
        &mut |_| {},
    );
    if let Some(e) = err {
        panic!("{} sweep failed: {e}", backend.api());
    }
    assert_eq!(result.rows.len(), 13);
    let max = result
        .limits
        .max_threads_per_block
        .as_ref()
        .map(|m| m.value)
        .unwrap_or(u64::MAX);
    let kmax = result
        .kernel
        .max_block
        .as_ref()
        .map(|m| m.value)
        .unwrap_or(u64::MAX);
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
            assert_eq!((t.reps, t.samples_ms.len()), (3, 3));
            assert!(
                t.samples_ms.iter().all(|&t| t > 0.0 && t.is_finite())
                    && t.batch_ms.is_some_and(|b| b > 0.0 && b.is_finite()),
                "{t:?}"
            );
        } else {
            assert!(
                row.skipped.is_some(),
                "row {} is above the limit but was not skipped",
                row.block
            );
        }
    }
    let best = result.best().expect("a fastest row");
    assert_eq!(best.of_best, Some(1.0));
    result
}

/// A launch that leaves pixels unwritten must fail verification, naming API, block, grid and
/// the first bad index; and a correct row before it must not let it pass on stale output.
pub fn check_fault_is_caught(backend: &mut dyn Backend) {
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
    };
    let row = |grid| Plan {
        rows: vec![PlannedRow {
            block,
            grid,
            residency: None,
        }],
        policy: config.grid,
        grid_source: "test".into(),
    };

    // 1. A correct row with the one-pixel-per-thread kernel and a full grid passes...
    backend
        .set_kernel(KernelVariant::OnePixelPerThread)
        .expect("backend carries the one-pixel-per-thread kernel");
    let (_, err) = sweep::execute(
        backend,
        &frame,
        &reference,
        &row(full),
        &config,
        &mut Quiet,
        &mut |_| {},
    );
    assert!(err.is_none(), "full grid must verify: {err:?}");
    // 2. ...and the same kernel one block short, right after it, fails: the poison shows.
    let (result, err) = sweep::execute(
        backend,
        &frame,
        &reference,
        &row(full - 1),
        &config,
        &mut Quiet,
        &mut |_| {},
    );
    backend.set_kernel(KernelVariant::GridStride).unwrap();
    match err {
        Some(SweepError::Mismatch {
            api,
            block: b,
            grid,
            index,
            got,
            ..
        }) => {
            assert_eq!(api, backend.api());
            assert_eq!(b, block);
            assert_eq!(grid, full - 1);
            assert_eq!(
                index,
                (full - 1) * 64,
                "first unwritten pixel is the first of the missing block"
            );
            assert!(
                got.is_nan(),
                "the unwritten pixel must hold the NaN poison, got {got}"
            );
            let msg = result.error.expect("error recorded in the result");
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
    // 3. The grid-stride kernel at that same short grid is correct again.
    let (_, err) = sweep::execute(
        backend,
        &frame,
        &reference,
        &row(full - 1),
        &config,
        &mut Quiet,
        &mut |_| {},
    );
    assert!(
        err.is_none(),
        "grid-stride kernel must cover any grid: {err:?}"
    );
}

/// A block above the device's limit is a skipped row naming the limit, never a driver error.
pub fn check_oversize_is_skipped(backend: &mut dyn Backend) {
    let frame = Frame::generate(64, 16, 1);
    let reference = frame.reference();
    let max = backend
        .limits()
        .max_threads_per_block
        .as_ref()
        .unwrap()
        .clone();
    let too_big = BlockSize::linear((max.value + 1).min(u32::MAX as u64) as u32);
    let config = SweepConfig {
        blocks: vec![too_big, BlockSize::linear(1)],
        grid: GridPolicy::Wave,
        protocol: fixed(0, 1),
        strict_kernel_limit: true,
        copy: false,
    };
    let (result, err) = sweep::run(
        backend,
        &frame,
        &reference,
        &config,
        None,
        &mut Quiet,
        &mut |_| {},
    );
    assert!(err.is_none(), "{err:?}");
    let reason = result.rows[0]
        .skipped
        .as_deref()
        .expect("oversize block skipped");
    assert!(
        reason.contains(&max.name),
        "reason {reason:?} should name {}",
        max.name
    );
    assert!(result.rows[1].verified);
}

/// Prints a sweep's rows (visible with `--nocapture`): the seed's table as a device ran it.
pub fn print_rows(result: &sweep::SweepResult) {
    println!(
        "{} ({}): grid source {}",
        result.device.name, result.device.driver, result.grid_source
    );
    for r in &result.rows {
        println!(
            "  block {:>5} grid {:>6} mean {:>9.4} ms  of best {:.2}  {}",
            r.block.to_string(),
            r.grid,
            r.mean_ms().unwrap_or(f64::NAN),
            r.of_best.unwrap_or(f64::NAN),
            r.skipped.as_deref().unwrap_or("")
        );
    }
}

/// The four shared checks as `#[test]` functions, on every device a backend's test helpers
/// list: `conformance_tests!(devices, open_device)`, where `devices()` returns
/// `Option<Vec<DeviceIdentity>>` (None: skipped) and `open_device(&DeviceIdentity)` a backend.
#[macro_export]
macro_rules! conformance_tests {
    ($devices:path, $open:path) => {
        #[test]
        fn limits_are_consistent() {
            let Some(devs) = $devices() else { return };
            for d in &devs {
                $crate::conformance::check_limits(&$open(d));
            }
        }

        #[test]
        fn full_sweep_verifies_every_allowed_row() {
            let Some(devs) = $devices() else { return };
            for d in &devs {
                let result = $crate::conformance::check_full_sweep(&mut $open(d));
                $crate::conformance::print_rows(&result);
            }
        }

        #[test]
        fn fault_is_caught() {
            let Some(devs) = $devices() else { return };
            for d in &devs {
                $crate::conformance::check_fault_is_caught(&mut $open(d));
            }
        }

        #[test]
        fn oversize_is_skipped() {
            let Some(devs) = $devices() else { return };
            for d in &devs {
                $crate::conformance::check_oversize_is_skipped(&mut $open(d));
            }
        }
    };
}

/// A frame that only claims its size: at least `pixels` pixels, 65536 wide, with empty planes.
/// Only a check made before allocating and uploading can answer for it, which is what the
/// too-large-frame tests need without allocating gigabytes.
pub fn claimed_frame(pixels: u64) -> Frame {
    let width = 65536u32;
    let height = pixels.div_ceil(width as u64) as u32;
    Frame {
        width,
        height,
        seed: 0,
        r: Vec::new(),
        g: Vec::new(),
        b: Vec::new(),
    }
}

/// One-call shapes for backend tests, written over [`Backend::run_batch`]: `warmups` untimed
/// runs, then `reps` runs timed per dispatch, back to back.
pub trait BatchExt {
    fn dispatch_each(&mut self, launch: Launch, warmups: u32, reps: u32)
        -> BackendResult<Vec<f64>>;
    fn copy_each(&mut self, bytes: u64, warmups: u32, reps: u32) -> BackendResult<Vec<f64>>;
}

impl<B: Backend + ?Sized> BatchExt for B {
    fn dispatch_each(
        &mut self,
        launch: Launch,
        warmups: u32,
        reps: u32,
    ) -> BackendResult<Vec<f64>> {
        self.run_batch(Work::Kernel(launch), warmups, Stamps::None)?;
        Ok(self
            .run_batch(Work::Kernel(launch), reps, Stamps::Each)?
            .each_ms)
    }

    fn copy_each(&mut self, bytes: u64, warmups: u32, reps: u32) -> BackendResult<Vec<f64>> {
        self.run_batch(Work::Copy { bytes }, warmups, Stamps::None)?;
        Ok(self
            .run_batch(Work::Copy { bytes }, reps, Stamps::Each)?
            .each_ms)
    }
}
