//! Each API in a worker process of its own: the same program in another role, driven over a
//! pipe, so that a kernel's fault (a crash in the driver, heap corruption on a CPU driver, a
//! hang) ends the worker and never the run (docs/architecture.md, "Workers").
//!
//! The parent side is [`RemoteBackend`], a [`Backend`] whose every call is one
//! request to the worker (a checked dispatch, [`Backend::run_checked`], is one request too);
//! the pipeline, the checks and the reports use it like any other. The
//! worker side is [`serve`]: it opens the real backend and answers requests until told to
//! close. Requests and replies are small serialisable values (`protocol.rs`, where the calls
//! forwarded as they are are listed once, and each side is written from that list); buffer contents
//! cross through memory both processes map (`shared.rs`), so a 64 MB read-back is one copy by
//! the driver, as in one process.
//!
//! What a fault becomes: the worker dying by a signal is "the kernel crashed the driver
//! (SIGSEGV)"; no answer within the deadline (plus a grace for the driver's own timeout) kills
//! the worker, which frees the device for the APIs after it; a driver error after which the
//! device state is unknown also ends the worker. Each is an [`crate::ErrorKind::Fault`] error of that
//! API, and the rows measured before it stay.

mod link;
mod process;
pub(crate) mod protocol;
mod remote;
mod serve;
pub(crate) mod shared;

use crate::backend::{Backend, BackendError, DeviceIdentity};
use crate::options::OpenOptions;
pub use crate::options::WorkerCommand;
use crate::provider::Registry;
pub use remote::RemoteBackend;
pub use serve::serve;

/// Opens `device`: in a worker process of its own where `options` say so, else in this
/// process through `registry`. Every opener in the crate comes through here.
pub fn open(
    registry: &Registry,
    device: &DeviceIdentity,
    options: &OpenOptions,
) -> Result<Box<dyn Backend>, BackendError> {
    match &options.worker {
        Some(command) if registry.probe_of(device.api).is_some() => {
            let mut options = options.clone();
            options.worker = None;
            RemoteBackend::open(command, device, &options).map(|b| Box::new(b) as Box<dyn Backend>)
        }
        _ => registry.open(device, options),
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "serve_tests.rs"]
mod serve_tests;
