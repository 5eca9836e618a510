//! 64-bit launch arithmetic on every API's kernel and host code, on the devices this machine
//! has (the CPU drivers in CI).
//!
//! A frame past 2^32 pixels needs 64 GiB of host memory, far beyond CI's; what can be proven
//! small is the launch: `grid x block = 2^32` threads exactly over a 64-pixel frame. That
//! product is the one number that tells 64-bit arithmetic from 32-bit: truncated to 32 bits
//! it is 0, so a host that computed the global size in 32 bits would hand the API an empty
//! launch (refused, or running nothing: the NaN poison stays and verification fails), and a
//! kernel that computed its grid-stride step in 32 bits would step by 0 and never finish (the
//! test's deadline). Any other product past 2^32 wraps to a nonzero stride that still covers a
//! small frame, and proves nothing. The grid-stride kernels of CUDA and OpenCL index in 64 bits
//! and must run it and verify every pixel; Vulkan's shader indexes in 32 bits
//! (gl_GlobalInvocationID is a uint) and must refuse it, naming that index, before the driver.
//!
//! The launch is 2^22 blocks of 1024 threads (2^20 of 4096 where the device takes work-groups
//! that large: PoCL runs each work-group as a loop on one core, and a quarter of the groups is
//! a quarter of the time); pure host arithmetic past 2^32 is unit-tested in the core
//! (frame.rs, grid.rs).

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use blocksweep_conformance::{probe, Harness};
use blocksweep_core::builtin;
use blocksweep_core::verify::verify;
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, ErrorKind, Frame, KernelVariant, Launch, OpenOptions,
    Provider, Stamps, Work,
};

/// 2^32 threads: the product that is 0 in 32 bits.
const THREADS: u64 = 1 << 32;

/// Longer than the launch takes on a 2-core CI machine, much shorter than for ever.
const DEADLINE: Duration = Duration::from_secs(120);

fn provider(d: &DeviceIdentity) -> &'static dyn Provider {
    *blocksweep_apis::all()
        .iter()
        .find(|x| x.api() == d.api)
        .expect("every API is in the provider list")
}

/// The largest power-of-two block up to 4096 threads that the device takes in one dimension.
fn block_for(b: &dyn Backend) -> u32 {
    let l = b.limits();
    let max = [
        l.max_threads_per_block.as_ref().map(|m| m.value),
        l.max_block_dims.as_ref().map(|m| m.value.0[0]),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(1024)
    .min(4096);
    1 << (63 - max.leading_zeros())
}

fn grid_of_2_pow_32_threads(d: &DeviceIdentity) {
    let mut b = provider(d)
        .open(d, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("open {}: {e}", d.name));
    let frame = Frame::generate(8, 8, 5);
    builtin::load(b.as_mut(), KernelVariant::GridStride, &frame).unwrap();
    builtin::poison(b.as_mut(), frame.pixels()).unwrap();
    let block = block_for(b.as_ref());
    let grid = THREADS / block as u64;
    assert_eq!(grid * block as u64, THREADS);
    assert_eq!((grid as u32).wrapping_mul(block), 0, "the 32-bit product");
    let launch = Launch::linear(BlockSize::linear(block), grid as u32);
    let started = Instant::now();
    let ran = run_within(b, launch, DEADLINE);
    let took = started.elapsed();
    match (d.api.key(), ran) {
        // Refused before the driver: for the shader's 32-bit index, or first by the device's
        // own group count (lavapipe's maxComputeWorkGroupCount[0] is 65535, and its largest
        // workgroup 1024 invocations, so it never reaches 2^32). WebGPU's count is at most
        // 65535 on every device (maxComputeWorkgroupsPerDimension): wgpu's validation refuses.
        ("webgpu", Err((kind, message))) => {
            assert_eq!(kind, ErrorKind::LaunchRejected, "{message}");
            assert!(
                message.contains("must be less or equal to 65535"),
                "{message}"
            );
        }
        ("webgpu", Ok(_)) => panic!("WebGPU ran {grid} x {block}: past 65535 workgroups"),
        ("vulkan", Err((kind, message))) => {
            assert_eq!(kind, ErrorKind::LaunchRejected, "{message}");
            assert!(
                message.contains("32-bit index") || message.contains("maxComputeWorkGroupCount"),
                "{message}"
            );
        }
        ("vulkan", Ok(_)) => panic!("Vulkan ran {grid} x {block}: its shader's index is 32-bit"),
        (_, Ok(out)) => {
            verify(&out, &frame.reference()).unwrap_or_else(|m| panic!("{}: {m:?}", d.name));
            eprintln!("{}: {grid} x {block} threads in {took:.2?}", d.api);
        }
        (api, Err((kind, message))) => panic!("{api} {grid} x {block}: {kind:?}: {message}"),
    }
}

type Ran = Result<Vec<f32>, (ErrorKind, String)>;

/// Runs `launch` once on `b` and reads the output back, on a thread of its own: a kernel
/// that never ends (a 32-bit stride of 0) fails the test at `deadline` instead of hanging it.
fn run_within(mut b: Box<dyn Backend>, launch: Launch, deadline: Duration) -> Ran {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let ran = b
            .run_batch(Work::Kernel(launch), 1, Stamps::None)
            .and_then(|_| {
                let mut out = vec![0f32; 64];
                builtin::read(b.as_mut(), &mut out).map(|()| out)
            })
            .map_err(|e| (e.kind, e.message));
        let _ = tx.send(ran);
    });
    rx.recv_timeout(deadline).unwrap_or_else(|_| {
        panic!("{launch:?} did not finish within {deadline:?}: a 32-bit grid-stride step?")
    })
}

fn main() -> ExitCode {
    let mut h = Harness::new();
    for &d in blocksweep_apis::all() {
        match probe(d) {
            Ok(devices) => {
                for dev in devices {
                    let name = format!(
                        "grid_of_2_pow_32_threads::{}#{} {}",
                        dev.api.key(),
                        dev.index,
                        dev.name
                    );
                    h = h.test(name, move || grid_of_2_pow_32_threads(&dev));
                }
            }
            Err(why) => h = h.unavailable(d.api(), &why, &["grid_of_2_pow_32_threads"]),
        }
    }
    h.run()
}
