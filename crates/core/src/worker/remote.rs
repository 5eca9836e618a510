//! The parent's side: a [`Backend`] whose every call is one request to the worker; a checked
//! dispatch ([`Backend::run_checked`]) is one request too.

use std::cell::RefCell;

use super::link::{Link, Lost, Waits};
use super::process::Process;
use super::protocol::{forwarded, Opened, RegionReset, Reply, Request};
use super::shared::Shared;
use super::WorkerCommand;
use crate::backend::{
    Backend, BackendError, BackendResult, BatchTimes, CheckedRun, DeviceIdentity, Dispatch,
    ErrorKind, Fill, KernelFacts, KernelVariant, OccupancySuggestion, Reset, Residency, Stamps,
    TimerInfo, Work,
};
use crate::blocks::BlockSize;
use crate::limits::Limits;
use crate::options::OpenOptions;
use crate::program::{ProgramArg, ProgramSource};

/// One API's backend, living in a worker process.
pub struct RemoteBackend {
    opened: Opened,
    link: RefCell<Link>,
    waits: Waits,
    shared: Option<Shared>,
    /// The current program's arguments, as loaded.
    args: Vec<ProgramArg>,
}

impl RemoteBackend {
    /// Starts a worker with `command` and has it open `device`.
    pub fn open(
        command: &WorkerCommand,
        device: &DeviceIdentity,
        options: &OpenOptions,
    ) -> BackendResult<RemoteBackend> {
        RemoteBackend::open_waiting(command, device, options, Waits::standard())
    }

    /// [`RemoteBackend::open`], waiting for answers as `waits` says.
    pub(crate) fn open_waiting(
        command: &WorkerCommand,
        device: &DeviceIdentity,
        options: &OpenOptions,
        waits: Waits,
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
        let reply = link.borrow_mut().call(&request, waits.slow)?;
        let Reply::Opened(opened) = reply else {
            return Err(link.borrow().unexpected("open"));
        };
        Ok(RemoteBackend {
            opened: *opened,
            link,
            waits,
            shared: None,
            args: Vec::new(),
        })
    }

    fn call(&self, request: &Request, within: std::time::Duration) -> BackendResult<Reply> {
        self.link.borrow_mut().call(request, within)
    }

    fn done(&self, request: &Request, within: std::time::Duration) -> BackendResult<()> {
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
            let (shared, path) = Shared::create(with_slack(len)).map_err(failed)?;
            let request = Request::Map {
                path: path.to_string_lossy().into_owned(),
                len: shared.len(),
            };
            let mapped = self.done(&request, self.waits.slow);
            let _ = std::fs::remove_file(&path);
            mapped?;
            self.shared = Some(shared);
        }
        let api = self.api();
        self.shared
            .as_mut()
            .ok_or_else(|| BackendError::new(api, ErrorKind::Driver, "no shared region"))
    }
}

/// Writes the remote's side of each forwarded call ([`super::protocol::forwarded`]): the
/// request made of the arguments, sent, its one reply unpacked.
macro_rules! remote_methods {
    ($($method:ident($($param:ident: $pty:ty),*) -> $ret:ty
        = $variant:ident { $($field:ident: $fty:ty = $make:expr),* }
        => |$b:ident| $call:expr, $reply:ident, $wait:ident($($warg:expr),*);)*) => {$(
        fn $method(&mut self, $($param: $pty),*) -> BackendResult<$ret> {
            let request = Request::$variant { $($field: $make),* };
            match self.call(&request, self.waits.$wait($($warg),*))? {
                Reply::$reply(answer) => Ok(answer),
                _ => Err(self.link.borrow().unexpected(stringify!($method))),
            }
        }
    )*};
}

impl Backend for RemoteBackend {
    forwarded!(remote_methods);

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

    fn prepare(&mut self, blocks: &[BlockSize]) {
        let request = Request::Prepare {
            blocks: blocks.to_vec(),
        };
        // Never required (run_batch builds what is missing): a failure shows on the next call.
        let _ = self.done(&request, self.waits.slow);
    }

    fn copy_method(&self) -> String {
        self.opened.copy_method.clone()
    }

    fn diagnostics(&self) -> Vec<String> {
        match self.call(&Request::Diagnostics, self.waits.slow) {
            Ok(Reply::Diagnostics(d)) => d,
            _ => Vec::new(),
        }
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        let mut sources = self.opened.builtins.iter();
        sources.find(|(k, _)| *k == kernel).map(|(_, s)| s.clone())
    }

    /// Through the shared region, which the worker fills from its backend's staging: lent
    /// as it is, with no copy on this side.
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let Some(&ProgramArg::Buffer { bytes, .. }) = self.args.get(arg) else {
            let why = "a staged read of an argument that is no buffer";
            return Err(BackendError::new(self.api(), ErrorKind::Driver, why));
        };
        self.region(bytes)?;
        self.done(&Request::ReadStaged { arg }, self.waits.transfer(bytes))?;
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
        match self.call(&request, self.waits.slow)? {
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
        self.done(&Request::WriteBuffer { arg, len }, self.waits.transfer(len))
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        let len = out.len() as u64;
        self.region(len)?;
        let request = Request::ReadBuffer { arg, offset, len };
        self.done(&request, self.waits.transfer(len))?;
        if let Some(s) = &self.shared {
            out.copy_from_slice(s.bytes(len));
        }
        Ok(())
    }

    /// One request: the writes' bytes laid one after another in the shared region, the reads
    /// read into it from its start after the dispatch. The worker lost during the request is
    /// the dispatch's failure (the kernel is what runs there); lost before it, the call's.
    fn run_checked(&mut self, run: &CheckedRun, out: &mut [Vec<u8>]) -> BackendResult<Dispatch> {
        let written: u64 = run.resets.iter().map(written_len).sum();
        let read: u64 = run.reads.iter().map(|s| s.len).sum();
        let region = self.region(written.max(read))?;
        let mut at = 0;
        let mut resets = Vec::with_capacity(run.resets.len());
        for r in &run.resets {
            resets.push(match r {
                Reset::Fill { arg, fills } => RegionReset::Fill {
                    arg: *arg,
                    fills: fills.clone(),
                },
                Reset::Write { arg, bytes } => {
                    let len = bytes.len() as u64;
                    region.bytes_mut(at + len)[at as usize..].copy_from_slice(bytes);
                    at += len;
                    RegionReset::Write {
                        arg: *arg,
                        at: at - len,
                        len,
                    }
                }
            });
        }
        let request = Request::RunChecked {
            resets,
            launch: run.launch,
            reads: run.reads.clone(),
        };
        let within = self.waits.checked(written + read);
        let reply = self.link.borrow_mut().exchange(&request, within);
        match reply {
            Ok(Reply::Checked(None)) => {}
            Ok(Reply::Checked(Some((kind, message)))) => {
                return Ok(Err(self.link.borrow_mut().failed(kind, message)))
            }
            Ok(_) => return Err(self.link.borrow().unexpected("a checked dispatch")),
            Err(Lost::During(e)) if run.launch.is_some() => return Ok(Err(e)),
            Err(lost) => return Err(lost.error()),
        }
        let mut at = 0;
        if let Some(shared) = &self.shared {
            for (span, out) in run.reads.iter().zip(out) {
                let len = span.len as usize;
                crate::parallel::copy_parallel(
                    out,
                    &shared.bytes(at + span.len)[at as usize..][..len],
                );
                at += span.len;
            }
        }
        Ok(Ok(()))
    }
}

/// A region for `len` bytes with room to spare, in whole MiB: a checked dispatch reads the
/// output's whole allocation and every input's bands, a little more than the largest upload,
/// and growing the region again cost the first check its new file and first touch (tens of
/// milliseconds for a 33 MB output on the H100).
fn with_slack(len: u64) -> u64 {
    const MIB: u64 = 1 << 20;
    len.saturating_add(len / 32)
        .saturating_add(MIB)
        .div_ceil(MIB)
        .saturating_mul(MIB)
}

/// The bytes a reset moves through the shared region: a write's; a fill's none.
fn written_len(reset: &Reset) -> u64 {
    match reset {
        Reset::Fill { .. } => 0,
        Reset::Write { bytes, .. } => bytes.len() as u64,
    }
}

impl Drop for RemoteBackend {
    fn drop(&mut self) {
        let link = self.link.get_mut();
        if link.ended.is_some() {
            return;
        }
        if link.call(&Request::Close, self.waits.closing).is_err() {
            return;
        }
        if link.process.wait(self.waits.closing).is_none() {
            link.process.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_slack;

    /// A 4K output's first check (its allocation and three inputs' bands) fits the region its
    /// upload made: no second region.
    #[test]
    fn the_region_of_an_upload_holds_the_first_checks_reads() {
        let band = crate::workload::guard::GUARD;
        let plane = 3840 * 2160 * 4;
        let uploaded = with_slack(plane + 2 * band);
        assert!(uploaded >= plane + 2 * band + 3 * 2 * band, "{uploaded}");
        assert_eq!(uploaded % (1 << 20), 0);
        assert!(uploaded < plane * 2, "slack, not a second copy: {uploaded}");
        assert_eq!(with_slack(0), 1 << 20);
        assert_eq!(with_slack(u64::MAX), u64::MAX, "saturates, never wraps");
    }
}
