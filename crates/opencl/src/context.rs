//! The API handle the rest hangs off: a single-device context and its in-order profiling
//! queue, and the two ways this backend waits for the device (an event, blocking or polled
//! against a deadline).

use std::mem::ManuallyDrop;
use std::ptr;
use std::time::{Duration, Instant};

use cl3::info_type::InfoType;
use opencl3::command_queue::{create_command_queue, flush, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::context::create_context;
use opencl3::event::{
    get_event_info, wait_for_events, CL_COMPLETE, CL_EVENT_COMMAND_EXECUTION_STATUS,
};

use crate::error::{map_create, map_query, map_status, map_wait, OpenClError};
use crate::handles::{Context, DeviceId, Event, Queue};

/// One device's context and queue.
pub(crate) struct DeviceContext {
    // Released in this order by Drop (the queue before the context it belongs to), unless
    // the context was abandoned.
    pub queue: ManuallyDrop<Queue>,
    pub context: ManuallyDrop<Context>,
    pub device: DeviceId,
    abandoned: bool,
}

impl DeviceContext {
    pub fn new(device: DeviceId) -> Result<Self, OpenClError> {
        let context = create_context_for(device)?;
        let queue = create_queue(&context, device)?;
        Ok(DeviceContext {
            queue: ManuallyDrop::new(queue),
            context: ManuallyDrop::new(context),
            device,
            abandoned: false,
        })
    }

    /// Leaves the queue and the context unreleased when this is dropped: after a command
    /// missed its deadline it may run for ever, and releasing its queue can wait for it
    /// (clReleaseCommandQueue flushes, and a driver may finish the queue there too).
    pub fn abandon(&mut self) {
        self.abandoned = true;
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        if self.abandoned {
            return;
        }
        // SAFETY: each is dropped once, here, and never used again.
        unsafe {
            ManuallyDrop::drop(&mut self.queue);
            ManuallyDrop::drop(&mut self.context);
        }
    }
}

/// A single-device context on `device`.
pub(crate) fn create_context_for(device: DeviceId) -> Result<Context, OpenClError> {
    let raw = create_context(&[device.0], ptr::null(), None, ptr::null_mut())
        .map_err(map_create("clCreateContext"))?;
    Ok(Context::from_raw(raw))
}

/// An in-order queue with profiling, so that every enqueue's event carries device timestamps
/// and each command starts only after the one before it has finished.
fn create_queue(context: &Context, device: DeviceId) -> Result<Queue, OpenClError> {
    // clCreateCommandQueue (1.x, deprecated in 2.0 but present in every 3.0 driver) rather
    // than clCreateCommandQueueWithProperties, so that 1.2 devices work too.
    // SAFETY: `device` is the one device `context` was created with.
    let raw = unsafe { create_command_queue(context.raw(), device.0, CL_QUEUE_PROFILING_ENABLE) }
        .map_err(map_create("clCreateCommandQueue"))?;
    Ok(Queue::from_raw(raw))
}

/// Waits until the command behind `event` (and, on the in-order queue, everything before it)
/// has finished. `what` names the command in an error.
pub(crate) fn wait(event: &Event, what: &'static str) -> Result<(), OpenClError> {
    wait_for_events(&[event.raw()]).map_err(map_wait("clWaitForEvents", what))
}

/// Submits what `queue` holds (`what` names it in an error), without waiting.
pub(crate) fn flush_queue(queue: &Queue, what: &'static str) -> Result<(), OpenClError> {
    flush(queue.raw()).map_err(map_wait("clFlush", what))
}

/// The longest sleep between two polls of [`wait_within`]: a kernel that finishes is noticed
/// within this (or within as long again as it has run, if that is less).
const MAX_NAP: Duration = Duration::from_millis(10);
/// How long [`wait_within`] asks again after a yield, not a sleep: a batch or copy of a few
/// milliseconds (a sweep's rows) ends when the device does, as with clWaitForEvents.
const SPIN: Duration = Duration::from_millis(5);

/// Waits, as [`wait`], for the command behind `event` (enqueued on `queue` at `since`), but
/// gives up when `deadline` has passed since then: polls CL_EVENT_COMMAND_EXECUTION_STATUS
/// after a yield for the first [`SPIN`], then with naps that double from 50 µs, since
/// clWaitForEvents cannot be interrupted. A negative
/// status (the command failed) is an error naming it; a missed deadline is
/// [`OpenClError::Deadline`].
pub(crate) fn wait_within(
    queue: &Queue,
    event: &Event,
    what: &'static str,
    since: Instant,
    deadline: Duration,
) -> Result<(), OpenClError> {
    // Polling submits nothing: without the flush the commands might never start.
    flush(queue.raw()).map_err(map_wait("clFlush", what))?;
    let mut nap = Duration::from_micros(50);
    let waiting = Instant::now();
    loop {
        let status = execution_status(event)?;
        if status == CL_COMPLETE {
            return Ok(());
        }
        if status < 0 {
            return Err(map_status(what)(status));
        }
        let Some(left) = deadline
            .checked_sub(since.elapsed())
            .filter(|l| !l.is_zero())
        else {
            return Err(OpenClError::Deadline {
                what,
                seconds: deadline.as_secs_f64(),
            });
        };
        if waiting.elapsed() < SPIN {
            std::thread::yield_now();
            continue;
        }
        std::thread::sleep(nap.min(left));
        nap = (nap * 2).min(MAX_NAP);
    }
}

/// The event's CL_EVENT_COMMAND_EXECUTION_STATUS: CL_COMPLETE (0), CL_RUNNING, CL_SUBMITTED,
/// CL_QUEUED (1 to 3), or a negative error code.
fn execution_status(event: &Event) -> Result<i32, OpenClError> {
    const NAME: &str = "CL_EVENT_COMMAND_EXECUTION_STATUS";
    match get_event_info(event.raw(), CL_EVENT_COMMAND_EXECUTION_STATUS)
        .map_err(map_query("clGetEventInfo", NAME))?
    {
        InfoType::Int(status) => Ok(status),
        other => Err(OpenClError::Malformed {
            query: NAME.into(),
            detail: format!("{other:?} where a cl_int was expected"),
        }),
    }
}
