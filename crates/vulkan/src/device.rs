//! Which devices exist and what they are: the physical devices in the driver's order, what each
//! reports (read once: the properties2 chain, memory heaps, queue families, extensions), who it
//! is ([`identity`]) and, in `limits`, its launch limits under Vulkan's own names.

use std::ffi::CStr;

use ash::vk;
use blocksweep_core::DeviceIdentity;

use crate::conv;
use crate::error::{
    map_enumerate_physical_devices, map_enumerate_properties, VulkanError, VulkanResult,
};
use crate::instance::InstanceShared;

pub(crate) use crate::subgroups::{
    check_block, most_invocations, required_size, SubgroupSizeControl,
};

/// gallivm's LP_MAX_TGSI_LOOP_ITERATIONS (src/gallium/auxiliary/gallivm/lp_bld_limits.h).
pub const LLVMPIPE_LOOP_LIMIT: u64 = 65535;

/// Physical devices in the driver's order; blocksweep's device index is a position here.
pub(crate) fn enumerate(instance: &InstanceShared) -> VulkanResult<Vec<vk::PhysicalDevice>> {
    // SAFETY: the instance is alive for the call (`&InstanceShared`).
    unsafe { instance.raw.enumerate_physical_devices() }
        .map_err(map_enumerate_physical_devices("vkEnumeratePhysicalDevices"))
}

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
    /// VkPhysicalDeviceSubgroupProperties: supportedStages and supportedOperations.
    pub subgroup_stages: vk::ShaderStageFlags,
    pub subgroup_operations: vk::SubgroupFeatureFlags,
    /// requiredSubgroupSizeStages, and whether the subgroupSizeControl feature is supported
    /// (Vulkan 1.3 or VK_EXT_subgroup_size_control).
    pub required_size_stages: vk::ShaderStageFlags,
    pub size_control_feature: bool,
    pub max_memory_allocation_size: Option<u64>,
    /// (domain, bus, device, function) from VK_EXT_pci_bus_info.
    pub pci: Option<(u32, u32, u32, u32)>,
    /// (shaderSMCount, shaderWarpsPerSM) from VK_NV_shader_sm_builtins.
    pub sm_builtins: Option<(u32, u32)>,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub queue_families: Vec<vk::QueueFamilyProperties>,
    /// VK_KHR_pipeline_executable_properties is supported and its feature is on.
    pub executable_statistics: bool,
    /// Vulkan 1.2's bufferDeviceAddress feature: planes past one allocation are split into
    /// pieces the split shaders reach by address (`crate::pieces`).
    pub buffer_device_address: bool,
}

impl AdapterInfo {
    pub fn query(instance: &InstanceShared, raw: vk::PhysicalDevice) -> VulkanResult<AdapterInfo> {
        let i = &instance.raw;
        // SAFETY: `raw` was enumerated from this live instance; the call only fills a struct.
        let properties = unsafe { i.get_physical_device_properties(raw) };
        // SAFETY: as above; ash sizes the returned Vec from the count the driver gives.
        let extensions: Vec<String> = unsafe { i.enumerate_device_extension_properties(raw) }
            .map_err(map_enumerate_properties(
                "vkEnumerateDeviceExtensionProperties",
            ))?
            .iter()
            .map(|e| conv::fixed_c_str(&e.extension_name))
            .collect();
        let mut info = AdapterInfo {
            raw,
            properties,
            effective_version: instance.api_version.min(properties.api_version),
            extensions,
            uuid: None,
            driver_id: None,
            driver_name: None,
            driver_info: None,
            subgroup_size: None,
            subgroup_size_control: None,
            subgroup_stages: vk::ShaderStageFlags::empty(),
            subgroup_operations: vk::SubgroupFeatureFlags::empty(),
            required_size_stages: vk::ShaderStageFlags::empty(),
            size_control_feature: false,
            max_memory_allocation_size: None,
            pci: None,
            sm_builtins: None,
            // SAFETY: `raw` belongs to the live instance `i`; the call only fills a struct.
            memory: unsafe { i.get_physical_device_memory_properties(raw) },
            // SAFETY: as above; ash sizes the returned Vec from the count the driver gives.
            queue_families: unsafe { i.get_physical_device_queue_family_properties(raw) },
            executable_statistics: false,
            buffer_device_address: false,
        };
        // Without 1.1 there is no vkGetPhysicalDeviceProperties2 to call (and the shader
        // cannot run either): the 1.0 properties above are all we report.
        if info.effective_version >= vk::API_VERSION_1_1 {
            info.read_properties2(i);
            info.size_control_feature = info.subgroup_size_control.is_some()
                && crate::subgroups::size_control_feature(i, raw);
            info.executable_statistics = info
                .has_extension(ash::khr::pipeline_executable_properties::NAME)
                && pipeline_executable_info(i, raw);
            info.buffer_device_address =
                info.effective_version >= vk::API_VERSION_1_2 && buffer_device_address(i, raw);
        }
        Ok(info)
    }

    /// The properties2 chain: each optional struct pushed only when the device's API version
    /// or an extension makes it valid, then ONE `vkGetPhysicalDeviceProperties2` call fills
    /// them all.
    fn read_properties2(&mut self, i: &ash::Instance) {
        let v12 = self.effective_version >= vk::API_VERSION_1_2;
        let v13 = self.effective_version >= vk::API_VERSION_1_3;
        let has = |name: &CStr| self.has_extension(name);
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
            // SAFETY: the caller checked that the device has Vulkan 1.1
            // (vkGetPhysicalDeviceProperties2), and each struct in the chain is pushed only where
            // the version or an extension makes it valid; every struct is a local of this scope,
            // which outlives the call.
            unsafe { i.get_physical_device_properties2(self.raw, &mut p2) };
        }
        self.uuid = Some(id.device_uuid);
        self.subgroup_size = Some(subgroup.subgroup_size);
        self.subgroup_stages = subgroup.supported_stages;
        self.subgroup_operations = subgroup.supported_operations;
        self.max_memory_allocation_size = Some(maintenance3.max_memory_allocation_size);
        if let Some(d) = driver {
            self.driver_id = Some(d.driver_id);
            self.driver_name = Some(conv::fixed_c_str(&d.driver_name));
            self.driver_info = Some(conv::fixed_c_str(&d.driver_info));
        }
        if let Some(s) = &size_control {
            self.required_size_stages = s.required_subgroup_size_stages;
        }
        self.subgroup_size_control = size_control.map(|s| {
            (
                s.min_subgroup_size,
                s.max_subgroup_size,
                s.max_compute_workgroup_subgroups,
            )
        });
        self.pci = pci.map(|p| (p.pci_domain, p.pci_bus, p.pci_device, p.pci_function));
        self.sm_builtins = sm.map(|s| (s.shader_sm_count, s.shader_warps_per_sm));
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

    /// What a compute pipeline may require of its subgroup size, where the device lets it
    /// (the feature on, the compute stage in requiredSubgroupSizeStages): the device context
    /// enables the feature then.
    pub fn size_control(&self) -> Option<SubgroupSizeControl> {
        let (min, max, max_subgroups) = self.subgroup_size_control?;
        let compute = self
            .required_size_stages
            .contains(vk::ShaderStageFlags::COMPUTE);
        (self.size_control_feature && compute).then_some(SubgroupSizeControl {
            min,
            max,
            max_subgroups,
        })
    }

    /// The queue family the backend uses; see [`pick_compute_family`].
    pub fn compute_queue_family(&self) -> VulkanResult<u32> {
        pick_compute_family(&self.queue_families)
    }
}

/// Whether the pipelineExecutableInfo feature of VK_KHR_pipeline_executable_properties is on.
fn pipeline_executable_info(i: &ash::Instance, raw: vk::PhysicalDevice) -> bool {
    let mut f = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
    // SAFETY: called only for a device with Vulkan 1.1 (`query` checks) and the extension listed,
    // so the chained struct is valid; both structs are locals that outlive the call.
    unsafe { i.get_physical_device_features2(raw, &mut f2) };
    f.pipeline_executable_info == vk::TRUE
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

/// Who a physical device is, as blocksweep reports it.
pub(crate) fn identity(index: usize, adapter: &AdapterInfo) -> DeviceIdentity {
    let p = &adapter.properties;
    let driver = match (&adapter.driver_name, &adapter.driver_info) {
        (_, Some(info)) if !info.is_empty() => info.clone(),
        (Some(name), _) => format!(
            "{name} {}",
            conv::driver_version_string(p.vendor_id, p.driver_version)
        ),
        _ => conv::driver_version_string(p.vendor_id, p.driver_version),
    };
    DeviceIdentity {
        api: crate::API,
        index,
        name: conv::fixed_c_str(&p.device_name),
        vendor: blocksweep_core::backend::vendor_name(p.vendor_id),
        driver_version: driver,
        api_version: conv::version_string(p.api_version),
        platform: adapter.driver_name.clone().unwrap_or_default(),
        kind: conv::device_kind(p.device_type),
        uuid: adapter.uuid,
        pci_bus_id: adapter.pci.map(|(domain, bus, device, function)| {
            blocksweep_core::backend::pci_bus_id(domain, bus, device, function)
        }),
    }
}

/// Whether the bufferDeviceAddress feature is supported; called only with Vulkan 1.2.
fn buffer_device_address(i: &ash::Instance, raw: vk::PhysicalDevice) -> bool {
    let mut f = vk::PhysicalDeviceBufferDeviceAddressFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
    // SAFETY: Vulkan 1.2 (the caller checks) makes the chained core struct valid; both are
    // locals that outlive the call.
    unsafe { i.get_physical_device_features2(raw, &mut f2) };
    f.buffer_device_address == vk::TRUE
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
}
