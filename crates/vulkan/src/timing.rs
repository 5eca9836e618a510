//! `run_batch`: dispatches (or copies) recorded back to back in one command buffer, a barrier
//! between consecutive ones, timed by timestamp queries at BOTTOM_OF_PIPE ([`Timestamps`]); and
//! the launch checks made before anything is recorded ([`check_launch`],
//! [`check_loop_iterations`]): a launch over Vulkan's limits is undefined behaviour, not an
//! error the driver returns, so the backend refuses it first.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::{BatchTimes, Launch, Stamps, TimerInfo};

use crate::command::{between_dispatches, Commands};
use crate::context::DeviceContext;
use crate::conv;
use crate::error::{map_host_device_oom, map_host_device_oom_and_lost, VulkanError, VulkanResult};

/// The launch limits Vulkan states, checked before any pipeline exists: a workgroup size above
/// them is undefined behaviour in vkCreateComputePipelines, not an error the driver returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchLimits {
    pub max_invocations: u32,
    pub max_size: [u32; 3],
    pub max_count: [u32; 3],
}

impl DispatchLimits {
    pub fn of(l: &vk::PhysicalDeviceLimits) -> DispatchLimits {
        DispatchLimits {
            max_invocations: l.max_compute_work_group_invocations,
            max_size: l.max_compute_work_group_size,
            max_count: l.max_compute_work_group_count,
        }
    }
}

/// Refuses, naming the limit, a launch Vulkan does not allow or the shader cannot index.
pub fn check_launch(launch: Launch, limits: &DispatchLimits) -> VulkanResult<()> {
    let b = launch.block;
    let reject = |m: String| Err(VulkanError::LaunchRejected(m));
    if b.x == 0 || b.y == 0 || b.z == 0 {
        return reject(format!("workgroup {b} has a zero dimension"));
    }
    if b.threads() > limits.max_invocations as u64 {
        return reject(format!(
            "workgroup {b} = {} invocations > maxComputeWorkGroupInvocations = {}",
            b.threads(),
            limits.max_invocations
        ));
    }
    for (axis, (want, max)) in ["x", "y", "z"]
        .iter()
        .zip([b.x, b.y, b.z].into_iter().zip(limits.max_size))
    {
        if want > max {
            return reject(format!(
                "workgroup {axis} = {want} > maxComputeWorkGroupSize[{axis}] = {max}"
            ));
        }
    }
    let g = launch.grid;
    for (axis, count, max, size) in [
        ("x", g.x, limits.max_count[0], b.x),
        ("y", g.y, limits.max_count[1], b.y),
    ] {
        if count == 0 {
            return reject(format!(
                "grid {g}: vkCmdDispatch with groupCount{} = 0 runs nothing",
                axis.to_uppercase()
            ));
        }
        if count > max {
            return reject(format!(
                "grid {axis} = {count} > maxComputeWorkGroupCount[{axis}] = {max}"
            ));
        }
        let invocations = count as u64 * size as u64;
        if invocations > u32::MAX as u64 {
            return reject(format!(
                "grid {axis} {count} x workgroup {axis} {size} = {invocations} invocations exceed the \
                 shader's 32-bit index (gl_GlobalInvocationID.{axis} is a uint)"
            ));
        }
    }
    Ok(())
}

/// Refuses a grid-stride launch whose busiest invocation would loop more often than the driver
/// allows (`limit`, see `AdapterInfo::max_loop_iterations`): the driver would stop the loop
/// early and leave pixels unwritten.
pub fn check_loop_iterations(launch: Launch, pixels: u64, limit: Option<u64>) -> VulkanResult<()> {
    let Some(limit) = limit else { return Ok(()) };
    let step = (launch.grid.x as u64 * launch.block.x as u64).max(1);
    let iterations = pixels.div_ceil(step);
    if iterations > limit {
        return Err(VulkanError::LaunchRejected(format!(
            "grid {} x workgroup x {} = {step} invocations need {iterations} loop iterations each \
             for {pixels} pixels; llvmpipe ends a shader's loops after {limit} \
             (gallivm LP_MAX_TGSI_LOOP_ITERATIONS) and would leave pixels unwritten",
            launch.grid, launch.block.x
        )));
    }
    Ok(())
}

/// Refuses, naming the limit, a shared-memory launch whose `shared` array would exceed
/// `maxComputeSharedMemorySize` (`max_shared` bytes): Vulkan has no error for it, creating or
/// dispatching such a pipeline is invalid usage, undefined behaviour.
pub fn check_shared(launch: Launch, max_shared: u32) -> VulkanResult<()> {
    // The shader's array holds shared_bytes / 4 floats.
    let bytes = launch.shared_bytes / 4 * 4;
    if bytes > max_shared {
        return Err(VulkanError::LaunchRejected(format!(
            "shared array of {bytes} bytes > maxComputeSharedMemorySize = {max_shared} \
             (invalid usage in Vulkan, refused before the driver)"
        )));
    }
    Ok(())
}

/// [`check_loop_iterations`] for the 2-D kernel on a `width` x `height` frame: each of its two
/// loops runs ceil(extent / (grid x workgroup)) times in that dimension.
pub fn check_loop_iterations_2d(
    launch: Launch,
    width: u64,
    height: u64,
    limit: Option<u64>,
) -> VulkanResult<()> {
    let Some(limit) = limit else { return Ok(()) };
    for (axis, extent, count, size) in [
        ("x", width, launch.grid.x, launch.block.x),
        ("y", height, launch.grid.y, launch.block.y),
    ] {
        let step = (count as u64 * size as u64).max(1);
        let iterations = extent.div_ceil(step);
        if iterations > limit {
            return Err(VulkanError::LaunchRejected(format!(
                "grid {axis} {count} x workgroup {axis} {size} = {step} invocations need \
                 {iterations} loop iterations each for {extent} pixels in {axis}; llvmpipe ends a \
                 shader's loops after {limit} (gallivm LP_MAX_TGSI_LOOP_ITERATIONS)"
            )));
        }
    }
    Ok(())
}

/// The timestamp query pool (grown to the largest batch) and how to read its ticks.
pub(crate) struct Timestamps {
    device: Arc<DeviceContext>,
    queries: vk::QueryPool,
    /// Queries in `queries`.
    query_capacity: u32,
    valid_bits: u32,
    period_ns: f32,
}

/// How dispatches are timed on queue family `family`, and how fine that clock is.
pub(crate) fn timer(family: u32, valid_bits: u32, period_ns: f32) -> TimerInfo {
    TimerInfo {
        method: format!(
            "Vulkan timestamp queries (vkCmdWriteTimestamp at BOTTOM_OF_PIPE between back-to-back dispatches, \
             queue family {family}, {valid_bits} valid bits)"
        ),
        resolution_ns: period_ns as f64,
    }
}

impl Timestamps {
    /// `valid_bits` / `period_ns`: the queue family's timestampValidBits and the device's
    /// timestampPeriod.
    pub fn new(
        device: &Arc<DeviceContext>,
        commands: &mut Commands,
        valid_bits: u32,
        period_ns: f32,
    ) -> VulkanResult<Self> {
        let mut t = Timestamps {
            device: device.clone(),
            queries: vk::QueryPool::null(),
            query_capacity: 0,
            valid_bits,
            period_ns,
        };
        t.ensure_queries(commands, 2)?;
        Ok(t)
    }

    /// Records `count` copies of `record` in one command buffer, a barrier between
    /// consecutive ones, submits once and waits. Timestamps are written at BOTTOM_OF_PIPE
    /// (when every earlier command has finished): one before the first and one after the last
    /// for [`Stamps::Batch`], and one after each for [`Stamps::Each`], so dispatch i's interval
    /// runs from the end of the one before it to its own end. (A TOP_OF_PIPE stamp would not
    /// wait for the previous dispatch of a back-to-back batch.)
    pub fn run_batch(
        &mut self,
        commands: &mut Commands,
        count: u32,
        stamps: Stamps,
        record: impl Fn(&ash::Device, vk::CommandBuffer),
    ) -> VulkanResult<BatchTimes> {
        let stamp_count = match stamps {
            Stamps::None => 0,
            Stamps::Batch => 2,
            Stamps::Each => count + 1,
        };
        if count == 0 {
            return Ok(BatchTimes::default());
        }
        self.ensure_queries(commands, stamp_count)?;
        let queries = self.queries;
        // SAFETY: called only inside `commands.run`'s closure below, on the buffer it records; `q`
        // is below `stamp_count`, which `ensure_queries` made the pool hold.
        let stamp = |d: &ash::Device, cb, q: u32| unsafe {
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, queries, q)
        };
        commands.run(|d, cb| {
            if stamp_count > 0 {
                // SAFETY: `cb` is being recorded by `Commands::run`; the pool holds at least
                // `stamp_count` queries (`ensure_queries`).
                unsafe { d.cmd_reset_query_pool(cb, queries, 0, stamp_count) };
                stamp(d, cb, 0);
            }
            for i in 0..count {
                if i > 0 {
                    between_dispatches(d, cb);
                }
                record(d, cb);
                if stamps == Stamps::Each {
                    stamp(d, cb, i + 1);
                }
            }
            if stamps == Stamps::Batch {
                stamp(d, cb, 1);
            }
        })?;
        if stamp_count == 0 {
            return Ok(BatchTimes::default());
        }
        let ticks = self.ticks(stamp_count)?;
        let ms = |a: u64, b: u64| self.ms(a, b);
        Ok(match stamps {
            Stamps::Batch => BatchTimes {
                batch_ms: Some(ms(ticks[0], ticks[1])),
                each_ms: Vec::new(),
            },
            _ => BatchTimes {
                batch_ms: None,
                each_ms: ticks.windows(2).map(|w| ms(w[0], w[1])).collect(),
            },
        })
    }

    /// The query pool, made to hold at least `count` queries.
    pub(crate) fn pool(
        &mut self,
        commands: &mut Commands,
        count: u32,
    ) -> VulkanResult<vk::QueryPool> {
        self.ensure_queries(commands, count)?;
        Ok(self.queries)
    }

    /// The first `count` queries' ticks, once the submission that reset and wrote them all
    /// has been waited for.
    pub(crate) fn ticks(&self, count: u32) -> VulkanResult<Vec<u64>> {
        let mut ticks = vec![0u64; count as usize];
        // SAFETY: the caller's submission, waited for, reset and wrote these `count` queries of
        // the pool, and `ticks` has room for `count` 64-bit results.
        unsafe {
            self.device.raw.get_query_pool_results(
                self.queries,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(map_host_device_oom_and_lost("vkGetQueryPoolResults"))?;
        Ok(ticks)
    }

    /// Milliseconds from tick `a` to tick `b`.
    pub(crate) fn ms(&self, a: u64, b: u64) -> f64 {
        conv::ticks_to_ms(a, b, self.valid_bits, self.period_ns)
    }

    /// Makes the query pool hold at least `count` queries (a new pool when it must grow).
    fn ensure_queries(&mut self, commands: &mut Commands, count: u32) -> VulkanResult<()> {
        if count <= self.query_capacity {
            return Ok(());
        }
        commands.finish_pending()?;
        let d = &self.device.raw;
        // SAFETY: nothing pending uses the old pool; a null handle is a no-op.
        unsafe { d.destroy_query_pool(self.queries, None) };
        self.queries = vk::QueryPool::null();
        self.query_capacity = 0;
        let capacity = count.next_power_of_two();
        // SAFETY: `d` is live; the create info outlives the call.
        self.queries = unsafe {
            d.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(capacity),
                None,
            )
        }
        .map_err(map_host_device_oom("vkCreateQueryPool"))?;
        self.query_capacity = capacity;
        Ok(())
    }
}

impl Drop for Timestamps {
    fn drop(&mut self) {
        // SAFETY: the backend drops this after the commands, whose drop waited for anything
        // pending; a null handle is a no-op.
        unsafe { self.device.raw.destroy_query_pool(self.queries, None) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::BlockSize;

    const LIMITS: DispatchLimits = DispatchLimits {
        max_invocations: 1024,
        max_size: [1024, 1024, 64],
        max_count: [65535, 65535, 65535],
    };

    fn launch(x: u32, y: u32, z: u32, grid: u32) -> Launch {
        Launch::linear(BlockSize { x, y, z }, grid)
    }

    #[test]
    fn limits_are_checked_and_named() {
        assert!(check_launch(launch(256, 1, 1, 100), &LIMITS).is_ok());
        assert!(check_launch(launch(32, 32, 1, 1), &LIMITS).is_ok());
        let msg = |l| check_launch(l, &LIMITS).unwrap_err().to_string();
        assert!(msg(launch(32, 32, 2, 1)).contains("maxComputeWorkGroupInvocations = 1024"));
        assert!(msg(launch(1, 1, 65, 1)).contains("maxComputeWorkGroupSize[z] = 64"));
        assert!(msg(launch(64, 1, 1, 65536)).contains("maxComputeWorkGroupCount[x] = 65535"));
        assert!(msg(launch(0, 1, 1, 1)).contains("zero"));
        assert!(msg(launch(64, 1, 1, 0)).contains("grid 0"));
        let big = DispatchLimits {
            max_count: [u32::MAX, 65535, 65535],
            ..LIMITS
        };
        let e = check_launch(launch(1024, 1, 1, 1 << 22), &big).unwrap_err();
        assert!(e.to_string().contains("32-bit"), "{e}");
        assert_eq!(e.kind(), blocksweep_core::ErrorKind::LaunchRejected);
    }

    #[test]
    fn shared_arrays_above_the_limit_are_refused_by_name() {
        let l = launch(256, 1, 1, 8);
        assert!(check_shared(l.with_shared(32768), 32768).is_ok());
        let e = check_shared(l.with_shared(33792), 32768).unwrap_err();
        assert_eq!(e.kind(), blocksweep_core::ErrorKind::LaunchRejected);
        assert!(
            e.to_string().contains("maxComputeSharedMemorySize = 32768"),
            "{e}"
        );
        // Whole floats only: 32770 bytes make an array of 32768.
        assert!(check_shared(l.with_shared(32770), 32768).is_ok());
    }

    #[test]
    fn the_2d_loops_are_counted_per_dimension() {
        let l = Launch::new(
            BlockSize { x: 16, y: 16, z: 1 },
            blocksweep_core::GridSize { x: 1, y: 1 },
        );
        assert!(check_loop_iterations_2d(l, 16 * 65535, 16 * 65535, Some(65535)).is_ok());
        let e = check_loop_iterations_2d(l, 16, 16 * 65536, Some(65535)).unwrap_err();
        assert!(e.to_string().contains("in y"), "{e}");
        assert!(check_loop_iterations_2d(l, 1 << 40, 1 << 40, None).is_ok());
    }

    #[test]
    fn loop_limit_counts_the_busiest_invocation() {
        // Measured on llvmpipe: one invocation writes 65535 pixels and no more.
        assert!(check_loop_iterations(launch(1, 1, 1, 1), 65535, Some(65535)).is_ok());
        let e = check_loop_iterations(launch(1, 1, 1, 1), 65536, Some(65535)).unwrap_err();
        assert_eq!(e.kind(), blocksweep_core::ErrorKind::LaunchRejected);
        assert!(e.to_string().contains("LP_MAX_TGSI_LOOP_ITERATIONS"), "{e}");
        assert!(check_loop_iterations(launch(1, 1, 1, 2), 131070, Some(65535)).is_ok());
        assert!(check_loop_iterations(launch(1, 1, 1, 2), 131071, Some(65535)).is_err());
        // y and z repeat x's work: they add no stride.
        assert!(check_loop_iterations(launch(16, 8, 1, 1), 16 * 65536, Some(65535)).is_err());
        // The default 4K frame at block 16 and one workgroup: 518400 iterations.
        let e = check_loop_iterations(launch(16, 1, 1, 1), 3840 * 2160, Some(65535)).unwrap_err();
        assert!(e.to_string().contains("518400 loop iterations"), "{e}");
        assert!(check_loop_iterations(launch(16, 1, 1, 1), 1 << 40, None).is_ok());
    }
}
