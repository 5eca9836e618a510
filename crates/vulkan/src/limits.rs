//! The blocksweep `Limits` of a physical device, built from what [`AdapterInfo`] read, under
//! Vulkan's own names; no driver calls.

use ash::vk;
use blocksweep_core::grid::nvidia_model_from_warps;
use blocksweep_core::limits::{host_threads, Dims};
use blocksweep_core::{Limits, Named};

use crate::conv;
use crate::device::AdapterInfo;

/// How reports name the llvmpipe loop limit.
pub const LOOP_LIMIT_NAME: &str =
    "loop iterations per invocation (llvmpipe: gallivm LP_MAX_TGSI_LOOP_ITERATIONS)";

/// Name of the device-local heap size in reports.
pub const HEAP_NAME: &str = "VkMemoryHeap[DEVICE_LOCAL].size";

impl AdapterInfo {
    /// Limits under their Vulkan names. `family` is the queue family the backend uses.
    pub fn limits(&self, family: u32) -> Limits {
        let l = &self.properties.limits;
        let dims = |d: [u32; 3]| Dims(d.map(u64::from));
        let heap = self.device_local_heap().map(|(_, size)| size);
        let mut extra = self.extra(family);
        let max_alloc = self.max_alloc(heap, &mut extra);
        let frame_piece_bytes = self.frame_piece_bytes(max_alloc.as_ref());
        if let Some(piece) = &frame_piece_bytes {
            extra.push((
                "bufferDeviceAddress".into(),
                format!(
                    "supported: blocksweep splits a frame plane past maxMemoryAllocationSize or \
                     maxStorageBufferRange into {} MiB pieces",
                    piece.value >> 20
                ),
            ));
        }
        let p = &self.properties;
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
            frame_piece_bytes,
            global_mem_bytes: heap.map(|h| Named::new(h, HEAP_NAME)),
            timer_resolution_ns: Some(Named::new(l.timestamp_period as f64, "timestampPeriod")),
            max_loop_iterations: self
                .max_loop_iterations()
                .map(|v| Named::new(v, LOOP_LIMIT_NAME)),
            mp_model: sm
                .map(|(_, warps)| nvidia_model_from_warps(warp, warps, "VK_NV_shader_sm_builtins")),
            extra,
            ..Limits::default()
        }
    }

    /// The pieces a frame's plane past maxMemoryAllocationSize or maxStorageBufferRange is
    /// split into, where bufferDeviceAddress lets the split shaders reach them
    /// (`crate::pieces`): the largest power-of-two count of pixels under both limits.
    fn frame_piece_bytes(&self, max_alloc: Option<&Named<u64>>) -> Option<Named<u64>> {
        let range = u64::from(self.properties.limits.max_storage_buffer_range);
        let limit = max_alloc.map_or(range, |a| a.value.min(range));
        let shift = crate::pieces::piece_shift(limit).filter(|_| self.buffer_device_address)?;
        Some(Named::new(4 << shift, "pieces by bufferDeviceAddress"))
    }

    /// Everything else worth showing, under its Vulkan name, in a fixed order.
    fn extra(&self, family: u32) -> Vec<(String, String)> {
        let l = &self.properties.limits;
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
        put(
            "subgroupSupportedStages",
            format!("{:?}", self.subgroup_stages),
        );
        put(
            "subgroupSupportedOperations",
            format!("{:?}", self.subgroup_operations),
        );
        if let Some((min, max, groups)) = self.subgroup_size_control {
            put("minSubgroupSize", min.to_string());
            put("maxSubgroupSize", max.to_string());
            put("maxComputeWorkgroupSubgroups", groups.to_string());
            put(
                "requiredSubgroupSizeStages",
                format!("{:?}", self.required_size_stages),
            );
            put("subgroupSizeControl", self.size_control_feature.to_string());
        }
        if let Some(limit) = self.max_loop_iterations() {
            put(LOOP_LIMIT_NAME, limit.to_string());
        }
        put(
            "maxPushConstantsSize",
            l.max_push_constants_size.to_string(),
        );
        // A kernel binds each buffer argument as one storage buffer: the spec promises only 4.
        put(
            "maxPerStageDescriptorStorageBuffers",
            l.max_per_stage_descriptor_storage_buffers.to_string(),
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
        extra
    }

    /// maxMemoryAllocationSize, where the device states it. A driver may state an allocation
    /// limit above the heap it could come from (the spec only bounds it below); report the
    /// reachable value and keep the stated one in `extra`.
    fn max_alloc(
        &self,
        heap: Option<u64>,
        extra: &mut Vec<(String, String)>,
    ) -> Option<Named<u64>> {
        self.max_memory_allocation_size.map(|a| match heap {
            Some(h) if a > h => {
                extra.push((
                    "maxMemoryAllocationSize (as reported)".into(),
                    a.to_string(),
                ));
                Named::new(h, format!("maxMemoryAllocationSize capped at {HEAP_NAME}"))
            }
            _ => Named::new(a, "maxMemoryAllocationSize"),
        })
    }
}

/// On a CPU device (lavapipe) the host's hardware threads stand in for compute units.
fn cpu_threads(kind: vk::PhysicalDeviceType) -> Option<Named<u64>> {
    let name = "host hardware threads (CPU device; Vulkan has no compute-unit query)";
    (kind == vk::PhysicalDeviceType::CPU)
        .then(|| host_threads(name))
        .flatten()
}
