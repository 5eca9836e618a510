//! blocksweep's Vulkan backend, on `ash`.
//!
//! The loader (`libvulkan.so.1`) is opened at run time, so a machine without Vulkan gets an
//! [`ErrorKind::Unavailable`](blocksweep_core::ErrorKind::Unavailable) error from [`probe`] or
//! [`open`], never a crash or a link failure.
//!
//! The backend knows programs only: a user's kernel, or one of the built-in grayscale kernels,
//! which it gives as programs of its own (`Backend::builtin`): `shaders/<kernel>.comp`,
//! compiled ahead of time and embedded, e.g.
//!
//! ```text
//! glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale.spv shaders/grayscale.comp
//! ```
//!
//! (`tests/shader.rs` recompiles each and fails if the checked-in `.spv` differs.) The
//! workgroup size (and the shared bytes, where a shader takes them) are specialization
//! constants, so each workgroup size gets its own pipeline, created once and cached.
//!
//! The copy ceiling ([`Work::Copy`](blocksweep_core::Work)) picks the faster of two methods
//! over the same two buffers in a short selection batch, naming both (`CopyMeasurement`):
//! `vkCmdCopyBuffer`, and `shaders/copy.comp` (compiled and checked the same way), a
//! grid-stride `uvec4` copy on the shader cores. On an H200 vkCmdCopyBuffer runs on a copy
//! engine at about 830 GB/s, a quarter of what the SMs move.
//!
//! Launches are checked before any pipeline exists ([`check_launch`]: the workgroup-size and
//! workgroup-count limits, whose violation is undefined behaviour rather than an error). On
//! llvmpipe (lavapipe) a launch of a grid-stride built-in whose invocations would loop more
//! than 65535 times is refused too ([`check_loop_iterations`]): gallivm silently ends a
//! shader's loops there.
//!
//! One file per role, the same files as in the CUDA and OpenCL backends, plus what only Vulkan
//! needs (`instance`, `command`, `conv`, `copy*`, `subgroups`):
//!
//! ```text
//! lib.rs       this overview, re-exports, probe() and open()
//! provider.rs    ApiInfo (Vulkan's name, words, guarantees) and the Provider the core calls
//! device.rs    which devices exist and what they are: enumeration, the properties2 chain,
//!              identity
//! limits.rs    the launch limits under Vulkan's names
//! subgroups.rs the subgroup size control and the workgroup checks it implies
//! context.rs   the handle the rest hangs off: logical device + compute queue
//! builtin.rs   the built-in kernels' SPIR-V as programs, and their loop check on llvmpipe
//! kernel.rs    building a program's kernel: SPIR-V words, the push-constant block, facts
//! memory.rs    buffers: device-local and staging (mapped for good), a program's buffers
//!              and bindings, the staged read-back lent in place
//! timing.rs    run_batch: back-to-back recording with barriers, timestamp queries; the
//!              launch checks made before anything is recorded
//! backend.rs   the Backend impl, tying the above together
//! error.rs     VulkanError and the map_<situation>(call) functions from vk::Result
//! instance.rs  loader, VkInstance, validation layer and debug messenger
//! command.rs   the one command buffer and fence: record, submit, wait; barriers; dispatch
//! conv.rs      pure conversions of Vulkan numbers and enums
//! copy.rs      the copy ceiling: the selection between two methods (copy_plan.rs: its
//!              layout; copy_shader.rs: its shader)
//! pipeline.rs  modules, pipelines, pipeline statistics (objects.rs: layouts, descriptor
//!              pools, the pipeline cache)
//! program.rs   a program: its module, buffers, push constants, pipelines, copies
//! glsl.rs      GLSL to SPIR-V through libshaderc, opened at run time
//! reflect.rs   the bindings, push constants and entry points a SPIR-V module declares
//! ```

#![warn(clippy::undocumented_unsafe_blocks)]

mod backend;
mod builtin;
mod cold;
mod command;
mod context;
mod conv;
mod copy;
mod copy_plan;
mod copy_shader;
mod device;
pub mod error;
mod glsl;
mod glslang;
mod instance;
mod kernel;
mod limits;
mod memory;
mod objects;
mod pieces;
mod pipeline;
mod program;
mod provider;
mod reflect;
mod subgroups;
mod timing;

use std::sync::Arc;

pub use backend::VulkanBackend;
pub use builtin::{
    SPIRV, SPIRV_2D, SPIRV_ONE_PER_THREAD, SPIRV_REGISTERS, SPIRV_SHARED, SPIRV_SPLIT,
    SPIRV_SPLIT_ONE_PER_THREAD,
};
#[cfg(any(test, feature = "test-support"))]
pub use copy::CopyMeasurement;
pub use copy::COPY_SPIRV;
pub use error::VulkanError;
#[cfg(any(test, feature = "test-support"))]
pub use instance::MessageLog;
pub use provider::{API, GLSL, PROVIDER, REQUIRED_SIZE_OPTION, SPIR_V};
pub use timing::{
    check_launch, check_loop_iterations, check_loop_iterations_2d, check_shared, DispatchLimits,
};

use blocksweep_core::{trace, DeviceIdentity};
use device::AdapterInfo;
use instance::InstanceShared;

/// Environment variable that turns validation on in [`VulkanOptions::default`].
pub const VALIDATION_ENV: &str = "BLOCKSWEEP_VK_VALIDATION";

/// Options for [`open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VulkanOptions {
    /// Enable VK_LAYER_KHRONOS_validation with synchronization validation, and record every
    /// WARNING/ERROR message (see [`VulkanBackend::validation_messages`]). Defaults to false,
    /// or true when `BLOCKSWEEP_VK_VALIDATION=1`.
    pub validation: bool,
}

impl Default for VulkanOptions {
    fn default() -> Self {
        VulkanOptions {
            validation: std::env::var(VALIDATION_ENV).is_ok_and(|v| v.trim() == "1"),
        }
    }
}

/// Every Vulkan physical device, in the driver's order (`index` is the position here), without
/// creating a logical device or compiling anything. The instance is kept for [`open`].
pub fn probe() -> Result<Vec<DeviceIdentity>, VulkanError> {
    let _t = trace::span("vulkan", "probe");
    let instance = trace::time("vulkan", "probe: instance", || InstanceShared::new(false))?;
    let devices = device::enumerate(&instance)?;
    if devices.is_empty() {
        return Err(VulkanError::Unavailable(
            "no Vulkan physical devices (is a Vulkan driver (ICD) installed?)".into(),
        ));
    }
    let identities = devices
        .into_iter()
        .enumerate()
        .map(|(i, pd)| Ok(device::identity(i, &AdapterInfo::query(&instance, pd)?)))
        .collect::<Result<Vec<_>, VulkanError>>()?;
    instance.keep_for_open();
    Ok(identities)
}

/// Opens device `index` (its position in [`probe`]) and builds the copy ceiling's shader.
pub fn open(index: usize, options: &VulkanOptions) -> Result<VulkanBackend, VulkanError> {
    let _t = trace::span("vulkan", "open");
    let kept = (!options.validation)
        .then(InstanceShared::take_kept)
        .flatten();
    let instance = match kept {
        Some(kept) => trace::time("vulkan", "open: instance kept from probe", || kept),
        None => trace::time("vulkan", "open: instance", || {
            InstanceShared::new(options.validation)
        })?,
    };
    let instance = Arc::new(instance);
    let devices = device::enumerate(&instance)?;
    let Some(&pd) = devices.get(index) else {
        return Err(VulkanError::Unavailable(format!(
            "no Vulkan device {index}: {} found",
            devices.len()
        )));
    };
    let adapter = AdapterInfo::query(&instance, pd)?;
    VulkanBackend::new(instance, index, adapter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_env_turns_validation_on() {
        // The only test in this binary that touches the variable.
        std::env::set_var(VALIDATION_ENV, "1");
        assert!(VulkanOptions::default().validation);
        std::env::set_var(VALIDATION_ENV, "0");
        assert!(!VulkanOptions::default().validation);
        std::env::remove_var(VALIDATION_ENV);
        assert!(!VulkanOptions::default().validation);
    }
}
