//! Command recording and submission: one command buffer, one fence and a two-query timestamp
//! pool, reused for every operation. Each operation is recorded, submitted and waited for on
//! the fence before the next starts, so no two ever overlap on the device.
//!
//! Every command buffer begins with a barrier from all earlier compute and transfer writes
//! (pipeline barriers order against previous submissions too), so a dispatch never races the
//! upload, poison or dispatch before it, whichever submission that was in.

use std::sync::Arc;

use ash::vk;

use crate::conv;
use crate::device::DeviceShared;
use crate::error::{map_host_device_oom, map_host_device_oom_and_lost, VulkanError, VulkanResult};

/// How long one submission may take before we stop waiting and report it.
const FENCE_TIMEOUT_S: u64 = 120;

pub(crate) struct Commands {
    device: Arc<DeviceShared>,
    pool: vk::CommandPool,
    buffer: vk::CommandBuffer,
    fence: vk::Fence,
    queries: vk::QueryPool,
    valid_bits: u32,
    period_ns: f32,
    /// A wait timed out: the fence is still pending, so the command buffer may not be reused
    /// until a later wait succeeds.
    pending: bool,
}

impl Commands {
    /// `valid_bits` / `period_ns`: the queue family's timestampValidBits and the device's
    /// timestampPeriod.
    pub fn new(device: &Arc<DeviceShared>, valid_bits: u32, period_ns: f32) -> VulkanResult<Self> {
        let d = &device.raw;
        // Handles go into `c` as they are created, so an early return destroys them.
        let mut c = Commands {
            device: device.clone(),
            pool: vk::CommandPool::null(),
            buffer: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            queries: vk::QueryPool::null(),
            valid_bits,
            period_ns,
            pending: false,
        };
        c.pool = unsafe {
            d.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(device.family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .map_err(map_host_device_oom("vkCreateCommandPool"))?;
        c.buffer = unsafe {
            d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(c.pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
        }
        .map_err(map_host_device_oom("vkAllocateCommandBuffers"))?[0];
        c.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(map_host_device_oom("vkCreateFence"))?;
        c.queries = unsafe {
            d.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(2),
                None,
            )
        }
        .map_err(map_host_device_oom("vkCreateQueryPool"))?;
        Ok(c)
    }

    /// Records `record` after the leading barrier, submits, and waits for the device.
    pub fn run(
        &mut self,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> VulkanResult<()> {
        self.finish_pending()?;
        let d = &self.device.raw;
        let cb = self.buffer;
        unsafe {
            d.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(map_host_device_oom("vkResetCommandBuffer"))?;
            d.begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(map_host_device_oom("vkBeginCommandBuffer"))?;
        }
        barrier(
            d,
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::TRANSFER_READ
                | vk::AccessFlags::TRANSFER_WRITE,
        );
        record(d, cb);
        unsafe { d.end_command_buffer(cb) }.map_err(map_host_device_oom("vkEndCommandBuffer"))?;
        let buffers = [cb];
        let submit = [vk::SubmitInfo::default().command_buffers(&buffers)];
        unsafe { d.queue_submit(self.device.queue, &submit, self.fence) }
            .map_err(map_host_device_oom_and_lost("vkQueueSubmit"))?;
        self.pending = true;
        self.finish_pending()
    }

    /// Like [`run`](Self::run), with `record` bracketed by a TOP_OF_PIPE timestamp and one at
    /// `end_stage`; returns the device time between them in milliseconds.
    pub fn run_timed(
        &mut self,
        end_stage: vk::PipelineStageFlags,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> VulkanResult<f64> {
        let queries = self.queries;
        self.run(|d, cb| unsafe {
            d.cmd_reset_query_pool(cb, queries, 0, 2);
            d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, queries, 0);
            record(d, cb);
            d.cmd_write_timestamp(cb, end_stage, queries, 1);
        })?;
        let mut ticks = [0u64; 2];
        unsafe {
            self.device.raw.get_query_pool_results(
                queries,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(map_host_device_oom_and_lost("vkGetQueryPoolResults"))?;
        Ok(conv::ticks_to_ms(
            ticks[0],
            ticks[1],
            self.valid_bits,
            self.period_ns,
        ))
    }

    /// Waits for the last submission if it has not been seen to finish, then resets the fence.
    fn finish_pending(&mut self) -> VulkanResult<()> {
        if !self.pending {
            return Ok(());
        }
        let d = &self.device.raw;
        match unsafe { d.wait_for_fences(&[self.fence], true, FENCE_TIMEOUT_S * 1_000_000_000) } {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                return Err(VulkanError::Timeout {
                    call: "vkWaitForFences",
                    seconds: FENCE_TIMEOUT_S,
                })
            }
            Err(e) => return Err(map_host_device_oom_and_lost("vkWaitForFences")(e)),
        }
        self.pending = false;
        unsafe { d.reset_fences(&[self.fence]) }.map_err(map_host_device_oom("vkResetFences"))
    }
}

impl Drop for Commands {
    fn drop(&mut self) {
        let d = &self.device.raw;
        if self.pending {
            if let Err(e) = self.device.wait_idle() {
                self.device.log.push(format!("drop: {e}"));
            }
        }
        // SAFETY: nothing is pending any more (or the device is lost, where destroying is
        // still allowed); the pool frees the command buffer; null handles are no-ops.
        unsafe {
            d.destroy_query_pool(self.queries, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// A global memory barrier.
pub fn barrier(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    src_stage: vk::PipelineStageFlags,
    src_access: vk::AccessFlags,
    dst_stage: vk::PipelineStageFlags,
    dst_access: vk::AccessFlags,
) {
    let b = [vk::MemoryBarrier::default()
        .src_access_mask(src_access)
        .dst_access_mask(dst_access)];
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            src_stage,
            dst_stage,
            vk::DependencyFlags::empty(),
            &b,
            &[],
            &[],
        )
    };
}

/// Binds the pipeline and the planes, pushes the pixel count and dispatches `grid` workgroups.
pub fn record_dispatch(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
    pixels: u32,
    grid: u32,
) {
    unsafe {
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        d.cmd_push_constants(
            cb,
            layout,
            vk::ShaderStageFlags::COMPUTE,
            0,
            &pixels.to_ne_bytes(),
        );
        d.cmd_dispatch(cb, grid, 1, 1);
    }
}

/// Fills a whole buffer with the NaN poison.
pub fn record_poison(d: &ash::Device, cb: vk::CommandBuffer, buffer: vk::Buffer) {
    unsafe { d.cmd_fill_buffer(cb, buffer, 0, vk::WHOLE_SIZE, conv::NAN_BITS) };
}

/// Copies `size` bytes from the start of `src` to the start of `dst`.
pub fn record_copy(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    size: u64,
) {
    let region = [vk::BufferCopy::default().size(size)];
    unsafe { d.cmd_copy_buffer(cb, src, dst, &region) };
}

/// Makes transfer writes visible to the host, before it maps a staging buffer.
pub fn record_host_read_barrier(d: &ash::Device, cb: vk::CommandBuffer) {
    barrier(
        d,
        cb,
        vk::PipelineStageFlags::TRANSFER,
        vk::AccessFlags::TRANSFER_WRITE,
        vk::PipelineStageFlags::HOST,
        vk::AccessFlags::HOST_READ,
    );
}
