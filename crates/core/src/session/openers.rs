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

/// The threads that open the targets, each sending its result when done.
pub(super) struct Openers<'scope, 'env> {
    s: &'scope Scope<'scope, 'env>,
    open: &'env Opener<'env>,
    devices: &'env [DeviceIdentity],
    /// The sweep's block sizes.
    blocks: &'env [BlockSize],
    tx: mpsc::Sender<Opened>,
    pub rx: mpsc::Receiver<Opened>,
    started: Vec<bool>,
}

impl<'scope, 'env> Openers<'scope, 'env> {
    pub fn new(
        s: &'scope Scope<'scope, 'env>,
        open: &'env Opener,
        devices: &'env [DeviceIdentity],
        blocks: &'env [BlockSize],
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        Openers {
            s,
            open,
            devices,
            blocks,
            tx,
            rx,
            started: vec![false; devices.len()],
        }
    }

    /// Starts opening target `i` on its own thread.
    pub fn start(&mut self, i: usize) {
        if std::mem::replace(&mut self.started[i], true) {
            return;
        }
        let (tx, open, d, blocks) = (self.tx.clone(), self.open, &self.devices[i], self.blocks);
        self.s.spawn(move || {
            // The launch shapes are built here too where an API builds per shape (Vulkan's
            // pipelines), so that this is not done in the API's measuring turn.
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
            if let Err(mpsc::SendError((_, Ok(backend)))) = tx.send((i, r)) {
                close(backend);
            }
        });
    }

    /// Starts every target not started yet.
    pub fn start_rest(&mut self) {
        for i in 0..self.devices.len() {
            self.start(i);
        }
    }
}

/// Drops a backend (destroys its context) under a trace span.
pub(super) fn close(backend: Box<dyn Backend>) {
    let _t = crate::trace::span(backend.api().key(), "close");
    drop(backend);
}
