//! The pieces every compute shader here is built from (the grayscale kernels, the copy
//! shader, a user's kernel): shader modules, pipelines through specialization constants (one
//! at a time or in parallel), and the statistics VK_KHR_pipeline_executable_properties gives
//! for a pipeline. The layouts, descriptors and pipeline cache they are made with are in
//! `objects.rs`.

use std::ffi::CStr;
use std::io::Cursor;

use ash::vk;
use blocksweep_core::Named;

use crate::context::DeviceContext;
use crate::conv;
use crate::error::{map_host_device_oom, map_shader_build, VulkanError, VulkanResult};

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
    // SAFETY: `d` is live and `code` outlives the call (the driver copies it). The words are
    // SPIR-V: embedded, compiled by shaderc, or a user's module whose header and interface
    // `reflect` parsed; its full validity (what spirv-val checks) is the user's to keep.
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
        // SAFETY: the module and layout are live (the caller's), and `info` with the stage,
        // specialization data and entries, entry name and chained subgroup-size struct are locals
        // that outlive the call; a required size was checked against the device by the caller.
        match unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) } {
            Ok(p) => Ok(p[0]),
            Err((partial, r)) => {
                for p in partial.into_iter().filter(|p| *p != vk::Pipeline::null()) {
                    // SAFETY: a pipeline the failed call made, never used.
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
    // SAFETY: `ext` exists only where the extension and its feature were enabled on this device;
    // `pipeline` is the caller's live pipeline, built with CAPTURE_STATISTICS_KHR
    // (`statistics_flags`).
    let executables = unsafe {
        ext.get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(pipeline))
    }
    .map_err(map_host_device_oom("vkGetPipelineExecutablePropertiesKHR"))?;
    let mut all = Vec::new();
    let mut registers = None;
    for (index, exe) in executables.iter().enumerate() {
        let exe_name = conv::fixed_c_str(&exe.name);
        // SAFETY: as above; `index` is below the executable count the driver just returned.
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
