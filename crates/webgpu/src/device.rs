//! Which adapters exist and what they are: the instance (Vulkan by default), enumeration, and
//! each adapter's identity in the core's terms.

use blocksweep_core::{DeviceIdentity, DeviceKind};

use crate::error::WebGpuError;

/// The wgpu backends this build runs on: Vulkan, plus those its features add.
fn backends() -> wgpu::Backends {
    let mut backends = wgpu::Backends::VULKAN;
    if cfg!(feature = "metal") {
        backends |= wgpu::Backends::METAL;
    }
    if cfg!(feature = "dx12") {
        backends |= wgpu::Backends::DX12;
    }
    if cfg!(feature = "gles") {
        backends |= wgpu::Backends::GL;
    }
    backends
}

/// The instance: no validation or debug labels unless wgpu's own environment variables ask
/// (WGPU_VALIDATION=1): a debug build would otherwise load the Khronos layer for every run.
pub(crate) fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends();
    desc.flags = wgpu::InstanceFlags::empty().with_env();
    wgpu::Instance::new(desc)
}

/// Every adapter of [`instance`], in wgpu's order; none is unavailable, with why.
pub(crate) fn adapters() -> Result<Vec<wgpu::Adapter>, WebGpuError> {
    let instance = instance();
    let adapters =
        crate::stderr::quieted(|| pollster::block_on(instance.enumerate_adapters(backends())));
    if adapters.is_empty() {
        return Err(WebGpuError::Unavailable(
            "wgpu found no adapter (is a Vulkan driver (ICD) and libvulkan.so.1 installed?)".into(),
        ));
    }
    Ok(adapters)
}

/// The adapters a probe enumerated, kept for the `open` after it: a second enumeration makes a
/// second Vulkan instance (180-290 ms on the H100, 2026-12-06), as the Vulkan backend's probe
/// keeps its instance for the same reason.
static KEPT: std::sync::Mutex<Option<Vec<wgpu::Adapter>>> = std::sync::Mutex::new(None);

/// Keeps a probe's `adapters` for the next [`take_kept`].
pub(crate) fn keep(adapters: Vec<wgpu::Adapter>) {
    if let Ok(mut kept) = KEPT.lock() {
        *kept = Some(adapters);
    }
}

/// The adapters the last probe kept, if any (once).
pub(crate) fn take_kept() -> Option<Vec<wgpu::Adapter>> {
    KEPT.lock().ok().and_then(|mut k| k.take())
}

/// Adapter `index` as the core names a device. wgpu states no UUID; its PCI address, where
/// the driver gives one, is what matches it to the other APIs' view of the same GPU.
pub(crate) fn identity(index: usize, info: &wgpu::AdapterInfo) -> DeviceIdentity {
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu => DeviceKind::Gpu,
        wgpu::DeviceType::VirtualGpu => DeviceKind::Gpu,
        wgpu::DeviceType::Cpu => DeviceKind::Cpu,
        wgpu::DeviceType::Other => DeviceKind::Other,
    };
    let driver = match info.driver_info.is_empty() {
        true => info.driver.clone(),
        false => info.driver_info.clone(),
    };
    DeviceIdentity {
        api: crate::API,
        index,
        name: info.name.clone(),
        vendor: blocksweep_core::backend::vendor_name(info.vendor),
        driver_version: driver,
        api_version: format!("wgpu {} on {:?}", wgpu_version(), info.backend),
        platform: format!("{:?}", info.backend),
        kind,
        uuid: None,
        pci_bus_id: Some(info.device_pci_bus_id.clone()).filter(|p| !p.is_empty()),
    }
}

/// The device-local heap of a Vulkan adapter, read through wgpu's HAL: WebGPU has no memory
/// query, and the frame's checks need one. `None` on another backend.
pub(crate) fn device_local_bytes(adapter: &wgpu::Adapter) -> Option<u64> {
    // SAFETY: the HAL adapter is only read, while `adapter` (which owns it) lives.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: a physical device of this instance, and a query without side effects.
    let memory =
        unsafe { instance.get_physical_device_memory_properties(hal.raw_physical_device()) };
    let local = ash::vk::MemoryHeapFlags::DEVICE_LOCAL;
    (memory.memory_heaps_as_slice().iter())
        .filter(|h| h.flags.contains(local))
        .map(|h| h.size)
        .max()
}

/// The wgpu this was built with (its major version: the API it implements moves with it).
pub(crate) fn wgpu_version() -> &'static str {
    "30"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adapter_without_a_pci_address_is_matched_by_name() {
        let info = wgpu::AdapterInfo {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            vendor: 0x10005,
            device: 0,
            device_type: wgpu::DeviceType::Cpu,
            device_pci_bus_id: String::new(),
            driver: "llvmpipe".into(),
            driver_info: "Mesa 22.3.6 (LLVM 15.0.6)".into(),
            backend: wgpu::Backend::Vulkan,
            subgroup_min_size: 8,
            subgroup_max_size: 8,
            transient_saves_memory: None,
            limit_bucket: None,
        };
        let id = identity(2, &info);
        assert_eq!(
            (id.index, id.kind, id.pci_bus_id.as_deref()),
            (2, DeviceKind::Cpu, None)
        );
        assert_eq!(
            (id.vendor.as_str(), id.driver_version.as_str()),
            ("Mesa", "Mesa 22.3.6 (LLVM 15.0.6)")
        );
        let gpu = wgpu::AdapterInfo {
            device_pci_bus_id: "0000:1b:00.0".into(),
            vendor: 0x10DE,
            device_type: wgpu::DeviceType::DiscreteGpu,
            ..info
        };
        let id = identity(0, &gpu);
        assert_eq!(
            (id.kind, id.pci_bus_id.as_deref()),
            (DeviceKind::Gpu, Some("0000:1b:00.0"))
        );
        assert_eq!(id.vendor, "NVIDIA");
    }
}
