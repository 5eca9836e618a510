//! The logical device and its queue, and buffers with their memory.
//!
//! Every object that needs the device holds an `Arc<DeviceShared>`, so the `VkDevice` is
//! destroyed only after the last of them, and it waits for the device to go idle first.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::Named;

use crate::adapter::AdapterInfo;
use crate::error::{
    map_allocate_memory, map_bind_memory, map_create_device, map_host_device_oom,
    map_host_device_oom_and_lost, map_map_memory, VulkanError, VulkanResult,
};
use crate::instance::{InstanceShared, MessageLog};

pub(crate) struct DeviceShared {
    pub raw: ash::Device,
    pub queue: vk::Queue,
    pub family: u32,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    /// VK_KHR_pipeline_executable_properties, when enabled.
    pub executables: Option<ash::khr::pipeline_executable_properties::Device>,
    pub log: MessageLog,
    /// Kept alive until the device is gone.
    _instance: Arc<InstanceShared>,
}

impl DeviceShared {
    pub fn new(
        instance: Arc<InstanceShared>,
        adapter: &AdapterInfo,
        family: u32,
    ) -> VulkanResult<DeviceShared> {
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
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions);
        if statistics {
            info = info.push_next(&mut exec_features);
        }
        let raw = unsafe { instance.raw.create_device(adapter.raw, &info, None) }
            .map_err(map_create_device("vkCreateDevice"))?;
        let queue = unsafe { raw.get_device_queue(family, 0) };
        let executables = statistics
            .then(|| ash::khr::pipeline_executable_properties::Device::new(&instance.raw, &raw));
        Ok(DeviceShared {
            raw,
            queue,
            family,
            memory: adapter.memory,
            executables,
            log: instance.log.clone(),
            _instance: instance,
        })
    }

    /// Waits for all queued work; used before destroying anything.
    pub fn wait_idle(&self) -> VulkanResult<()> {
        unsafe { self.raw.device_wait_idle() }
            .map_err(map_host_device_oom_and_lost("vkDeviceWaitIdle"))
    }

    /// Index of a memory type allowed by `type_bits` with all of `required`, preferring one
    /// that also has `preferred`.
    fn memory_type(
        &self,
        type_bits: u32,
        required: vk::MemoryPropertyFlags,
        preferred: vk::MemoryPropertyFlags,
    ) -> Option<u32> {
        let candidates: Vec<u32> = (0..self.memory.memory_type_count)
            .filter(|&i| type_bits & (1 << i) != 0)
            .filter(|&i| {
                self.memory.memory_types[i as usize]
                    .property_flags
                    .contains(required)
            })
            .collect();
        candidates
            .iter()
            .copied()
            .find(|&i| {
                self.memory.memory_types[i as usize]
                    .property_flags
                    .contains(preferred)
            })
            .or(candidates.first().copied())
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        if let Err(e) = self.wait_idle() {
            self.log.push(format!("drop: {e}"));
        }
        // SAFETY: no child object is left (each holds an Arc to this), and the queue is idle.
        unsafe { self.raw.destroy_device(None) };
    }
}

/// Where a buffer's memory lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemoryKind {
    /// DEVICE_LOCAL: the planes and the copy-ceiling buffers.
    DeviceLocal,
    /// HOST_VISIBLE | HOST_COHERENT (HOST_CACHED preferred, for read-back): staging.
    Staging,
}

/// A `VkBuffer` bound to its own `VkDeviceMemory`, both freed on drop.
pub(crate) struct Buffer {
    device: Arc<DeviceShared>,
    pub raw: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
}

impl Buffer {
    /// Creates and binds a buffer. `max_alloc` is maxMemoryAllocationSize, checked against the
    /// driver's real requirement (which may exceed `size`) before allocating.
    pub fn new(
        device: &Arc<DeviceShared>,
        size: u64,
        usage: vk::BufferUsageFlags,
        kind: MemoryKind,
        max_alloc: Option<&Named<u64>>,
    ) -> VulkanResult<Buffer> {
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let raw = unsafe { device.raw.create_buffer(&info, None) }
            .map_err(map_host_device_oom("vkCreateBuffer"))?;
        // From here on, an early return drops `buffer`, which destroys what exists so far.
        let mut buffer = Buffer {
            device: device.clone(),
            raw,
            memory: vk::DeviceMemory::null(),
            size,
        };
        let req = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        if let Some(max) = max_alloc.filter(|m| req.size > m.value) {
            return Err(VulkanError::TooLarge(format!(
                "a buffer of {size} bytes needs an allocation of {} bytes; {} is {}",
                req.size, max.name, max.value
            )));
        }
        let (required, preferred) = match kind {
            MemoryKind::DeviceLocal => (
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
            ),
            MemoryKind::Staging => (
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
                vk::MemoryPropertyFlags::HOST_CACHED,
            ),
        };
        let type_index = device
            .memory_type(req.memory_type_bits, required, preferred)
            .ok_or_else(|| {
                VulkanError::Unavailable(format!(
                    "no memory type with {required:?} for a buffer (memoryTypeBits 0x{:x})",
                    req.memory_type_bits
                ))
            })?;
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index);
        buffer.memory = unsafe { device.raw.allocate_memory(&alloc, None) }
            .map_err(map_allocate_memory("vkAllocateMemory"))?;
        unsafe { device.raw.bind_buffer_memory(raw, buffer.memory, 0) }
            .map_err(map_bind_memory("vkBindBufferMemory"))?;
        Ok(buffer)
    }

    /// Copies `data` into the start of a staging buffer.
    pub fn write(&self, data: &[f32]) -> VulkanResult<()> {
        let bytes = std::mem::size_of_val(data) as u64;
        self.check_host_range(bytes)?;
        let d = &self.device.raw;
        let ptr = unsafe { d.map_memory(self.memory, 0, bytes, vk::MemoryMapFlags::empty()) }
            .map_err(map_map_memory("vkMapMemory"))?;
        // SAFETY: the mapping covers `bytes` bytes; HOST_COHERENT needs no flush, and the
        // next vkQueueSubmit makes host writes visible to the device.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr().cast::<u8>(),
                ptr.cast::<u8>(),
                bytes as usize,
            );
            d.unmap_memory(self.memory);
        }
        Ok(())
    }

    /// Copies the start of a staging buffer into `out`. The caller has waited for the copy
    /// that filled it (and its barrier to HOST_READ).
    pub fn read(&self, out: &mut [f32]) -> VulkanResult<()> {
        let bytes = std::mem::size_of_val(out) as u64;
        self.check_host_range(bytes)?;
        let d = &self.device.raw;
        let ptr = unsafe { d.map_memory(self.memory, 0, bytes, vk::MemoryMapFlags::empty()) }
            .map_err(map_map_memory("vkMapMemory"))?;
        // SAFETY: as in `write`; HOST_COHERENT memory needs no invalidate.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.cast::<u8>(),
                out.as_mut_ptr().cast::<u8>(),
                bytes as usize,
            );
            d.unmap_memory(self.memory);
        }
        Ok(())
    }

    fn check_host_range(&self, bytes: u64) -> VulkanResult<()> {
        if bytes == 0 || bytes > self.size {
            return Err(VulkanError::Usage(format!(
                "host copy of {bytes} bytes does not fit a {}-byte staging buffer",
                self.size
            )));
        }
        Ok(())
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the backend waits for the queue before dropping buffers; destroying null
        // handles (a half-built buffer) is a no-op.
        unsafe {
            self.device.raw.destroy_buffer(self.raw, None);
            self.device.raw.free_memory(self.memory, None);
        }
    }
}
