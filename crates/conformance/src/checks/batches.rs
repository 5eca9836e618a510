//! Batches through `run_batch` directly: the stamps protocol and ordering, a refused launch,
//! and device-to-device copies.

use blocksweep_core::builtin::{self, OUTPUT};
use blocksweep_core::grid::blocks_to_cover;
use blocksweep_core::verify::verify;
use blocksweep_core::{Backend, BlockSize, ErrorKind, Frame, KernelVariant, Launch, Stamps, Work};

use super::{device_time_fits_host, positive, timed};

/// How much shorter than the host's wait a kernel batch of at least [`KERNEL_BATCH_MS`] may
/// read: long enough that submitting and waiting are a small part of the wait, so a stamp read
/// 10 times too short (or long) cannot pass, where the copies' looser factor would let it.
pub const KERNEL_CLOCK_FACTOR: f64 = 3.0;

/// The host time a kernel batch of the timing check lasts at least.
pub const KERNEL_BATCH_MS: f64 = 100.0;

/// Kernel batches' device time against the host's clock around them: the grid-stride kernel
/// on a 1280x720 frame, repeated for at least [`KERNEL_BATCH_MS`] of host time, read between
/// 1/[`KERNEL_CLOCK_FACTOR`] of the host's wait and the wait itself, with one stamp over the
/// batch and with one per dispatch.
pub fn kernel_timing(b: &mut dyn Backend) {
    let frame = Frame::generate(1280, 720, 5);
    builtin::load(b, KernelVariant::GridStride, &frame).expect("upload");
    let grid = blocks_to_cover(frame.pixels(), 256).div_ceil(8) as u32;
    let work = Work::Kernel(Launch::linear(BlockSize::linear(256), grid));
    // How many dispatches last the batch's time, from the host's clock (the device's is what
    // is checked), after a warm-up that pays for the first dispatch's set-up.
    b.run_batch(work, 2, Stamps::None).expect("warm-up");
    let (_, host) = timed(b, work, 4, Stamps::None);
    let per_ms = (host.as_secs_f64() * 1e3 / 4.0).max(1e-3);
    let count = ((KERNEL_BATCH_MS / per_ms).ceil() as u32).clamp(4, 200_000);
    for stamps in [Stamps::Batch, Stamps::Each] {
        let (t, host) = timed(b, work, count, stamps);
        let device_ms = match stamps {
            Stamps::Each => t.each_ms.iter().sum(),
            _ => t.batch_ms.unwrap_or(0.0),
        };
        let host_ms = host.as_secs_f64() * 1e3;
        crate::show!(
            "{}: {count} dispatches, {stamps:?}: device {device_ms:.3} ms, host {host_ms:.3} ms",
            b.identity().name
        );
        assert!(
            device_ms <= host_ms + 1.0 && device_ms >= host_ms / KERNEL_CLOCK_FACTOR,
            "{count} kernel dispatches ({stamps:?}): the device says {device_ms:.4} ms, the host \
             waited {host_ms:.4} ms around them (allowed: {:.4} to {:.4} ms)",
            host_ms / KERNEL_CLOCK_FACTOR,
            host_ms + 1.0
        );
    }
}

/// Device-to-device copies: per-dispatch and batch intervals, positive and finite, at a
/// plausible rate; the buffers serve a second batch, and another size.
pub fn copy_timing(b: &mut dyn Backend) {
    let bytes: u64 = 16 << 20;
    assert!(!b.copy_method().trim().is_empty());
    let copy = Work::Copy { bytes };
    let warm = b.run_batch(copy, 1, Stamps::None).expect("warm-up copy");
    assert_eq!(warm, Default::default(), "Stamps::None takes no stamps");
    // The device's stamps against the host's clock around the same batch (a GB/s range wide
    // enough for every machine would also pass a ms-for-s slip).
    let (t, host) = timed(b, copy, 4, Stamps::Each);
    let each = t.each_ms;
    assert_eq!(each.len(), 4, "{each:?}");
    assert!(each.iter().all(|&t| positive(t)), "{each:?}");
    device_time_fits_host(each.iter().sum(), host, "4 copies, each stamped");
    let mean = each.iter().sum::<f64>() / each.len() as f64;
    let gbps = 2.0 * bytes as f64 / (mean * 1e6);
    crate::show!(
        "{}: copy of {bytes} bytes by {}: {each:?} ms = {gbps:.1} GB/s",
        b.identity().name,
        b.copy_method()
    );
    // The same buffers serve a second batch, long enough that on a GPU too the copies are
    // most of the host's wait.
    let (batch, host) = timed(b, copy, 16, Stamps::Batch);
    assert!(batch.batch_ms.is_some_and(positive), "{batch:?}");
    device_time_fits_host(batch.batch_ms.unwrap(), host, "16 copies in one batch");
    assert!(batch.each_ms.is_empty(), "{batch:?}");
    // Another size gets buffers of its own.
    let other = b
        .run_batch(Work::Copy { bytes: 1 << 20 }, 1, Stamps::Each)
        .expect("a copy of another size")
        .each_ms;
    assert!(other.len() == 1 && positive(other[0]), "{other:?}");
}

/// The batch protocol: Stamps::Batch gives one interval, Stamps::Each one per dispatch,
/// Stamps::None nothing; dispatches enqueued back to back verify; the poison after a batch
/// lands after it (the read-back sees NaN only), and the read-back after a batch sees it
/// finished; a read-back past the end of the output is refused.
pub fn batch_protocol(b: &mut dyn Backend) {
    let frame = Frame::generate(320, 90, 13);
    let reference = frame.reference();
    builtin::load(b, KernelVariant::GridStride, &frame).expect("upload");
    let pixels = frame.pixels();
    // A quarter of the covering grid: each thread strides over four pixels.
    let launch = Launch::linear(
        BlockSize::linear(64),
        blocks_to_cover(frame.pixels(), 64).div_ceil(4) as u32,
    );
    let work = Work::Kernel(launch);
    let mut out = vec![0f32; frame.pixels() as usize];

    builtin::poison(b, pixels).unwrap();
    let t = b.run_batch(work, 5, Stamps::Batch).unwrap();
    assert!(
        t.batch_ms.is_some_and(positive) && t.each_ms.is_empty(),
        "{t:?}"
    );
    let t = b.run_batch(work, 5, Stamps::Each).unwrap();
    assert!(t.batch_ms.is_none(), "{t:?}");
    assert_eq!(t.each_ms.len(), 5, "{t:?}");
    assert!(t.each_ms.iter().all(|&x| positive(x)), "{t:?}");
    let t = b.run_batch(work, 3, Stamps::None).unwrap();
    assert!(t.batch_ms.is_none() && t.each_ms.is_empty(), "{t:?}");
    builtin::read(b, &mut out).unwrap();
    verify(&out, &reference).unwrap_or_else(|m| panic!("after three batches: {m:?}"));

    // Poison after a batch: ordered after it, so nothing the batch wrote survives.
    b.run_batch(work, 8, Stamps::None).unwrap();
    builtin::poison(b, pixels).unwrap();
    builtin::read(b, &mut out).unwrap();
    let written = out.iter().filter(|v| !v.is_nan()).count();
    assert_eq!(
        written, 0,
        "{written} pixels escaped the poison after a batch"
    );
    // A back-to-back batch straight after the poison, read back at once.
    b.run_batch(work, 8, Stamps::None).unwrap();
    builtin::read(b, &mut out).unwrap();
    verify(&out, &reference).unwrap_or_else(|m| panic!("after 8 back-to-back: {m:?}"));

    // The one-pixel-per-thread kernel, with a covering grid, in one batch.
    builtin::load(b, KernelVariant::OnePixelPerThread, &frame).unwrap();
    builtin::poison(b, pixels).unwrap();
    let full = Launch::linear(
        BlockSize::linear(64),
        blocks_to_cover(frame.pixels(), 64) as u32,
    );
    b.run_batch(Work::Kernel(full), 4, Stamps::Each).unwrap();
    builtin::read(b, &mut out).unwrap();
    verify(&out, &reference).unwrap_or_else(|m| panic!("one pixel per thread: {m:?}"));

    // A read-back that would run one pixel past the output's end is refused, not truncated.
    let mut whole = vec![0u8; pixels as usize * 4];
    let e = b
        .read_buffer(OUTPUT, 4, &mut whole)
        .expect_err("a read-back one pixel past the end");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
}

/// A launch above every block limit the backend reports is rejected (by the backend before
/// the driver, or by the driver) as LaunchRejected naming the block's size; the refusal is
/// not sticky: a legal launch after it runs and verifies.
pub fn rejected_launch(b: &mut dyn Backend) {
    let frame = Frame::generate(64, 16, 3);
    builtin::load(b, KernelVariant::GridStride, &frame).expect("upload");
    let device_max = b.limits().max_threads_per_block.as_ref().unwrap().value;
    // NVIDIA's OpenCL runs blocks above its kernel limit: only above both is a refusal sure.
    let kernel_max = b.kernel_facts().max_block.as_ref().map_or(0, |m| m.value);
    let threads = (device_max.max(kernel_max) + 1).min(u32::MAX as u64);
    let launch = Launch::linear(BlockSize::linear(threads as u32), 1);
    let e = b
        .run_batch(Work::Kernel(launch), 1, Stamps::Each)
        .expect_err("a block above the limits must be refused");
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
    assert_eq!(e.api, b.api());
    assert!(
        e.message.contains(&threads.to_string()),
        "{e} should name the block ({threads} threads)"
    );
    crate::show!("refused: {e}");
    builtin::poison(b, frame.pixels()).unwrap();
    let ok = Launch::linear(BlockSize::linear(64), 4);
    let t = b.run_batch(Work::Kernel(ok), 2, Stamps::Each).unwrap();
    assert_eq!(t.each_ms.len(), 2);
    let mut out = vec![0f32; frame.pixels() as usize];
    builtin::read(b, &mut out).unwrap();
    verify(&out, &frame.reference()).unwrap_or_else(|m| panic!("after a refusal: {m:?}"));
}
