//! The copy shader's Vulkan objects: its module, layouts and pipeline ([`CopyShader`]), and
//! the two buffers of one copy with a descriptor set per dispatch ([`CopyBuffers`]).

use std::sync::Arc;

use ash::vk;
use blocksweep_core::GridSize;
use blocksweep_core::Named;

use crate::context::DeviceContext;
use crate::copy_plan::{CopyPlan, ELEMENT_BYTES};
use crate::error::VulkanResult;
use crate::kernel::{
    bind_storage, compute_pipeline, shader_module, DescriptorPool, StorageLayouts,
};
use crate::memory::{Buffer, MemoryKind};

/// shaders/copy.spv, compiled from shaders/copy.comp with
/// `glslangValidator -V --target-env vulkan1.1 -o shaders/copy.spv shaders/copy.comp`.
pub const COPY_SPIRV: &[u8] = include_bytes!("../../../shaders/copy.spv");

/// The copy shader's module, layouts and its one pipeline (workgroup size specialized).
pub(crate) struct CopyShader {
    device: Arc<DeviceContext>,
    module: vk::ShaderModule,
    pipeline: vk::Pipeline,
    // Dropped after the pipeline made with them.
    layouts: StorageLayouts,
}

impl CopyShader {
    pub fn new(device: &Arc<DeviceContext>, workgroup: u32) -> VulkanResult<CopyShader> {
        let d = &device.raw;
        // Two buffers; the push constant is `uint n`, the element count.
        let layouts = StorageLayouts::new(device, 2, 4)?;
        // Each handle goes into `s` as soon as it exists, so an early return destroys it.
        let mut s = CopyShader {
            device: device.clone(),
            module: vk::ShaderModule::null(),
            pipeline: vk::Pipeline::null(),
            layouts,
        };
        s.module = shader_module(d, COPY_SPIRV, "shaders/copy.spv")?;
        // constant_id 0 = local_size_x_id.
        let flags = vk::PipelineCreateFlags::empty();
        let layout = s.layouts.pipeline;
        s.pipeline = compute_pipeline(d, s.module, layout, &[workgroup], flags)?;
        Ok(s)
    }
}

impl Drop for CopyShader {
    fn drop(&mut self) {
        let d = &self.device.raw;
        // SAFETY: the backend waited for the queue; the pipeline before the module it was made
        // from; null handles of a half-built `CopyShader` are no-ops.
        unsafe {
            d.destroy_pipeline(self.pipeline, None);
            d.destroy_shader_module(self.module, None);
        }
    }
}

/// A source and a destination buffer, and one descriptor set per shader dispatch binding the
/// two ranges that dispatch copies.
pub(crate) struct CopyBuffers {
    // Kept alive for its sets; dropped (freeing them) before the buffers they point at.
    _pool: DescriptorPool,
    dispatches: Vec<(vk::DescriptorSet, u32, u32)>,
    pub src: Buffer,
    pub dst: Buffer,
    pub bytes: u64,
}

impl CopyBuffers {
    /// Allocates two device-local buffers of `plan.bytes` and binds each dispatch's ranges.
    pub fn new(
        device: &Arc<DeviceContext>,
        shader: &CopyShader,
        plan: &CopyPlan,
        max_alloc: Option<&Named<u64>>,
    ) -> VulkanResult<CopyBuffers> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        let buffer = || {
            Buffer::new(
                device,
                plan.bytes,
                usage,
                MemoryKind::DeviceLocal,
                max_alloc,
            )
        };
        let (src, dst) = (buffer()?, buffer()?);
        let count = plan.chunks.len() as u32;
        let (pool, sets) = DescriptorPool::with_sets(device, shader.layouts.set, count, 2)?;
        for (&set, c) in sets.iter().zip(&plan.chunks) {
            bind_storage(
                &device.raw,
                set,
                &[(src.raw, c.offset, c.bytes), (dst.raw, c.offset, c.bytes)],
            );
        }
        let dispatches = sets
            .into_iter()
            .zip(&plan.chunks)
            .map(|(set, c)| (set, (c.bytes / ELEMENT_BYTES) as u32, c.grid))
            .collect();
        Ok(CopyBuffers {
            _pool: pool,
            dispatches,
            src,
            dst,
            bytes: plan.bytes,
        })
    }

    /// Records the whole copy as one vkCmdCopyBuffer.
    pub fn record_transfer(&self, d: &ash::Device, cb: vk::CommandBuffer) {
        crate::command::record_copy(d, cb, self.src.raw, self.dst.raw, self.bytes);
    }

    /// Records the whole copy as shader dispatches (disjoint ranges: no barrier between them).
    pub fn record_shader(&self, d: &ash::Device, cb: vk::CommandBuffer, shader: &CopyShader) {
        for &(set, elements, grid) in &self.dispatches {
            crate::command::record_dispatch(
                d,
                cb,
                shader.pipeline,
                shader.layouts.pipeline,
                set,
                &[elements],
                GridSize::linear(grid),
            );
        }
    }
}
