//! The lab's kernels on every device: the 2-D kernel over every shape the device allows, the
//! shared-memory kernel at sizes within and above the limit, the register-heavy kernel at a
//! small and at the largest block (docs/lab.md). Each launch that runs is verified pixel by
//! pixel; each refusal must be a [`ErrorKind::LaunchRejected`] that leaves the backend usable.

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::builtin;
use blocksweep_core::lab::shapes::{self, shape_grid};
use blocksweep_core::verify::verify;
use blocksweep_core::{Backend, ErrorKind, Frame, GridSize, KernelVariant, Launch, Stamps, Work};
use libtest_mimic::Completion;

/// Poisons, runs `launch` of the loaded `kernel` once, reads back; `Ok(())` verified, `Err`
/// the backend's refusal (a wrong pixel or any other error fails the trial).
fn try_launch(
    b: &mut dyn Backend,
    (kernel, frame): (KernelVariant, &Frame),
    reference: &[f32],
    launch: Launch,
) -> Result<(), String> {
    builtin::prepare_launch(b, kernel, launch).expect("the launch's scalars");
    builtin::poison(b, frame.pixels()).expect("poison");
    match b.run_batch(Work::Kernel(launch), 1, Stamps::None) {
        Ok(_) => {}
        Err(e) if e.kind == ErrorKind::LaunchRejected => return Err(e.message),
        Err(e) => panic!("{} {launch}: not a refusal but {:?}: {e}", b.api(), e.kind),
    }
    let mut out = vec![0f32; frame.pixels() as usize];
    builtin::read(b, &mut out).expect("read back");
    if let Err(m) = verify(&out, reference) {
        panic!("{} {launch}: {m:?}", b.api());
    }
    Ok(())
}

/// The 2-D kernel: every power-of-two shape of 64 threads (and 256 where allowed) with a
/// data-sized grid, and short grids the loops must cover, on a frame whose sides are not
/// multiples of any block side; a shape above a limit is refused by name or skipped.
pub fn kernel_2d(b: &mut dyn Backend) -> Completion {
    let kernel = KernelVariant::GridStride2D;
    let max = b
        .limits()
        .max_threads_per_block
        .as_ref()
        .map_or(256, |m| m.value);
    let frame = Frame::generate(509, 253, 11);
    let reference = frame.reference();
    builtin::load(b, kernel, &frame).expect("the backend builds the 2-D kernel");
    let mut ran = 0;
    for threads in [64u32, 256] {
        if threads as u64 > max {
            continue;
        }
        for block in shapes::shapes(threads).unwrap() {
            if shapes::limit_passed(b.limits(), block).is_some() {
                continue;
            }
            let data = shape_grid(block, frame.width, frame.height);
            for grid in [data, GridSize { x: 1, y: 1 }, GridSize { x: 3, y: 2 }] {
                match try_launch(b, (kernel, &frame), &reference, Launch::new(block, grid)) {
                    Ok(()) => ran += 1,
                    Err(why) => crate::show!("{} {block} grid {grid}: refused: {why}", b.api()),
                }
            }
        }
    }
    assert!(ran > 0, "{}: no 2-D launch ran", b.api());
    // A frame of another size, loaded again: the width and height follow.
    let small = Frame::generate(33, 7, 12);
    builtin::load(b, kernel, &small).expect("load");
    let block = BlockSize { x: 8, y: 4, z: 1 };
    try_launch(
        b,
        (kernel, &small),
        &small.reference(),
        Launch::new(block, shape_grid(block, 33, 7)),
    )
    .expect("an 8x4 block on a 33x7 frame");
    Completion::Completed
}

/// The shared-memory kernel: 1 KiB and the largest size within the device's limit run and
/// verify; 1 KiB above the limit is refused (the API's error, or blocksweep's naming the limit
/// where dispatching would be undefined behaviour); a legal launch after the refusal verifies.
pub fn shared_probe(b: &mut dyn Backend) -> Completion {
    let kernel = KernelVariant::SharedProbe;
    let Some(limit) = b.limits().shared_mem_per_block.clone() else {
        return crate::skip("the device reports no shared-memory limit per block");
    };
    let threads = b
        .limits()
        .max_threads_per_block
        .as_ref()
        .map_or(64, |m| m.value.min(64)) as u32;
    let frame = Frame::generate(509, 253, 13);
    let reference = frame.reference();
    builtin::load(b, kernel, &frame).expect("the backend builds the shared-memory kernel");
    let on = (kernel, &frame);
    let launch = Launch::linear(BlockSize::linear(threads), 8);
    let within = u32::try_from(limit.value.min(64 << 10)).unwrap();
    try_launch(b, on, &reference, launch.with_shared(1024))
        .unwrap_or_else(|why| panic!("1024 bytes of shared memory refused: {why}"));
    // All of the stated limit: the API runs it, or refuses it in its own words (NVIDIA's
    // OpenCL on an H200 states 49152 bytes and refuses a kernel asking for all of them with
    // CL_OUT_OF_RESOURCES, 2026-11-30); never a driver error or a wrong pixel.
    if let Err(why) = try_launch(b, on, &reference, launch.with_shared(within)) {
        crate::show!("{} refuses all {within} bytes it states: {why}", b.api());
    }
    let above = u32::try_from(limit.value + 1024).unwrap_or(u32::MAX);
    match try_launch(b, on, &reference, launch.with_shared(above)) {
        Err(why) => crate::show!("{} refuses {above} bytes: {why}", b.api()),
        // A driver that reports a limit it does not enforce is worth seeing, not a failure
        // of the backend: the launch still verified.
        Ok(()) => crate::show!(
            "{} ran {above} bytes although {} = {}",
            b.api(),
            limit.name,
            limit.value
        ),
    }
    try_launch(b, on, &reference, launch.with_shared(1024))
        .expect("a legal launch after the refusal");
    Completion::Completed
}

/// The register-heavy kernel: at 64 threads it runs and verifies; at the device's largest
/// block it runs and verifies, or is refused, never a driver error or a wrong pixel.
pub fn register_heavy(b: &mut dyn Backend) -> Completion {
    let kernel = KernelVariant::RegisterHeavy;
    let max = b
        .limits()
        .max_threads_per_block
        .as_ref()
        .map_or(64, |m| m.value) as u32;
    let frame = Frame::generate(509, 253, 17);
    let reference = frame.reference();
    builtin::load(b, kernel, &frame).expect("the backend builds the register-heavy kernel");
    try_launch(
        b,
        (kernel, &frame),
        &reference,
        Launch::linear(BlockSize::linear(max.min(64)), 8),
    )
    .expect("the register-heavy kernel at 64 threads");
    let facts = b.kernel_facts().clone();
    match try_launch(
        b,
        (kernel, &frame),
        &reference,
        Launch::linear(BlockSize::linear(max), 4),
    ) {
        Ok(()) => crate::show!(
            "{} runs the register-heavy kernel at {max} threads ({:?} registers)",
            b.api(),
            facts.registers
        ),
        Err(why) => crate::show!("{} refuses {max} threads: {why}", b.api()),
    }
    Completion::Completed
}
