//! The blocksweep `Limits` of a WebGPU device, under WebGPU's own names (the JavaScript
//! spelling of `GPUSupportedLimits`), from the limits the device was created with.

use blocksweep_core::limits::{host_threads, Dims};
use blocksweep_core::{Limits, Named};

use crate::LimitsChoice;

/// How reports name the llvmpipe loop limit (the same words as the Vulkan backend's: it is the
/// same driver under wgpu).
pub const LOOP_LIMIT_NAME: &str =
    "loop iterations per invocation (llvmpipe: gallivm LP_MAX_TGSI_LOOP_ITERATIONS)";

/// How reports name the device's memory: WebGPU has none, so it is read under wgpu.
pub const HEAP_NAME: &str =
    "VkMemoryHeap[DEVICE_LOCAL].size (through wgpu's Vulkan HAL: WebGPU has no memory query)";

/// What the limits are built from: the device's limits, the adapter's (which may be more, when
/// the device was asked for the defaults), its info and its clock's period.
pub(crate) struct Sources<'a> {
    pub device: &'a wgpu::Limits,
    pub adapter: &'a wgpu::Limits,
    pub info: &'a wgpu::AdapterInfo,
    pub period_ns: f32,
    /// The device-local heap, where the backend under wgpu tells it.
    pub heap: Option<u64>,
    pub choice: LimitsChoice,
}

/// Whether the adapter is llvmpipe (lavapipe), whose loops end silently at 65535 iterations.
pub(crate) fn is_llvmpipe(info: &wgpu::AdapterInfo) -> bool {
    info.driver == "llvmpipe" || info.name.starts_with("llvmpipe")
}

/// The device's limits under WebGPU's names.
pub(crate) fn limits(s: &Sources<'_>) -> Limits {
    let l = s.device;
    let u = |v: u32| u64::from(v);
    let warp = (s.info.subgroup_min_size == s.info.subgroup_max_size
        && s.info.subgroup_min_size > 0)
        .then(|| {
            Named::new(
                u(s.info.subgroup_min_size),
                "subgroupMinSize = subgroupMaxSize",
            )
        });
    Limits {
        max_threads_per_block: Some(Named::new(
            u(l.max_compute_invocations_per_workgroup),
            "maxComputeInvocationsPerWorkgroup",
        )),
        max_block_dims: Some(Named::new(
            Dims([
                u(l.max_compute_workgroup_size_x),
                u(l.max_compute_workgroup_size_y),
                u(l.max_compute_workgroup_size_z),
            ]),
            "maxComputeWorkgroupSize{X,Y,Z}",
        )),
        max_grid_dims: Some(Named::new(
            Dims([u(l.max_compute_workgroups_per_dimension); 3]),
            "maxComputeWorkgroupsPerDimension",
        )),
        warp_size: warp,
        multiprocessors: cpu_threads(s.info.device_type),
        shared_mem_per_block: Some(Named::new(
            u(l.max_compute_workgroup_storage_size),
            "maxComputeWorkgroupStorageSize",
        )),
        max_alloc_bytes: Some(Named::new(l.max_buffer_size, "maxBufferSize")),
        max_buffer_binding_bytes: Some(Named::new(
            l.max_storage_buffer_binding_size,
            "maxStorageBufferBindingSize",
        )),
        global_mem_bytes: s.heap.map(|h| Named::new(h, HEAP_NAME)),
        timer_resolution_ns: Some(Named::new(
            f64::from(s.period_ns),
            "Queue::get_timestamp_period (wgpu)",
        )),
        max_loop_iterations: is_llvmpipe(s.info).then(|| Named::new(65535, LOOP_LIMIT_NAME)),
        extra: extra(s),
        ..Limits::default()
    }
}

/// Everything else worth showing, under its WebGPU (or wgpu) name, in a fixed order.
fn extra(s: &Sources<'_>) -> Vec<(String, String)> {
    let (l, info) = (s.device, s.info);
    let mut extra: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| extra.push((k.to_string(), v));
    put(
        "requiredLimits",
        match s.choice {
            LimitsChoice::Adapter => "the adapter's own (--webgpu-limits adapter)".into(),
            LimitsChoice::Default => {
                "the specification's defaults (--webgpu-limits default)".into()
            }
        },
    );
    put(
        "backend",
        format!(
            "{:?} (wgpu {})",
            info.backend,
            crate::device::wgpu_version()
        ),
    );
    put("vendor", format!("0x{:04X}", info.vendor));
    put("device", format!("0x{:04X}", info.device));
    put("driver", info.driver.clone());
    put("driverInfo", info.driver_info.clone());
    put("subgroupMinSize", info.subgroup_min_size.to_string());
    put("subgroupMaxSize", info.subgroup_max_size.to_string());
    put(
        "maxStorageBuffersPerShaderStage",
        l.max_storage_buffers_per_shader_stage.to_string(),
    );
    put(
        "maxUniformBufferBindingSize",
        l.max_uniform_buffer_binding_size.to_string(),
    );
    put("maxBindGroups", l.max_bind_groups.to_string());
    put(
        "minStorageBufferOffsetAlignment",
        l.min_storage_buffer_offset_alignment.to_string(),
    );
    if s.choice == LimitsChoice::Default {
        let a = s.adapter;
        put(
            "adapter's maxComputeInvocationsPerWorkgroup",
            a.max_compute_invocations_per_workgroup.to_string(),
        );
        put(
            "adapter's maxComputeWorkgroupStorageSize",
            a.max_compute_workgroup_storage_size.to_string(),
        );
        put(
            "adapter's maxStorageBufferBindingSize",
            a.max_storage_buffer_binding_size.to_string(),
        );
    }
    extra
}

/// On a CPU adapter (lavapipe) the host's hardware threads stand in for compute units.
fn cpu_threads(kind: wgpu::DeviceType) -> Option<Named<u64>> {
    let name = "host hardware threads (CPU adapter; WebGPU has no compute-unit query)";
    (kind == wgpu::DeviceType::Cpu)
        .then(|| host_threads(name))
        .flatten()
}
