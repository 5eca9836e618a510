//! Building the kernels and their facts. The grayscale shaders and their pipelines: one shader
//! module per shader (the seed's two variants share `grayscale.comp`; the lab's 2-D,
//! shared-memory and register-heavy kernels have one each), one descriptor set (bindings 0..3 =
//! r, g, b, gray), a pipeline layout with two 32-bit push constants (the pixel count, or the
//! lab kernels' width and height, or count and salt), and one compute pipeline per (workgroup
//! size, variant, shared size) through specialization constants, created on first use and
//! cached; the statistics
//! VK_KHR_pipeline_executable_properties gives for them, and the kernel facts. The module and
//! pipeline helpers serve the copy shader (`copy/shader.rs`) too.

use std::collections::HashMap;
use std::ffi::CStr;
use std::io::Cursor;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::{BlockSize, KernelFacts, KernelVariant, Launch, Named};

use crate::context::DeviceContext;
use crate::conv;
use crate::error::{
    map_allocate_descriptor_sets, map_host_device_oom, map_shader_build, VulkanError, VulkanResult,
};
use crate::memory::Buffer;
use crate::timing::DispatchLimits;

/// The descriptor set layout (`buffers` storage buffers at bindings 0..buffers) and pipeline
/// layout (one compute push-constant range of `push_bytes`, none if 0) that every shader uses.
/// On failure nothing is left behind.
pub(crate) fn storage_layouts(
    d: &ash::Device,
    buffers: u32,
    push_bytes: u32,
) -> VulkanResult<(vk::DescriptorSetLayout, vk::PipelineLayout)> {
    let bindings: Vec<_> = (0..buffers)
        .map(|i| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    // SAFETY: `d` is a live device; the create infos borrow locals that outlive the calls.
    let set_layout = unsafe {
        d.create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
            None,
        )
    }
    .map_err(map_host_device_oom("vkCreateDescriptorSetLayout"))?;
    let range = vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .size(push_bytes);
    let ranges = match push_bytes {
        0 => &[][..],
        _ => std::slice::from_ref(&range),
    };
    let set_layouts = [set_layout];
    let layout = unsafe {
        d.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&set_layouts)
                .push_constant_ranges(ranges),
            None,
        )
    };
    match layout {
        Ok(layout) => Ok((set_layout, layout)),
        Err(e) => {
            // SAFETY: created above and used by nothing yet.
            unsafe { d.destroy_descriptor_set_layout(set_layout, None) };
            Err(map_host_device_oom("vkCreatePipelineLayout")(e))
        }
    }
}

/// An embedded SPIR-V module as the u32 words Vulkan takes (the bytes carry no alignment).
fn spirv_words(bytes: &[u8], path: &str) -> VulkanResult<Vec<u32>> {
    ash::util::read_spv(&mut Cursor::new(bytes)).map_err(|e| VulkanError::Build {
        call: "ash::util::read_spv",
        detail: format!("{path} is not SPIR-V: {e}"),
    })
}

/// A shader module from embedded SPIR-V (`path` names it in errors).
pub(crate) fn shader_module(
    d: &ash::Device,
    spirv: &[u8],
    path: &str,
) -> VulkanResult<vk::ShaderModule> {
    shader_module_of_words(d, &spirv_words(spirv, path)?)
}

/// A shader module from SPIR-V words.
pub(crate) fn shader_module_of_words(
    d: &ash::Device,
    code: &[u32],
) -> VulkanResult<vk::ShaderModule> {
    unsafe { d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(code), None) }
        .map_err(map_shader_build("vkCreateShaderModule"))
}

/// One compute pipeline of `module`'s `main`, with 32-bit specialization constants
/// `constants[i]` at constant_id i. On failure nothing is left behind.
pub(crate) fn compute_pipeline(
    d: &ash::Device,
    module: vk::ShaderModule,
    layout: vk::PipelineLayout,
    constants: &[u32],
    flags: vk::PipelineCreateFlags,
) -> VulkanResult<vk::Pipeline> {
    let stage = Stage {
        module,
        entry: c"main",
        layout,
        flags,
    };
    stage.pipeline(d, constants)
}

/// What every pipeline of one shader shares: its module, entry point, layout and flags.
#[derive(Clone, Copy)]
pub(crate) struct Stage<'a> {
    pub module: vk::ShaderModule,
    pub entry: &'a CStr,
    pub layout: vk::PipelineLayout,
    pub flags: vk::PipelineCreateFlags,
}

impl Stage<'_> {
    /// One pipeline with 32-bit specialization constants `constants[i]` at constant_id i.
    pub fn pipeline(&self, d: &ash::Device, constants: &[u32]) -> VulkanResult<vk::Pipeline> {
        let Stage {
            module,
            entry,
            layout,
            flags,
        } = *self;
        let data: Vec<u8> = constants.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let entries: Vec<_> = (0..constants.len() as u32)
            .map(|i| {
                vk::SpecializationMapEntry::default()
                    .constant_id(i)
                    .offset(4 * i)
                    .size(4)
            })
            .collect();
        let specialization = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(entry)
            .specialization_info(&specialization);
        let info = [vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(layout)];
        match unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) } {
            Ok(p) => Ok(p[0]),
            Err((partial, r)) => {
                for p in partial.into_iter().filter(|p| *p != vk::Pipeline::null()) {
                    unsafe { d.destroy_pipeline(p, None) };
                }
                Err(map_shader_build("vkCreateComputePipelines")(r))
            }
        }
    }

    /// The pipelines of `keys` (each with its constants), each built on its own thread: a
    /// driver compiles SPIR-V to machine code here (milliseconds each on NVIDIA), and pipeline
    /// creation is free-threaded in Vulkan.
    pub fn build_parallel<K: Copy + Send>(
        &self,
        d: &ash::Device,
        keys: &[(K, Vec<u32>)],
    ) -> Vec<(K, VulkanResult<vk::Pipeline>)> {
        let _t =
            blocksweep_core::trace::span("vulkan", format!("{} pipelines in parallel", keys.len()));
        std::thread::scope(|s| {
            let handles: Vec<_> = keys
                .iter()
                .map(|(k, c)| (*k, s.spawn(move || self.pipeline(d, c))))
                .collect();
            handles
                .into_iter()
                .filter_map(|(k, h)| h.join().ok().map(|p| (k, p)))
                .collect()
        })
    }
}

/// CAPTURE_STATISTICS_KHR where VK_KHR_pipeline_executable_properties is on, so that
/// [`statistics`] has something to read.
pub(crate) fn statistics_flags(device: &DeviceContext) -> vk::PipelineCreateFlags {
    match device.executables.is_some() {
        true => vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR,
        false => vk::PipelineCreateFlags::empty(),
    }
}

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

/// What VK_KHR_pipeline_executable_properties says about one pipeline.
#[derive(Debug, Clone, Default)]
pub(crate) struct PipelineStatistics {
    /// Every statistic as ("<executable>: <name>", value).
    pub all: Vec<(String, String)>,
    /// The register count, under the statistic's own name.
    pub registers: Option<Named<u64>>,
}

/// A descriptor pool, destroyed (freeing its sets) on drop.
pub(crate) struct DescriptorPool {
    device: Arc<DeviceContext>,
    raw: vk::DescriptorPool,
}

impl DescriptorPool {
    /// A pool sized for exactly `sets` sets of `layout`, each of `buffers` storage buffers, and
    /// those sets.
    pub fn with_sets(
        device: &Arc<DeviceContext>,
        layout: vk::DescriptorSetLayout,
        sets: u32,
        buffers: u32,
    ) -> VulkanResult<(DescriptorPool, Vec<vk::DescriptorSet>)> {
        let d = &device.raw;
        let size = vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(buffers * sets);
        // A pool size of 0 descriptors is invalid: a kernel with no buffers has none.
        let sizes = match buffers {
            0 => &[][..],
            _ => std::slice::from_ref(&size),
        };
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(sets)
            .pool_sizes(sizes);
        let pool = DescriptorPool {
            device: device.clone(),
            raw: unsafe { d.create_descriptor_pool(&info, None) }
                .map_err(map_host_device_oom("vkCreateDescriptorPool"))?,
        };
        let layouts = vec![layout; sets as usize];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool.raw)
            .set_layouts(&layouts);
        let sets = unsafe { d.allocate_descriptor_sets(&info) }
            .map_err(map_allocate_descriptor_sets("vkAllocateDescriptorSets"))?;
        Ok((pool, sets))
    }
}

impl Drop for DescriptorPool {
    fn drop(&mut self) {
        // SAFETY: no submission using its sets is pending; destroying frees them.
        unsafe { self.device.raw.destroy_descriptor_pool(self.raw, None) };
    }
}

/// Points bindings 0.. of `set` at the (buffer, offset, range) of `ranges`, as storage
/// buffers. Only called while no command using the set is pending.
pub(crate) fn bind_storage(
    d: &ash::Device,
    set: vk::DescriptorSet,
    ranges: &[(vk::Buffer, u64, u64)],
) {
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = ranges
        .iter()
        .map(|&(buffer, offset, range)| {
            [vk::DescriptorBufferInfo::default()
                .buffer(buffer)
                .offset(offset)
                .range(range)]
        })
        .collect();
    let writes: Vec<_> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info)
        })
        .collect();
    unsafe { d.update_descriptor_sets(&writes, &[]) };
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

/// The shader module, layouts, descriptor set and pipeline cache.
pub(crate) struct Pipelines {
    device: Arc<DeviceContext>,
    /// One module per shader, in [`shader_of`]'s order; created on first use.
    shaders: [vk::ShaderModule; 4],
    set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pool: Option<DescriptorPool>,
    pub set: vk::DescriptorSet,
    /// Keyed by workgroup size, variant and shared-array words (0 for the other shaders).
    cache: HashMap<PipelineKey, vk::Pipeline>,
}

impl Pipelines {
    pub fn new(device: &Arc<DeviceContext>) -> VulkanResult<Pipelines> {
        let d = &device.raw;
        // Each handle goes into `p` as soon as it exists, so an early return destroys it.
        let mut p = Pipelines {
            device: device.clone(),
            shaders: [vk::ShaderModule::null(); 4],
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pool: None,
            set: vk::DescriptorSet::null(),
            cache: HashMap::new(),
        };
        p.shaders[0] = shader_module(d, SPIRV, "shaders/grayscale.spv")?;
        (p.set_layout, p.layout) = storage_layouts(d, 4, PUSH_CONSTANT_BYTES)?;
        let (pool, sets) = DescriptorPool::with_sets(device, p.set_layout, 1, 4)?;
        p.pool = Some(pool);
        p.set = sets[0];
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
        if let Some(&p) = self.cache.get(&key) {
            return Ok(p);
        }
        let module = self.module(variant)?;
        let (d, layout, flags) = (&self.device.raw, self.layout, self.flags());
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
            .filter(|k| !self.cache.contains_key(k))
            .map(|k| (k, constants(k)))
            .collect();
        let Ok(module) = self.module(variant) else {
            return;
        };
        let stage = Stage {
            module,
            entry: c"main",
            layout: self.layout,
            flags: self.flags(),
        };
        for (k, p) in stage.build_parallel(&self.device.raw, &keys) {
            if let Ok(p) = p {
                self.cache.insert(k, p);
            }
        }
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

/// Every statistic VK_KHR_pipeline_executable_properties reports for `pipeline`, and the
/// register count among them (the first statistic whose name contains "register"); nothing
/// without the extension.
pub(crate) fn statistics(
    device: &DeviceContext,
    pipeline: vk::Pipeline,
) -> VulkanResult<PipelineStatistics> {
    let Some(ext) = &device.executables else {
        return Ok(PipelineStatistics::default());
    };
    let call = "vkGetPipelineExecutableStatisticsKHR";
    let executables = unsafe {
        ext.get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(pipeline))
    }
    .map_err(map_host_device_oom("vkGetPipelineExecutablePropertiesKHR"))?;
    let mut all = Vec::new();
    let mut registers = None;
    for (index, exe) in executables.iter().enumerate() {
        let exe_name = conv::fixed_c_str(&exe.name);
        let stats = unsafe {
            ext.get_pipeline_executable_statistics(
                &vk::PipelineExecutableInfoKHR::default()
                    .pipeline(pipeline)
                    .executable_index(index as u32),
            )
        }
        .map_err(map_host_device_oom(call))?;
        for s in &stats {
            let name = conv::fixed_c_str(&s.name);
            let (text, number) = conv::statistic_value(s.format, s.value);
            if registers.is_none() && name.to_ascii_lowercase().contains("register") {
                registers = number.map(|n| {
                    Named::new(n, format!("VK_KHR_pipeline_executable_properties: {name}"))
                });
            }
            all.push((format!("{exe_name}: {name}"), text));
        }
    }
    Ok(PipelineStatistics { all, registers })
}

impl Drop for Pipelines {
    fn drop(&mut self) {
        let d = &self.device.raw;
        // SAFETY: the backend waited for the queue; children before parents, null handles of a
        // half-built `Pipelines` are no-ops. The pool frees the set.
        unsafe {
            for (_, p) in self.cache.drain() {
                d.destroy_pipeline(p, None);
            }
            drop(self.pool.take());
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            for m in self.shaders {
                d.destroy_shader_module(m, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spirv_is_embedded_word_aligned() {
        for spirv in [SPIRV, SPIRV_2D, SPIRV_SHARED, SPIRV_REGISTERS] {
            let words = ash::util::read_spv(&mut Cursor::new(spirv)).unwrap();
            assert_eq!(words[0], 0x0723_0203);
        }
    }
}
