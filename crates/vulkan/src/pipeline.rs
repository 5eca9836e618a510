//! The grayscale shader and its pipelines: one shader module, one descriptor set (bindings
//! 0..3 = r, g, b, gray), a pipeline layout with the pixel count as a push constant, and one
//! compute pipeline per (workgroup size, variant) through specialization constants, created on
//! first use and cached.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::{BlockSize, KernelVariant, Launch, Named};

use crate::context::DeviceContext;
use crate::conv;
use crate::error::{
    map_allocate_descriptor_sets, map_host_device_oom, map_shader_build, VulkanError, VulkanResult,
};
use crate::memory::Buffer;

/// The descriptor set layout (`buffers` storage buffers at bindings 0..buffers) and pipeline
/// layout (one compute push-constant range of `push_bytes`) that both shaders use. On failure
/// nothing is left behind.
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
    let ranges = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .size(push_bytes)];
    let set_layouts = [set_layout];
    let layout = unsafe {
        d.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&set_layouts)
                .push_constant_ranges(&ranges),
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
pub(crate) fn spirv_words(bytes: &[u8], path: &str) -> VulkanResult<Vec<u32>> {
    ash::util::read_spv(&mut Cursor::new(bytes)).map_err(|e| VulkanError::Build {
        call: "ash::util::read_spv",
        detail: format!("{path} is not SPIR-V: {e}"),
    })
}

/// shaders/grayscale.spv, compiled from shaders/grayscale.comp with
/// `glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale.spv shaders/grayscale.comp`.
pub const SPIRV: &[u8] = include_bytes!("../../../shaders/grayscale.spv");

/// Bytes of the push-constant block `{ uint n; }`.
const PUSH_CONSTANT_BYTES: u32 = 4;

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

/// What VK_KHR_pipeline_executable_properties says about one pipeline.
#[derive(Debug, Clone, Default)]
pub(crate) struct PipelineStatistics {
    /// Every statistic as ("<executable>: <name>", value).
    pub all: Vec<(String, String)>,
    /// The register count, under the statistic's own name.
    pub registers: Option<Named<u64>>,
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

/// The shader module, layouts, descriptor set and pipeline cache.
pub(crate) struct Pipelines {
    device: Arc<DeviceContext>,
    shader: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    pub layout: vk::PipelineLayout,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    /// Keyed by workgroup size and "one pixel per thread".
    cache: HashMap<(BlockSize, bool), vk::Pipeline>,
    capture_statistics: bool,
}

impl Pipelines {
    pub fn new(device: &Arc<DeviceContext>) -> VulkanResult<Pipelines> {
        let d = &device.raw;
        let code = spirv_words(SPIRV, "shaders/grayscale.spv")?;
        // Each handle goes into `p` as soon as it exists, so an early return destroys it.
        let mut p = Pipelines {
            device: device.clone(),
            shader: vk::ShaderModule::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            layout: vk::PipelineLayout::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
            cache: HashMap::new(),
            capture_statistics: device.executables.is_some(),
        };
        p.shader = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)
        }
        .map_err(map_shader_build("vkCreateShaderModule"))?;
        (p.set_layout, p.layout) = storage_layouts(d, 4, PUSH_CONSTANT_BYTES)?;
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(4)];
        p.pool = unsafe {
            d.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .map_err(map_host_device_oom("vkCreateDescriptorPool"))?;
        let set_layouts = [p.set_layout];
        p.set = unsafe {
            d.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(p.pool)
                    .set_layouts(&set_layouts),
            )
        }
        .map_err(map_allocate_descriptor_sets("vkAllocateDescriptorSets"))?[0];
        Ok(p)
    }

    /// Points bindings 0..3 at the four planes. Only called while no command is pending.
    pub fn bind_planes(&self, planes: &[Buffer; 4]) {
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = planes
            .iter()
            .map(|b| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(b.raw)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let writes: Vec<_> = infos
            .iter()
            .enumerate()
            .map(|(i, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(self.set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        unsafe { self.device.raw.update_descriptor_sets(&writes, &[]) };
    }

    /// The pipeline for this workgroup size and variant, created on first use. The caller has
    /// checked the size against the device limits ([`check_launch`]).
    pub fn get(&mut self, block: BlockSize, variant: KernelVariant) -> VulkanResult<vk::Pipeline> {
        let one_pixel = variant == KernelVariant::OnePixelPerThread;
        if let Some(&p) = self.cache.get(&(block, one_pixel)) {
            return Ok(p);
        }
        // constant_id 0..2 = local_size_{x,y,z}_id, 3 = ONE_PIXEL_PER_THREAD (a VkBool32).
        let values = [block.x, block.y, block.z, one_pixel as u32];
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let entries: Vec<_> = (0..4u32)
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
            .module(self.shader)
            .name(c"main")
            .specialization_info(&specialization);
        let flags = if self.capture_statistics {
            vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
        } else {
            vk::PipelineCreateFlags::empty()
        };
        let info = [vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(self.layout)];
        let pipeline = match unsafe {
            self.device
                .raw
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
        } {
            Ok(p) => p[0],
            Err((partial, r)) => {
                for p in partial.into_iter().filter(|p| *p != vk::Pipeline::null()) {
                    unsafe { self.device.raw.destroy_pipeline(p, None) };
                }
                return Err(map_shader_build("vkCreateComputePipelines")(r));
            }
        };
        self.cache.insert((block, one_pixel), pipeline);
        Ok(pipeline)
    }

    /// Every statistic VK_KHR_pipeline_executable_properties reports for `pipeline`, and the
    /// register count among them (the first statistic whose name contains "register").
    pub fn statistics(&self, pipeline: vk::Pipeline) -> VulkanResult<PipelineStatistics> {
        let Some(ext) = &self.device.executables else {
            return Ok(PipelineStatistics::default());
        };
        let call = "vkGetPipelineExecutableStatisticsKHR";
        let executables = unsafe {
            ext.get_pipeline_executable_properties(
                &vk::PipelineInfoKHR::default().pipeline(pipeline),
            )
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
            d.destroy_descriptor_pool(self.pool, None);
            d.destroy_pipeline_layout(self.layout, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_shader_module(self.shader, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The seed's 4K frame at block 16 and one workgroup: 518400 iterations.
        let e = check_loop_iterations(launch(16, 1, 1, 1), 3840 * 2160, Some(65535)).unwrap_err();
        assert!(e.to_string().contains("518400 loop iterations"), "{e}");
        assert!(check_loop_iterations(launch(16, 1, 1, 1), 1 << 40, None).is_ok());
    }

    #[test]
    fn spirv_is_embedded_word_aligned() {
        let words = ash::util::read_spv(&mut Cursor::new(SPIRV)).unwrap();
        assert_eq!(words[0], 0x0723_0203);
    }
}
