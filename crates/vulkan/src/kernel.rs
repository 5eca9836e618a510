//! Building the kernels and their facts. The grayscale shaders and their pipelines: one shader
//! module per shader (the grid-stride and one-pixel variants share `grayscale.comp`; the lab's 2-D,
//! shared-memory and register-heavy kernels have one each), one descriptor set (bindings 0..3 =
//! r, g, b, gray), a pipeline layout with two 32-bit push constants (the pixel count, or the
//! lab kernels' width and height, or count and salt), and one compute pipeline per (workgroup
//! size, variant, shared size) through specialization constants, created on first use and
//! cached, and the kernel facts. The helpers they are built from are `pipeline.rs`'s.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::{BlockSize, KernelFacts, KernelVariant, Launch, Named};

use crate::context::DeviceContext;
use crate::error::VulkanResult;
use crate::memory::Buffer;
pub(crate) use crate::objects::{bind_storage, DescriptorPool, PipelineCache, StorageLayouts};
pub(crate) use crate::pipeline::{
    compute_pipeline, shader_module, shader_module_of_words, statistics, statistics_flags,
    PipelineStatistics, Stage,
};
use crate::timing::DispatchLimits;

/// shaders/grayscale.spv, compiled from shaders/grayscale.comp with
/// `glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale.spv shaders/grayscale.comp`.
pub const SPIRV: &[u8] = include_bytes!("../../../shaders/grayscale.spv");

/// The lab's shaders (kernels/README.md), each compiled the same way from its `.comp`.
pub const SPIRV_2D: &[u8] = include_bytes!("../../../shaders/grayscale_2d.spv");
pub const SPIRV_SHARED: &[u8] = include_bytes!("../../../shaders/grayscale_shared.spv");
pub const SPIRV_REGISTERS: &[u8] = include_bytes!("../../../shaders/grayscale_registers.spv");

/// Bytes of the largest push-constant block, `{ uint a; uint b; }` (grayscale.comp uses the
/// first word only).
const PUSH_CONSTANT_BYTES: u32 = 8;

/// The shader of each variant: its SPIR-V and its path.
fn shader_of(variant: KernelVariant) -> (usize, &'static [u8], &'static str) {
    match variant {
        KernelVariant::GridStride | KernelVariant::OnePixelPerThread => {
            (0, SPIRV, "shaders/grayscale.spv")
        }
        KernelVariant::GridStride2D => (1, SPIRV_2D, "shaders/grayscale_2d.spv"),
        KernelVariant::SharedProbe => (2, SPIRV_SHARED, "shaders/grayscale_shared.spv"),
        KernelVariant::RegisterHeavy => (3, SPIRV_REGISTERS, "shaders/grayscale_registers.spv"),
    }
}

/// The facts `open` reports for the grayscale kernel (or, later, for a lab kernel). Builds one
/// pipeline now, so a shader the driver cannot compile fails, and reads its statistics.
pub(crate) fn facts(
    pipelines: &mut Pipelines,
    limits: &DispatchLimits,
    driver: &str,
    variant: KernelVariant,
) -> VulkanResult<KernelFacts> {
    let probe_block = BlockSize::linear(256.min(limits.max_invocations).min(limits.max_size[0]));
    // The shared-memory shader at its smallest array (12 bytes, the three weights).
    let pipeline = pipelines.get(probe_block, variant, 12)?;
    let stats = pipelines.statistics(pipeline)?;
    let (_, _, path) = shader_of(variant);
    let mut extra = vec![(
        "shader".to_string(),
        format!("{path} (glslangValidator -V --target-env vulkan1.1)"),
    )];
    if !stats.all.is_empty() {
        extra.push((
            "statistics of".into(),
            format!("the pipeline for workgroup {probe_block}"),
        ));
    }
    extra.extend(stats.all);
    Ok(KernelFacts {
        max_block: Some(Named::new(
            limits.max_invocations.into(),
            "maxComputeWorkGroupInvocations (no per-pipeline query in Vulkan)",
        )),
        preferred_multiple: None,
        // Vulkan compiles a pipeline per workgroup size, and a driver may allocate registers
        // differently for each (a 1024-invocation pipeline cannot keep what a 256 one does):
        // the count is the probe pipeline's, and says so.
        registers: stats.registers.map(|r| {
            Named::new(
                r.value,
                format!("{}, pipeline for workgroup {probe_block}", r.name),
            )
        }),
        private_bytes: None,
        shared_bytes: None,
        compiled_by: format!("vkCreateComputePipelines (driver {driver})"),
        extra,
    })
}

/// A pipeline's identity: workgroup size, variant, and words of shared array.
type PipelineKey = (BlockSize, KernelVariant, u32);

fn key(block: BlockSize, variant: KernelVariant, shared_bytes: u32) -> PipelineKey {
    let words = match variant {
        KernelVariant::SharedProbe => shared_bytes / 4,
        _ => 0,
    };
    (block, variant, words)
}

/// The specialization constants of a pipeline: constant_id 0..2 = local_size_{x,y,z}_id; 3 =
/// grayscale.comp's ONE_PIXEL_PER_THREAD (a VkBool32) or grayscale_shared.comp's SHARED_WORDS.
fn constants((block, variant, words): PipelineKey) -> Vec<u32> {
    let fourth = match variant {
        KernelVariant::OnePixelPerThread => 1,
        KernelVariant::SharedProbe => words,
        _ => 0,
    };
    match variant {
        KernelVariant::GridStride2D | KernelVariant::RegisterHeavy => {
            vec![block.x, block.y, block.z]
        }
        _ => vec![block.x, block.y, block.z, fourth],
    }
}

/// The shader modules, layouts, descriptor set and pipeline cache. Dropped, the pipelines go
/// first, then the pool (freeing the set), then the layouts.
pub(crate) struct Pipelines {
    device: Arc<DeviceContext>,
    /// One module per shader, in [`shader_of`]'s order; created on first use.
    shaders: [vk::ShaderModule; 4],
    /// Keyed by workgroup size, variant and shared-array words (0 for the other shaders).
    cache: PipelineCache<PipelineKey>,
    _pool: DescriptorPool,
    pub set: vk::DescriptorSet,
    pub layouts: StorageLayouts,
}

impl Pipelines {
    pub fn new(device: &Arc<DeviceContext>) -> VulkanResult<Pipelines> {
        let layouts = StorageLayouts::new(device, 4, PUSH_CONSTANT_BYTES)?;
        let (pool, sets) = DescriptorPool::with_sets(device, layouts.set, 1, 4)?;
        // The module goes into `p` as soon as it exists, so an early return destroys it.
        let mut p = Pipelines {
            device: device.clone(),
            shaders: [vk::ShaderModule::null(); 4],
            cache: PipelineCache::new(device),
            _pool: pool,
            set: sets[0],
            layouts,
        };
        p.shaders[0] = shader_module(&device.raw, SPIRV, "shaders/grayscale.spv")?;
        Ok(p)
    }

    /// Points bindings 0..3 at the four planes. Only called while no command is pending.
    pub fn bind_planes(&self, planes: &[Buffer; 4]) {
        let ranges = planes.each_ref().map(|b| (b.raw, 0, vk::WHOLE_SIZE));
        bind_storage(&self.device.raw, self.set, &ranges);
    }

    /// The pipeline for this workgroup size and variant (and, for the shared-memory shader,
    /// `shared_bytes` / 4 words of shared array), created on first use. The caller has checked
    /// the size against the device limits ([`check_launch`](crate::check_launch)) and the
    /// shared bytes against maxComputeSharedMemorySize ([`check_shared`](crate::check_shared)).
    pub fn get(
        &mut self,
        block: BlockSize,
        variant: KernelVariant,
        shared_bytes: u32,
    ) -> VulkanResult<vk::Pipeline> {
        let key = key(block, variant, shared_bytes);
        if let Some(p) = self.cache.get(&key) {
            return Ok(p);
        }
        let module = self.module(variant)?;
        let (d, layout, flags) = (&self.device.raw, self.layouts.pipeline, self.flags());
        let phase = format!("pipeline for workgroup {block} ({variant:?})");
        let pipeline = blocksweep_core::trace::time("vulkan", phase, || {
            compute_pipeline(d, module, layout, &constants(key), flags)
        })?;
        self.cache.insert(key, pipeline);
        Ok(pipeline)
    }

    /// Creates the pipelines of `blocks` for `variant` that do not exist yet, in parallel
    /// ([`Stage::build_parallel`]). Blocks the device cannot run are left for
    /// [`get`](Self::get) to meet after the launch checks; a failure here is only a miss.
    pub fn prepare(
        &mut self,
        blocks: &[BlockSize],
        variant: KernelVariant,
        limits: &DispatchLimits,
    ) {
        let keys: Vec<(PipelineKey, Vec<u32>)> = blocks
            .iter()
            .filter(|b| crate::check_launch(Launch::linear(**b, 1), limits).is_ok())
            .map(|&b| key(b, variant, 0))
            .filter(|k| !self.cache.contains(k))
            .map(|k| (k, constants(k)))
            .collect();
        let Ok(module) = self.module(variant) else {
            return;
        };
        let stage = Stage {
            module,
            entry: c"main",
            layout: self.layouts.pipeline,
            flags: self.flags(),
        };
        self.cache
            .keep(stage.build_parallel(&self.device.raw, &keys));
    }

    /// The shader module of `variant`, created on first use.
    fn module(&mut self, variant: KernelVariant) -> VulkanResult<vk::ShaderModule> {
        let (index, spirv, path) = shader_of(variant);
        if self.shaders[index] == vk::ShaderModule::null() {
            self.shaders[index] = shader_module(&self.device.raw, spirv, path)?;
        }
        Ok(self.shaders[index])
    }

    fn flags(&self) -> vk::PipelineCreateFlags {
        statistics_flags(&self.device)
    }

    pub fn statistics(&self, pipeline: vk::Pipeline) -> VulkanResult<PipelineStatistics> {
        statistics(&self.device, pipeline)
    }
}

impl Drop for Pipelines {
    fn drop(&mut self) {
        let d = &self.device.raw;
        // SAFETY: the backend waited for the queue; a module may go before the pipelines made
        // from it (they do not use it after creation); null handles are no-ops.
        for m in self.shaders {
            unsafe { d.destroy_shader_module(m, None) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_is_embedded_word_aligned() {
        for spirv in [SPIRV, SPIRV_2D, SPIRV_SHARED, SPIRV_REGISTERS] {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(spirv)).unwrap();
            assert_eq!(words[0], 0x0723_0203);
        }
    }
}
