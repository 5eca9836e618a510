//! The threads that open a sweep's targets, each sending its backend (or why it could not
//! open) to the coordinator when done; and closing, which also gets a thread of its own.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread::Scope;

use super::pipeline::Opener;
use crate::backend::{Backend, BackendError, DeviceIdentity, ErrorKind};
use crate::blocks::BlockSize;

/// One target's opening, as it finishes: its index, and the backend or why it failed.
pub(super) type Opened = (usize, Result<Box<dyn Backend>, BackendError>);

/// Opens every target on its own thread; each sends its index and result when done. The
/// launch shapes are built there too where an API builds per shape (Vulkan's pipelines), so
/// that this is not done in the API's measuring turn.
pub(super) fn spawn<'scope, 'env>(
    s: &'scope Scope<'scope, 'env>,
    open: &'env Opener,
    devices: &'env [DeviceIdentity],
    blocks: &'env [BlockSize],
) -> mpsc::Receiver<Opened> {
    let (tx, rx) = mpsc::channel();
    for (i, d) in devices.iter().enumerate() {
        let tx = tx.clone();
        s.spawn(move || {
            let open_and_prepare = || {
                open(d).map(|mut b| {
                    b.prepare(blocks);
                    b
                })
            };
            let r = catch_unwind(AssertUnwindSafe(open_and_prepare)).unwrap_or_else(|_| {
                Err(BackendError::new(
                    d.api,
                    ErrorKind::Driver,
                    "opening panicked",
                ))
            });
            // Nobody is listening (the run ended early): close what was opened.
            if let Err(mpsc::SendError((_, Ok(backend)))) = tx.send((i, r)) {
                close(backend);
            }
        });
    }
    rx
}

/// Drops a backend (destroys its context) under a trace span.
pub(super) fn close(backend: Box<dyn Backend>) {
    let _t = crate::trace::span(backend.api().key(), "close");
    drop(backend);
}
