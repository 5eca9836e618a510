//! [`HostBackend`]: a backend that runs on the host, writing the pixels each launch's threads
//! cover (from its geometry), refusing launches above its limits and frames above its memory as
//! an API would; its "device clock" is the host clock.

use std::time::Instant;

use crate::api::Api;
use crate::backend::*;
use crate::frame::WEIGHTS;
use crate::grid::nvidia_model;
use crate::limits::{Dims, Limits, Named};
use crate::program::Language;

pub struct HostBackend {
    pub identity: DeviceIdentity,
    pub limits: Limits,
    pub kernel: KernelFacts,
    /// The built-in kernel loaded, with its buffers.
    pub(super) program: Option<HostProgram>,
    /// The copy's source and destination, kept while the size stays the same.
    pub(super) copy: Option<(Vec<u8>, Vec<u8>)>,
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
    pub(super) held: Option<Held>,
    /// `run_batch_flushed`'s scratch buffer, and how many flushes it has written.
    pub scratch: Vec<u8>,
    pub flushes: u64,
}

/// Bytes held of a made-up GPU's memory, given back when dropped.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) memory: std::sync::Arc<DeviceMemory>,
    pub(super) bytes: u64,
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
    pub(super) fn free_device_memory(&mut self) {
        self.held = None;
    }
}

/// A built-in kernel on the host: its buffers as bytes (none for a scalar), and every pixel's
/// value as the kernel computes it (made at the first dispatch after the inputs change: a
/// dispatch copies the pixels it covers, so tests stay fast in debug builds).
pub(super) struct HostProgram {
    pub(super) kernel: KernelVariant,
    pub(super) buffers: Vec<Vec<u8>>,
    /// The 2-D kernel's width, for its rows.
    pub(super) width: usize,
    pub(super) values: Option<Vec<f32>>,
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

    pub(super) fn error(&self, kind: ErrorKind, message: String) -> BackendError {
        BackendError::new(self.api(), kind, message)
    }

    pub(super) fn program(&mut self) -> BackendResult<&mut HostProgram> {
        let api = self.api();
        self.program
            .as_mut()
            .ok_or_else(|| BackendError::new(api, ErrorKind::Driver, "no program loaded"))
    }

    /// Argument `arg`'s buffer.
    pub(super) fn buffer(&mut self, arg: usize) -> BackendResult<&mut Vec<u8>> {
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
    pub(super) fn dispatch(&mut self, launch: Launch) -> BackendResult<()> {
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

pub(super) fn f32_of(bytes: &[u8]) -> f32 {
    f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}
