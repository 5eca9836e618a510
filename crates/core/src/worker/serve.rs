//! The worker's side: open one device, then answer the parent's requests until it says close
//! (or goes away). Everything the backend says is passed on as it is, errors included.

use std::io::{BufRead, Write};
use std::path::Path;

use super::protocol::{forwarded, Opened, RegionReset, Reply, Request};
use super::shared::Shared;
use crate::backend::checked;
use crate::backend::{Backend, BackendError, ErrorKind, KernelVariant, Launch, Reset, Span};
use crate::program::ProgramArg;
use crate::provider::Provider;

/// Serves one worker's life on `input` and `output` (one JSON value per line each way);
/// returns the process's exit code.
pub fn serve(
    providers: &[&'static dyn Provider],
    input: impl BufRead,
    mut output: impl Write,
) -> i32 {
    let mut lines = input.lines();
    let Some(Ok(first)) = lines.next() else {
        return 2;
    };
    let mut state = match open(providers, &first) {
        Ok(s) => s,
        Err((kind, message)) => {
            let _ = answer(&mut output, &Reply::Error { kind, message });
            return 0;
        }
    };
    let opened = Reply::Opened(Box::new(Opened {
        identity: state.backend.identity().clone(),
        limits: state.backend.limits().clone(),
        facts: state.backend.kernel_facts().clone(),
        timer: state.backend.timer(),
        copy_method: state.backend.copy_method(),
        builtins: KernelVariant::ALL
            .into_iter()
            .filter_map(|k| Some((k, state.backend.builtin(k)?)))
            .collect(),
    }));
    if answer(&mut output, &opened).is_err() {
        return 1;
    }
    for line in lines {
        let Ok(line) = line else { break };
        let request: Request = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                let e = BackendError::new(
                    state.backend.api(),
                    ErrorKind::Driver,
                    format!("the worker does not understand the request ({e})"),
                );
                let _ = answer(&mut output, &error(e));
                continue;
            }
        };
        let closing = matches!(request, Request::Close);
        let reply = state.handle(request).unwrap_or_else(error);
        if answer(&mut output, &reply).is_err() || closing {
            break;
        }
    }
    drop(state);
    0
}

struct State {
    backend: Box<dyn Backend>,
    shared: Option<Shared>,
    /// The current program's arguments, as loaded.
    args: Vec<ProgramArg>,
}

/// Opens the device the first request names; an error is (its kind, its words) for the reply.
fn open(providers: &[&'static dyn Provider], first: &str) -> Result<State, (ErrorKind, String)> {
    let refuse = |message: String| (ErrorKind::Driver, message);
    let request: Request = serde_json::from_str(first).map_err(|e| {
        refuse(format!(
            "the worker's first request is not understood ({e})"
        ))
    })?;
    let Request::Open { device, options } = request else {
        return Err(refuse(
            "the worker's first request must open a device".into(),
        ));
    };
    let provider = providers
        .iter()
        .find(|d| d.api() == device.api)
        .ok_or_else(|| refuse(format!("{} is not in this worker", device.api)))?;
    let backend = provider
        .open(&device, &options)
        .map_err(|e| (e.kind, e.message))?;
    Ok(State {
        backend,
        shared: None,
        args: Vec::new(),
    })
}

/// Writes the worker's side of each forwarded call ([`super::protocol::forwarded`]): the
/// backend called with the request's fields, its answer the reply; every other request goes
/// to [`State::handle_own`].
macro_rules! serve_forwarded {
    ($($method:ident($($param:ident: $pty:ty),*) -> $ret:ty
        = $variant:ident { $($field:ident: $fty:ty = $make:expr),* }
        => |$b:ident| $call:expr, $reply:ident, $wait:ident($($warg:expr),*);)*) => {
        impl State {
            fn handle(&mut self, request: Request) -> Result<Reply, BackendError> {
                match request {
                    $(Request::$variant { $($field),* } => {
                        let $b = self.backend.as_mut();
                        Ok(Reply::$reply($call?))
                    })*
                    own => self.handle_own(own),
                }
            }
        }
    };
}
forwarded!(serve_forwarded);

impl State {
    /// The requests the worker answers itself: the region, the program, buffer contents
    /// through the region, the checked dispatch.
    fn handle_own(&mut self, request: Request) -> Result<Reply, BackendError> {
        let b = self.backend.as_mut();
        Ok(match request {
            Request::Open { .. } => return Err(self.misuse("a second open")),
            Request::Map { path, len } => {
                let shared = Shared::open(Path::new(&path), len).map_err(|e| {
                    BackendError::new(
                        b.api(),
                        ErrorKind::OutOfMemory,
                        format!("the worker could not map {path}: {e}"),
                    )
                })?;
                self.shared = Some(shared);
                Reply::Done
            }
            Request::Prepare { blocks } => {
                b.prepare(&blocks);
                Reply::Done
            }
            Request::LoadProgram { source, args } => {
                self.args.clear();
                b.load_program(&source, &args)?;
                self.args = args;
                Reply::Facts(self.backend.kernel_facts().clone())
            }
            Request::ReadStaged { arg } => {
                self.read_staged(arg)?;
                Reply::Done
            }
            Request::WriteBuffer { arg, len } => {
                self.region(len)?;
                if let Some(shared) = &self.shared {
                    self.backend.write_buffer(arg, shared.bytes(len))?;
                }
                Reply::Done
            }
            Request::ReadBuffer { arg, offset, len } => {
                self.region(len)?;
                if let Some(shared) = self.shared.as_mut() {
                    self.backend
                        .read_buffer(arg, offset, shared.bytes_mut(len))?;
                }
                Reply::Done
            }
            Request::RunChecked {
                resets,
                launch,
                reads,
            } => self.run_checked(&resets, launch, &reads)?,
            Request::Diagnostics => Reply::Diagnostics(b.diagnostics()),
            Request::Close => Reply::Done,
            _ => return Err(self.misuse("a forwarded call it did not forward")),
        })
    }

    /// The shared region, if it holds at least `len` bytes.
    fn region(&self, len: u64) -> Result<&Shared, BackendError> {
        match &self.shared {
            Some(s) if s.len() >= len => Ok(s),
            _ => Err(self.misuse("a region larger than the one mapped")),
        }
    }

    /// [`crate::Backend::run_checked`] with the region: the writes from it, the reads into it
    /// one after another from its start, so that nothing is copied on this side.
    fn run_checked(
        &mut self,
        resets: &[RegionReset],
        launch: Option<Launch>,
        reads: &[Span],
    ) -> Result<Reply, BackendError> {
        let written = resets.iter().map(|r| match r {
            RegionReset::Write { at, len, .. } => at + len,
            RegionReset::Fill { .. } => 0,
        });
        let read: u64 = reads.iter().map(|s| s.len).sum();
        self.region(written.max().unwrap_or(0).max(read))?;
        let Some(shared) = self.shared.as_mut() else {
            return Err(self.misuse("no region"));
        };
        let resets: Vec<Reset> = (resets.iter())
            .map(|r| match r {
                RegionReset::Fill { arg, fills } => Reset::Fill {
                    arg: *arg,
                    fills: fills.clone(),
                },
                RegionReset::Write { arg, at, len } => Reset::Write {
                    arg: *arg,
                    bytes: &shared.bytes(at + len)[*at as usize..],
                },
            })
            .collect();
        let backend = self.backend.as_mut();
        checked::reset(backend, &resets)?;
        if let Err(e) = checked::dispatch(backend, launch) {
            return Ok(Reply::Checked(Some((e.kind, e.message))));
        }
        let mut at = 0;
        for span in reads {
            let into = &mut shared.bytes_mut(at + span.len)[at as usize..];
            checked::read_span(backend, *span, into)?;
            at += span.len;
        }
        Ok(Reply::Checked(None))
    }

    /// The kernel's part of argument `arg`'s buffer into the shared region, through the
    /// backend's own staging where it has one.
    fn read_staged(&mut self, arg: usize) -> Result<(), BackendError> {
        let Some(&ProgramArg::Buffer { bytes, guard }) = self.args.get(arg) else {
            return Err(self.misuse("a staged read of an argument that is no buffer"));
        };
        let api = self.backend.api();
        let shared = match self.shared.as_mut() {
            Some(s) if s.len() >= bytes => s,
            _ => {
                return Err(BackendError::new(
                    api,
                    ErrorKind::Driver,
                    "no region that large",
                ))
            }
        };
        if let Some(staged) = self.backend.read_buffer_staged(arg)? {
            crate::parallel::copy_parallel(shared.bytes_mut(bytes), staged);
            return Ok(());
        }
        self.backend
            .read_buffer(arg, guard, shared.bytes_mut(bytes))
    }

    fn misuse(&self, what: &str) -> BackendError {
        BackendError::new(
            self.backend.api(),
            ErrorKind::Driver,
            format!("the worker was asked for {what}"),
        )
    }
}

fn answer(output: &mut impl Write, reply: &Reply) -> std::io::Result<()> {
    let line = serde_json::to_string(reply).map_err(std::io::Error::other)?;
    output.write_all(line.as_bytes())?;
    output.write_all(b"\n")?;
    output.flush()
}

fn error(e: BackendError) -> Reply {
    Reply::Error {
        kind: e.kind,
        message: e.message,
    }
}
