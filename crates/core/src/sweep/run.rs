//! Execution: poison, measure, read back and verify each planned row; the copy ceiling.

use super::rows::{new_result, skip_rejected, RowResult, SweepRun};
use super::{
    kernel_limit_violation, CopyCeiling, Observer, Plan, SweepConfig, SweepError, SweepResult,
};
use crate::backend::{Backend, BackendError, ErrorKind, KernelVariant, Launch, Stamps, Work};
use crate::builtin;
use crate::frame::{try_zeroed, Frame};
use crate::measure::{measure, Protocol, Timing};
use crate::verify::{verify_counted, Mismatch};

/// Runs a planned sweep on one backend. Returns the result with every row measured so far;
/// an error that stops the sweep is returned beside it (and recorded in `result.error`).
/// `on_row` sees the result after every row, so a caller can save as it goes.
pub fn execute(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    plan: &Plan,
    config: &SweepConfig,
    observer: &mut dyn Observer,
    on_row: &mut dyn FnMut(&SweepResult),
) -> (SweepResult, Option<SweepError>) {
    let mut result = new_result(backend, frame.info(), plan, config);
    let mut run = SweepRun {
        config,
        shared: Some(plan),
        observer,
        on_row,
    };
    let err = frame_rows(backend, frame, reference, plan, &mut run, &mut result).err();
    result.fill_relative();
    if let Some(e) = &err {
        result.error = Some(e.to_string());
    }
    (result, err)
}

/// The frame's rows of `plan`: the frame uploaded (unless it is on the device already), then
/// each row poisoned, measured, read back and verified.
fn frame_rows(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    plan: &Plan,
    run: &mut SweepRun<'_>,
    result: &mut SweepResult,
) -> RowResult {
    let api = backend.api();
    let config = run.config;
    if !config.frame_on_device {
        load(backend, frame)?;
    }
    let kernel = result.kernel.clone();
    let mut check = FrameCheck::new(api);
    run.each_row(backend, plan, result, |backend, planned, row| {
        if !config.strict_kernel_limit {
            row.note = kernel_limit_violation(&kernel, planned.block)
                .map(|v| format!("ran although {v}: the driver accepted it"));
        }
        // The plan checked that the grid fits 32 bits.
        let launch = Launch::linear(planned.block, planned.grid as u32);
        match check.row(backend, launch, &config.protocol, reference)? {
            Checked::Refused(e) => skip_rejected(api, row, e),
            Checked::Ran(_, Err(m)) => Err(SweepError::Mismatch {
                api,
                block: planned.block,
                grid: planned.grid,
                index: m.index,
                got: m.got,
                expected: m.expected,
                bad_pixels: m.bad_pixels,
                pixels: frame.pixels(),
            }),
            Checked::Ran(timing, Ok(())) => {
                row.verified = true;
                row.gbps = Some(frame.bytes_per_pass() as f64 / (timing.stats.mean * 1e6));
                row.timing = Some(timing);
                Ok(())
            }
        }
    })
}

/// The grid-stride kernel built for `frame`, its planes uploaded.
fn load(backend: &mut dyn Backend, frame: &Frame) -> Result<(), BackendError> {
    let _busy = crate::trace::activity(backend.api().key(), "uploading the frame", 0);
    builtin::load(backend, KernelVariant::GridStride, frame)
}

/// One checked dispatch of the frame, the same steps for the sweep's rows and the lab's: the
/// output poisoned, the launch measured, the output read back (into the host memory the
/// backend lends, else the checker's own buffer, made once) and verified against the CPU's.
pub(crate) struct FrameCheck {
    own_output: Option<Vec<f32>>,
    phases: RowPhases,
}

/// What one checked dispatch came to.
pub(crate) enum Checked {
    /// The API refused the launch; its error says why.
    Refused(BackendError),
    /// It ran: its timing, and whether every pixel matched.
    Ran(Timing, Result<(), Mismatch>),
}

/// What one untimed checked dispatch came to ([`FrameCheck::once`]).
pub(crate) enum Dispatched {
    /// The API refused the launch, in its words.
    Refused(String),
    /// The dispatch failed otherwise, in the API's words.
    Failed(String),
    /// It ran: whether every pixel matched.
    Ran(Result<(), Mismatch>),
}

impl FrameCheck {
    pub(crate) fn new(api: crate::api::Api) -> FrameCheck {
        FrameCheck {
            own_output: None,
            phases: RowPhases::new(api),
        }
    }

    /// Poisons, measures `launch` under `protocol`, reads back and verifies against
    /// `reference` (the uploaded frame's CPU output). A refusal by the API is a result; any
    /// other error is returned.
    pub(crate) fn row(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
        protocol: &Protocol,
        reference: &[f32],
    ) -> Result<Checked, SweepError> {
        let pixels = reference.len() as u64;
        self.phases.time(0, || builtin::poison(backend, pixels))?;
        let work = Work::Kernel(launch);
        let timing = match self.phases.time(1, || measure(backend, work, protocol)) {
            Ok(timing) => timing,
            Err(e) if e.kind == ErrorKind::LaunchRejected => return Ok(Checked::Refused(e)),
            Err(e) => return Err(e.into()),
        };
        let verified = self.read_back(backend, reference)?;
        Ok(Checked::Ran(timing, verified))
    }

    /// One untimed dispatch of `launch`, read back and verified: what `validate` makes of an
    /// assumption and of a resource row. A refusal, a wrong pixel and any other error of the
    /// dispatch are results (the next check still runs); failing to poison or to read back is
    /// returned.
    pub(crate) fn once(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
        reference: &[f32],
    ) -> Result<Dispatched, BackendError> {
        builtin::poison(backend, reference.len() as u64)?;
        match backend.run_batch(Work::Kernel(launch), 1, Stamps::None) {
            Ok(_) => {}
            Err(e) if e.kind == ErrorKind::LaunchRejected => {
                return Ok(Dispatched::Refused(e.message))
            }
            Err(e) => return Ok(Dispatched::Failed(e.message)),
        }
        match self.read_back(backend, reference) {
            Ok(verified) => Ok(Dispatched::Ran(verified)),
            Err(SweepError::Backend(e)) => Err(e),
            Err(e) => Ok(Dispatched::Failed(e.to_string())),
        }
    }

    /// The dispatched output read back and verified against `reference`.
    fn read_back(
        &mut self,
        backend: &mut dyn Backend,
        reference: &[f32],
    ) -> Result<Result<(), Mismatch>, SweepError> {
        // The lab's grid series uploads a frame of its own per point: a buffer of another
        // frame's size is made again.
        if self
            .own_output
            .as_ref()
            .is_some_and(|o| o.len() != reference.len())
        {
            self.own_output = None;
        }
        read_and_verify(backend, &mut self.own_output, reference, &mut self.phases)
    }
}

/// Reads a row's output back and verifies it: in place, in the host memory the backend lends
/// (pinned or mapped: no copy on the host), else through a read into `own`, allocated
/// at the first row that needs it. Read-back and verify are traced as phases 2 and 3.
fn read_and_verify(
    backend: &mut dyn Backend,
    own: &mut Option<Vec<f32>>,
    reference: &[f32],
    phases: &mut RowPhases,
) -> Result<Result<(), Mismatch>, SweepError> {
    let started = phases.start();
    let api = backend.api();
    let reading = crate::trace::activity(api.key(), "reading back", 0);
    let lent = builtin::read_staged(backend)?;
    let output: &[f32] = match lent {
        Some(view) if view.len() != reference.len() => {
            let message = format!(
                "the lent output holds {} values; the frame has {} pixels",
                view.len(),
                reference.len()
            );
            return Err(BackendError::new(api, ErrorKind::Driver, message).into());
        }
        Some(view) => view,
        None => {
            let out = match own {
                Some(out) => out,
                None => own.insert(try_zeroed(reference.len() as u64, "the read-back buffer")?),
            };
            builtin::read(backend, out)?;
            out
        }
    };
    phases.stop(2, started);
    drop(reading);
    let busy = crate::trace::activity(api.key(), "verifying", reference.len() as u64);
    Ok(phases.time(3, || {
        verify_counted(output, reference, &|n| busy.advance(n))
    }))
}

/// Where a sweep's row time goes, summed over the rows and traced once at the end
/// (`BLOCKSWEEP_TRACE=1`; nothing is timed otherwise).
struct RowPhases {
    api: crate::api::Api,
    took: Option<[std::time::Duration; 4]>,
}

impl RowPhases {
    const NAMES: [&'static str; 4] = ["poison", "timed batches", "read-back", "verify"];

    fn new(api: crate::api::Api) -> Self {
        RowPhases {
            api,
            took: crate::trace::enabled().then_some(Default::default()),
        }
    }

    fn time<T>(&mut self, phase: usize, f: impl FnOnce() -> T) -> T {
        let started = self.start();
        let out = f();
        self.stop(phase, started);
        out
    }

    /// The start of a phase timed by hand (where a closure cannot return what it borrows).
    fn start(&self) -> Option<std::time::Instant> {
        self.took.is_some().then(std::time::Instant::now)
    }

    fn stop(&mut self, phase: usize, started: Option<std::time::Instant>) {
        if let (Some(took), Some(started)) = (&mut self.took, started) {
            took[phase] += started.elapsed();
        }
    }
}

impl Drop for RowPhases {
    fn drop(&mut self) {
        for (name, took) in Self::NAMES.iter().zip(self.took.iter().flatten()) {
            crate::trace::record(self.api.key(), &format!("rows: {name}"), *took);
        }
    }
}

/// Measures the device-to-device copy ceiling under the same protocol as the rows: `bytes`
/// copied, read + written counted as traffic.
pub fn measure_copy(
    backend: &mut dyn Backend,
    bytes: u64,
    config: &SweepConfig,
) -> Result<CopyCeiling, BackendError> {
    let timing = measure(backend, Work::Copy { bytes }, &config.protocol)?;
    Ok(CopyCeiling {
        method: backend.copy_method(),
        bytes,
        gbps: 2.0 * bytes as f64 / (timing.stats.mean * 1e6),
        timing,
    })
}

/// Plan (unless one is shared), rows and copy ceiling for one backend: the whole single-API
/// sweep. The copy moves the kernel's traffic: half the bytes read, half written.
pub fn run(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    how: SweepRun<'_>,
) -> (SweepResult, Option<SweepError>) {
    let SweepRun {
        config,
        shared,
        observer,
        on_row,
    } = how;
    // Built before planning, so that the plan asks the kernel's own residency and facts.
    let loaded = match config.frame_on_device {
        true => Ok(()),
        false => load(backend, frame),
    };
    let config = &SweepConfig {
        frame_on_device: true,
        ..config.clone()
    };
    let planned = loaded.and_then(|()| match shared {
        Some(p) => Ok(std::borrow::Cow::Borrowed(p)),
        None => super::plan(backend, frame.pixels(), config).map(std::borrow::Cow::Owned),
    });
    let plan = match planned {
        Ok(p) => p,
        Err(e) => {
            let p = Plan {
                rows: Vec::new(),
                policy: config.grid,
                grid_source: String::new(),
            };
            let mut r = new_result(backend, frame.info(), &p, config);
            r.error = Some(e.to_string());
            return (r, Some(e.into()));
        }
    };
    let (mut result, err) = execute(backend, frame, reference, &plan, config, observer, on_row);
    if err.is_some() {
        return (result, err);
    }
    let bytes = frame.bytes_per_pass() / 2;
    match copy_ceiling(
        backend,
        &result,
        bytes,
        frame.pixels().saturating_mul(16),
        config,
        observer,
    ) {
        Ok(None) => (result, None),
        Ok(Some(c)) => {
            result.copy = Some(c);
            result.fill_relative();
            on_row(&result);
            (result, None)
        }
        Err(e) => {
            result.error = Some(e.to_string());
            (result, Some(e.into()))
        }
    }
}

/// The copy ceiling of one API's sweep, the one policy for every workload: none unless asked
/// (`config.copy`) and a row ran; two buffers of `bytes` checked against the device's limits
/// beside the `resident` bytes the workload holds, then timed under the sweep's protocol.
pub fn copy_ceiling(
    backend: &mut dyn Backend,
    result: &SweepResult,
    bytes: u64,
    resident: u64,
    config: &SweepConfig,
    observer: &mut dyn Observer,
) -> Result<Option<CopyCeiling>, BackendError> {
    if !config.copy || result.rows_run() == 0 || bytes == 0 {
        return Ok(None);
    }
    observer.status(Some(backend.api()), "timing the copy ceiling");
    if let Err(why) = result.limits.copy_fits(bytes, resident) {
        let message = format!("copy ceiling: {why}");
        return Err(BackendError::new(
            backend.api(),
            ErrorKind::OutOfMemory,
            message,
        ));
    }
    crate::trace::time(backend.api().key(), "copy ceiling", || {
        measure_copy(backend, bytes, config).map(Some)
    })
}
