//! The command queue and everything timed on it: kernel dispatches and buffer copies, each
//! timed by its own profiling event (CL_PROFILING_COMMAND_START to _END, the device's clock),
//! plus the untimed fill, write and read the backend needs.

use std::ffi::c_void;
use std::ptr;

use blocksweep_core::{BlockSize, Launch};
use opencl3::command_queue::{
    create_command_queue, enqueue_copy_buffer, enqueue_fill_buffer, enqueue_nd_range_kernel,
    enqueue_read_buffer, enqueue_write_buffer, CL_BLOCKING, CL_QUEUE_PROFILING_ENABLE,
};
use opencl3::event::{
    get_event_profiling_data, wait_for_events, CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_START,
};
use opencl3::memory::{create_buffer, CL_MEM_READ_WRITE};
use opencl3::types::{cl_event, cl_mem_flags, cl_profiling_info};

use crate::error::{call, from_alloc, from_call, from_enqueue_kernel, from_wait, OpenClError};
use crate::handles::{Context, DeviceId, Event, Kernel, Mem, Queue};

/// How dispatches are timed, as reported by `Backend::timer`.
pub(crate) const TIMER_METHOD: &str = "OpenCL profiling events (CL_PROFILING_COMMAND_START/END)";

/// An in-order queue with profiling, so that every enqueue's event carries device timestamps
/// and each command starts only after the one before it has finished.
pub(crate) fn create_queue(context: &Context, device: DeviceId) -> Result<Queue, OpenClError> {
    // clCreateCommandQueue (1.x, deprecated in 2.0 but present in every 3.0 driver) rather
    // than clCreateCommandQueueWithProperties, so that 1.2 devices work too.
    // SAFETY: `device` is the one device `context` was created with.
    let raw = unsafe { create_command_queue(context.raw(), device.0, CL_QUEUE_PROFILING_ENABLE) }
        .map_err(call("clCreateCommandQueue"))?;
    Ok(Queue::from_raw(raw))
}

/// A device buffer of `bytes` bytes, uninitialised.
pub(crate) fn alloc(
    context: &Context,
    flags: cl_mem_flags,
    bytes: u64,
) -> Result<Mem, OpenClError> {
    let size = usize::try_from(bytes).map_err(|_| OpenClError::OutOfMemory {
        detail: format!("{bytes} bytes do not fit this host's size_t"),
    })?;
    // SAFETY: no host pointer is passed and the flags name none, so the driver owns the memory.
    let raw = unsafe { create_buffer(context.raw(), flags, size, ptr::null_mut()) }
        .map_err(|c| from_alloc(c, bytes))?;
    Ok(Mem::from_raw(raw))
}

fn wait(event: &Event, what: &str) -> Result<(), OpenClError> {
    wait_for_events(&[event.raw()]).map_err(|c| from_wait(&format!("clWaitForEvents ({what})"), c))
}

fn profiling_ns(event: &Event, param: cl_profiling_info, name: &str) -> Result<u64, OpenClError> {
    let b = get_event_profiling_data(event.raw(), param)
        .map_err(|c| from_call(&format!("clGetEventProfilingInfo({name})"), c))?;
    let arr: [u8; 8] = b
        .as_slice()
        .try_into()
        .map_err(|_| OpenClError::Malformed {
            query: name.into(),
            detail: format!("{} bytes where a cl_ulong was expected", b.len()),
        })?;
    Ok(u64::from_ne_bytes(arr))
}

/// Waits for `event`'s command and returns how long it ran on the device, in milliseconds.
fn device_ms(event: Event, what: &str) -> Result<f64, OpenClError> {
    wait(&event, what)?;
    let start = profiling_ns(
        &event,
        CL_PROFILING_COMMAND_START,
        "CL_PROFILING_COMMAND_START",
    )?;
    let end = profiling_ns(&event, CL_PROFILING_COMMAND_END, "CL_PROFILING_COMMAND_END")?;
    if end < start {
        return Err(OpenClError::Malformed {
            query: "CL_PROFILING_COMMAND_START/END".into(),
            detail: format!("an end ({end} ns) before the start ({start} ns)"),
        });
    }
    Ok((end - start) as f64 / 1e6)
}

/// The NDRange for a launch: work_dim 1 for a linear block, else 3 with the grid in x.
pub(crate) fn nd_range(launch: Launch) -> Result<(u32, [usize; 3], [usize; 3]), OpenClError> {
    let BlockSize { x, y, z } = launch.block;
    let global_x = (launch.grid as u64)
        .checked_mul(x as u64)
        .and_then(|g| usize::try_from(g).ok())
        .ok_or_else(|| OpenClError::LaunchRejected {
            call: "clEnqueueNDRangeKernel",
            launch: launch.to_string(),
            name: "global size grid * block.x does not fit size_t".into(),
            code: 0,
        })?;
    let local = [x as usize, y as usize, z as usize];
    let dims = if launch.block.is_linear() { 1 } else { 3 };
    Ok((dims, [global_x, y as usize, z as usize], local))
}

/// Runs `warmups` untimed then `reps` timed dispatches of `kernel`, each waited for before
/// the next is enqueued, and returns the timed ones' device durations in milliseconds.
pub(crate) fn dispatch_timed(
    queue: &Queue,
    kernel: &Kernel,
    launch: Launch,
    warmups: u32,
    reps: u32,
) -> Result<Vec<f64>, OpenClError> {
    let (dims, global, local) = nd_range(launch)?;
    let mut times = Vec::with_capacity(reps as usize);
    for i in 0..warmups as u64 + reps as u64 {
        // SAFETY: the kernel's five arguments were set when the planes were uploaded; the
        // work sizes are arrays of `dims` (<= 3) entries; no wait list.
        let raw: cl_event = unsafe {
            enqueue_nd_range_kernel(
                queue.raw(),
                kernel.raw(),
                dims,
                ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                0,
                ptr::null(),
            )
        }
        .map_err(|c| from_enqueue_kernel(c, launch.to_string()))?;
        let ms = device_ms(Event::from_raw(raw), "kernel")?;
        if i >= warmups as u64 {
            times.push(ms);
        }
    }
    Ok(times)
}

/// Fills `bytes` bytes of `mem` with copies of `pattern` on the device, and waits.
pub(crate) fn fill(
    queue: &Queue,
    mem: &Mem,
    pattern: f32,
    bytes: usize,
) -> Result<(), OpenClError> {
    // SAFETY: the pattern outlives the call (the driver copies it before returning); `bytes`
    // is a multiple of its size and within the buffer.
    let raw = unsafe {
        enqueue_fill_buffer(
            queue.raw(),
            mem.raw(),
            (&pattern as *const f32).cast::<c_void>(),
            std::mem::size_of::<f32>(),
            0,
            bytes,
            0,
            ptr::null(),
        )
    }
    .map_err(call("clEnqueueFillBuffer"))?;
    wait(&Event::from_raw(raw), "fill")
}

/// Copies `data` into the start of `mem`; returns when the copy is done.
pub(crate) fn write(queue: &Queue, mem: &Mem, data: &[f32]) -> Result<(), OpenClError> {
    // SAFETY: blocking write: `data` is read before the call returns, and the buffer holds at
    // least `size_of_val(data)` bytes (the caller allocated it for this frame).
    let raw = unsafe {
        enqueue_write_buffer(
            queue.raw(),
            mem.raw(),
            CL_BLOCKING,
            0,
            std::mem::size_of_val(data),
            data.as_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )
    }
    .map_err(call("clEnqueueWriteBuffer"))?;
    drop(Event::from_raw(raw));
    Ok(())
}

/// Copies the start of `mem` into `out`; returns when the copy is done.
pub(crate) fn read(queue: &Queue, mem: &Mem, out: &mut [f32]) -> Result<(), OpenClError> {
    // SAFETY: blocking read into `out`, which is exclusively borrowed for the call; the
    // buffer holds at least `size_of_val(out)` bytes.
    let raw = unsafe {
        enqueue_read_buffer(
            queue.raw(),
            mem.raw(),
            CL_BLOCKING,
            0,
            std::mem::size_of_val(out),
            out.as_mut_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )
    }
    .map_err(call("clEnqueueReadBuffer"))?;
    drop(Event::from_raw(raw));
    Ok(())
}

/// Device-to-device copies of `bytes` bytes between two fresh buffers, timed like dispatches;
/// the buffers are released on return.
pub(crate) fn copy_timed(
    context: &Context,
    queue: &Queue,
    bytes: u64,
    warmups: u32,
    reps: u32,
) -> Result<Vec<f64>, OpenClError> {
    let src = alloc(context, CL_MEM_READ_WRITE, bytes)?;
    let dst = alloc(context, CL_MEM_READ_WRITE, bytes)?;
    let size = bytes as usize; // `alloc` checked it fits
                               // Defined contents, and the first touch (where drivers commit pages) outside the timing.
    let words = size / std::mem::size_of::<f32>() * std::mem::size_of::<f32>();
    if words > 0 {
        fill(queue, &src, 0.0, words)?;
        fill(queue, &dst, 0.0, words)?;
    }
    let mut times = Vec::with_capacity(reps as usize);
    for i in 0..warmups as u64 + reps as u64 {
        // SAFETY: both buffers hold `size` bytes and are distinct; no wait list.
        let raw = unsafe {
            enqueue_copy_buffer(
                queue.raw(),
                src.raw(),
                dst.raw(),
                0,
                0,
                size,
                0,
                ptr::null(),
            )
        }
        .map_err(call("clEnqueueCopyBuffer"))?;
        let ms = device_ms(Event::from_raw(raw), "copy")?;
        if i >= warmups as u64 {
            times.push(ms);
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_blocks_are_one_dimensional_and_3d_blocks_keep_y_and_z() {
        let l = Launch {
            block: BlockSize::linear(256),
            grid: 40,
        };
        assert_eq!(nd_range(l).unwrap(), (1, [10240, 1, 1], [256, 1, 1]));
        let l = Launch {
            block: BlockSize { x: 32, y: 4, z: 2 },
            grid: 3,
        };
        assert_eq!(nd_range(l).unwrap(), (3, [96, 4, 2], [32, 4, 2]));
    }
}
