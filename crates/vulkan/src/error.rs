//! The Vulkan backend's errors, and the named functions that map `vk::Result` codes into them.
//!
//! Each mapping function has the shape every backend crate uses,
//! `map_<situation>(call) -> impl Fn(code) -> Error` (so a call site reads
//! `.map_err(map_create_device("vkCreateDevice"))`), and is named for the set of codes its call
//! sites can return (the Vulkan specification lists them per command under "Return Codes"); a
//! code outside that set is a driver bug or a newer code we do not know, and becomes
//! [`VulkanError::Unexpected`] with the code's own name, never a panic.

use ash::vk;
use blocksweep_core::{BackendError, ErrorKind};

#[derive(Debug, thiserror::Error)]
pub enum VulkanError {
    /// The loader, a driver, a device or a required capability is missing.
    #[error("{0}")]
    Unavailable(String),
    #[error("{call} failed: VK_ERROR_OUT_OF_HOST_MEMORY")]
    OutOfHostMemory { call: &'static str },
    #[error("{call} failed: VK_ERROR_OUT_OF_DEVICE_MEMORY")]
    OutOfDeviceMemory { call: &'static str },
    #[error("{call} failed: VK_ERROR_DEVICE_LOST")]
    DeviceLost { call: &'static str },
    /// The device's work outlived the wait (a user's kernel: the core's deadline).
    #[error(
        "the kernel did not finish within {seconds} s ({call} returned VK_TIMEOUT); \
         this Vulkan device is unusable from now on"
    )]
    Timeout { call: &'static str, seconds: f64 },
    /// An earlier timeout or device loss left the backend unusable; the message is that
    /// error's.
    #[error("the backend is unusable after an earlier error: {0}")]
    Unusable(String),
    /// A buffer a program (or the copy ceiling) needs is above a device limit, found before any
    /// allocation; the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    /// A launch refused before it reached the driver, naming the limit it breaks.
    #[error("{0}")]
    LaunchRejected(String),
    /// The shader module or a compute pipeline did not build.
    #[error("{call} failed: {detail}")]
    Build { call: &'static str, detail: String },
    /// The caller used the backend out of order (e.g. a dispatch before `load_program`).
    #[error("{0}")]
    Usage(String),
    #[error("{call} failed: {}", crate::conv::result_name(*.result))]
    Unexpected {
        call: &'static str,
        result: vk::Result,
    },
}

impl VulkanError {
    /// The core's classification of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            VulkanError::Unavailable(_) => ErrorKind::Unavailable,
            VulkanError::OutOfHostMemory { .. }
            | VulkanError::OutOfDeviceMemory { .. }
            | VulkanError::TooLarge(_) => ErrorKind::OutOfMemory,
            VulkanError::LaunchRejected(_) => ErrorKind::LaunchRejected,
            VulkanError::Build { .. } => ErrorKind::Build,
            VulkanError::DeviceLost { .. }
            | VulkanError::Timeout { .. }
            | VulkanError::Unusable(_)
            | VulkanError::Usage(_)
            | VulkanError::Unexpected { .. } => ErrorKind::Driver,
        }
    }
}

impl From<VulkanError> for BackendError {
    fn from(e: VulkanError) -> Self {
        let kind = e.kind();
        BackendError::with_source(crate::API, kind, e)
    }
}

pub type VulkanResult<T> = Result<T, VulkanError>;

fn unexpected(call: &'static str, result: vk::Result) -> VulkanError {
    VulkanError::Unexpected { call, result }
}

/// Calls that can only fail for lack of host memory: `vkCreateFence`, `vkCreateCommandPool`,
/// `vkAllocateCommandBuffers` (also device memory), `vkBeginCommandBuffer`,
/// `vkResetCommandBuffer`, `vkResetFences`, `vkCreateQueryPool`, `vkCreateDescriptorSetLayout`,
/// `vkCreatePipelineLayout`, `vkCreateDescriptorPool`, `vkCreateBuffer`:
/// VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY.
pub fn map_host_device_oom(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => VulkanError::OutOfHostMemory { call },
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => VulkanError::OutOfDeviceMemory { call },
        other => unexpected(call, other),
    }
}

/// `vkAllocateDescriptorSets`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_FRAGMENTED_POOL, VK_ERROR_OUT_OF_POOL_MEMORY (the last two cannot happen with a
/// pool sized for exactly one set, so they stay `Unexpected`).
pub fn map_allocate_descriptor_sets(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    map_host_device_oom(call)
}

/// Commands that touch the queue or wait for it: `vkQueueSubmit`, `vkWaitForFences`,
/// `vkDeviceWaitIdle`, `vkGetQueryPoolResults`, `vkEndCommandBuffer` (OOM only):
/// VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_DEVICE_LOST.
pub fn map_host_device_oom_and_lost(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_DEVICE_LOST => VulkanError::DeviceLost { call },
        other => map_host_device_oom(call)(other),
    }
}

/// `vkAllocateMemory`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_TOO_MANY_OBJECTS (maxMemoryAllocationCount), VK_ERROR_INVALID_EXTERNAL_HANDLE and
/// VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS (not used here).
pub fn map_allocate_memory(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_TOO_MANY_OBJECTS => VulkanError::TooLarge(format!(
            "{call} failed: VK_ERROR_TOO_MANY_OBJECTS (maxMemoryAllocationCount reached)"
        )),
        other => map_host_device_oom(call)(other),
    }
}

/// `vkMapMemory`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_MEMORY_MAP_FAILED (kept `Unexpected` under its own name).
pub fn map_map_memory(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    map_host_device_oom(call)
}

/// `vkBindBufferMemory`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS (not used here).
pub fn map_bind_memory(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    map_host_device_oom(call)
}

/// `vkCreateInstance`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_LAYER_NOT_PRESENT, VK_ERROR_EXTENSION_NOT_PRESENT,
/// VK_ERROR_INCOMPATIBLE_DRIVER. All but the memory errors mean "no usable Vulkan here".
pub fn map_create_instance(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_INITIALIZATION_FAILED
        | vk::Result::ERROR_LAYER_NOT_PRESENT
        | vk::Result::ERROR_EXTENSION_NOT_PRESENT
        | vk::Result::ERROR_INCOMPATIBLE_DRIVER => VulkanError::Unavailable(format!(
            "{call} failed: {} (no Vulkan driver accepted the instance; \
             VK_LOADER_DEBUG=error,warn,driver shows why)",
            crate::conv::result_name(r)
        )),
        other => map_host_device_oom(call)(other),
    }
}

/// `vkEnumeratePhysicalDevices`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_INITIALIZATION_FAILED (a driver failed to start: the API is unavailable).
pub fn map_enumerate_physical_devices(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_INITIALIZATION_FAILED => {
            VulkanError::Unavailable(format!("{call} failed: VK_ERROR_INITIALIZATION_FAILED"))
        }
        other => map_host_device_oom(call)(other),
    }
}

/// `vkEnumerate*ExtensionProperties` / `vkEnumerateInstanceLayerProperties`:
/// VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_LAYER_NOT_PRESENT.
pub fn map_enumerate_properties(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_LAYER_NOT_PRESENT => {
            VulkanError::Unavailable(format!("{call} failed: VK_ERROR_LAYER_NOT_PRESENT"))
        }
        other => map_host_device_oom(call)(other),
    }
}

/// `vkCreateDevice`: VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
/// VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_EXTENSION_NOT_PRESENT, VK_ERROR_FEATURE_NOT_PRESENT,
/// VK_ERROR_TOO_MANY_OBJECTS, VK_ERROR_DEVICE_LOST.
pub fn map_create_device(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_INITIALIZATION_FAILED
        | vk::Result::ERROR_EXTENSION_NOT_PRESENT
        | vk::Result::ERROR_FEATURE_NOT_PRESENT
        | vk::Result::ERROR_TOO_MANY_OBJECTS => {
            VulkanError::Unavailable(format!("{call} failed: {}", crate::conv::result_name(r)))
        }
        other => map_host_device_oom_and_lost(call)(other),
    }
}

/// `vkCreateShaderModule` and `vkCreateComputePipelines`: VK_ERROR_OUT_OF_HOST_MEMORY,
/// VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_INVALID_SHADER_NV (a compile failure, reported as a
/// build error), VK_PIPELINE_COMPILE_REQUIRED (only with a flag this crate never sets).
pub fn map_shader_build(call: &'static str) -> impl Fn(vk::Result) -> VulkanError {
    move |r| match r {
        vk::Result::ERROR_INVALID_SHADER_NV => VulkanError::Build {
            call,
            detail: "VK_ERROR_INVALID_SHADER_NV".into(),
        },
        other => map_host_device_oom(call)(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_kinds_with_native_names() {
        let e = map_host_device_oom_and_lost("vkQueueSubmit")(vk::Result::ERROR_DEVICE_LOST);
        assert_eq!(e.kind(), ErrorKind::Driver);
        assert_eq!(e.to_string(), "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST");
        let e = map_allocate_memory("vkAllocateMemory")(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        assert_eq!(e.kind(), ErrorKind::OutOfMemory);
        let e = map_create_instance("vkCreateInstance")(vk::Result::ERROR_INCOMPATIBLE_DRIVER);
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(
            e.to_string().contains("VK_ERROR_INCOMPATIBLE_DRIVER"),
            "{e}"
        );
        let e = map_shader_build("vkCreateComputePipelines")(vk::Result::ERROR_INVALID_SHADER_NV);
        assert_eq!(e.kind(), ErrorKind::Build);
        // A code outside the call's documented set keeps its own name.
        let e = map_host_device_oom("vkCreateFence")(vk::Result::ERROR_MEMORY_MAP_FAILED);
        assert_eq!(e.kind(), ErrorKind::Driver);
        assert_eq!(
            e.to_string(),
            "vkCreateFence failed: VK_ERROR_MEMORY_MAP_FAILED"
        );
    }

    #[test]
    fn backend_error_keeps_kind_and_source() {
        let b: BackendError = VulkanError::LaunchRejected("x".into()).into();
        assert_eq!(b.kind, ErrorKind::LaunchRejected);
        assert_eq!(b.api, crate::API);
        assert!(b.source.is_some());
    }
}
