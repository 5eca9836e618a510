//! The scenarios' bodies, each written once over `dyn Backend`. They panic (assert) on a
//! failure; each is also callable on its own, e.g. on a backend opened with options the kit
//! does not use (Vulkan's validation layers). The helpers the files share are here.

mod batches;
mod device;
mod memory;
mod sweeps;

pub use batches::{
    batch_protocol, copy_timing, kernel_timing, rejected_launch, KERNEL_BATCH_MS,
    KERNEL_CLOCK_FACTOR,
};

pub use device::{identity, limits, open_past_last_device};
pub use memory::frame_too_large;
pub use sweeps::{block_3d, full_sweep, one_block_short, oversize_block};

use blocksweep_core::builtin;
use blocksweep_core::sweep::{self, Quiet, SweepConfig, SweepResult, SweepRun};
use blocksweep_core::verify::verify;
use blocksweep_core::{
    Backend, Discipline, Frame, KernelVariant, Launch, Protocol, Reps, Stamps, Work,
};

/// The small frame the sweeps use: 640 x 360, the 4K frame's aspect ratio.
pub const SMALL: (u32, u32) = (640, 360);

/// Warm-ups and an exact count of timed dispatches, under the default (batch) discipline.
fn fixed(warmups: u32, reps: u32) -> Protocol {
    Protocol {
        warmups,
        reps: Reps::Fixed(reps),
        discipline: Discipline::Batch,
        caches: blocksweep_core::Caches::Hot,
    }
}

fn positive(t: f64) -> bool {
    t > 0.0 && t.is_finite()
}

/// How much shorter than the host's wait around a batch the batch's device time may read: the
/// host also pays for submission, the wait and reading the stamps, which on an idle GPU can be
/// most of a short batch. A unit slip (ms read as s or as µs) is a factor of 1000.
pub const HOST_CLOCK_FACTOR: f64 = 100.0;

/// Checks a device interval against an independent clock: the host's, around the batch. The
/// device cannot be busy longer than the host waited (plus 1 ms for the clocks' granularity),
/// nor for less than 1/[`HOST_CLOCK_FACTOR`] of it.
pub fn device_time_fits_host(device_ms: f64, host: std::time::Duration, what: &str) {
    let host_ms = host.as_secs_f64() * 1e3;
    assert!(
        device_ms <= host_ms + 1.0 && device_ms >= host_ms / HOST_CLOCK_FACTOR,
        "{what}: the device says {device_ms:.4} ms, the host waited {host_ms:.4} ms around it \
         (allowed: {:.4} to {:.4} ms)",
        host_ms / HOST_CLOCK_FACTOR,
        host_ms + 1.0
    );
}

/// Runs `count` of `work` as one batch with `stamps`; returns its times and the host's clock
/// around it, for [`device_time_fits_host`].
pub fn timed(
    b: &mut dyn Backend,
    work: Work,
    count: u32,
    stamps: Stamps,
) -> (blocksweep_core::BatchTimes, std::time::Duration) {
    let start = std::time::Instant::now();
    let t = b
        .run_batch(work, count, stamps)
        .unwrap_or_else(|e| panic!("{} batch of {count}: {e}", b.api()));
    (t, start.elapsed())
}

/// A frame that only claims its size ([`Frame::sized`]): at least `pixels` pixels, 65536 wide.
pub fn claimed_frame(pixels: u64) -> Frame {
    let width = 65536u32;
    let height = u32::try_from(pixels.div_ceil(width as u64)).expect("claimed frame height");
    Frame::sized(width, height)
}

/// Loads the grid-stride kernel on `frame`, poisons the output, runs `launch` `count` times back to back, reads the
/// output back and verifies every pixel.
fn run_and_verify(b: &mut dyn Backend, frame: &Frame, launch: Launch, count: u32) {
    builtin::load(b, KernelVariant::GridStride, frame).expect("upload");
    builtin::poison(b, frame.pixels()).expect("poison");
    b.run_batch(Work::Kernel(launch), count, Stamps::None)
        .unwrap_or_else(|e| panic!("{launch}: {e}"));
    let mut out = vec![0f32; frame.pixels() as usize];
    builtin::read(b, &mut out).expect("read back");
    if let Err(m) = verify(&out, &frame.reference()) {
        panic!("{} {launch} after upload: {m:?}", b.api());
    }
}

/// Runs a whole sweep (plan, rows, copy ceiling as `config` says) of `frame`; a sweep that
/// stops on an error fails the trial, naming the API and the error.
pub fn sweep(b: &mut dyn Backend, frame: &Frame, config: &SweepConfig) -> SweepResult {
    let reference = frame.reference();
    let how = SweepRun {
        config,
        shared: None,
        observer: &mut Quiet,
        on_row: &mut |_| {},
        clock: None,
    };
    let (result, err) = sweep::run(b, frame, &reference, how);
    if let Some(e) = err {
        panic!(
            "{} sweep of {}x{} failed: {e}",
            b.api(),
            frame.width,
            frame.height
        );
    }
    result
}

/// Prints a sweep's rows under `--nocapture`: the sweep's table as the device ran it.
pub fn show_rows(result: &SweepResult) {
    crate::show!(
        "{} ({}): grid source {}",
        result.device.name,
        result.device.driver_version,
        result.grid_source
    );
    for r in &result.rows {
        crate::show!(
            "  block {:>5} grid {:>6} mean {:>9.4} ms  of best {:.2}  {}",
            r.block.to_string(),
            r.grid,
            r.mean_ms().unwrap_or(f64::NAN),
            r.of_best.unwrap_or(f64::NAN),
            r.skipped.as_deref().unwrap_or("")
        );
    }
}
