//! `run_batch`: kernel dispatches or buffer copies enqueued back to back on the in-order queue,
//! timed by their profiling events (CL_PROFILING_COMMAND_START / _END, the device's clock), and
//! the NDRange a launch becomes.

use std::ptr;

use blocksweep_core::{BatchTimes, BlockSize, Launch, Limits, Stamps, TimerInfo};
use opencl3::command_queue::{enqueue_copy_buffer, enqueue_nd_range_kernel};
use opencl3::event::{
    get_event_profiling_data, CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_START,
};
use opencl3::types::{cl_event, cl_profiling_info};

use crate::context::{wait, DeviceContext};
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

/// `count` dispatches of `kernel` with `launch`, back to back; see [`run_batch`].
pub(crate) fn kernel_batch(
    ctx: &DeviceContext,
    kernel: &Kernel,
    launch: Launch,
    count: u32,
    stamps: Stamps,
) -> Result<BatchTimes, OpenClError> {
    run_batch(count, stamps, "kernel", || {
        enqueue_kernel(&ctx.queue, kernel, launch)
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
    run_batch(count, stamps, "copy", || {
        enqueue_copy(&ctx.queue, &buffers.src, &buffers.dst, size)
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
/// for [`Stamps::Batch`], START to END of each for [`Stamps::Each`].
fn run_batch(
    count: u32,
    stamps: Stamps,
    what: &'static str,
    mut enqueue: impl FnMut() -> Result<Event, OpenClError>,
) -> Result<BatchTimes, OpenClError> {
    let mut kept: Vec<Event> = Vec::with_capacity(match stamps {
        Stamps::Each => count as usize,
        _ => 2,
    });
    for i in 0..count {
        let event = enqueue()?;
        // Releasing an event does not cancel its command: only the stamps we read are kept.
        // Kept: every event for Each; the first and the last for Batch; the last otherwise.
        match stamps {
            Stamps::Each => kept.push(event),
            Stamps::Batch if i == 0 => kept.push(event),
            _ if i + 1 == count => kept.push(event),
            _ => drop(event),
        }
    }
    let Some(last) = kept.last() else {
        return Ok(BatchTimes::default());
    };
    wait(last, what)?;
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

/// Enqueues one dispatch of `kernel` over the launch's NDRange.
fn enqueue_kernel(queue: &Queue, kernel: &Kernel, launch: Launch) -> Result<Event, OpenClError> {
    let (dims, global, local) = nd_range(launch)?;
    // SAFETY: the kernel's arguments were set when the planes were uploaded; the work sizes
    // are arrays of `dims` (<= 3) entries; no wait list.
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
    .map_err(map_launch("clEnqueueNDRangeKernel", launch))?;
    Ok(Event::from_raw(raw))
}

/// Enqueues one copy of `size` bytes from `src` to `dst`.
fn enqueue_copy(queue: &Queue, src: &Mem, dst: &Mem, size: usize) -> Result<Event, OpenClError> {
    // SAFETY: both buffers hold at least `size` bytes and are distinct; no wait list.
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
    .map_err(map_enqueue("clEnqueueCopyBuffer"))?;
    Ok(Event::from_raw(raw))
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
