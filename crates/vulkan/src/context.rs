//! The API handle the rest hangs off: the logical device and its compute queue.
//!
//! Every object that needs the device holds an `Arc<DeviceContext>`, so the `VkDevice` is
//! destroyed only after the last of them, and it waits for the device to go idle first.

use std::sync::Arc;

use ash::vk;

use crate::device::{AdapterInfo, SubgroupSizeControl};
use crate::error::{map_create_device, map_host_device_oom_and_lost, VulkanResult};
use crate::instance::{InstanceShared, MessageLog};

pub(crate) struct DeviceContext {
    pub raw: ash::Device,
    pub queue: vk::Queue,
    pub family: u32,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    /// VK_KHR_pipeline_executable_properties, when enabled.
    pub executables: Option<ash::khr::pipeline_executable_properties::Device>,
    /// What a compute pipeline may require of its subgroup size, with subgroupSizeControl
    /// enabled; `None` where the device cannot.
    pub size_control: Option<SubgroupSizeControl>,
    /// bufferDeviceAddress is enabled: a program may split its planes into pieces.
    pub device_address: bool,
    pub log: MessageLog,
    /// Kept alive until the device is gone.
    _instance: Arc<InstanceShared>,
}

impl DeviceContext {
    pub fn new(
        instance: Arc<InstanceShared>,
        adapter: &AdapterInfo,
        family: u32,
    ) -> VulkanResult<DeviceContext> {
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let mut extensions = Vec::new();
        // The spec requires enabling VK_KHR_portability_subset wherever it is offered.
        if adapter.has_extension(ash::khr::portability_subset::NAME) {
            extensions.push(ash::khr::portability_subset::NAME.as_ptr());
        }
        let statistics = adapter.executable_statistics;
        if statistics {
            extensions.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        }
        let mut exec_features =
            vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
                .pipeline_executable_info(true);
        // 64-bit integers and doubles where the device has them, for a user's kernel whose
        // scalars or buffers are i64, u64 or f64.
        // SAFETY: `adapter.raw` was enumerated from this same live instance; the call only fills a
        // struct it returns.
        let supported = unsafe { instance.raw.get_physical_device_features(adapter.raw) };
        let features = vk::PhysicalDeviceFeatures::default()
            .shader_int64(supported.shader_int64 == vk::TRUE)
            .shader_float64(supported.shader_float64 == vk::TRUE);
        // subgroupSizeControl, for a program that requires a subgroup size: core in 1.3, the
        // extension (enabled with it) before.
        let size_control = adapter.size_control();
        if size_control.is_some() && adapter.effective_version < vk::API_VERSION_1_3 {
            extensions.push(ash::ext::subgroup_size_control::NAME.as_ptr());
        }
        let mut size_features =
            vk::PhysicalDeviceSubgroupSizeControlFeatures::default().subgroup_size_control(true);
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .enabled_features(&features);
        if statistics {
            info = info.push_next(&mut exec_features);
        }
        if size_control.is_some() {
            info = info.push_next(&mut size_features);
        }
        let device_address = adapter.buffer_device_address;
        let mut address_features =
            vk::PhysicalDeviceBufferDeviceAddressFeatures::default().buffer_device_address(true);
        if device_address {
            info = info.push_next(&mut address_features);
        }
        // SAFETY: `adapter.raw` belongs to this live instance; `family` is one of its queue
        // families (`compute_queue_family`); `info`, its extension names (static strings) and the
        // chained feature structs are locals that outlive the call, chained only where the version
        // or extension makes them valid.
        let raw = unsafe { instance.raw.create_device(adapter.raw, &info, None) }
            .map_err(map_create_device("vkCreateDevice"))?;
        // SAFETY: the device was just created with one queue (index 0) in `family`.
        let queue = unsafe { raw.get_device_queue(family, 0) };
        let executables = statistics
            .then(|| ash::khr::pipeline_executable_properties::Device::new(&instance.raw, &raw));
        Ok(DeviceContext {
            raw,
            queue,
            family,
            memory: adapter.memory,
            executables,
            size_control,
            device_address,
            log: instance.log.clone(),
            _instance: instance,
        })
    }

    /// Waits for all queued work; used before destroying anything.
    pub fn wait_idle(&self) -> VulkanResult<()> {
        // SAFETY: the device is alive (`&self`); its one queue is submitted to only by the
        // backend's `Commands`, and every caller (a drop or an error path of the backend) runs on
        // the thread that owns that, so nothing submits during the wait.
        unsafe { self.raw.device_wait_idle() }
            .map_err(map_host_device_oom_and_lost("vkDeviceWaitIdle"))
    }
}

impl Drop for DeviceContext {
    fn drop(&mut self) {
        if let Err(e) = self.wait_idle() {
            self.log.push(format!("drop: {e}"));
        }
        // SAFETY: no child object is left (each holds an Arc to this), and the queue is idle.
        unsafe { self.raw.destroy_device(None) };
    }
}
