//! A made-up fourth API, declared the way an API crate declares a real one: its own kernel
//! language, its own subgroup probe, and a provider that opens a backend which runs a user's
//! kernel. Registered in a test, it proves that nothing in the core names the real three.
//!
//! Its backend runs the frame as [`HostBackend`] does; a user's kernel is "compiled" by finding
//! `kernel void <entry>(` in the source, and runs on the host: `scale` (y = k · x over n
//! elements, in a grid-stride loop) and `subgroup_probe` (subgroups of [`SIMD_WIDTH`]
//! consecutive invocations).

use super::*;
use crate::api::ApiInfo;
use crate::program::Language;
use crate::provider::ApiProvider;
use crate::subgroup::{ProbeBuild, SubgroupProbe};

/// The made-up API's shading language.
pub const METAL_LIKE_SL: Language = Language::new("metal-like", "Metal-like shading language");

/// The width of its subgroups ("SIMD groups").
pub const SIMD_WIDTH: u32 = 8;

/// Its subgroup probe's source: the backend runs it natively; the text is what a driver would
/// ship.
pub const PROBE_SOURCE: &str = "kernel void subgroup_probe(device uint *out [[buffer(0)]]) {}\n";

static INFO: ApiInfo = ApiInfo {
    words: Vocabulary {
        thread: "thread",
        block: "threadgroup",
        grid: "threadgroup count",
        warp: "SIMD group",
        multiprocessor: "core",
        launch: "dispatchThreadgroups",
    },
    kernel_languages: &[("metal", METAL_LIKE_SL)],
    default_entry: None,
    subgroup_probe: Some(&Probe),
    over: None,
    ..bare_api("metal-like", "MetalLike", 3, &[])
};

/// The made-up API, for the core.
pub const METAL_LIKE: Api = Api::new(&INFO);

/// Probes one host "device" and opens a [`MetalLikeBackend`] on it.
pub static METAL_LIKE_PROVIDER: ApiProvider = ApiProvider {
    api: METAL_LIKE,
    probe: || Ok(vec![HostBackend::new(METAL_LIKE).identity]),
    open: |_, _| Ok(Box::new(MetalLikeBackend::new())),
};

#[derive(Debug)]
struct Probe;

impl SubgroupProbe for Probe {
    fn builds(&self, _limits: &Limits) -> Result<Vec<ProbeBuild>, String> {
        let asks = "simd_size, simdgroup_index, simd_ballot popcount";
        let origin = "kernels/subgroup.metal";
        let build = ProbeBuild::new(METAL_LIKE_SL, PROBE_SOURCE, origin, "subgroup_probe", asks);
        Ok(vec![build])
    }
}

/// The kernels its "compiler" knows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Entry {
    Scale,
    SubgroupProbe,
}

/// A loaded user's kernel: its entry, its arguments and each buffer's bytes (guards included).
struct Program {
    entry: Entry,
    args: Vec<ProgramArg>,
    buffers: Vec<Vec<u8>>,
    facts: KernelFacts,
}

/// The made-up API's backend: the host backend for the built-in kernels, plus user kernels.
pub struct MetalLikeBackend {
    host: HostBackend,
    program: Option<Program>,
    /// Whether the program, not the host's built-in kernel, is what dispatches run and buffer
    /// calls act on.
    current: bool,
    /// The largest block a loaded kernel says it takes, where it says one (its facts).
    pub kernel_max_block: Option<u64>,
    /// A bug at one block size: there `scale` adds 1 to every seventh element.
    pub wrong_at: Option<u32>,
}

impl MetalLikeBackend {
    pub fn new() -> Self {
        let mut host = HostBackend::new(METAL_LIKE);
        host.limits.warp_size = Some(Named::new(SIMD_WIDTH as u64, "threadExecutionWidth"));
        MetalLikeBackend {
            host,
            program: None,
            current: false,
            kernel_max_block: None,
            wrong_at: None,
        }
    }

    fn error(&self, kind: ErrorKind, message: impl Into<String>) -> BackendError {
        BackendError::new(METAL_LIKE, kind, message)
    }

    fn program(&mut self) -> BackendResult<&mut Program> {
        let e = self.error(ErrorKind::Driver, "no program loaded");
        self.program.as_mut().ok_or(e)
    }

    /// One dispatch of the current program, refused beyond the device's block limit.
    fn dispatch(&mut self, launch: Launch) -> BackendResult<()> {
        let b = launch.block;
        let most = Limits::value(&self.host.limits.max_threads_per_block).unwrap_or(0);
        let dims = self.host.limits.max_block_dims.as_ref().map(|d| d.value.0);
        let beyond =
            dims.is_some_and(|d| [b.x, b.y, b.z].iter().zip(d).any(|(&v, m)| v as u64 > m));
        if b.threads() > most || beyond || launch.grid.blocks() == 0 {
            let why = format!("threadgroup {} exceeds the device", launch.block);
            return Err(self.error(ErrorKind::LaunchRejected, why));
        }
        let bug = self.wrong_at == Some(launch.block.x);
        let p = self.program()?;
        match p.entry {
            Entry::Scale => scale(p, launch, bug),
            Entry::SubgroupProbe => probe(p, launch.block.threads() as u32),
        }
        Ok(())
    }
}

impl Default for MetalLikeBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// The kernel's part of buffer `arg` (between its guard bands).
fn view(p: &mut Program, arg: usize) -> &mut [u8] {
    let ProgramArg::Buffer { bytes, guard } = p.args[arg] else {
        return &mut [];
    };
    &mut p.buffers[arg][guard as usize..(guard + bytes) as usize]
}

fn scalar(p: &Program, arg: usize) -> [u8; 4] {
    match &p.args[arg] {
        ProgramArg::Scalar { bytes, .. } => bytes[..4].try_into().unwrap_or([0; 4]),
        _ => [0; 4],
    }
}

/// `scale(x, y, k, n)`: y[i] = k · x[i] for every i < n that the grid-stride loop reaches
/// (with `bug`, every seventh one is 1 more).
fn scale(p: &mut Program, launch: Launch, bug: bool) {
    let k = f32::from_le_bytes(scalar(p, 2));
    let n = u32::from_le_bytes(scalar(p, 3)) as u64;
    let threads = launch.threads().unwrap_or(0);
    let x: Vec<f32> = view(p, 0)
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let y = view(p, 1);
    let reached = if threads == 0 { 0 } else { n };
    for i in 0..reached.min(x.len() as u64) as usize {
        let off = if bug && i % 7 == 3 { 1.0 } else { 0.0 };
        y[i * 4..i * 4 + 4].copy_from_slice(&(k * x[i] + off).to_le_bytes());
    }
}

/// The probe on one threadgroup of `block`: size, SIMD group index, active lanes.
fn probe(p: &mut Program, block: u32) {
    let out = view(p, 0);
    for i in 0..block {
        let id = i / SIMD_WIDTH;
        let lanes = SIMD_WIDTH.min(block - id * SIMD_WIDTH);
        for (w, v) in [SIMD_WIDTH, id, lanes].into_iter().enumerate() {
            let at = (i as usize * 3 + w) * 4;
            out[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
}

impl Backend for MetalLikeBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.host.identity
    }
    fn limits(&self) -> &Limits {
        &self.host.limits
    }
    fn kernel_facts(&self) -> &KernelFacts {
        match (&self.program, self.current) {
            (Some(p), true) => &p.facts,
            _ => self.host.kernel_facts(),
        }
    }
    fn timer(&self) -> TimerInfo {
        self.host.timer()
    }
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.host.residency(block)
    }
    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        let Work::Kernel(launch) = work else {
            return self.host.run_batch(work, count, stamps);
        };
        if !self.current {
            return self.host.run_batch(work, count, stamps);
        }
        let start = Instant::now();
        let mut each = Vec::new();
        for _ in 0..count {
            let t = Instant::now();
            self.dispatch(launch)?;
            if stamps == Stamps::Each {
                each.push(t.elapsed().as_secs_f64() * 1e3 + 1e-6);
            }
        }
        Ok(BatchTimes {
            batch_ms: (stamps == Stamps::Batch).then(|| start.elapsed().as_secs_f64() * 1e3 + 1e-6),
            each_ms: each,
        })
    }
    fn copy_method(&self) -> String {
        self.host.copy_method()
    }
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        self.host.builtin(kernel)
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.program = None;
        self.current = false;
        if source.language == super::HOST {
            return self.host.load_program(source, args);
        }
        if source.language != METAL_LIKE_SL {
            let why = format!(
                "{} is {}; MetalLike builds {METAL_LIKE_SL}",
                source.origin, source.language
            );
            return Err(self.error(ErrorKind::Build, why));
        }
        let declared = source
            .text()
            .contains(&format!("kernel void {}(", source.entry));
        let entry = match source.entry.as_str() {
            "scale" if declared => Entry::Scale,
            "subgroup_probe" if declared => Entry::SubgroupProbe,
            e => {
                return Err(self.error(
                    ErrorKind::Build,
                    format!("{}: no kernel `{e}`", source.origin),
                ))
            }
        };
        let buffers = args
            .iter()
            .map(|a| vec![0u8; a.allocation() as usize])
            .collect();
        let facts = KernelFacts {
            compiled_by: "metal-like host compiler (test double)".into(),
            max_block: (self.kernel_max_block)
                .map(|v| Named::new(v, "maxTotalThreadsPerThreadgroup")),
            ..Default::default()
        };
        self.program = Some(Program {
            entry,
            args: args.to_vec(),
            buffers,
            facts,
        });
        self.current = true;
        Ok(())
    }

    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        match self.current {
            true => Err(self.error(ErrorKind::Unavailable, "no scalar is set after loading")),
            false => self.host.set_scalar(arg, bytes),
        }
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        match self.current {
            true => Ok(false),
            false => self.host.fill_buffer(arg, fills),
        }
    }

    /// A program's buffer lends its kernel part (between the bands), as the real backends'
    /// staging does.
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        if !self.current {
            return self.host.read_buffer_staged(arg);
        }
        let Some(p) = &self.program else {
            return Ok(None);
        };
        Ok(match (p.args.get(arg), p.buffers.get(arg)) {
            (Some(&ProgramArg::Buffer { bytes, guard }), Some(b)) => {
                b.get(guard as usize..(guard + bytes) as usize)
            }
            _ => None,
        })
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        if !self.current {
            return self.host.write_buffer(arg, bytes);
        }
        let p = self.program()?;
        match p.buffers.get_mut(arg) {
            Some(b) if b.len() == bytes.len() => {
                b.copy_from_slice(bytes);
                Ok(())
            }
            _ => Err(self.error(ErrorKind::Driver, format!("no buffer {arg} of that size"))),
        }
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        if !self.current {
            return self.host.read_buffer(arg, offset, out);
        }
        let p = self.program()?;
        let at = offset as usize;
        match p.buffers.get(arg).and_then(|b| b.get(at..at + out.len())) {
            Some(b) => {
                out.copy_from_slice(b);
                Ok(())
            }
            None => Err(self.error(ErrorKind::Driver, format!("read past buffer {arg}"))),
        }
    }
}

#[cfg(test)]
#[path = "metal_like_work.rs"]
mod work;
#[cfg(test)]
pub(crate) use work::{scale_spec, scale_workload, sweep_blocks, workload_of, SCALE_SOURCE};

#[cfg(test)]
#[path = "metal_like_tests.rs"]
mod tests;

/// `validate` of the built-in frame on this API, through the session as the CLI runs it: the
/// report the core's test checks and blocksweep-render's test draws.
pub fn validated() -> crate::validate::ValidateReport {
    use crate::provider::{ApiChoice, Provider, Registry};
    use crate::validate::{self, ValidateGroup, ValidateReport};
    let providers: [&'static dyn Provider; 1] = [&METAL_LIKE_PROVIDER];
    let registry = Registry::probe(&providers);
    let targets = registry
        .targets(&ApiChoice::Only(METAL_LIKE), None)
        .expect("the test double's one device");
    let options = crate::options::OpenOptions::default();
    let mut task = validate::Validation::default();
    let run = crate::session::run(&registry, &targets, &options, &(), &mut task);
    let run = run.expect("the run");
    assert!(run.failures.is_empty(), "{:?}", run.failures);
    let v = run.answers.into_iter().next().expect("its answer");
    ValidateReport {
        kernel: None,
        groups: vec![ValidateGroup {
            heading: None,
            apis: vec![(METAL_LIKE, "host test device".into())],
            devices: Vec::new(),
            checks: v.checks,
            resources: v.resources,
            subgroups: v.subgroups.into_iter().collect(),
        }],
    }
}
