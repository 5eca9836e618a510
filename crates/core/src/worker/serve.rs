//! The worker's side: open one device, then answer the parent's requests until it says close
//! (or goes away). Everything the backend says is passed on as it is, errors included.

use std::io::{BufRead, Write};
use std::path::Path;

use super::protocol::{Opened, Reply, Request};
use super::shared::Shared;
use crate::backend::{Backend, BackendError, ErrorKind};
use crate::frame::Frame;
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
    /// The uploaded frame's pixels: the output plane's length.
    pixels: usize,
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
        pixels: 0,
    })
}

impl State {
    fn handle(&mut self, request: Request) -> Result<Reply, BackendError> {
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
            Request::Residency { block } => Reply::Residency(b.residency(block)?),
            Request::Suggestion => Reply::Suggestion(b.occupancy_suggestion()?),
            Request::Prepare { blocks } => {
                b.prepare(&blocks);
                Reply::Done
            }
            Request::SetKernel { variant } => {
                b.set_kernel(variant)?;
                Reply::Facts(b.kernel_facts().clone())
            }
            Request::Upload {
                width,
                height,
                seed,
            } => {
                let frame = Frame::try_generate(width, height, seed).map_err(|e| {
                    BackendError::new(b.api(), ErrorKind::OutOfMemory, e.to_string())
                })?;
                b.upload(&frame)?;
                self.pixels = frame.pixels() as usize;
                Reply::Done
            }
            Request::Poison => {
                b.poison_output()?;
                Reply::Done
            }
            Request::ReadOutput => {
                self.read_output()?;
                Reply::Done
            }
            Request::RunBatch {
                work,
                count,
                stamps,
            } => Reply::Times(b.run_batch(work, count, stamps)?),
            Request::LoadProgram { source, args } => {
                b.load_program(&source, &args)?;
                Reply::Facts(b.kernel_facts().clone())
            }
            Request::WriteBuffer { arg, len } => {
                let shared = self
                    .shared
                    .as_ref()
                    .ok_or_else(|| self.misuse("no region"))?;
                self.backend.write_buffer(arg, shared.bytes(len))?;
                Reply::Done
            }
            Request::FillBuffer { arg, fills } => Reply::Filled(b.fill_buffer(arg, &fills)?),
            Request::ReadBuffer { arg, offset, len } => {
                let Some(shared) = self.shared.as_mut() else {
                    return Err(BackendError::new(
                        self.backend.api(),
                        ErrorKind::Driver,
                        "no shared region",
                    ));
                };
                self.backend
                    .read_buffer(arg, offset, shared.bytes_mut(len))?;
                Reply::Done
            }
            Request::Diagnostics => Reply::Diagnostics(b.diagnostics()),
            Request::Close => Reply::Done,
        })
    }

    /// The output plane into the shared region, through the backend's own staging where it
    /// has one.
    fn read_output(&mut self) -> Result<(), BackendError> {
        let api = self.backend.api();
        let n = self.pixels;
        let shared = match self.shared.as_mut() {
            Some(s) if s.len() >= n as u64 * 4 => s,
            _ => {
                return Err(BackendError::new(
                    api,
                    ErrorKind::Driver,
                    "no region that large",
                ))
            }
        };
        if let Some(values) = self.backend.read_output_staged()? {
            crate::frame::copy_parallel(shared.floats_mut(n), values);
            return Ok(());
        }
        self.backend.read_output(shared.floats_mut(n))
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
