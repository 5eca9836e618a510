//! `run_batch`: kernel dispatches or buffer copies enqueued back to back on the in-order queue,
//! timed by their profiling events (CL_PROFILING_COMMAND_START / _END, the device's clock), and
//! the NDRange a launch becomes.

use std::ptr;
use std::time::{Duration, Instant};

use blocksweep_core::{BatchTimes, BlockSize, Launch, Limits, Stamps, TimerInfo};
use opencl3::error_codes::CL_SUCCESS;
use opencl3::event::{
    get_event_profiling_data, CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_START,
};
use opencl3::types::{cl_event, cl_int, cl_profiling_info};

use crate::context::{wait, wait_within, DeviceContext};
use crate::error::{map_enqueue, map_launch, map_query, OpenClError};
use crate::handles::{Event, Kernel, Mem, Queue};
use crate::memory::CopyBuffers;

/// How dispatches are timed, as reported by `Backend::timer`.
pub(crate) const TIMER_METHOD: &str = "OpenCL profiling events (CL_PROFILING_COMMAND_START/END)";

/// The timer, with the resolution the device states (CL_DEVICE_PROFILING_TIMER_RESOLUTION).
pub(crate) fn timer(limits: &Limits) -> TimerInfo {
    TimerInfo {
        method: TIMER_METHOD.into(),
        resolution_ns: limits.timer_resolution_ns.as_ref().map_or(0.0, |r| r.value),
    }
}

/// `count` dispatches of `kernel` with `launch`, back to back; see [`run_batch`]. With a
/// `deadline` (a user's kernel, which may never end), the batch must finish within it.
pub(crate) fn kernel_batch(
    ctx: &DeviceContext,
    kernel: &Kernel,
    launch: Launch,
    count: u32,
    stamps: Stamps,
    deadline: Option<Duration>,
) -> Result<BatchTimes, OpenClError> {
    run_batch(ctx, count, stamps, ("kernel", deadline), |want| {
        enqueue_kernel(&ctx.queue, kernel, launch, want)
    })
}

/// `count` copies between the copy buffers, back to back; see [`run_batch`].
pub(crate) fn copy_batch(
    ctx: &DeviceContext,
    buffers: &CopyBuffers,
    count: u32,
    stamps: Stamps,
) -> Result<BatchTimes, OpenClError> {
    // The buffers were allocated with this byte count, so it fits size_t.
    let size = buffers.bytes as usize;
    run_batch(ctx, count, stamps, ("copy", None), |want| {
        enqueue_copy(&ctx.queue, &buffers.src, &buffers.dst, size, want)
    })
}

fn profiling_ns(
    event: &Event,
    param: cl_profiling_info,
    name: &'static str,
) -> Result<u64, OpenClError> {
    let b = get_event_profiling_data(event.raw(), param)
        .map_err(map_query("clGetEventProfilingInfo", name))?;
    let arr: [u8; 8] = b
        .as_slice()
        .try_into()
        .map_err(|_| OpenClError::Malformed {
            query: name.into(),
            detail: format!("{} bytes where a cl_ulong was expected", b.len()),
        })?;
    Ok(u64::from_ne_bytes(arr))
}

/// The NDRange for a launch: work_dim 1 for a linear block and grid, 2 for a 2-D one, else 3.
pub(crate) fn nd_range(launch: Launch) -> Result<(u32, [usize; 3], [usize; 3]), OpenClError> {
    let BlockSize { x, y, z } = launch.block;
    let global_x = (launch.grid.x as u64)
        .checked_mul(x as u64)
        .and_then(|g| usize::try_from(g).ok())
        .ok_or_else(|| OpenClError::LaunchRejected {
            call: "clEnqueueNDRangeKernel",
            launch: launch.to_string(),
            name: "global size grid * block.x does not fit size_t".into(),
            code: 0,
        })?;
    let local = [x as usize, y as usize, z as usize];
    // work_dim 1 for a linear block, 2 for a 2-D block (the 2-D kernel's get_num_groups(1)
    // then counts the grid's y), else 3.
    let dims = match (launch.block.is_linear() && launch.grid.y == 1, z) {
        (true, _) => 1,
        (false, 1) => 2,
        _ => 3,
    };
    let global_y = (launch.grid.y as u64 * y as u64) as usize;
    Ok((dims, [global_x, global_y, z as usize], local))
}

/// Enqueues `count` commands made by `enqueue` back to back on the in-order queue (the queue
/// orders them on the device: each starts after the one before has finished), waits once for
/// the last, and reads the profiling stamps asked for: START of the first to END of the last
/// for [`Stamps::Batch`], START to END of each for [`Stamps::Each`]. `what` names the commands
/// in errors; with a deadline, the wait polls ([`wait_within`]) and gives up once it has
/// passed since the first enqueue.
///
/// An event is asked for only where a stamp is read (and for the last command, to wait on):
/// creating and releasing an event per enqueue slows the host enough to leave the device idle
/// between 36 µs kernels (on an H200 at 4K, a batch with an event per dispatch read 7 % below
/// the plain program that asks for two).
pub(crate) fn run_batch(
    ctx: &DeviceContext,
    count: u32,
    stamps: Stamps,
    (what, deadline): (&'static str, Option<Duration>),
    mut enqueue: impl FnMut(bool) -> Result<Option<Event>, OpenClError>,
) -> Result<BatchTimes, OpenClError> {
    let since = Instant::now();
    let mut kept: Vec<Event> = Vec::with_capacity(match stamps {
        Stamps::Each => count as usize,
        _ => 2,
    });
    for i in 0..count {
        let last = i + 1 == count;
        let want = match stamps {
            Stamps::Each => true,
            Stamps::Batch => i == 0 || last,
            Stamps::None => last,
        };
        if let Some(event) = enqueue(want)? {
            kept.push(event);
        }
    }
    let Some(last) = kept.last() else {
        return Ok(BatchTimes::default());
    };
    match deadline {
        Some(deadline) => wait_within(&ctx.queue, last, what, since, deadline)?,
        None => wait(last, what)?,
    }
    let mut times = BatchTimes::default();
    match stamps {
        Stamps::None => {}
        Stamps::Batch => {
            let start = profiling_ns(
                &kept[0],
                CL_PROFILING_COMMAND_START,
                "CL_PROFILING_COMMAND_START",
            )?;
            let end = profiling_ns(last, CL_PROFILING_COMMAND_END, "CL_PROFILING_COMMAND_END")?;
            times.batch_ms = Some(interval_ms(start, end)?);
        }
        Stamps::Each => {
            for e in &kept {
                let start =
                    profiling_ns(e, CL_PROFILING_COMMAND_START, "CL_PROFILING_COMMAND_START")?;
                let end = profiling_ns(e, CL_PROFILING_COMMAND_END, "CL_PROFILING_COMMAND_END")?;
                times.each_ms.push(interval_ms(start, end)?);
            }
        }
    }
    Ok(times)
}

fn interval_ms(start: u64, end: u64) -> Result<f64, OpenClError> {
    if end < start {
        return Err(OpenClError::Malformed {
            query: "CL_PROFILING_COMMAND_START/END".into(),
            detail: format!("an end ({end} ns) before the start ({start} ns)"),
        });
    }
    Ok((end - start) as f64 / 1e6)
}

/// The event out-parameter of an enqueue: somewhere to write one, or null for none.
fn event_slot(want: bool, slot: &mut cl_event) -> *mut cl_event {
    match want {
        true => slot,
        false => ptr::null_mut(),
    }
}

/// The loaded OpenCL library's entry points, for the enqueues that may go without an event
/// (cl3's wrappers always ask for one).
fn runtime() -> Result<&'static cl3::OpenClRuntime, OpenClError> {
    cl3::load_library()
        .as_ref()
        .map_err(|e| OpenClError::Unavailable {
            reason: format!("libOpenCL.so.1: {e}"),
        })
}

/// The code a dynamically loaded entry point returned, or the loader's code when the library
/// lacks it.
fn code(result: Option<cl_int>) -> cl_int {
    result.unwrap_or(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)
}

/// Enqueues one dispatch of `kernel` over the launch's NDRange, with an event when `want`.
pub(crate) fn enqueue_kernel(
    queue: &Queue,
    kernel: &Kernel,
    launch: Launch,
    want: bool,
) -> Result<Option<Event>, OpenClError> {
    let (dims, global, local) = nd_range(launch)?;
    let mut raw: cl_event = ptr::null_mut();
    // cl3's dynamically loaded entry points are plain fns; what makes the call sound: the
    // kernel's arguments were all set when its program was loaded, the work sizes are arrays of
    // `dims` (<= 3) entries, there is no wait list, and the event slot is a live local or null.
    let status = code({
        runtime()?.clEnqueueNDRangeKernel(
            queue.raw(),
            kernel.raw(),
            dims,
            ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            0,
            ptr::null(),
            event_slot(want, &mut raw),
        )
    });
    if status != CL_SUCCESS {
        return Err(map_launch("clEnqueueNDRangeKernel", launch)(status));
    }
    Ok(want.then(|| Event::from_raw(raw)))
}

/// Enqueues one copy of `size` bytes from `src` to `dst`, with an event when `want`.
pub(crate) fn enqueue_copy(
    queue: &Queue,
    src: &Mem,
    dst: &Mem,
    size: usize,
    want: bool,
) -> Result<Option<Event>, OpenClError> {
    let mut raw: cl_event = ptr::null_mut();
    // Sound because both buffers hold at least `size` bytes and are distinct, there is no
    // wait list, and the event slot is a live local or null.
    let status = code({
        runtime()?.clEnqueueCopyBuffer(
            queue.raw(),
            src.raw(),
            dst.raw(),
            0,
            0,
            size,
            0,
            ptr::null(),
            event_slot(want, &mut raw),
        )
    });
    if status != CL_SUCCESS {
        return Err(map_enqueue("clEnqueueCopyBuffer")(status));
    }
    Ok(want.then(|| Event::from_raw(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_blocks_are_one_dimensional_and_3d_blocks_keep_y_and_z() {
        let l = Launch::linear(BlockSize::linear(256), 40);
        assert_eq!(nd_range(l).unwrap(), (1, [10240, 1, 1], [256, 1, 1]));
        let l = Launch::linear(BlockSize { x: 32, y: 4, z: 2 }, 3);
        assert_eq!(nd_range(l).unwrap(), (3, [96, 4, 2], [32, 4, 2]));
        let l = Launch::new(
            BlockSize { x: 16, y: 16, z: 1 },
            blocksweep_core::GridSize { x: 240, y: 135 },
        );
        assert_eq!(nd_range(l).unwrap(), (2, [3840, 2160, 1], [16, 16, 1]));
    }
}
