//! The built-in kernels as programs on every device here: `builtin()` gives each of
//! `KernelVariant::ALL` and each verifies a small frame (read back staged and not), one pixel
//! per thread one block short leaves pixels unwritten, `set_scalar` changes what the next
//! launch sees, a shared array above the limit is refused naming it, the staged read-back
//! leaves guard bands out, and with no program loaded the backend says so.

mod common;

use std::process::ExitCode;

use blocksweep_conformance::Suite;
use blocksweep_core::builtin::{load, load_kernel, poison, prepare_launch, read, read_staged};
use blocksweep_core::verify::verify;
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, ErrorKind, Frame, GridSize, KernelVariant, Launch,
    ProgramArg, Stamps, Work,
};
use blocksweep_vulkan::VulkanBackend;
use common::open_device;

/// A launch of `kernel` that covers a `frame` of 16 x 8 or more.
fn covering(kernel: KernelVariant) -> Launch {
    match kernel {
        KernelVariant::GridStride2D => {
            Launch::new(BlockSize { x: 8, y: 4, z: 1 }, GridSize { x: 3, y: 2 })
        }
        KernelVariant::OnePixelPerThread => Launch::linear(BlockSize::linear(64), 2),
        KernelVariant::SharedProbe => Launch::linear(BlockSize::linear(64), 2).with_shared(1024),
        _ => Launch::linear(BlockSize::linear(32), 3),
    }
}

/// Poisons the output, runs `launch` of `kernel` once and reads the output back.
fn run(b: &mut VulkanBackend, kernel: KernelVariant, launch: Launch, pixels: u64) -> Vec<f32> {
    poison(b, pixels).unwrap();
    prepare_launch(b, kernel, launch).unwrap();
    b.run_batch(Work::Kernel(launch), 1, Stamps::None).unwrap();
    let mut out = vec![0f32; pixels as usize];
    read(b, &mut out).unwrap();
    out
}

fn every_builtin_verifies_a_small_frame(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(16, 8, 5);
    let reference = frame.reference();
    for kernel in KernelVariant::ALL {
        let source = b.builtin(kernel).expect("a source of every built-in");
        assert_eq!(source.language, blocksweep_vulkan::SPIR_V);
        assert_eq!(source.entry, "main");
        assert_eq!(source.origin, format!("shaders/{}.spv", kernel.entry()));
        load(&mut b, kernel, &frame).unwrap();
        let facts = b.kernel_facts();
        assert!(
            facts
                .compiled_by
                .contains("vkCreateComputePipelines (driver "),
            "{}",
            facts.compiled_by
        );
        let out = run(&mut b, kernel, covering(kernel), frame.pixels());
        assert_eq!(verify(&out, &reference), Ok(()), "{kernel:?}");
        // Staged, the same values, bit for bit (lavapipe's staging is HOST_CACHED).
        match read_staged(&mut b).unwrap() {
            Some(staged) => assert!(
                staged
                    .iter()
                    .zip(&out)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{kernel:?}"
            ),
            None => assert!(d.platform != "llvmpipe", "lavapipe lends its staging"),
        }
    }
}

fn one_per_thread_one_block_short_leaves_pixels_unwritten(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(16, 8, 6);
    let kernel = KernelVariant::OnePixelPerThread;
    load(&mut b, kernel, &frame).unwrap();
    let short = Launch::linear(BlockSize::linear(32), 3);
    let out = run(&mut b, kernel, short, frame.pixels());
    let e = verify(&out, &frame.reference()).unwrap_err();
    assert_eq!((e.index, e.bad_pixels), (96, 32), "{e:?}");
    // One block more covers it.
    let out = run(
        &mut b,
        kernel,
        Launch::linear(BlockSize::linear(32), 4),
        128,
    );
    assert_eq!(verify(&out, &frame.reference()), Ok(()));
}

fn set_scalar_changes_the_next_launch(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(16, 8, 7);
    let reference = frame.reference();
    let kernel = KernelVariant::GridStride;
    load(&mut b, kernel, &frame).unwrap();
    // n = 100 of 128: the last 28 pixels keep the poison.
    b.set_scalar(4, &100u64.to_le_bytes()).unwrap();
    let out = run(&mut b, kernel, covering(kernel), 128);
    assert_eq!(verify(&out[..100], &reference[..100]), Ok(()));
    assert!(out[100..].iter().all(|v| v.is_nan()));
    let e = b.set_scalar(4, &[0; 4]).unwrap_err();
    assert!(
        e.message.contains("a u64 scalar is 8 bytes, 4 given"),
        "{e}"
    );
    let e = b.set_scalar(3, &[0; 8]).unwrap_err();
    assert!(e.message.contains("argument 3 is not a scalar"), "{e}");
    // The shared kernel's `words` below three weights: the launch writes nothing.
    let shared = KernelVariant::SharedProbe;
    load(&mut b, shared, &frame).unwrap();
    let few = covering(shared).with_shared(8);
    assert!(run(&mut b, shared, few, 128).iter().all(|v| v.is_nan()));
    // And `words` not set (0) with a large array: nothing either, as on CUDA and OpenCL.
    b.set_scalar(5, &0u32.to_le_bytes()).unwrap();
    let launch = covering(shared);
    poison(&mut b, 128).unwrap();
    b.run_batch(Work::Kernel(launch), 1, Stamps::None).unwrap();
    let mut out = vec![0f32; 128];
    read(&mut b, &mut out).unwrap();
    assert!(out.iter().all(|v| v.is_nan()));
}

fn shared_above_the_limit_is_refused(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(16, 8, 8);
    let kernel = KernelVariant::SharedProbe;
    load(&mut b, kernel, &frame).unwrap();
    let limit = b.limits().shared_mem_per_block.clone().unwrap().value as u32;
    let above = covering(kernel).with_shared(limit + 1024);
    prepare_launch(&mut b, kernel, above).unwrap();
    let e = b
        .run_batch(Work::Kernel(above), 1, Stamps::None)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
    assert!(
        e.message
            .contains(&format!("maxComputeSharedMemorySize = {limit}")),
        "{e}"
    );
    // All of it runs and verifies; the backend is still usable after the refusal.
    let all = covering(kernel).with_shared(limit);
    let out = run(&mut b, kernel, all, frame.pixels());
    assert_eq!(verify(&out, &frame.reference()), Ok(()));
}

fn the_staged_read_leaves_the_guard_bands_out(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let source = b.builtin(KernelVariant::GridStride).unwrap();
    let mut args = blocksweep_core::builtin::args(KernelVariant::GridStride, 4, 4);
    for a in &mut args[..4] {
        *a = ProgramArg::Buffer {
            bytes: 64,
            guard: 16,
        };
    }
    b.load_program(&source, &args).unwrap();
    let whole: Vec<u8> = (0..96u8).collect();
    b.write_buffer(3, &whole).unwrap();
    match b.read_buffer_staged(3).unwrap() {
        Some(part) => assert_eq!(part, &whole[16..80]),
        None => assert!(d.platform != "llvmpipe", "lavapipe lends its staging"),
    }
    let e = b.read_buffer_staged(4).unwrap_err();
    assert!(e.message.contains("not a buffer"), "{e}");
}

fn with_no_program_the_backend_says_so(d: &DeviceIdentity) {
    let mut b = open_device(d);
    assert_eq!(b.kernel_facts(), &blocksweep_core::KernelFacts::default());
    assert_eq!(b.residency(BlockSize::linear(64)).unwrap(), None);
    let launch = Launch::linear(BlockSize::linear(64), 1);
    let e = b
        .run_batch(Work::Kernel(launch), 1, Stamps::None)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    assert!(e.message.contains("no program loaded"), "{e}");
    assert!(b.set_scalar(4, &[0; 8]).is_err());
    assert!(b.read_buffer_staged(3).is_err());
    // The copy ceiling needs no program.
    b.run_batch(Work::Copy { bytes: 4096 }, 1, Stamps::None)
        .unwrap();
    // Facts and residency of a built-in need its buffers only, not a frame's values.
    load_kernel(&mut b, KernelVariant::RegisterHeavy, 64, 4).unwrap();
    assert!(b
        .kernel_facts()
        .extra
        .iter()
        .any(|(k, v)| k == "shader" && v == "shaders/grayscale_registers.spv"));
}

/// A frame whose planes are split into pieces of 1024 pixels (as a 10 GB plane is on a GPU
/// whose allocations stop at 4 GiB) verifies on both split shaders, with grids that cross the
/// pieces' edges; poison, and reads at an offset across an edge, reach every piece.
fn planes_in_pieces_verify(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let piece = b.limits().frame_piece_bytes.clone();
    assert!(
        piece.as_ref().is_some_and(|p| p.value >= 1 << 20),
        "lavapipe has bufferDeviceAddress: {piece:?}"
    );
    assert!(b.set_frame_piece_bytes_for_tests(4096));
    let frame = Frame::generate(100, 37, 9); // 3700 pixels: 4 pieces, the last of 628
    let reference = frame.reference();
    let launches = [
        (
            KernelVariant::GridStride,
            Launch::linear(BlockSize::linear(32), 3),
        ),
        (
            KernelVariant::GridStride,
            Launch::linear(BlockSize::linear(256), 20),
        ),
        (
            KernelVariant::OnePixelPerThread,
            Launch::linear(BlockSize::linear(64), 58),
        ),
    ];
    for (kernel, launch) in launches {
        load(&mut b, kernel, &frame).unwrap();
        let shader = b
            .kernel_facts()
            .extra
            .iter()
            .find(|(k, _)| k == "shader")
            .cloned();
        let split = format!(
            "shaders/grayscale_split{}.spv",
            match kernel {
                KernelVariant::OnePixelPerThread => "_one_per_thread",
                _ => "",
            }
        );
        assert_eq!(shader.map(|s| s.1), Some(split), "{kernel:?}");
        let out = run(&mut b, kernel, launch, frame.pixels());
        assert_eq!(verify(&out, &reference), Ok(()), "{kernel:?} {launch:?}");
        assert!(
            read_staged(&mut b).unwrap().is_none(),
            "pieces are not lent"
        );
        let mut across = vec![0u8; 400];
        b.read_buffer(3, 4000, &mut across).unwrap(); // pixels 1000..1100, over an edge
                                                      // The read at an offset is the whole read's bytes there (a GPU's output may differ
                                                      // from the CPU's reference by the rounding of a fused multiply-add, which `verify`
                                                      // allows for).
        let expected: Vec<u8> = out[1000..1100]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(across, expected);
        poison(&mut b, frame.pixels()).unwrap();
        let mut out = vec![0f32; frame.pixels() as usize];
        read(&mut b, &mut out).unwrap();
        assert!(
            out.iter().all(|v| v.to_bits() == u32::MAX),
            "poison reaches every piece"
        );
    }
    // One block short leaves the last piece's tail unwritten, as with whole planes.
    let kernel = KernelVariant::OnePixelPerThread;
    let out = run(
        &mut b,
        kernel,
        Launch::linear(BlockSize::linear(64), 57),
        frame.pixels(),
    );
    let e = verify(&out, &reference).unwrap_err();
    assert_eq!((e.index, e.bad_pixels), (3648, 52), "{e:?}");
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_vulkan::PROVIDER)
        .each_device(
            "every_builtin_verifies",
            every_builtin_verifies_a_small_frame,
        )
        .each_device(
            "one_per_thread_one_block_short",
            one_per_thread_one_block_short_leaves_pixels_unwritten,
        )
        .each_device("set_scalar", set_scalar_changes_the_next_launch)
        .each_device("shared_above_the_limit", shared_above_the_limit_is_refused)
        .each_device(
            "staged_read_leaves_the_bands_out",
            the_staged_read_leaves_the_guard_bands_out,
        )
        .each_device("no_program", with_no_program_the_backend_says_so)
        .each_device("planes_in_pieces", planes_in_pieces_verify)
        .run()
}
