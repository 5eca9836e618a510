//! The parent's side: a [`Backend`] whose every call is one request to the worker.

use std::cell::RefCell;
use std::time::Duration;

use super::process::{Process, Silence};
use super::protocol::{Opened, Reply, Request};
use super::shared::Shared;
use super::WorkerCommand;
use crate::backend::{
    Api, Backend, BackendError, BackendResult, BatchTimes, DeviceIdentity, ErrorKind, Fill,
    KernelFacts, KernelVariant, OccupancySuggestion, Residency, Stamps, TimerInfo, Work,
};
use crate::blocks::BlockSize;
use crate::limits::Limits;
use crate::options::OpenOptions;
use crate::program::{deadline, ProgramArg, ProgramSource};

/// How long a worker may take to open its device or build a kernel: compilers and driver
/// start-up are slow, but not this slow.
const SLOW_CALL: Duration = Duration::from_secs(300);
/// Beyond the dispatch deadline, which the backend in the worker enforces itself, how long
/// the parent waits before it kills a worker stuck inside a driver call.
const GRACE: Duration = Duration::from_secs(10);
/// How long a closing worker may take before it is killed.
const CLOSING: Duration = Duration::from_secs(20);

/// One API's backend, living in a worker process.
pub struct RemoteBackend {
    opened: Opened,
    link: RefCell<Link>,
    shared: Option<Shared>,
    /// The current program's arguments, as loaded.
    args: Vec<ProgramArg>,
}

struct Link {
    process: Process,
    api: Api,
    /// Set once the worker has ended: why, and every later call fails with it.
    ended: Option<String>,
}

impl RemoteBackend {
    /// Starts a worker with `command` and has it open `device`.
    pub fn open(
        command: &WorkerCommand,
        device: &DeviceIdentity,
        options: &OpenOptions,
    ) -> BackendResult<RemoteBackend> {
        let api = device.api;
        let process = Process::start(command, api.key()).map_err(|e| {
            BackendError::new(
                api,
                ErrorKind::Unavailable,
                format!("could not start a worker process: {e}"),
            )
        })?;
        let link = RefCell::new(Link {
            process,
            api,
            ended: None,
        });
        let request = Request::Open {
            device: device.clone(),
            options: options.clone(),
        };
        let reply = link.borrow_mut().call(&request, SLOW_CALL)?;
        let Reply::Opened(opened) = reply else {
            return Err(link.borrow().unexpected("open"));
        };
        Ok(RemoteBackend {
            opened: *opened,
            link,
            shared: None,
            args: Vec::new(),
        })
    }

    fn call(&self, request: &Request, within: Duration) -> BackendResult<Reply> {
        self.link.borrow_mut().call(request, within)
    }

    fn done(&self, request: &Request, within: Duration) -> BackendResult<()> {
        match self.call(request, within)? {
            Reply::Done => Ok(()),
            _ => Err(self.link.borrow().unexpected("a request")),
        }
    }

    /// A shared region of at least `len` bytes, mapped by the worker too.
    fn region(&mut self, len: u64) -> BackendResult<&mut Shared> {
        if self.shared.as_ref().is_none_or(|s| s.len() < len) {
            let api = self.api();
            let failed = |e: std::io::Error| {
                BackendError::new(
                    api,
                    ErrorKind::OutOfMemory,
                    format!("shared memory of {len} bytes for the worker: {e}"),
                )
            };
            self.shared = None;
            let (shared, path) = Shared::create(len).map_err(failed)?;
            let request = Request::Map {
                path: path.to_string_lossy().into_owned(),
                len: shared.len(),
            };
            let mapped = self.done(&request, SLOW_CALL);
            let _ = std::fs::remove_file(&path);
            mapped?;
            self.shared = Some(shared);
        }
        let api = self.api();
        self.shared
            .as_mut()
            .ok_or_else(|| BackendError::new(api, ErrorKind::Driver, "no shared region"))
    }

    /// Time allowed for a transfer of `bytes`: the deadline, plus a second per 100 MB.
    fn transfer_time(bytes: u64) -> Duration {
        deadline() + GRACE + Duration::from_secs(bytes / 100_000_000)
    }
}

impl Link {
    /// Sends one request and waits up to `within` for its answer. A worker that ended, went
    /// silent, or reported a driver error (after which its device state is unknown) is gone:
    /// killed, and every later call fails with the reason.
    fn call(&mut self, request: &Request, within: Duration) -> BackendResult<Reply> {
        if let Some(why) = &self.ended {
            return Err(BackendError::new(self.api, ErrorKind::Fault, why.clone()));
        }
        let line = serde_json::to_string(request)
            .map_err(|e| BackendError::new(self.api, ErrorKind::Driver, format!("request: {e}")))?;
        if self.process.send(&line).is_err() {
            return Err(self.gone());
        }
        let answer = match self.process.receive(within) {
            Ok(a) => a,
            Err(Silence::Gone) => return Err(self.gone()),
            Err(Silence::Timeout) => return Err(self.silent(within)),
        };
        let reply: Reply = serde_json::from_str(&answer).map_err(|e| {
            BackendError::new(
                self.api,
                ErrorKind::Driver,
                format!("the worker's answer is not understood ({e}): {answer}"),
            )
        })?;
        match reply {
            Reply::Error { kind, message } => Err(self.failed(kind, message)),
            other => Ok(other),
        }
    }

    /// The worker ended on its own: a crash (a signal), an abort, an exit.
    fn gone(&mut self) -> BackendError {
        let how = self.process.ending(Duration::from_secs(5));
        let why = format!("the kernel crashed the driver: {how}");
        self.ended = Some(why.clone());
        BackendError::new(self.api, ErrorKind::Fault, why)
    }

    /// No answer in time: the worker is killed, which also ends whatever it left running on
    /// the device.
    fn silent(&mut self, within: Duration) -> BackendError {
        self.process.kill();
        let why = format!(
            "no answer within {:.0} s (the kernel or the provider hung): its worker process \
             was killed, which frees the device",
            within.as_secs_f64()
        );
        self.ended = Some(why.clone());
        BackendError::new(self.api, ErrorKind::Fault, why)
    }

    /// An error the backend reported. After a driver error (a deadline passed, an illegal
    /// address) the device may still be busy or broken: the worker is killed, so that the
    /// APIs measured next find the device free.
    fn failed(&mut self, kind: ErrorKind, message: String) -> BackendError {
        if matches!(kind, ErrorKind::Driver | ErrorKind::Fault) {
            self.process.kill();
            let why =
                format!("{message}; its worker process was then stopped, which frees the device");
            self.ended = Some(why.clone());
            return BackendError::new(self.api, kind, why);
        }
        BackendError::new(self.api, kind, message)
    }

    fn unexpected(&self, what: &str) -> BackendError {
        BackendError::new(
            self.api,
            ErrorKind::Driver,
            format!("the worker answered {what} with something else"),
        )
    }
}

impl Backend for RemoteBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.opened.identity
    }

    fn limits(&self) -> &Limits {
        &self.opened.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        &self.opened.facts
    }

    fn timer(&self) -> TimerInfo {
        self.opened.timer.clone()
    }

    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        match self.call(&Request::Residency { block }, SLOW_CALL)? {
            Reply::Residency(r) => Ok(r),
            _ => Err(self.link.borrow().unexpected("residency")),
        }
    }

    fn occupancy_suggestion(&mut self) -> BackendResult<Option<OccupancySuggestion>> {
        match self.call(&Request::Suggestion, SLOW_CALL)? {
            Reply::Suggestion(s) => Ok(s),
            _ => Err(self.link.borrow().unexpected("the occupancy suggestion")),
        }
    }

    fn prepare(&mut self, blocks: &[BlockSize]) {
        let request = Request::Prepare {
            blocks: blocks.to_vec(),
        };
        // Never required (run_batch builds what is missing): a failure shows on the next call.
        let _ = self.done(&request, SLOW_CALL);
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        let request = Request::RunBatch {
            work,
            count,
            stamps,
        };
        match self.call(&request, deadline() + GRACE)? {
            Reply::Times(t) => Ok(t),
            _ => Err(self.link.borrow().unexpected("a batch")),
        }
    }

    fn copy_method(&self) -> String {
        self.opened.copy_method.clone()
    }

    fn diagnostics(&self) -> Vec<String> {
        match self.call(&Request::Diagnostics, SLOW_CALL) {
            Ok(Reply::Diagnostics(d)) => d,
            _ => Vec::new(),
        }
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        let mut sources = self.opened.builtins.iter();
        sources.find(|(k, _)| *k == kernel).map(|(_, s)| s.clone())
    }

    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        let request = Request::SetScalar {
            arg,
            bytes: bytes.to_vec(),
        };
        self.done(&request, SLOW_CALL)
    }

    /// Through the shared region, which the worker fills from its backend's staging: lent
    /// as it is, with no copy on this side.
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let Some(&ProgramArg::Buffer { bytes, .. }) = self.args.get(arg) else {
            let why = "a staged read of an argument that is no buffer";
            return Err(BackendError::new(self.api(), ErrorKind::Driver, why));
        };
        self.region(bytes)?;
        self.done(&Request::ReadStaged { arg }, Self::transfer_time(bytes))?;
        Ok(self.shared.as_ref().map(|s| s.bytes(bytes)))
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        let largest = args.iter().map(ProgramArg::allocation).max().unwrap_or(0);
        self.region(largest)?;
        let request = Request::LoadProgram {
            source: source.clone(),
            args: args.to_vec(),
        };
        self.args.clear();
        match self.call(&request, SLOW_CALL)? {
            Reply::Facts(f) => {
                self.opened.facts = f;
                self.args = args.to_vec();
                Ok(())
            }
            _ => Err(self.link.borrow().unexpected("load_program")),
        }
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        let len = bytes.len() as u64;
        self.region(len)?.bytes_mut(len).copy_from_slice(bytes);
        self.done(&Request::WriteBuffer { arg, len }, Self::transfer_time(len))
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        let len = fills.iter().map(|f| f.len).sum();
        let request = Request::FillBuffer {
            arg,
            fills: fills.to_vec(),
        };
        match self.call(&request, Self::transfer_time(len))? {
            Reply::Filled(done) => Ok(done),
            _ => Err(self.link.borrow().unexpected("fill_buffer")),
        }
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        let len = out.len() as u64;
        self.region(len)?;
        let request = Request::ReadBuffer { arg, offset, len };
        self.done(&request, Self::transfer_time(len))?;
        if let Some(s) = &self.shared {
            out.copy_from_slice(s.bytes(len));
        }
        Ok(())
    }
}

impl Drop for RemoteBackend {
    fn drop(&mut self) {
        let link = self.link.get_mut();
        if link.ended.is_some() {
            return;
        }
        if link.call(&Request::Close, CLOSING).is_err() {
            return;
        }
        if link.process.wait(CLOSING).is_none() {
            link.process.kill();
        }
    }
}
