//! The API handle the rest hangs off: a single-device context and its in-order profiling
//! queue, and the one way this backend waits for the device (an event).

use std::ptr;

use opencl3::command_queue::{create_command_queue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::context::create_context;
use opencl3::event::wait_for_events;

use crate::error::{map_create, map_wait, OpenClError};
use crate::handles::{Context, DeviceId, Event, Queue};

/// One device's context and queue.
pub(crate) struct DeviceContext {
    // Declaration order is drop order: the queue goes before the context it belongs to.
    pub queue: Queue,
    pub context: Context,
    pub device: DeviceId,
}

impl DeviceContext {
    pub fn new(device: DeviceId) -> Result<Self, OpenClError> {
        let context = create_context_for(device)?;
        let queue = create_queue(&context, device)?;
        Ok(DeviceContext {
            queue,
            context,
            device,
        })
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
