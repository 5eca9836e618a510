//! The pieces every compute shader here is built from (the grayscale kernels, the copy
//! shader, a user's kernel): descriptor-set and pipeline layouts of storage buffers and push
//! constants, shader modules, pipelines through specialization constants (one at a time or in
//! parallel), descriptor pools and bindings, and the statistics
//! VK_KHR_pipeline_executable_properties gives for a pipeline.

use std::ffi::CStr;
use std::io::Cursor;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::Named;

use crate::context::DeviceContext;
use crate::conv;
use crate::error::{
    map_allocate_descriptor_sets, map_host_device_oom, map_shader_build, VulkanError, VulkanResult,
};

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
        self.pipeline_requiring(d, constants, None)
    }

    /// [`Stage::pipeline`], requiring subgroup size `required` where given
    /// (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo; the caller has checked it against
    /// the device: `device::required_size`).
    pub fn pipeline_requiring(
        &self,
        d: &ash::Device,
        constants: &[u32],
        required: Option<u32>,
    ) -> VulkanResult<vk::Pipeline> {
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
        let mut size = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(required.unwrap_or(0));
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(entry)
            .specialization_info(&specialization);
        if required.is_some() {
            stage = stage.push_next(&mut size);
        }
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
