//! A user's kernel on every CUDA device this machine has: saxpy at two block sizes (with a
//! local argument CUDA skips, and a C++ entry found by its lowered name), the build errors
//! (NVRTC's log, a missing entry, another language, a contradicting argument list), a
//! refused launch, then a kernel's fault and a missed deadline, each leaving the backend
//! failed without a hang. Without a CUDA device every trial is reported as ignored with the
//! reason (failed under BLOCKSWEEP_REQUIRE=cuda).
//!
//! The trials share the device's primary context, which a fault poisons for every backend on
//! it, so they take turns (one lock), and the fault and the deadline run in one trial, in that
//! order: the fault's context must be released before a fresh one can be had, while the
//! deadline leaves its context (still running the kernel) to the process's exit.

mod common;

use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use blocksweep_conformance::{show, skip, Completion, Suite};
use blocksweep_core::builtin::load_kernel;
use blocksweep_core::program::deadline;
use blocksweep_core::{
    Backend, BackendError, BlockSize, DeviceIdentity, ErrorKind, KernelVariant, Language, Launch,
    ProgramArg, ProgramSource, ScalarType, Stamps, Work,
};
use blocksweep_cuda::{open, CudaBackend, CudaOptions};
use common::nvrtc_loads;

static GPU: Mutex<()> = Mutex::new(());

const SAXPY: &str = r#"
extern "C" __global__ void saxpy(float* y, const float* x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// No `extern "C"`: found through nvrtcGetLoweredName.
const SCALE: &str = r#"
__global__ void scale(float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
"#;

/// Writes about 4 TB past its buffer: CUDA_ERROR_ILLEGAL_ADDRESS.
const SCRIBBLE: &str = r#"
extern "C" __global__ void scribble(float* y, unsigned long long far) {
    y[far + threadIdx.x] = 1.0f;
}
"#;

/// Spins on the global timer for `ns` nanoseconds, then ends by itself.
const SPIN: &str = r#"
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
"#;

const N: u32 = 10_000;

fn cuda(code: &str, entry: &str) -> ProgramSource {
    ProgramSource {
        language: blocksweep_cuda::CUDA_CPP,
        code: code.as_bytes().to_vec(),
        entry: entry.into(),
        origin: format!("tests/program.rs/{entry}.cu"),
        options: Vec::new(),
    }
}

fn scalar<const K: usize>(ty: ScalarType, bytes: [u8; K]) -> ProgramArg {
    ProgramArg::Scalar {
        ty,
        bytes: bytes.to_vec(),
    }
}

/// y, x, a local argument (OpenCL's; CUDA passes nothing for it), a = 2, n.
fn saxpy_args() -> Vec<ProgramArg> {
    vec![
        ProgramArg::buffer(4 * N as u64),
        ProgramArg::buffer(4 * N as u64),
        ProgramArg::Local,
        scalar(ScalarType::F32, 2.0f32.to_le_bytes()),
        scalar(ScalarType::U32, N.to_le_bytes()),
    ]
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn read_floats(b: &mut CudaBackend, arg: usize) -> Vec<f32> {
    let mut bytes = vec![0u8; 4 * N as usize];
    b.read_buffer(arg, 0, &mut bytes).expect("read_buffer");
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn open_device(d: &DeviceIdentity) -> CudaBackend {
    open(d.index, &CudaOptions::default())
        .unwrap_or_else(|e| panic!("open({}) [{}]: {e}", d.index, d.name))
}

/// `None` where NVRTC loads; else checks that load_program says so, and skips (a failure
/// when BLOCKSWEEP_REQUIRE names nvrtc).
fn without_nvrtc(d: &DeviceIdentity) -> Option<Completion> {
    if nvrtc_loads() {
        return None;
    }
    let mut b = open_device(d);
    let e = b
        .load_program(&cuda(SAXPY, "saxpy"), &saxpy_args())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unavailable, "{e}");
    assert!(e.message.contains("libnvrtc"), "{e}");
    Some(skip("libnvrtc not found: user kernels need NVRTC"))
}

fn launch(block: u32) -> Launch {
    Launch::linear(BlockSize::linear(block), N.div_ceil(block))
}

/// Runs saxpy once at `block` on fresh inputs and checks every output.
fn saxpy_once(b: &mut CudaBackend, block: u32) {
    let x: Vec<f32> = (0..N).map(|i| i as f32).collect();
    b.write_buffer(0, &floats(&vec![1.0; N as usize])).unwrap();
    b.write_buffer(1, &floats(&x)).unwrap();
    let t = b
        .run_batch(Work::Kernel(launch(block)), 1, Stamps::Batch)
        .unwrap();
    assert!(t.batch_ms.unwrap() > 0.0, "{t:?}");
    let y = read_floats(b, 0);
    for (i, (y, x)) in y.iter().zip(&x).enumerate() {
        assert_eq!(*y, 2.0 * x + 1.0, "y[{i}] at block {block}");
    }
}

fn saxpy_at_two_block_sizes(d: &DeviceIdentity) -> Completion {
    let _gpu = GPU.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(skipped) = without_nvrtc(d) {
        return skipped;
    }
    let mut b = open_device(d);
    b.load_program(&cuda(SAXPY, "saxpy"), &saxpy_args())
        .expect("saxpy builds");
    let f = b.kernel_facts().clone();
    show!("saxpy: {f:#?}");
    assert_eq!(
        f.registers.as_ref().unwrap().name,
        "CU_FUNC_ATTRIBUTE_NUM_REGS"
    );
    let max = f.max_block.as_ref().unwrap();
    assert_eq!(max.name, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK");
    assert!(max.value >= 256, "{max:?}");
    assert!(f.compiled_by.starts_with("NVRTC"), "{}", f.compiled_by);
    assert!(
        f.extra.contains(&("entry".into(), "saxpy".into())),
        "{:?}",
        f.extra
    );
    for block in [64, 256] {
        saxpy_once(&mut b, block);
        let r = b.residency(BlockSize::linear(block)).unwrap().unwrap();
        assert_eq!(r.source, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        assert!(r.blocks_per_mp >= 1, "{r:?}");
    }
    let each = b
        .run_batch(Work::Kernel(launch(128)), 5, Stamps::Each)
        .unwrap();
    assert_eq!(each.each_ms.len(), 5);
    // Caller mistakes are errors that leave the backend usable.
    let e = b.write_buffer(2, &[0; 4]).unwrap_err();
    assert!(e.message.contains("not a buffer"), "{e}");
    let e = b.write_buffer(0, &[0; 4]).unwrap_err();
    assert!(e.message.contains("4 bytes for a 40000-byte buffer"), "{e}");
    // A block over the limits is the driver's refusal, by name.
    let e = b
        .run_batch(Work::Kernel(launch(2048)), 1, Stamps::None)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
    assert!(e.message.contains("CUDA_ERROR_INVALID_VALUE"), "{e}");
    saxpy_once(&mut b, 256);
    // Back to a built-in kernel, and its facts.
    load_kernel(&mut b, KernelVariant::GridStride, 64, 16).unwrap();
    assert!(b
        .kernel_facts()
        .extra
        .contains(&("entry".into(), "grayscale".into())));
    Completion::Completed
}

fn a_cpp_entry_is_found_by_its_lowered_name(d: &DeviceIdentity) -> Completion {
    let _gpu = GPU.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(skipped) = without_nvrtc(d) {
        return skipped;
    }
    let mut b = open_device(d);
    let args = vec![
        ProgramArg::buffer(4 * N as u64),
        scalar(ScalarType::F32, 3.0f32.to_le_bytes()),
        scalar(ScalarType::U32, N.to_le_bytes()),
    ];
    b.load_program(&cuda(SCALE, "scale"), &args)
        .expect("scale builds");
    let lowered = b
        .kernel_facts()
        .extra
        .iter()
        .find(|(k, _)| k == "nvrtcGetLoweredName");
    show!("lowered: {lowered:?}");
    assert!(
        lowered.is_some_and(|(_, v)| v.starts_with("_Z")),
        "{lowered:?}"
    );
    b.write_buffer(0, &floats(&vec![2.0; N as usize])).unwrap();
    b.run_batch(Work::Kernel(launch(128)), 1, Stamps::None)
        .unwrap();
    assert!(read_floats(&mut b, 0).iter().all(|&y| y == 6.0));
    Completion::Completed
}

fn build_errors_say_why(d: &DeviceIdentity) -> Completion {
    let _gpu = GPU.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(skipped) = without_nvrtc(d) {
        return skipped;
    }
    let mut b = open_device(d);
    let bad = "extern \"C\" __global__ void k(float* y) { this is not C++ }";
    let e = b
        .load_program(&cuda(bad, "k"), &[ProgramArg::buffer(4)])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(e.message.contains("NVRTC_ERROR_COMPILATION"), "{e}");
    assert!(e.message.contains("k.cu(1): "), "NVRTC's log: {e}");
    let e = b
        .load_program(&cuda(SAXPY, "nope"), &saxpy_args())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    assert!(
        e.message
            .contains("entry 'nope' not found: declare it extern \"C\" __global__"),
        "{e}"
    );
    let mut cl = cuda("__kernel void saxpy() {}", "saxpy");
    cl.language = Language::new("opencl", "OpenCL C");
    let e = b.load_program(&cl, &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build, "{e}");
    // Three arguments for four parameters: refused where the driver can tell (CUDA 12.4+).
    let mut three = saxpy_args();
    three.pop();
    match b.load_program(&cuda(SAXPY, "saxpy"), &three) {
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Build, "{e}");
            assert!(e.message.contains("takes 4 parameters"), "{e}");
            assert!(e.message.contains("but 3 arguments are declared"), "{e}");
        }
        Ok(()) => {
            let f = b.kernel_facts();
            show!("no cuFuncGetParamInfo here: {:?}", f.extra);
            assert!(f
                .extra
                .iter()
                .any(|(k, v)| k == "parameters" && v.contains("not checked")));
        }
    }
    // None of these leaves the backend unusable.
    b.load_program(&cuda(SAXPY, "saxpy"), &saxpy_args())
        .unwrap();
    saxpy_once(&mut b, 128);
    Completion::Completed
}

/// Every later call fails with the first error, without the driver.
fn is_failed(b: &mut CudaBackend, first: &BackendError) {
    let later = [
        b.residency(BlockSize::linear(64)).err(),
        b.write_buffer(0, &[0; 4]).err(),
        b.run_batch(Work::Kernel(launch(64)), 1, Stamps::None).err(),
        b.load_program(&cuda(SAXPY, "saxpy"), &saxpy_args()).err(),
    ];
    for e in later {
        let e = e.expect("a failed backend fails every call");
        assert_eq!(e.kind, ErrorKind::Driver, "{e}");
        assert!(e.message.contains("unusable"), "{e}");
        assert!(
            e.message.contains(&first.message),
            "{e} does not name {first}"
        );
    }
}

fn a_fault_then_a_missed_deadline_leave_the_backend_failed(d: &DeviceIdentity) -> Completion {
    let _gpu = GPU.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(skipped) = without_nvrtc(d) {
        return skipped;
    }
    // The missed deadline first: a fault leaves the device's primary context unusable for
    // the rest of the process (seen on the H200: a later cuDevicePrimaryCtxRetain returned
    // CUDA_ERROR_ILLEGAL_ADDRESS), so nothing can run after it.
    let mut b = open_device(d);
    b.load_program(&cuda(SAXPY, "saxpy"), &saxpy_args())
        .unwrap();
    saxpy_once(&mut b, 256);
    let limit = deadline();
    let ns = (limit + Duration::from_secs(2)).as_nanos() as u64;
    let spin = [scalar(ScalarType::U64, ns.to_le_bytes())];
    b.load_program(&cuda(SPIN, "spin"), &spin).unwrap();
    let t = Instant::now();
    let late = b
        .run_batch(
            Work::Kernel(Launch::linear(BlockSize::linear(32), 1)),
            1,
            Stamps::Batch,
        )
        .unwrap_err();
    let waited = t.elapsed();
    show!("deadline: {late} after {waited:?}");
    assert_eq!(late.kind, ErrorKind::Driver, "{late}");
    let words = format!("the kernel did not finish within {} s", limit.as_secs_f64());
    assert!(late.message.contains(&words), "{late}");
    // Never before the deadline (its words say it fired); how soon after it, and how soon
    // the teardown ends, is tools/bench/deadline-timing.sh's question, not a test's.
    assert!(waited >= limit, "{waited:?}");
    is_failed(&mut b, &late);
    let t = Instant::now();
    drop(b);
    show!("teardown took {:?}", t.elapsed());
    // Let the abandoned kernel end before the next one is timed against the deadline.
    std::thread::sleep(Duration::from_secs(3));

    let mut b = open_device(d);
    let args = [
        ProgramArg::buffer(4096),
        scalar(ScalarType::U64, (1u64 << 40).to_le_bytes()),
    ];
    b.load_program(&cuda(SCRIBBLE, "scribble"), &args).unwrap();
    let fault = b
        .run_batch(Work::Kernel(launch(32)), 1, Stamps::None)
        .unwrap_err();
    show!("fault: {fault}");
    assert_eq!(fault.kind, ErrorKind::Driver, "{fault}");
    assert!(fault.message.contains("CUDA_ERROR_"), "{fault}");
    is_failed(&mut b, &fault);
    let t = Instant::now();
    drop(b);
    show!("teardown took {:?}", t.elapsed());
    // After the fault, opening again either works or says the sticky error: never a hang.
    match open(d.index, &CudaOptions::default()) {
        Ok(_) => show!("reopened after the fault"),
        Err(e) => {
            show!("reopening after the fault: {e}");
            assert!(e.to_string().contains("CUDA_ERROR_"), "{e}");
        }
    }
    Completion::Completed
}

fn main() -> ExitCode {
    // Short, so the deadline trial is quick; set before any trial's thread starts.
    if std::env::var_os("BLOCKSWEEP_DEADLINE_S").is_none() {
        std::env::set_var("BLOCKSWEEP_DEADLINE_S", "0.5");
    }
    Suite::new(&blocksweep_cuda::PROVIDER)
        .each_device("saxpy_at_two_block_sizes", saxpy_at_two_block_sizes)
        .each_device(
            "a_cpp_entry_is_found_by_its_lowered_name",
            a_cpp_entry_is_found_by_its_lowered_name,
        )
        .each_device("build_errors_say_why", build_errors_say_why)
        .each_device(
            "a_fault_then_a_missed_deadline_leave_the_backend_failed",
            a_fault_then_a_missed_deadline_leave_the_backend_failed,
        )
        .run()
}
