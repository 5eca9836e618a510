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
///
/// On one physical device (`one_gpu`) the copies of the task are counted together: an API that
/// would take the device past [`HELD_SHARE`] of its memory beside the others' leaves the task
/// to its turn, after theirs have been released (the pipeline's turn order).
pub(super) fn spawn<'scope, 'env, T: Task + ?Sized>(
    s: &'scope Scope<'scope, 'env>,
    open: &'env Opener,
    devices: &'env [DeviceIdentity],
    blocks: &'env [BlockSize],
    one_gpu: bool,
) -> (mpsc::Receiver<Opened>, Vec<mpsc::Sender<&'env T>>) {
    let (tx, rx) = mpsc::channel();
    let mut frames = Vec::new();
    let held = std::sync::Arc::new(std::sync::Mutex::new(0u64));
    for (i, d) in devices.iter().enumerate() {
        let tx = tx.clone();
        let held = held.clone();
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
                let room = fits && (!one_gpu || reserve(&held, work.device_bytes(), b.limits()));
                let _busy = room.then(|| {
                    let what = format!("uploading the {}", work.describe());
                    crate::trace::activity(d.api.key(), what, 0)
                });
                uploaded = room
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

/// The share of a device's memory the APIs' copies of a task may hold together while they
/// open: the rest is left to contexts, staging, the copy ceiling's buffers and the driver.
pub(super) const HELD_SHARE: f64 = 0.9;

/// Counts `need` bytes towards what the APIs of one GPU hold, where they stay within
/// [`HELD_SHARE`] of its memory; false (nothing counted) where they would not. Unknown sizes
/// are not counted.
fn reserve(
    held: &std::sync::Mutex<u64>,
    need: Option<u64>,
    limits: &crate::limits::Limits,
) -> bool {
    let (Some(need), Some(total)) = (need, limits.global_mem_bytes.as_ref()) else {
        return true;
    };
    let mut held = held.lock().unwrap_or_else(|p| p.into_inner());
    let room = (total.value as f64 * HELD_SHARE) as u64;
    match held.saturating_add(need) <= room {
        true => {
            *held += need;
            true
        }
        false => false,
    }
}

/// Drops a backend (destroys its context) under a trace span.
pub(super) fn close(backend: Box<dyn Backend>) {
    let _t = crate::trace::span(backend.api().key(), "close");
    drop(backend);
}
