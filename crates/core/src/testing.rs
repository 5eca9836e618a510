//! Backends that run on the host, so the driver and reports can be tested without any GPU
//! API (wgpu-hal's `empty` backend plays the same role).
//!
//! [`HostBackend`] writes the pixels each launch's threads cover, computed from its geometry,
//! so a coverage bug in a launch shows up as it would on a device; it refuses launches above
//! its limits and frames above its memory as an API would. Its "device clock" is the host
//! clock, never used for real measurements. [`ScriptedBackend`] runs nothing and reports
//! scripted times, so the measurement protocol's arithmetic can be checked exactly.

use std::time::Instant;

use crate::api::{Api, ApiInfo, Conduct, Vocabulary};
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::frame::{Frame, WEIGHTS};
use crate::grid::nvidia_model;
use crate::guarantee::{Amount, Guarantee};
use crate::limits::{Concept, Dims, Limits, Named};
use crate::program::Language;

const WORDS: Vocabulary = Vocabulary {
    thread: "thread",
    block: "block",
    grid: "grid",
    warp: "warp",
    multiprocessor: "MP",
    launch: "launch",
};

/// The languages the providers of [`KERNEL_APIS`] declare, as they declare them.
pub const CUDA_CPP: Language = Language::new("cuda", "CUDA C++");
pub const PTX: Language = Language::new("ptx", "PTX");
pub const OPENCL_C: Language = Language::new("opencl", "OpenCL C");
pub const GLSL: Language = Language::new("glsl", "GLSL");
pub const SPIR_V: Language = Language::new("spirv", "SPIR-V").without_defines();

/// APIs under the keys a spec file's `[sources]` uses, each with its languages as its driver
/// declares them, for the spec's tests (the core knows no real API).
static KERNEL_APIS: [ApiInfo; 3] = [
    kernel_api("cuda", "CUDA", &[("cu", CUDA_CPP), ("ptx", PTX)], None),
    kernel_api("opencl", "OpenCL", &[("cl", OPENCL_C)], None),
    kernel_api(
        "vulkan",
        "Vulkan",
        &[("comp", GLSL), ("glsl", GLSL), ("spv", SPIR_V)],
        Some("main"),
    ),
];

const fn kernel_api(
    key: &'static str,
    name: &'static str,
    kernel_languages: &'static [(&'static str, Language)],
    default_entry: Option<&'static str>,
) -> ApiInfo {
    ApiInfo {
        kernel_languages,
        default_entry,
        ..bare_api(key, name, 10, &[])
    }
}

/// An API's facts with nothing but a key, a name, a rank and its guarantees.
pub const fn bare_api(
    key: &'static str,
    name: &'static str,
    rank: u16,
    guarantees: &'static [Guarantee],
) -> ApiInfo {
    ApiInfo {
        key,
        aliases: &[],
        name,
        rank,
        words: WORDS,
        guarantees,
        install_hint: "",
        host_bytes_per_pixel: 0,
        options: &[],
        conduct: Conduct::UNSTATED,
        kernel_languages: &[],
        default_entry: None,
        subgroup_probe: None,
    }
}

/// Registers the APIs a spec's `[sources]` names (cuda, opencl, vulkan).
pub fn register_kernel_apis() {
    for info in &KERNEL_APIS {
        Api::register(Api::new(info));
    }
}

static ALPHA: ApiInfo = ApiInfo {
    key: "alpha",
    aliases: &[],
    name: "Alpha",
    rank: 0,
    words: WORDS,
    guarantees: &[],
    install_hint: "install alpha",
    host_bytes_per_pixel: 0,
    options: &[],
    conduct: Conduct::UNSTATED,
    kernel_languages: &[],
    default_entry: None,
    subgroup_probe: None,
};

static BETA: ApiInfo = ApiInfo {
    key: "beta",
    aliases: &["b"],
    name: "Beta",
    rank: 1,
    words: Vocabulary {
        block: "workgroup",
        ..WORDS
    },
    guarantees: &[Guarantee::at_least(
        Concept::MaxThreadsPerBlock,
        Amount::Count(128),
        "maxThreads",
    )],
    install_hint: "install beta",
    host_bytes_per_pixel: 4,
    options: &[],
    conduct: Conduct::UNSTATED,
    kernel_languages: &[],
    default_entry: None,
    subgroup_probe: None,
};

static GAMMA: ApiInfo = ApiInfo {
    key: "gamma",
    aliases: &[],
    name: "Gamma",
    rank: 2,
    words: WORDS,
    guarantees: &[Guarantee::at_least(
        Concept::MaxThreadsPerBlock,
        Amount::Count(1),
        "MAX_THREADS",
    )],
    install_hint: "install gamma",
    host_bytes_per_pixel: 0,
    options: &[],
    conduct: Conduct::UNSTATED,
    kernel_languages: &[],
    default_entry: None,
    subgroup_probe: None,
};

/// Three made-up APIs for the core's own tests.
mod scripted;
pub use scripted::ScriptedBackend;
/// A fourth, with its own kernel language and subgroup probe, run through the whole core.
pub mod metal_like;

pub const TEST_API_A: Api = Api::new(&ALPHA);
pub const TEST_API_B: Api = Api::new(&BETA);
pub const TEST_API_C: Api = Api::new(&GAMMA);

pub struct HostBackend {
    pub identity: DeviceIdentity,
    pub limits: Limits,
    pub kernel: KernelFacts,
    /// The built-in kernel loaded, with its buffers.
    program: Option<HostProgram>,
    /// The copy's source and destination, kept while the size stays the same.
    copy: Option<(Vec<u8>, Vec<u8>)>,
    /// Rejects blocks of exactly this size, as an API would.
    pub reject: Option<u64>,
    /// Fails dispatches of blocks of exactly this size with a driver error (a fault).
    pub fault: Option<u64>,
    /// Answers residency itself with this many blocks per multiprocessor, as an occupancy API
    /// would (`None`: leaves it to the core's model).
    pub residency: Option<u32>,
    /// Notes when the backend is dropped (closed), for tests of when the core closes APIs.
    pub drop_log: Option<DropLog>,
    /// Counts the uploads (writes of the first plane), for tests of when the core uploads.
    pub uploads: Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
    /// Lends its buffers through `read_buffer_staged`, as a backend with pinned or mapped
    /// memory does (the default); `false` stages none, so the core falls back to `read_buffer`.
    pub stages: bool,
    /// What its "checking layer" says, as Vulkan's validation layers would.
    pub said: Vec<String>,
    /// A fault: runs only the grid's first row of blocks (y = 0), as an API that dropped the
    /// others would. Only the 2-D kernel, which reads blockIdx.y, leaves pixels unwritten.
    pub first_block_row_only: bool,
    /// Its device's memory is taken (by another API's copy of the frame on the same GPU): every
    /// program's buffers fail to allocate, although its limits would hold them.
    pub memory_taken: bool,
    /// The memory of the GPU it shares with other test backends: its programs' buffers are
    /// allocated from it, and freed by `release`, the next program or the backend's end.
    pub device_memory: Option<std::sync::Arc<DeviceMemory>>,
    /// What its current program holds of `device_memory`, given back when dropped.
    held: Option<Held>,
    /// `run_batch_flushed`'s scratch buffer, and how many flushes it has written.
    pub scratch: Vec<u8>,
    pub flushes: u64,
}

/// Bytes held of a made-up GPU's memory, given back when dropped.
#[derive(Debug)]
struct Held {
    memory: std::sync::Arc<DeviceMemory>,
    bytes: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        let used = &self.memory.used;
        used.fetch_sub(self.bytes, std::sync::atomic::Ordering::SeqCst);
    }
}

/// One made-up GPU's memory, shared by the test backends of the APIs that run on it.
#[derive(Debug, Default)]
pub struct DeviceMemory {
    pub capacity: u64,
    pub used: std::sync::atomic::AtomicU64,
    /// The most ever in use at once.
    pub peak: std::sync::atomic::AtomicU64,
}

impl DeviceMemory {
    pub fn new(capacity: u64) -> std::sync::Arc<DeviceMemory> {
        std::sync::Arc::new(DeviceMemory {
            capacity,
            ..DeviceMemory::default()
        })
    }
}

impl HostBackend {
    /// Gives back what the current program holds of the shared device memory.
    fn free_device_memory(&mut self) {
        self.held = None;
    }
}

/// A built-in kernel on the host: its buffers as bytes (none for a scalar), and every pixel's
/// value as the kernel computes it (made at the first dispatch after the inputs change: a
/// dispatch copies the pixels it covers, so tests stay fast in debug builds).
struct HostProgram {
    kernel: KernelVariant,
    buffers: Vec<Vec<u8>>,
    /// The 2-D kernel's width, for its rows.
    width: usize,
    values: Option<Vec<f32>>,
}

/// The language of the host's built-in "sources" (the entry names the kernel).
pub const HOST: Language = Language::new("host", "host Rust");

/// Appends its API and the time to a shared log when dropped, with the backend holding it.
pub struct DropLog {
    pub api: Api,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<(Api, Instant)>>>,
}

impl Drop for DropLog {
    fn drop(&mut self) {
        if let Ok(mut log) = self.log.lock() {
            log.push((self.api, Instant::now()));
        }
    }
}

/// What the host "device" has: a gibibyte.
pub const HOST_MEMORY: u64 = 1 << 30;
/// Shared memory per block the host backend allows.
pub const HOST_SHARED: u64 = 48 << 10;
/// Registers per block, and per thread of the register-heavy kernel: 1024 threads do not fit.
pub const HOST_REGISTER_FILE: u64 = 65536;
pub const HOST_HEAVY_REGISTERS: u64 = 100;

impl HostBackend {
    pub fn new(api: Api) -> Self {
        let limits = Limits {
            max_threads_per_block: Some(Named::new(1024, "HOST_MAX_THREADS")),
            max_block_dims: Some(Named::new(Dims([1024, 1024, 64]), "HOST_MAX_BLOCK_DIMS")),
            max_grid_dims: Some(Named::new(Dims([1 << 31, 65535, 65535]), "HOST_MAX_GRID")),
            warp_size: Some(Named::new(32, "HOST_WARP")),
            multiprocessors: Some(Named::new(4, "HOST_MPS")),
            global_mem_bytes: Some(Named::new(HOST_MEMORY, "HOST_MEMORY")),
            shared_mem_per_block: Some(Named::new(HOST_SHARED, "HOST_SHARED")),
            registers_per_block: Some(Named::new(HOST_REGISTER_FILE, "HOST_REGISTERS")),
            mp_model: nvidia_model(7, 5, "host test"),
            ..Limits::default()
        };
        HostBackend {
            identity: DeviceIdentity {
                api,
                index: 0,
                name: "host test device".into(),
                vendor: "test".into(),
                driver_version: "0".into(),
                api_version: "0".into(),
                platform: String::new(),
                kind: DeviceKind::Cpu,
                uuid: Some([7; 16]),
                pci_bus_id: None,
            },
            limits,
            kernel: KernelFacts {
                registers: Some(Named::new(16, "HOST_REGS")),
                compiled_by: "rustc".into(),
                ..Default::default()
            },
            program: None,
            copy: None,
            reject: None,
            fault: None,
            residency: None,
            drop_log: None,
            uploads: None,
            stages: true,
            said: Vec::new(),
            first_block_row_only: false,
            memory_taken: false,
            device_memory: None,
            held: None,
            scratch: Vec::new(),
            flushes: 0,
        }
    }

    fn error(&self, kind: ErrorKind, message: String) -> BackendError {
        BackendError::new(self.api(), kind, message)
    }

    fn program(&mut self) -> BackendResult<&mut HostProgram> {
        let api = self.api();
        self.program
            .as_mut()
            .ok_or_else(|| BackendError::new(api, ErrorKind::Driver, "no program loaded"))
    }

    /// Argument `arg`'s buffer.
    fn buffer(&mut self, arg: usize) -> BackendResult<&mut Vec<u8>> {
        let api = self.api();
        let p = self.program()?;
        p.values = p.values.take().filter(|_| arg == crate::builtin::OUTPUT);
        p.buffers
            .get_mut(arg)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| BackendError::new(api, ErrorKind::Driver, format!("no buffer {arg}")))
    }

    /// One dispatch: the pixels the launch's threads cover, computed from its geometry as the
    /// kernel would (so a launch that falls short leaves the same pixels unwritten as on a
    /// device). Like an API, it refuses blocks above its limits (and the size `reject` names).
    fn dispatch(&mut self, launch: Launch) -> BackendResult<()> {
        let b = launch.block;
        let dims = self.limits.max_block_dims.as_ref().map(|d| d.value.0);
        let too_big = b.threads() > Limits::value(&self.limits.max_threads_per_block).unwrap()
            || dims.is_some_and(|d| [b.x, b.y, b.z].iter().zip(d).any(|(&v, m)| v as u64 > m));
        let variant = self.program()?.kernel;
        let shared =
            variant == KernelVariant::SharedProbe && launch.shared_bytes as u64 > HOST_SHARED;
        let registers = variant == KernelVariant::RegisterHeavy
            && b.threads() * HOST_HEAVY_REGISTERS > HOST_REGISTER_FILE;
        if shared || registers {
            return Err(self.error(
                ErrorKind::LaunchRejected,
                format!("HOST_OUT_OF_RESOURCES: {launch}"),
            ));
        }
        if self.fault == Some(b.threads()) {
            return Err(self.error(ErrorKind::Driver, format!("HOST_FAULT: {launch}")));
        }
        if too_big || self.reject == Some(b.threads()) || launch.grid.blocks() == 0 {
            return Err(self.error(
                ErrorKind::LaunchRejected,
                format!(
                    "HOST_INVALID_CONFIGURATION: {launch} ({} threads)",
                    b.threads()
                ),
            ));
        }
        let rows_dropped = self.first_block_row_only;
        let p = self.program()?;
        let width = p.width;
        let values = p.values.get_or_insert_with(|| {
            let plane = |i: usize| p.buffers[i].chunks_exact(4).map(f32_of);
            let (r, g, b) = (plane(0), plane(1), plane(2));
            let rgb = r.zip(g).zip(b);
            rgb.map(|((r, g), b)| WEIGHTS[0] * r + WEIGHTS[1] * g + WEIGHTS[2] * b)
                .collect()
        });
        let out = &mut p.buffers[crate::builtin::OUTPUT];
        // Thread t writes pixel t and, in the grid-stride kernel, every `threads`-th pixel
        // after it: together, the pixels below `covered`, whatever the launch's shape.
        let n = values.len() as u64;
        let threads = launch.grid.x as u64 * launch.block.x as u64;
        let covered = match variant {
            // Fewer than three words of shared memory: the kernel writes nothing.
            KernelVariant::SharedProbe if launch.shared_bytes < 12 => 0,
            KernelVariant::OnePixelPerThread => threads.min(n),
            _ if threads > 0 => n,
            _ => 0,
        } as usize;
        let write = |out: &mut [u8], from: usize, to: usize| {
            for (o, v) in out[from * 4..to * 4]
                .chunks_exact_mut(4)
                .zip(&values[from..to])
            {
                o.copy_from_slice(&v.to_le_bytes());
            }
        };
        if rows_dropped && variant == KernelVariant::GridStride2D && covered > 0 {
            // Rows of the 2-D grid-stride loop that blocks of row y = 0 own.
            let rows = launch.block.y as usize;
            let stride = launch.grid.y as usize * rows;
            for r in (0..values.len() / width.max(1)).filter(|r| r % stride < rows) {
                write(out, r * width, (r + 1) * width);
            }
            return Ok(());
        }
        write(out, 0, covered);
        Ok(())
    }
}

fn f32_of(bytes: &[u8]) -> f32 {
    f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

impl Backend for HostBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }
    fn limits(&self) -> &Limits {
        &self.limits
    }
    fn kernel_facts(&self) -> &KernelFacts {
        &self.kernel
    }
    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: "host clock (test double)".into(),
            resolution_ns: 1.0,
        }
    }
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(self.residency.map(|blocks_per_mp| Residency {
            blocks_per_mp,
            source: format!("{} occupancy", self.identity.api),
        }))
    }
    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        let mut each = Vec::new();
        let start = Instant::now();
        for _ in 0..count {
            let t = Instant::now();
            match work {
                Work::Kernel(launch) => self.dispatch(launch)?,
                Work::Copy { bytes } => {
                    if bytes.saturating_mul(2) > HOST_MEMORY {
                        return Err(self.error(
                            ErrorKind::OutOfMemory,
                            format!("two copy buffers of {bytes} bytes exceed HOST_MEMORY"),
                        ));
                    }
                    if self.copy.as_ref().is_none_or(|c| c.0.len() as u64 != bytes) {
                        self.copy = Some((vec![1u8; bytes as usize], vec![0u8; bytes as usize]));
                    }
                    let (src, dst) = self.copy.as_mut().unwrap();
                    dst.copy_from_slice(src);
                    std::hint::black_box(dst);
                }
            }
            if stamps == Stamps::Each {
                each.push(t.elapsed().as_secs_f64() * 1e3 + 1e-6);
            }
        }
        Ok(BatchTimes {
            batch_ms: (stamps == Stamps::Batch).then(|| start.elapsed().as_secs_f64() * 1e3 + 1e-6),
            each_ms: each,
        })
    }
    /// Each dispatch timed alone after the scratch buffer is written, as a device would.
    fn run_batch_flushed(
        &mut self,
        work: Work,
        count: u32,
        bytes: u64,
    ) -> BackendResult<BatchTimes> {
        let mut each = Vec::with_capacity(count as usize);
        for i in 0..count {
            self.scratch.resize(bytes as usize, 0);
            self.scratch.fill(i as u8);
            self.flushes += 1;
            each.extend(self.run_batch(work, 1, Stamps::Each)?.each_ms);
        }
        Ok(BatchTimes {
            batch_ms: None,
            each_ms: each,
        })
    }
    fn release(&mut self) -> BackendResult<()> {
        self.program = None;
        self.copy = None;
        self.scratch = Vec::new();
        self.free_device_memory();
        Ok(())
    }
    fn copy_method(&self) -> String {
        "slice copy (test double)".into()
    }
    fn diagnostics(&self) -> Vec<String> {
        self.said.clone()
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        Some(ProgramSource {
            language: HOST,
            code: Vec::new(),
            entry: kernel.entry().into(),
            origin: "the host test double".into(),
            options: Vec::new(),
        })
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.program = None;
        let kernel = KernelVariant::ALL
            .into_iter()
            .find(|k| k.entry() == source.entry);
        let Some(kernel) = kernel.filter(|_| source.language == HOST) else {
            let why = format!("{} is no built-in kernel of the host", source.entry);
            return Err(self.error(ErrorKind::Build, why));
        };
        let bytes: u64 = args.iter().map(ProgramArg::allocation).sum();
        self.free_device_memory();
        if let Some(m) = &self.device_memory {
            use std::sync::atomic::Ordering::SeqCst;
            let was = m.used.fetch_add(bytes, SeqCst);
            if was + bytes > m.capacity {
                m.used.fetch_sub(bytes, SeqCst);
                let why = format!(
                    "buffers of {bytes} bytes: TEST_DEVICE_FULL ({was} of {} bytes in use)",
                    m.capacity
                );
                return Err(self.error(ErrorKind::OutOfMemory, why));
            }
            m.peak.fetch_max(was + bytes, SeqCst);
            self.held = Some(Held {
                memory: m.clone(),
                bytes,
            });
        }
        if self.memory_taken {
            let why = format!("buffers of {bytes} bytes: TEST_MEMORY_TAKEN by another API");
            return Err(self.error(ErrorKind::OutOfMemory, why));
        }
        if bytes > HOST_MEMORY {
            let why = format!("buffers of {bytes} bytes exceed HOST_MEMORY");
            return Err(self.error(ErrorKind::OutOfMemory, why));
        }
        let width = match (kernel, args.get(4)) {
            (KernelVariant::GridStride2D, Some(ProgramArg::Scalar { bytes, .. })) => {
                u32::from_le_bytes(bytes[..4].try_into().unwrap_or_default()) as usize
            }
            _ => 0,
        };
        let buffers = args.iter().map(|a| vec![0u8; a.allocation() as usize]);
        self.program = Some(HostProgram {
            kernel,
            buffers: buffers.collect(),
            width,
            values: None,
        });
        Ok(())
    }

    fn set_scalar(&mut self, _arg: usize, _bytes: &[u8]) -> BackendResult<()> {
        self.program().map(|_| ())
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        if arg == 0 {
            if let Some(n) = &self.uploads {
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let api = self.api();
        let buffer = self.buffer(arg)?;
        if buffer.len() != bytes.len() {
            let why = format!("{} bytes into a buffer of {}", bytes.len(), buffer.len());
            return Err(BackendError::new(api, ErrorKind::Driver, why));
        }
        buffer.copy_from_slice(bytes);
        Ok(())
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        let buffer = self.buffer(arg)?;
        for f in fills {
            buffer[f.offset as usize..(f.offset + f.len) as usize].fill(f.byte);
        }
        Ok(true)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        let api = self.api();
        let buffer = self.buffer(arg)?;
        let at = offset as usize;
        let Some(from) = buffer.get(at..at + out.len()) else {
            let why = format!(
                "{} bytes at {offset} of a buffer of {}",
                out.len(),
                buffer.len()
            );
            return Err(BackendError::new(api, ErrorKind::Driver, why));
        };
        out.copy_from_slice(from);
        Ok(())
    }

    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let stages = self.stages;
        let buffer = self.buffer(arg)?;
        Ok(stages.then_some(buffer.as_slice()))
    }
}

/// A result of `api` on the host test device with no rows, for report tests.
pub fn empty_result(api: Api) -> crate::sweep::SweepResult {
    let host = HostBackend::new(api);
    crate::sweep::SweepResult {
        api,
        device: host.identity.clone(),
        limits: host.limits.clone(),
        kernel: host.kernel.clone(),
        timer: host.timer(),
        frame: Frame::generate(4, 4, 1).info(),
        policy: crate::grid::GridPolicy::Wave,
        grid_source: String::new(),
        protocol: crate::measure::Protocol::default(),
        rows: Vec::new(),
        suggestion: None,
        copy: None,
        error: None,
        program: None,
        clocks: None,
        clocks_moved: None,
    }
}

/// A row of `block` that has not run yet.
pub fn empty_row(block: BlockSize) -> crate::sweep::SweepRow {
    crate::sweep::SweepRow::new(block)
}

/// Ten identical per-dispatch times of `mean_ms`.
pub fn timing(mean_ms: f64) -> crate::measure::Timing {
    let samples = vec![mean_ms; 10];
    crate::measure::Timing {
        discipline: crate::measure::Discipline::Batch,
        reps: 10,
        batch_ms: Some(mean_ms * 10.0),
        stats: crate::measure::TimeStats::of(&samples, None).expect("ten samples"),
        samples_ms: samples,
        noise: None,
        clock: None,
        flush_bytes: None,
    }
}

#[cfg(test)]
#[path = "testing_tests.rs"]
mod tests;
