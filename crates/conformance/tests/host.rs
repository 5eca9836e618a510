//! The kit tested on the core's host backend (a CPU simulation of the kernels): every scenario
//! passes on it; each of a dozen broken variants of it fails the scenario meant to catch that
//! fault; and the harness reports a driver without devices as ignored trials with the reason,
//! or, under BLOCKSWEEP_REQUIRE, as one failing `driver_available` trial (checked by running
//! this binary again as a child).

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::process::{Command, ExitCode};

use blocksweep_conformance::{Harness, Suite, Target, SCENARIOS};
use blocksweep_core::testing::{HostBackend, TEST_API_A, TEST_API_C};
use blocksweep_core::{
    Api, Backend, BackendError, BackendResult, BatchTimes, BlockSize, DeviceIdentity, ErrorKind,
    Fill, KernelFacts, KernelVariant, Limits, OpenOptions, ProgramArg, ProgramSource, Provider,
    Residency, Stamps, TimerInfo, Work,
};

/// One thing a broken backend gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Poisoning the output (a fill) does nothing.
    NoPoison,
    /// Stamps::Each returns no intervals.
    NoEachStamps,
    /// Stamps::Batch returns no interval.
    NoBatchStamp,
    /// Every dispatch after a refused one fails too.
    StickyRefusal,
    /// Runs blocks above its limits instead of refusing them.
    NoRefusal,
    /// Pads writes that are too short instead of refusing them.
    PadsShortPlanes,
    /// Does not check a program's buffers against the device's memory (and "allocates"
    /// nothing).
    IgnoresMemory,
    /// Opens any index, even past the last device.
    OpensAnyIndex,
    /// Reports a zero block dimension.
    ZeroBlockDim,
    /// open() describes another device than probe() listed.
    WrongIdentity,
    /// Copies take no time.
    UntimedCopy,
    /// Copy times in seconds where milliseconds are due (a unit slip of 1000).
    CopyInSeconds,
    /// Kernel stamps 10 times what the device took.
    KernelTimesTen,
    /// Kernel stamps a tenth of what the device took.
    KernelTenth,
    /// Writes garbage when a block has a z dimension.
    Broken3d,
    /// Runs the grid-stride kernel whichever kernel is chosen.
    OneKernelOnly,
    /// Lends the output it first lent, ever after, instead of reading it back again.
    StaleStagedView,
}

struct Faulty {
    inner: HostBackend,
    fault: Option<Fault>,
    refused: bool,
    /// The z dimension of the last block dispatched.
    last_z: u32,
    /// What a backend with [`Fault::StaleStagedView`] lends.
    stale: Option<Vec<u8>>,
    /// The buffers' sizes of the program loaded.
    sizes: Vec<u64>,
}

impl Faulty {
    fn has(&self, f: Fault) -> bool {
        self.fault == Some(f)
    }
}

impl Backend for Faulty {
    fn identity(&self) -> &DeviceIdentity {
        &self.inner.identity
    }
    fn limits(&self) -> &Limits {
        &self.inner.limits
    }
    fn kernel_facts(&self) -> &KernelFacts {
        &self.inner.kernel
    }
    fn timer(&self) -> TimerInfo {
        self.inner.timer()
    }
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.inner.residency(block)
    }
    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        if self.has(Fault::StickyRefusal) && self.refused {
            let e = BackendError::new(self.api(), ErrorKind::Driver, "HOST_STICKY_ERROR");
            return Err(e);
        }
        if let Work::Kernel(l) = work {
            self.last_z = l.block.z;
        }
        if let (Some(Fault::NoRefusal), Work::Kernel(mut l)) = (self.fault, work) {
            l.block = BlockSize::linear(l.block.x.min(1024));
            return self.inner.run_batch(Work::Kernel(l), count, stamps);
        }
        let mut t = self.inner.run_batch(work, count, stamps);
        if let Err(e) = &t {
            self.refused |= e.kind == ErrorKind::LaunchRejected;
        }
        if let Ok(t) = &mut t {
            match self.fault {
                Some(Fault::NoEachStamps) => t.each_ms.clear(),
                Some(Fault::NoBatchStamp) => t.batch_ms = None,
                Some(Fault::UntimedCopy) if matches!(work, Work::Copy { .. }) => {
                    t.each_ms.iter_mut().for_each(|x| *x = 0.0);
                    t.batch_ms = t.batch_ms.map(|_| 0.0);
                }
                Some(Fault::CopyInSeconds) if matches!(work, Work::Copy { .. }) => {
                    t.each_ms.iter_mut().for_each(|x| *x /= 1e3);
                    t.batch_ms = t.batch_ms.map(|x| x / 1e3);
                }
                Some(f @ (Fault::KernelTimesTen | Fault::KernelTenth))
                    if matches!(work, Work::Kernel(_)) =>
                {
                    let k = if f == Fault::KernelTimesTen {
                        10.0
                    } else {
                        0.1
                    };
                    t.each_ms.iter_mut().for_each(|x| *x *= k);
                    t.batch_ms = t.batch_ms.map(|x| x * k);
                }
                _ => {}
            }
        }
        t
    }
    fn copy_method(&self) -> String {
        self.inner.copy_method()
    }
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        self.inner.builtin(kernel)
    }
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.sizes = args.iter().map(ProgramArg::allocation).collect();
        let bytes: u64 = self.sizes.iter().sum();
        if self.has(Fault::IgnoresMemory) && bytes > blocksweep_core::testing::HOST_MEMORY {
            return Ok(());
        }
        if self.has(Fault::OneKernelOnly) {
            let grid_stride = self.inner.builtin(KernelVariant::GridStride);
            return self.inner.load_program(&grid_stride.unwrap(), args);
        }
        self.inner.load_program(source, args)
    }
    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.inner.set_scalar(arg, bytes)
    }
    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        let size = self.sizes.get(arg).copied().unwrap_or(0) as usize;
        if self.has(Fault::PadsShortPlanes) && bytes.len() < size {
            let mut padded = bytes.to_vec();
            padded.resize(size, 0);
            return self.inner.write_buffer(arg, &padded);
        }
        self.inner.write_buffer(arg, bytes)
    }
    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        if self.has(Fault::NoPoison) {
            return Ok(true);
        }
        self.inner.fill_buffer(arg, fills)
    }
    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.inner.read_buffer(arg, offset, out)?;
        if self.has(Fault::Broken3d) && self.last_z > 1 {
            let two = 2.0f32.to_le_bytes();
            out.chunks_exact_mut(4)
                .for_each(|v| v.copy_from_slice(&two));
        }
        Ok(())
    }
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        match self.fault {
            // Its garbage is written into read_buffer's copy: lend nothing, so it shows.
            Some(Fault::Broken3d) => Ok(None),
            Some(Fault::StaleStagedView) => {
                if self.stale.is_none() {
                    self.stale = self.inner.read_buffer_staged(arg)?.map(<[u8]>::to_vec);
                }
                Ok(self.stale.as_deref())
            }
            _ => self.inner.read_buffer_staged(arg),
        }
    }
}

/// Host "devices" of one made-up API, with or without a fault.
struct HostProvider {
    api: Api,
    devices: usize,
    fault: Option<Fault>,
}

impl Provider for HostProvider {
    fn api(&self) -> Api {
        self.api
    }
    fn probe(&self) -> Result<Vec<DeviceIdentity>, BackendError> {
        if self.devices == 0 {
            let e = BackendError::new(self.api, ErrorKind::Unavailable, "no host device here");
            return Err(e);
        }
        Ok((0..self.devices)
            .map(|index| DeviceIdentity {
                index,
                name: format!("host test device {index}"),
                ..HostBackend::new(self.api).identity
            })
            .collect())
    }
    fn open(
        &self,
        device: &DeviceIdentity,
        _options: &OpenOptions,
    ) -> Result<Box<dyn Backend>, BackendError> {
        if device.index >= self.devices && self.fault != Some(Fault::OpensAnyIndex) {
            return Err(BackendError::new(
                self.api,
                ErrorKind::Unavailable,
                format!("no host device {}", device.index),
            ));
        }
        let mut inner = HostBackend::new(self.api);
        inner.identity = device.clone();
        match self.fault {
            Some(Fault::WrongIdentity) => inner.identity.name.push_str(" (another)"),
            Some(Fault::ZeroBlockDim) => {
                inner.limits.max_block_dims.as_mut().unwrap().value.0[2] = 0
            }
            _ => {}
        }
        Ok(Box::new(Faulty {
            inner,
            fault: self.fault,
            refused: false,
            last_z: 1,
            stale: None,
            sizes: Vec::new(),
        }))
    }
}

static HOST: HostProvider = HostProvider {
    api: TEST_API_A,
    devices: 1,
    fault: None,
};

/// Two devices, for the trials' names.
static HOSTS: HostProvider = HostProvider {
    api: TEST_API_A,
    devices: 2,
    fault: None,
};

static NOWHERE: HostProvider = HostProvider {
    api: TEST_API_C,
    devices: 0,
    fault: None,
};

/// Each fault, the scenario that must catch it, and what its failure must say.
const CAUGHT: &[(Fault, &str, &str)] = &[
    // The full row's output is left in place: the short row passes on it, unless poisoned.
    (Fault::NoPoison, "one_block_short", "was not caught: None"),
    (Fault::NoPoison, "batch_protocol", "escaped the poison"),
    (Fault::OneKernelOnly, "one_block_short", "was not caught"),
    (Fault::NoEachStamps, "batch_protocol", "right: 5"),
    (Fault::NoBatchStamp, "sweep_13_sizes", "batch_ms: Some(0.0)"),
    (Fault::NoBatchStamp, "batch_protocol", "batch_ms: None"),
    (Fault::StickyRefusal, "rejected_launch", "HOST_STICKY_ERROR"),
    (Fault::NoRefusal, "rejected_launch", "must be refused"),
    (Fault::PadsShortPlanes, "frame_too_large", "one value short"),
    (Fault::IgnoresMemory, "frame_too_large", "above the limits"),
    (
        Fault::OpensAnyIndex,
        "open_past_last_device",
        "should not exist",
    ),
    (Fault::ZeroBlockDim, "limits", "inconsistent"),
    (Fault::WrongIdentity, "identity", "open() must describe"),
    (Fault::UntimedCopy, "copy_timing", "[0.0, 0.0, 0.0, 0.0]"),
    (Fault::CopyInSeconds, "copy_timing", "the host waited"),
    (Fault::KernelTimesTen, "kernel_timing", "the host waited"),
    (Fault::KernelTenth, "kernel_timing", "the host waited"),
    (Fault::Broken3d, "block_3d", "failed at block 8x4x2"),
    (
        Fault::StaleStagedView,
        "staged_read_back",
        "the staged view differs from read_buffer at pixel 0",
    ),
];

thread_local! {
    /// Set while a trial expects a panic, so the panic hook stays quiet about it.
    static EXPECTING_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// Runs `scenario` on device 0 of a host driver with `fault`; returns its panic message.
fn failure(fault: Fault, scenario: &str) -> Option<String> {
    let s = SCENARIOS.iter().find(|s| s.name == scenario).unwrap();
    let provider: &'static HostProvider = Box::leak(Box::new(HostProvider {
        api: TEST_API_A,
        devices: 1,
        fault: Some(fault),
    }));
    let devices = provider.probe().unwrap();
    EXPECTING_PANIC.with(|e| e.set(true));
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        (s.check)(&Target {
            provider,
            devices,
            index: 0,
        })
    }));
    EXPECTING_PANIC.with(|e| e.set(false));
    let payload = r.err()?;
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .or(Some(String::new()))
}

/// This binary again, with only the unavailable API's kit, under `require`.
fn child(require: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .env("BLOCKSWEEP_CONFORMANCE_CHILD", "1")
        .env("BLOCKSWEEP_REQUIRE", require)
        .arg("--test-threads=1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

fn main() -> ExitCode {
    if std::env::var_os("BLOCKSWEEP_CONFORMANCE_CHILD").is_some() {
        return Suite::new(&NOWHERE).kit().run();
    }
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !EXPECTING_PANIC.with(Cell::get) {
            default_hook(info);
        }
    }));

    let mut h = Harness::new();
    // The whole kit, as a backend crate runs it, on a host device.
    for t in Suite::new(&HOST).kit().into_trials() {
        h = h.push(t);
    }
    for &(fault, scenario, says) in CAUGHT {
        h = h.test(
            format!("catches::{fault:?} in {scenario}"),
            move || match failure(fault, scenario) {
                None => panic!("{scenario} passed on a backend with {fault:?}"),
                Some(msg) => assert!(msg.contains(says), "{scenario}: {msg:?} lacks {says:?}"),
            },
        );
    }
    h.test("every_scenario_is_named_once", || {
        let mut names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SCENARIOS.len());
        assert!(SCENARIOS.iter().all(|s| !s.what.is_empty()));
    })
    .test("trials_are_named_scenario_api_index_device", || {
        let names: Vec<String> = Suite::new(&HOSTS)
            .kit()
            .into_trials()
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        let per_device = SCENARIOS.iter().filter(|s| s.per_device).count();
        assert_eq!(names.len(), 2 * per_device + SCENARIOS.len() - per_device);
        assert!(names.contains(&"limits::alpha#1 host test device 1".to_string()));
        assert!(names.contains(&"open_past_last_device::alpha".to_string()));
    })
    .test("without_devices_every_trial_is_ignored_with_the_reason", || {
        let (code, out) = child("");
        assert_eq!(code, Some(0), "{out}");
        for s in SCENARIOS {
            // libtest pads the names into a column.
            let start = format!("test {}::gamma ", s.name);
            let end = " ... ignored (Gamma unavailable: no host device here)";
            assert!(
                out.lines()
                    .any(|l| l.starts_with(&start) && l.trim_end().ends_with(end)),
                "{start}{end} missing from:\n{out}"
            );
        }
        let summary = format!("0 passed; 0 failed; {} ignored", SCENARIOS.len());
        assert!(out.contains(&summary), "{summary:?} missing from:\n{out}");
    })
    .test("without_devices_a_required_api_fails_once_with_the_reason", || {
        let (code, out) = child("opencl, gamma");
        assert_eq!(code, Some(101), "{out}");
        let failed = |l: &str| l.starts_with("test driver_available::gamma ") && l.ends_with("FAILED");
        assert!(out.lines().any(failed), "{out}");
        assert!(out.contains("running 1 test\n"), "one trial only:\n{out}");
        assert!(out.contains("Gamma is required by BLOCKSWEEP_REQUIRE (opencl, gamma) but unavailable: no host device here"), "{out}");
        assert!(out.contains("0 passed; 1 failed; 0 ignored"), "{out}");
    })
    .run()
}
