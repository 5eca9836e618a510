//! A user's kernel through the OpenCL backend (`load_program`, `write_buffer`, `read_buffer`,
//! and `run_batch` with the program current), on every device this machine has: values at
//! two block sizes, build errors with the compiler's log, argument counts, `__local`
//! arguments, scalars, the dispatch deadline (a built-in kernel's too).

mod common;

use std::process::{Command, ExitCode};
use std::time::Instant;

use blocksweep_conformance::{ignored, BatchExt, Suite};
use blocksweep_core::builtin;
use blocksweep_core::program::{Language, ScalarType};
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, ErrorKind, Fill, Frame, KernelVariant, Launch, ProgramArg,
    ProgramSource, Stamps, Work,
};
use blocksweep_opencl::{take_release_errors, OpenClBackend};
use common::{open_device, run_child, PASSED};

const SAXPY: &str = "
__kernel void saxpy(__global const float* x, __global float* y, float a, ulong n) {
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        y[i] = a * x[i] + y[i];
    }
}";

fn source(code: &str, entry: &str) -> ProgramSource {
    ProgramSource {
        language: blocksweep_opencl::OPENCL_C,
        code: code.as_bytes().to_vec(),
        entry: entry.into(),
        origin: format!("tests/{entry}.cl"),
        options: vec!["-cl-std=CL1.2".into()],
    }
}

fn buffer(bytes: usize) -> ProgramArg {
    ProgramArg::buffer(bytes as u64)
}

fn scalar<const N: usize>(ty: ScalarType, bytes: [u8; N]) -> ProgramArg {
    ProgramArg::Scalar {
        ty,
        bytes: bytes.to_vec(),
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn saxpy_args(n: usize, a: f32) -> Vec<ProgramArg> {
    vec![
        buffer(n * 4),
        buffer(n * 4),
        scalar(ScalarType::F32, a.to_le_bytes()),
        scalar(ScalarType::U64, (n as u64).to_le_bytes()),
    ]
}

fn facts_entry(b: &OpenClBackend, key: &str) -> Option<String> {
    let facts = b.kernel_facts();
    facts
        .extra
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

/// y = a*x + y over n values with a grid-stride loop, at two block sizes whose grids cover
/// fewer threads than values; integers keep the sums exact under any rounding or fusing.
fn saxpy_is_right_at_two_block_sizes(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let (n, a) = (10_007usize, 3.0f32);
    b.load_program(&source(SAXPY, "saxpy"), &saxpy_args(n, a))
        .unwrap();
    assert_eq!(facts_entry(&b, "kernel").as_deref(), Some("saxpy"));
    assert_eq!(facts_entry(&b, "source").as_deref(), Some("tests/saxpy.cl"));
    let facts = b.kernel_facts();
    assert_eq!(
        facts.max_block.as_ref().unwrap().name,
        "CL_KERNEL_WORK_GROUP_SIZE"
    );
    assert!(facts.shared_bytes.is_some() && facts.private_bytes.is_some());
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    b.write_buffer(0, &f32_bytes(&x)).unwrap();
    for block in [64, 256] {
        b.write_buffer(1, &f32_bytes(&y)).unwrap();
        let launch = Launch::linear(BlockSize::linear(block), 7);
        let times = b.dispatch_each(launch, 0, 1).unwrap();
        assert!(times.iter().all(|t| t.is_finite() && *t > 0.0), "{times:?}");
        let mut out = vec![0u8; n * 4];
        b.read_buffer(1, 0, &mut out).unwrap();
        for (i, v) in u32s(&out).into_iter().map(f32::from_bits).enumerate() {
            assert_eq!(v, (5 * i) as f32, "y[{i}] at block {block}");
        }
    }
    // Whole-buffer copies only, and only of buffers.
    let e = b.write_buffer(1, &[0u8; 12]).unwrap_err();
    assert!(
        e.message.contains("12 bytes") && e.message.contains("40028"),
        "{e}"
    );
    let e = b.read_buffer(2, 0, &mut [0u8; 4]).unwrap_err();
    assert!(e.message.contains("not a buffer"), "{e}");
    assert!(b.read_buffer(9, 0, &mut [0u8; 4]).is_err());
}

/// A built-in kernel loads over a user's kernel (replacing it: its buffers are the frame's
/// planes now) and verifies, and a batch of each times on the same clock.
fn a_builtin_replaces_a_users_kernel(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let frame = Frame::generate(67, 5, 3);
    b.load_program(&source(SAXPY, "saxpy"), &saxpy_args(16, 1.0))
        .unwrap();
    let launch = Launch::linear(BlockSize::linear(64), 2);
    let user = b.run_batch(Work::Kernel(launch), 3, Stamps::Batch).unwrap();
    builtin::load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    assert_eq!(facts_entry(&b, "kernel").as_deref(), Some("grayscale"));
    builtin::poison(&mut b, frame.pixels()).unwrap();
    let t = b.run_batch(Work::Kernel(launch), 3, Stamps::Batch).unwrap();
    assert!(user.batch_ms.is_some_and(|t| t > 0.0), "{user:?}");
    assert!(t.batch_ms.is_some_and(|t| t > 0.0), "{t:?}");
    let mut out = vec![0.0; frame.r.len()];
    builtin::read(&mut b, &mut out).unwrap();
    blocksweep_core::verify::verify(&out, &frame.reference()).unwrap();
    let mut r = vec![0u8; 8];
    b.read_buffer(0, 0, &mut r).unwrap();
    assert_eq!(
        r,
        f32_bytes(&frame.r[..2]),
        "buffer 0 is the frame's r plane"
    );
    drop(b);
    assert_eq!(take_release_errors(), Vec::<String>::new());
}

fn build_errors_carry_the_compilers_log(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let broken = "__kernel void broken(__global float* out) { out[0] = undeclared_name; }";
    let e = b
        .load_program(&source(broken, "broken"), &[buffer(4)])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(e.message.contains("tests/broken.cl"), "{e}");
    assert!(e.message.contains("CL_BUILD_PROGRAM_FAILURE"), "{e}");
    assert!(
        e.message.contains("undeclared_name"),
        "the log names it: {e}"
    );
    // A failed load leaves no kernel to run rather than the previous one.
    let launch = Launch::linear(BlockSize::linear(1), 1);
    assert!(b.dispatch_each(launch, 0, 1).is_err());

    let mut cuda = source(SAXPY, "saxpy");
    cuda.language = Language::new("cuda", "CUDA C++");
    let e = b.load_program(&cuda, &saxpy_args(4, 1.0)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(
        e.message.contains("CUDA C++") && e.message.contains("OpenCL C"),
        "{e}"
    );

    let e = b
        .load_program(&source(SAXPY, "saxpie"), &saxpy_args(4, 1.0))
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(
        e.message.contains("`saxpie`") && e.message.contains("saxpy"),
        "{e}"
    );
}

fn argument_mismatches_are_build_errors(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let mut three = saxpy_args(4, 1.0);
    three.pop();
    let e = b.load_program(&source(SAXPY, "saxpy"), &three).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(
        e.message
            .contains("the kernel takes 4 arguments, the spec declares 3"),
        "{e}"
    );
    let mut empty = saxpy_args(4, 1.0);
    empty[1] = buffer(0);
    let e = b.load_program(&source(SAXPY, "saxpy"), &empty).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(e.message.contains("0 bytes"), "{e}");
    // The program still loads once the arguments are right.
    b.load_program(&source(SAXPY, "saxpy"), &saxpy_args(4, 1.0))
        .unwrap();
}

const GROUP_SUMS: &str = "
__kernel void group_sums(__global const uint* in, __global uint* out, __local uint* part) {
    uint l = get_local_id(0);
    part[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (l < s) part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = part[0];
}";

/// A `__local` argument of the launch's shared_bytes: one sum per work-group, at two sizes.
fn local_arguments_take_the_launchs_shared_bytes(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let n = 1024usize;
    let args = [buffer(n * 4), buffer(n * 4), ProgramArg::Local];
    b.load_program(&source(GROUP_SUMS, "group_sums"), &args)
        .unwrap();
    let input: Vec<u32> = (0..n as u32).map(|i| i * 7 % 1000).collect();
    b.write_buffer(
        0,
        &input
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    for block in [32u32, 128] {
        let groups = n as u32 / block;
        let launch = Launch::linear(BlockSize::linear(block), groups).with_shared(block * 4);
        b.dispatch_each(launch, 1, 1).unwrap();
        let mut out = vec![0u8; n * 4];
        b.read_buffer(1, 0, &mut out).unwrap();
        let sums = u32s(&out);
        for (g, chunk) in input.chunks(block as usize).enumerate() {
            assert_eq!(sums[g], chunk.iter().sum::<u32>(), "group {g} of {block}");
        }
    }
    let none = Launch::linear(BlockSize::linear(32), 32);
    let e = b.dispatch_each(none, 0, 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
    assert!(e.message.contains("shared_bytes"), "{e}");
}

const SCALARS: &str = "
__kernel void scalars(__global ulong* out, float f, uint u, ulong w, long s, int i) {
    if (get_global_id(0) == 0) {
        out[0] = as_uint(f);
        out[1] = u;
        out[2] = w;
        out[3] = (ulong)s;
        out[4] = (ulong)(long)i;
    }
}";

/// Every scalar type a spec declares arrives bit for bit, in order, whatever its size.
/// `fill_buffer` sets the bytes of its ranges on the device and no other, at any offset.
fn fill_sets_its_range_only(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let args = [buffer(64), scalar(ScalarType::U64, 1u64.to_le_bytes())];
    b.load_program(&source(SPIN, "spin"), &args).unwrap();
    b.write_buffer(0, &[7u8; 64]).unwrap();
    let fill = |offset, len, byte| Fill { offset, len, byte };
    assert!(b
        .fill_buffer(0, &[fill(3, 10, 0xA5), fill(13, 20, 0xA5)])
        .unwrap());
    let mut out = [0u8; 64];
    b.read_buffer(0, 0, &mut out).unwrap();
    let want: Vec<u8> = (0..64)
        .map(|i| if (3..33).contains(&i) { 0xA5 } else { 7 })
        .collect();
    assert_eq!(out.to_vec(), want);
    assert!(b.fill_buffer(0, &[fill(60, 8, 0)]).is_err(), "past the end");
}

fn scalars_arrive_intact(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let (f, u, w, s, i) = (
        -1.5e-3f32,
        0xDEAD_BEEFu32,
        0x0123_4567_89AB_CDEFu64,
        -1_234_567_890_123i64,
        -42i32,
    );
    let args = [
        buffer(5 * 8),
        scalar(ScalarType::F32, f.to_le_bytes()),
        scalar(ScalarType::U32, u.to_le_bytes()),
        scalar(ScalarType::U64, w.to_le_bytes()),
        scalar(ScalarType::I64, s.to_le_bytes()),
        scalar(ScalarType::I32, i.to_le_bytes()),
    ];
    b.load_program(&source(SCALARS, "scalars"), &args).unwrap();
    b.dispatch_each(Launch::linear(BlockSize::linear(1), 1), 0, 1)
        .unwrap();
    let mut out = vec![0u8; 5 * 8];
    b.read_buffer(0, 0, &mut out).unwrap();
    let got: Vec<u64> = out
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        got,
        [f.to_bits() as u64, u as u64, w, s as u64, i as i64 as u64]
    );
    // A scalar whose size the kernel's argument contradicts is the spec's error.
    let mut wrong = args.to_vec();
    wrong[3] = scalar(ScalarType::U32, 7u32.to_le_bytes());
    let e = b
        .load_program(&source(SCALARS, "scalars"), &wrong)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(e.message.contains("argument 3"), "{e}");
}

const SPIN: &str = "
__kernel void spin(__global uint* out, ulong iters) {
    uint acc = get_global_id(0);
    for (ulong i = 0; i < iters; i++) acc = acc * 1664525u + 1013904223u;
    out[get_global_id(0)] = acc;
}";

/// The deadline is read per call, so the trial runs in a child process with
/// BLOCKSWEEP_DEADLINE_S set for it alone.
fn a_kernel_past_the_deadline_is_an_error() {
    let exe = std::env::current_exe().unwrap();
    run_child(
        Command::new(exe).env("BLOCKSWEEP_DEADLINE_S", "0.5"),
        "child_deadline",
    );
}

/// A kernel calibrated to run about 3 s returns the deadline's error within about 0.5 s, and
/// every later call is an error, without waiting for the kernel.
fn child_deadline() {
    assert_eq!(std::env::var("BLOCKSWEEP_DEADLINE_S").as_deref(), Ok("0.5"));
    let devs = blocksweep_opencl::probe().expect("the parent test found devices");
    for d in &devs {
        let mut b = open_device(d);
        let one = Launch::linear(BlockSize::linear(1), 1);
        let load = |b: &mut OpenClBackend, iters: u64| {
            let args = [buffer(4), scalar(ScalarType::U64, iters.to_le_bytes())];
            b.load_program(&source(SPIN, "spin"), &args).unwrap();
        };
        let calibration = 1u64 << 22;
        load(&mut b, calibration);
        // The first dispatch may carry PoCL's compile of the work-group function: timed, it
        // made the "3 s" kernel end in time.
        b.dispatch_each(one, 1, 1).unwrap();
        let ms = b.dispatch_each(one, 1, 1).unwrap()[0];
        let mut iters = (calibration as f64 * 3000.0 / ms.max(1e-3)) as u64;
        println!(
            "{}: {calibration} iterations in {ms:.2} ms; {iters} for 3 s",
            d.name
        );
        // A kernel that still ends in time (a busy machine threw the calibration off) is run
        // again four times longer, at most three times.
        let mut rounds = 0;
        let (e, took) = loop {
            load(&mut b, iters);
            let started = Instant::now();
            match b.run_batch(Work::Kernel(one), 1, Stamps::None) {
                Err(e) => break (e, started.elapsed()),
                Ok(_) if rounds < 3 => (iters, rounds) = (iters * 4, rounds + 1),
                Ok(_) => panic!("{iters} iterations ended within 0.5 s"),
            }
        };
        assert_eq!(e.kind, ErrorKind::Driver, "{e}");
        // The deadline's own words prove it fired (the kernel was sized for 3 s and more);
        // how soon is a benchmark's question (tools/bench/deadline-timing.sh), not a test's.
        assert!(e.message.contains("did not finish within 0.5 s"), "{e}");
        let later = b.read_buffer(0, 0, &mut [0u8; 4]).unwrap_err();
        assert!(later.message.contains("unusable"), "{later}");
        assert!(b.run_batch(Work::Kernel(one), 1, Stamps::None).is_err());
        let dropped = Instant::now();
        drop(b);
        println!("error after {took:?}, dropped in {:?}", dropped.elapsed());
        builtin_past_the_deadline(d);
    }
    println!("{PASSED}");
}

/// The deadline covers a built-in kernel too: a batch of the register-heavy one on one
/// work-item, long enough for about 3 s, returns its error within about 0.5 s.
fn builtin_past_the_deadline(d: &DeviceIdentity) {
    let mut b = open_device(d);
    let kernel = KernelVariant::RegisterHeavy;
    builtin::load(&mut b, kernel, &Frame::generate(256, 256, 1)).unwrap();
    let one = Launch::linear(BlockSize::linear(1), 1);
    b.dispatch_each(one, 1, 1).unwrap();
    let ms = b.dispatch_each(one, 0, 1).unwrap()[0];
    let count = (3000.0 / ms.max(1e-3)).clamp(1.0, 1e6) as u32;
    println!("{}: {kernel:?} {ms:.2} ms; {count} for 3 s", d.name);
    let started = Instant::now();
    let e = b
        .run_batch(Work::Kernel(one), count, Stamps::None)
        .unwrap_err();
    println!("{kernel:?}: error after {:?}", started.elapsed());
    assert!(e.message.contains("did not finish within 0.5 s"), "{e}");
    assert!(builtin::poison(&mut b, 1).is_err(), "unusable after it");
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_opencl::PROVIDER)
        .each_device("saxpy_two_block_sizes", saxpy_is_right_at_two_block_sizes)
        .each_device(
            "builtin_replaces_user_kernel",
            a_builtin_replaces_a_users_kernel,
        )
        .each_device(
            "build_errors_carry_the_log",
            build_errors_carry_the_compilers_log,
        )
        .each_device("argument_mismatches", argument_mismatches_are_build_errors)
        .each_device(
            "local_arguments_take_shared_bytes",
            local_arguments_take_the_launchs_shared_bytes,
        )
        .each_device("scalars_arrive_intact", scalars_arrive_intact)
        .each_device("fill_sets_its_range_only", fill_sets_its_range_only)
        .all_devices("deadline", |_| a_kernel_past_the_deadline_is_an_error())
        .test(ignored("child_deadline"), child_deadline)
        .run()
}
