//! Command recording and submission: one command buffer and one fence, reused for every
//! operation. A batch of dispatches (`timing`) is recorded into one command buffer with a
//! compute/transfer barrier between consecutive dispatches, so the device runs them back to
//! back, in order, with no host wait between them; the host waits once, on the fence, at the
//! end.
//!
//! Every command buffer begins with a barrier from all earlier compute and transfer writes
//! (pipeline barriers order against previous submissions too), so a dispatch never races the
//! write, fill or dispatch before it, whichever submission that was in.

use std::sync::Arc;
use std::time::Duration;

use ash::vk;
use blocksweep_core::GridSize;

use crate::context::DeviceContext;
use crate::error::{map_host_device_oom, map_host_device_oom_and_lost, VulkanError, VulkanResult};

/// How long one submission may take before a program is loaded (the copy ceiling's, the
/// staging copies); a program's have the core's deadline ([`Commands::set_timeout`]).
const FENCE_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) struct Commands {
    device: Arc<DeviceContext>,
    pool: vk::CommandPool,
    buffer: vk::CommandBuffer,
    fence: vk::Fence,
    /// A wait timed out: the fence is still pending, so the command buffer may not be reused
    /// until a later wait succeeds.
    pending: bool,
    /// How long a wait on the fence lasts before it is an error.
    timeout: Duration,
    /// The timeout or device loss after which nothing more is submitted: the device may
    /// still run the work that timed out, so every later call fails with this instead.
    failed: Option<String>,
}

impl Commands {
    pub fn new(device: &Arc<DeviceContext>) -> VulkanResult<Self> {
        let d = &device.raw;
        // Handles go into `c` as they are created, so an early return destroys them.
        let mut c = Commands {
            device: device.clone(),
            pool: vk::CommandPool::null(),
            buffer: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            pending: false,
            timeout: FENCE_TIMEOUT,
            failed: None,
        };
        // SAFETY: `d` is the live device this `Commands` holds an Arc to; the create info is a
        // temporary that outlives the call.
        c.pool = unsafe {
            d.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(device.family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .map_err(map_host_device_oom("vkCreateCommandPool"))?;
        // SAFETY: the pool was created just above on this device and only this `Commands` uses it;
        // the allocate info outlives the call.
        c.buffer = unsafe {
            d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(c.pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
        }
        .map_err(map_host_device_oom("vkAllocateCommandBuffers"))?[0];
        // SAFETY: `d` is live (held through `device`); the create info outlives the call.
        c.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(map_host_device_oom("vkCreateFence"))?;
        Ok(c)
    }

    /// Makes every later wait last at most `deadline`, or 120 s where it is `None`.
    pub fn set_timeout(&mut self, deadline: Option<Duration>) {
        self.timeout = deadline.unwrap_or(FENCE_TIMEOUT);
    }

    /// Whether a wait timed out or the device was lost.
    pub fn abandoned(&self) -> bool {
        self.failed.is_some()
    }

    /// `Unusable` once a wait has timed out or the device is lost.
    pub fn usable(&self) -> VulkanResult<()> {
        match &self.failed {
            Some(why) => Err(VulkanError::Unusable(why.clone())),
            None => Ok(()),
        }
    }

    /// Records `record` after the leading barrier, submits, and waits for the device.
    pub fn run(
        &mut self,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> VulkanResult<()> {
        self.usable()?;
        self.finish_pending()?;
        let d = &self.device.raw;
        let cb = self.buffer;
        // SAFETY: `cb` comes from `pool`, made with RESET_COMMAND_BUFFER so it may be reset on its
        // own, and is not pending: `finish_pending` above waited for its last submission. `&mut
        // self` keeps anyone else from recording into it.
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
        // The same barrier as between the dispatches of a batch: it also orders against the
        // submissions before this one.
        between_dispatches(d, cb);
        record(d, cb);
        // SAFETY: `cb` is in the recording state: begun above, and `record` only records into it.
        unsafe { d.end_command_buffer(cb) }.map_err(map_host_device_oom("vkEndCommandBuffer"))?;
        let buffers = [cb];
        let submit = [vk::SubmitInfo::default().command_buffers(&buffers)];
        // SAFETY: `cb` is ended (executable) and `submit` with `buffers` outlives the call; the
        // fence is unsignalled (created so, reset after every wait), and this `Commands`, the
        // device's only submitter, holds `&mut self`, so the queue is not used concurrently.
        let submitted = unsafe { d.queue_submit(self.device.queue, &submit, self.fence) }
            .map_err(map_host_device_oom_and_lost("vkQueueSubmit"));
        self.remember_failure(submitted)?;
        self.pending = true;
        self.finish_pending()
    }

    /// Waits for the last submission if it has not been seen to finish, then resets the fence.
    /// A timeout or a lost device makes the commands [`usable`](Self::usable) no more.
    pub fn finish_pending(&mut self) -> VulkanResult<()> {
        self.usable()?;
        let waited = self.wait();
        self.remember_failure(waited)
    }

    fn remember_failure(&mut self, r: VulkanResult<()>) -> VulkanResult<()> {
        if let Err(e @ (VulkanError::Timeout { .. } | VulkanError::DeviceLost { .. })) = &r {
            self.failed = Some(e.to_string());
        }
        r
    }

    fn wait(&mut self) -> VulkanResult<()> {
        if !self.pending {
            return Ok(());
        }
        let d = &self.device.raw;
        let nanos = u64::try_from(self.timeout.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: the fence is this live device's, submitted by `run` (`pending` says so).
        match unsafe { d.wait_for_fences(&[self.fence], true, nanos) } {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => {
                return Err(VulkanError::Timeout {
                    call: "vkWaitForFences",
                    seconds: self.timeout.as_secs_f64(),
                })
            }
            Err(e) => return Err(map_host_device_oom_and_lost("vkWaitForFences")(e)),
        }
        self.pending = false;
        // SAFETY: the wait above saw the fence signalled, so no submission still uses it.
        unsafe { d.reset_fences(&[self.fence]) }.map_err(map_host_device_oom("vkResetFences"))
    }
}

impl Drop for Commands {
    fn drop(&mut self) {
        let d = &self.device.raw;
        if self.failed.is_some() {
            // A wait timed out: the device may run the kernel for ever, and waiting for it
            // here is the hang the deadline exists to prevent. The pool and fence stay.
            return;
        }
        if self.pending {
            if let Err(e) = self.device.wait_idle() {
                self.device.log.push(format!("drop: {e}"));
            }
        }
        // SAFETY: nothing is pending any more (or the device is lost, where destroying is
        // still allowed); the pool frees the command buffer; null handles are no-ops.
        unsafe {
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
        }
    }
}

/// The barrier between two dispatches (or copies) of one batch: the next may read and must
/// overwrite what the previous one wrote, so its compute and transfer work waits for the
/// previous one's writes. This orders the batch on the device; the host does not wait.
pub(crate) fn between_dispatches(d: &ash::Device, cb: vk::CommandBuffer) {
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
    // SAFETY: every caller records this inside `Commands::run` (its closure, or the leading barrier
    // after `vkBeginCommandBuffer`), so `cb` is in the recording state; the barrier array outlives
    // the call.
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

/// Binds the pipeline and the descriptor set, pushes the push constants (32-bit words: the
/// copy shader's) and dispatches `grid` workgroups.
pub fn record_dispatch(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
    push: &[u32],
    grid: GridSize,
) {
    let bytes: Vec<u8> = push.iter().flat_map(|w| w.to_ne_bytes()).collect();
    record_dispatch_bytes(d, cb, pipeline, layout, set, &bytes, grid);
}

/// [`record_dispatch`] with the push-constant block as bytes (a user's kernel's scalars, laid
/// out by the core); an empty block pushes nothing.
pub fn record_dispatch_bytes(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set: vk::DescriptorSet,
    push: &[u8],
    grid: GridSize,
) {
    // SAFETY: `cb` is being recorded (callers record inside `Commands::run`, as for `barrier`); the
    // pipeline, layout and set are the loaded program's or the copy shader's, kept alive by the
    // caller until the submission is waited for, and the push block is the size the layout's
    // push-constant range was made with.
    unsafe {
        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
        d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        if !push.is_empty() {
            d.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, push);
        }
        d.cmd_dispatch(cb, grid.x, grid.y, 1);
    }
}

/// Fills a whole buffer with the NaN poison.
pub fn record_poison(d: &ash::Device, cb: vk::CommandBuffer, buffer: vk::Buffer) {
    // SAFETY: `cb` is being recorded (callers record inside `Commands::run`); `buffer` is a live
    // buffer of this crate, each made with TRANSFER_DST usage, and a WHOLE_SIZE fill from 0 is
    // always in range.
    unsafe {
        d.cmd_fill_buffer(
            cb,
            buffer,
            0,
            vk::WHOLE_SIZE,
            blocksweep_core::verify::POISON_BITS,
        )
    };
}

/// Copies `size` bytes from the start of `src` to the start of `dst`.
pub fn record_copy(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    src: vk::Buffer,
    dst: vk::Buffer,
    size: u64,
) {
    record_copy_from(d, cb, (src, 0), dst, size);
}

/// Records a copy of `size` bytes of `src` from byte `from` to the start of `dst`.
pub fn record_copy_from(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    (src, from): (vk::Buffer, u64),
    dst: vk::Buffer,
    size: u64,
) {
    let region = [vk::BufferCopy::default().src_offset(from).size(size)];
    // SAFETY: `cb` is being recorded (callers record inside `Commands::run`); both buffers are live
    // and made with TRANSFER_SRC | TRANSFER_DST usage, and each caller keeps the region inside both
    // (the program's `read` checks `from + size` against the argument's buffer); `region` outlives
    // the call.
    unsafe { d.cmd_copy_buffer(cb, src, dst, &region) };
}

/// Records a copy of `size` bytes from the start of `src` to byte `to` of `dst`.
pub fn record_copy_to(
    d: &ash::Device,
    cb: vk::CommandBuffer,
    src: vk::Buffer,
    (dst, to): (vk::Buffer, u64),
    size: u64,
) {
    let region = [vk::BufferCopy::default().dst_offset(to).size(size)];
    // SAFETY: as in `record_copy_from`; callers keep `to + size` inside `dst` (the pieces'
    // spans lie inside their piece).
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
