//! The threads that open a run's targets, for every command's task, each sending its backend
//! (or why it could not open) to the pipeline when done; and closing, which also gets a thread
//! of its own.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread::Scope;

use super::pipeline::Opener;
use super::task::Task;
use crate::backend::{Backend, BackendError, DeviceIdentity, ErrorKind};
use crate::blocks::BlockSize;

/// One target's opening, as it finishes: its index, the backend or why it failed, and whether
/// the workload is ready on the device already.
pub(super) type Opened = (usize, Result<Box<dyn Backend>, BackendError>, bool);

/// Opens every target on its own thread; each sends its index and result when done. The
/// launch shapes are built there too where an API builds per shape (Vulkan's pipelines), and
/// the task is readied there ([`Task::prepare`]: the frame's upload, a user's kernel built and
/// its buffers filled) once the run delivers it and the device's limits take it: none of that
/// is timed, so none of it needs the API's turn. A preparation that fails is left to the turn,
/// which reports it.
pub(super) fn spawn<'scope, 'env, T: Task + ?Sized>(
    s: &'scope Scope<'scope, 'env>,
    open: &'env Opener,
    devices: &'env [DeviceIdentity],
    blocks: &'env [BlockSize],
) -> (mpsc::Receiver<Opened>, Vec<mpsc::Sender<&'env T>>) {
    let (tx, rx) = mpsc::channel();
    let mut frames = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let tx = tx.clone();
        let (frame_tx, frame_rx) = mpsc::channel::<&'env T>();
        frames.push(frame_tx);
        s.spawn(move || {
            let open_and_prepare = || {
                open(d).map(|mut b| {
                    b.prepare(blocks);
                    b
                })
            };
            let mut r = catch_unwind(AssertUnwindSafe(open_and_prepare)).unwrap_or_else(|_| {
                Err(BackendError::new(
                    d.api,
                    ErrorKind::Driver,
                    "opening panicked",
                ))
            });
            let mut uploaded = false;
            if let (Ok(b), Ok(work)) = (&mut r, frame_rx.recv()) {
                let fits = work.fits(b.limits()).is_ok();
                let _busy = fits.then(|| {
                    let what = format!("uploading the {}", work.describe());
                    crate::trace::activity(d.api.key(), what, 0)
                });
                uploaded = fits
                    && catch_unwind(AssertUnwindSafe(|| work.prepare(b.as_mut()).is_ok()))
                        .unwrap_or(false);
            }
            // Nobody is listening (the run ended early): close what was opened.
            if let Err(mpsc::SendError((_, Ok(backend), _))) = tx.send((i, r, uploaded)) {
                close(backend);
            }
        });
    }
    (rx, frames)
}

/// Drops a backend (destroys its context) under a trace span.
pub(super) fn close(backend: Box<dyn Backend>) {
    let _t = crate::trace::span(backend.api().key(), "close");
    drop(backend);
}
