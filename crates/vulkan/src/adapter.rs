//! What one physical device reports, read once: the properties2 chain (each optional struct
//! pushed only when the device's API version or an extension makes it valid, then ONE
//! `vkGetPhysicalDeviceProperties2` call fills them all), memory heaps, queue families and
//! extensions; and the blocksweep `Limits` built from them under Vulkan's own names.

use std::ffi::CStr;

use ash::vk;
use blocksweep_core::limits::{Dims, MultiprocessorModel};
use blocksweep_core::{Limits, Named};

use crate::conv;
use crate::error::{map_enumerate_properties, VulkanError, VulkanResult};
use crate::instance::InstanceShared;

/// How reports name the llvmpipe loop limit.
pub const LOOP_LIMIT_NAME: &str =
    "loop iterations per invocation (llvmpipe: gallivm LP_MAX_TGSI_LOOP_ITERATIONS)";

/// gallivm's LP_MAX_TGSI_LOOP_ITERATIONS (src/gallium/auxiliary/gallivm/lp_bld_limits.h).
pub const LLVMPIPE_LOOP_LIMIT: u64 = 65535;

/// Name of the device-local heap size in reports.
pub const HEAP_NAME: &str = "VkMemoryHeap[DEVICE_LOCAL].size";

/// A physical device's facts, copied out of the Vulkan structs (no pointers kept).
#[derive(Debug, Clone)]
pub(crate) struct AdapterInfo {
    pub raw: vk::PhysicalDevice,
    pub properties: vk::PhysicalDeviceProperties,
    /// min(instance API version, device API version): what may legally be used.
    pub effective_version: u32,
    pub extensions: Vec<String>,
    pub uuid: Option<[u8; 16]>,
    pub driver_id: Option<vk::DriverId>,
    pub driver_name: Option<String>,
    pub driver_info: Option<String>,
    pub subgroup_size: Option<u32>,
    /// (minSubgroupSize, maxSubgroupSize, maxComputeWorkgroupSubgroups).
    pub subgroup_size_control: Option<(u32, u32, u32)>,
    pub max_memory_allocation_size: Option<u64>,
    /// (domain, bus, device, function) from VK_EXT_pci_bus_info.
    pub pci: Option<(u32, u32, u32, u32)>,
    /// (shaderSMCount, shaderWarpsPerSM) from VK_NV_shader_sm_builtins.
    pub sm_builtins: Option<(u32, u32)>,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub queue_families: Vec<vk::QueueFamilyProperties>,
    /// VK_KHR_pipeline_executable_properties is supported and its feature is on.
    pub executable_statistics: bool,
}

impl AdapterInfo {
    pub fn query(instance: &InstanceShared, raw: vk::PhysicalDevice) -> VulkanResult<AdapterInfo> {
        let i = &instance.raw;
        let properties = unsafe { i.get_physical_device_properties(raw) };
        let effective_version = instance.api_version.min(properties.api_version);
        let extensions: Vec<String> = unsafe { i.enumerate_device_extension_properties(raw) }
            .map_err(map_enumerate_properties(
                "vkEnumerateDeviceExtensionProperties",
            ))?
            .iter()
            .map(|e| conv::fixed_c_str(&e.extension_name))
            .collect();
        let has = |name: &CStr| extensions.iter().any(|e| e.as_bytes() == name.to_bytes());
        let v11 = effective_version >= vk::API_VERSION_1_1;
        let v12 = effective_version >= vk::API_VERSION_1_2;
        let v13 = effective_version >= vk::API_VERSION_1_3;

        let mut info = AdapterInfo {
            raw,
            properties,
            effective_version,
            uuid: None,
            driver_id: None,
            driver_name: None,
            driver_info: None,
            subgroup_size: None,
            subgroup_size_control: None,
            max_memory_allocation_size: None,
            pci: None,
            sm_builtins: None,
            memory: unsafe { i.get_physical_device_memory_properties(raw) },
            queue_families: unsafe { i.get_physical_device_queue_family_properties(raw) },
            executable_statistics: false,
            extensions: Vec::new(),
        };
        // Without 1.1 there is no vkGetPhysicalDeviceProperties2 to call (and the shader
        // cannot run either): the 1.0 properties above are all we report.
        if v11 {
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
            let mut maintenance3 = vk::PhysicalDeviceMaintenance3Properties::default();
            let mut driver = (v12 || has(ash::khr::driver_properties::NAME))
                .then(vk::PhysicalDeviceDriverProperties::default);
            let mut size_control = (v13 || has(ash::ext::subgroup_size_control::NAME))
                .then(vk::PhysicalDeviceSubgroupSizeControlProperties::default);
            let mut pci = has(ash::ext::pci_bus_info::NAME)
                .then(vk::PhysicalDevicePCIBusInfoPropertiesEXT::default);
            let mut sm = has(ash::nv::shader_sm_builtins::NAME)
                .then(vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default);
            {
                let mut p2 = vk::PhysicalDeviceProperties2::default()
                    .push_next(&mut id)
                    .push_next(&mut subgroup)
                    .push_next(&mut maintenance3);
                if let Some(s) = driver.as_mut() {
                    p2 = p2.push_next(s);
                }
                if let Some(s) = size_control.as_mut() {
                    p2 = p2.push_next(s);
                }
                if let Some(s) = pci.as_mut() {
                    p2 = p2.push_next(s);
                }
                if let Some(s) = sm.as_mut() {
                    p2 = p2.push_next(s);
                }
                unsafe { i.get_physical_device_properties2(raw, &mut p2) };
            }
            info.uuid = Some(id.device_uuid);
            info.subgroup_size = Some(subgroup.subgroup_size);
            info.max_memory_allocation_size = Some(maintenance3.max_memory_allocation_size);
            if let Some(d) = driver {
                info.driver_id = Some(d.driver_id);
                info.driver_name = Some(conv::fixed_c_str(&d.driver_name));
                info.driver_info = Some(conv::fixed_c_str(&d.driver_info));
            }
            info.subgroup_size_control = size_control.map(|s| {
                (
                    s.min_subgroup_size,
                    s.max_subgroup_size,
                    s.max_compute_workgroup_subgroups,
                )
            });
            info.pci = pci.map(|p| (p.pci_domain, p.pci_bus, p.pci_device, p.pci_function));
            info.sm_builtins = sm.map(|s| (s.shader_sm_count, s.shader_warps_per_sm));

            if has(ash::khr::pipeline_executable_properties::NAME) {
                let mut f = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
                let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
                unsafe { i.get_physical_device_features2(raw, &mut f2) };
                info.executable_statistics = f.pipeline_executable_info == vk::TRUE;
            }
        }
        info.extensions = extensions;
        Ok(info)
    }

    pub fn has_extension(&self, name: &CStr) -> bool {
        self.extensions
            .iter()
            .any(|e| e.as_bytes() == name.to_bytes())
    }

    /// The largest heap flagged DEVICE_LOCAL (index, size); every Vulkan device has one.
    pub fn device_local_heap(&self) -> Option<(u32, u64)> {
        let m = &self.memory;
        (0..m.memory_heap_count)
            .map(|i| (i, m.memory_heaps[i as usize]))
            .filter(|(_, h)| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .max_by_key(|(_, h)| h.size)
            .map(|(i, h)| (i, h.size))
    }

    /// The most iterations one shader invocation's loops may run, where the driver cuts
    /// loops short instead of running them: llvmpipe (lavapipe) stops every loop of a shader
    /// after 65535 iterations in total (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS, "shared between
    /// every loop"), silently, to keep a runaway shader from hanging the CPU.
    pub fn max_loop_iterations(&self) -> Option<u64> {
        (self.driver_id == Some(vk::DriverId::MESA_LLVMPIPE)).then_some(LLVMPIPE_LOOP_LIMIT)
    }

    /// The queue family the backend uses; see [`pick_compute_family`].
    pub fn compute_queue_family(&self) -> VulkanResult<u32> {
        pick_compute_family(&self.queue_families)
    }

    /// Limits under their Vulkan names. `family` is the queue family the backend uses.
    pub fn limits(&self, family: u32) -> Limits {
        let l = &self.properties.limits;
        let dims = |d: [u32; 3]| Dims(d.map(u64::from));
        let heap = self.device_local_heap().map(|(_, size)| size);
        let mut extra: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| extra.push((k.to_string(), v));
        let p = &self.properties;
        put("deviceType", conv::device_type_name(p.device_type).into());
        put("vendorID", format!("0x{:04X}", p.vendor_id));
        put("deviceID", format!("0x{:04X}", p.device_id));
        put("apiVersion", conv::version_string(p.api_version));
        put(
            "driverVersion",
            conv::driver_version_string(p.vendor_id, p.driver_version),
        );
        if let Some(n) = &self.driver_name {
            put("driverName", n.clone());
        }
        if let Some(n) = &self.driver_info {
            put("driverInfo", n.clone());
        }
        if let Some(q) = self.queue_families.get(family as usize) {
            put(
                &format!("timestampValidBits (queue family {family})"),
                q.timestamp_valid_bits.to_string(),
            );
            put(
                &format!("queueFlags (queue family {family})"),
                format!("{:?}", q.queue_flags),
            );
        }
        put(
            "timestampComputeAndGraphics",
            (l.timestamp_compute_and_graphics == vk::TRUE).to_string(),
        );
        if let Some((min, max, groups)) = self.subgroup_size_control {
            put("minSubgroupSize", min.to_string());
            put("maxSubgroupSize", max.to_string());
            put("maxComputeWorkgroupSubgroups", groups.to_string());
        }
        if let Some(limit) = self.max_loop_iterations() {
            put(LOOP_LIMIT_NAME, limit.to_string());
        }
        put(
            "maxPushConstantsSize",
            l.max_push_constants_size.to_string(),
        );
        put(
            "maxMemoryAllocationCount",
            l.max_memory_allocation_count.to_string(),
        );
        for h in 0..self.memory.memory_heap_count as usize {
            let heap = self.memory.memory_heaps[h];
            put(
                &format!("VkMemoryHeap[{h}]"),
                format!("{} bytes, {:?}", heap.size, heap.flags),
            );
        }

        // A driver may state an allocation limit above the heap it could come from (the
        // spec only bounds it below); report the reachable value and keep the stated one.
        let max_alloc = self.max_memory_allocation_size.map(|a| match heap {
            Some(h) if a > h => {
                put("maxMemoryAllocationSize (as reported)", a.to_string());
                Named::new(h, format!("maxMemoryAllocationSize capped at {HEAP_NAME}"))
            }
            _ => Named::new(a, "maxMemoryAllocationSize"),
        });

        let warp = self.subgroup_size.unwrap_or(32);
        let nvidia = p.vendor_id == 0x10DE;
        let sm = self.sm_builtins.filter(|_| nvidia);
        Limits {
            max_threads_per_block: Some(Named::new(
                l.max_compute_work_group_invocations.into(),
                "maxComputeWorkGroupInvocations",
            )),
            max_block_dims: Some(Named::new(
                dims(l.max_compute_work_group_size),
                "maxComputeWorkGroupSize",
            )),
            max_grid_dims: Some(Named::new(
                dims(l.max_compute_work_group_count),
                "maxComputeWorkGroupCount",
            )),
            warp_size: self
                .subgroup_size
                .map(|s| Named::new(s.into(), "subgroupSize")),
            multiprocessors: sm
                .map(|(count, _)| {
                    Named::new(count.into(), "shaderSMCount (VK_NV_shader_sm_builtins)")
                })
                .or_else(|| cpu_threads(p.device_type)),
            max_threads_per_mp: sm.map(|(_, warps)| {
                Named::new(
                    warps as u64 * warp as u64,
                    "shaderWarpsPerSM x subgroupSize (VK_NV_shader_sm_builtins)",
                )
            }),
            shared_mem_per_block: Some(Named::new(
                l.max_compute_shared_memory_size.into(),
                "maxComputeSharedMemorySize",
            )),
            max_alloc_bytes: max_alloc,
            max_buffer_binding_bytes: Some(Named::new(
                l.max_storage_buffer_range.into(),
                "maxStorageBufferRange",
            )),
            global_mem_bytes: heap.map(|h| Named::new(h, HEAP_NAME)),
            timer_resolution_ns: Some(Named::new(l.timestamp_period as f64, "timestampPeriod")),
            max_loop_iterations: self
                .max_loop_iterations()
                .map(|v| Named::new(v, LOOP_LIMIT_NAME)),
            mp_model: sm.map(|(_, warps)| nvidia_model(warp, warps)),
            extra,
            ..Limits::default()
        }
    }
}

/// On a CPU device (lavapipe) the host's hardware threads stand in for compute units: Vulkan
/// has no such query, and one workgroup per thread is what a CPU driver can run at once.
fn cpu_threads(kind: vk::PhysicalDeviceType) -> Option<Named<u64>> {
    let n = std::thread::available_parallelism().ok()?.get() as u64;
    (kind == vk::PhysicalDeviceType::CPU).then(|| {
        Named::new(
            n,
            "host hardware threads (CPU device; Vulkan has no compute-unit query)",
        )
    })
}

/// The first queue family that can run compute shaders and write timestamps. A compute
/// family without timestamps is an error naming it: blocksweep never falls back to timing on
/// the host.
pub fn pick_compute_family(families: &[vk::QueueFamilyProperties]) -> VulkanResult<u32> {
    let compute = |q: &vk::QueueFamilyProperties| {
        q.queue_flags.contains(vk::QueueFlags::COMPUTE) && q.queue_count > 0
    };
    if let Some(i) = families
        .iter()
        .position(|q| compute(q) && q.timestamp_valid_bits > 0)
    {
        return Ok(i as u32);
    }
    match families.iter().position(compute) {
        Some(i) => Err(VulkanError::Unavailable(format!(
            "queue family {i} has no timestamp support (timestampValidBits = 0)"
        ))),
        None => Err(VulkanError::Unavailable(
            "no queue family supports VK_QUEUE_COMPUTE_BIT".into(),
        )),
    }
}

/// The residency model for an NVIDIA GPU seen through VK_NV_shader_sm_builtins.
fn nvidia_model(warp_size: u32, warps_per_sm: u32) -> MultiprocessorModel {
    // blocks/SM limit 32 assumed: NVIDIA's limit for SMs with 64 warps; Vulkan does not
    // expose it. SMs with 32 or 48 warps (sm_75, sm_86/87/89) allow 16 (24 on sm_89, which this
    // then under-counts), again assumed from NVIDIA's compute-capability table.
    let max_blocks = if warps_per_sm == 32 || warps_per_sm == 48 {
        16
    } else {
        32
    };
    MultiprocessorModel {
        warp_size,
        max_warps: warps_per_sm,
        max_blocks,
        // 64K 32-bit registers per SM on every architecture since sm_50, allocated per warp
        // in units of 256: NVIDIA's published figures, not a Vulkan query.
        registers: Some(65536),
        register_granularity: 256,
        source: format!(
            "model: VK_NV_shader_sm_builtins ({warps_per_sm} warps/SM, subgroupSize {warp_size}) \
             + assumed {max_blocks} blocks/SM and 65536 registers/SM (NVIDIA's published limits; \
             Vulkan does not expose them)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family(flags: vk::QueueFlags, bits: u32) -> vk::QueueFamilyProperties {
        vk::QueueFamilyProperties {
            queue_flags: flags,
            queue_count: 1,
            timestamp_valid_bits: bits,
            ..Default::default()
        }
    }

    #[test]
    fn compute_family_needs_timestamps() {
        let gfx = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
        let transfer = family(vk::QueueFlags::TRANSFER, 64);
        assert_eq!(
            pick_compute_family(&[transfer, family(gfx, 64)]).unwrap(),
            1
        );
        // A compute family with timestamps wins over an earlier one without.
        let fams = [family(vk::QueueFlags::COMPUTE, 0), family(gfx, 36)];
        assert_eq!(pick_compute_family(&fams).unwrap(), 1);
        let e = pick_compute_family(&[transfer, family(vk::QueueFlags::COMPUTE, 0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "queue family 1 has no timestamp support (timestampValidBits = 0)"
        );
        assert!(pick_compute_family(&[transfer]).is_err());
    }

    #[test]
    fn nvidia_block_slots_follow_warp_slots() {
        assert_eq!(nvidia_model(32, 64).max_blocks, 32);
        assert_eq!(nvidia_model(32, 32).max_blocks, 16);
        assert_eq!(nvidia_model(32, 48).max_blocks, 16);
        assert!(nvidia_model(32, 64)
            .source
            .contains("VK_NV_shader_sm_builtins"));
    }
}
