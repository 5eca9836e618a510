//! blocksweep's WebGPU backend, on `wgpu`.
//!
//! WebGPU is the port with the tightest limits: 256 invocations per workgroup and 16 KiB of
//! workgroup storage by default, 65535 workgroups per dimension, 128 MiB per storage binding.
//! This backend asks for the adapter's own limits by default (`--webgpu-limits default` asks
//! for the specification's), and its `ApiInfo` states the defaults as what WebGPU guarantees,
//! so `validate` shows a port what it must not assume.
//!
//! wgpu runs on Vulkan here (its other backends by feature). Vulkan's loader is opened at run
//! time by wgpu, so a machine without it gets "unavailable", never a crash. The same physical
//! GPU is matched to the other APIs by PCI address (wgpu gives no UUID), else by name.
//!
//! The backend knows programs only: a user's WGSL kernel, or a built-in one
//! (`shaders/wgsl/<kernel>.wgsl`, embedded). The WGSL contract: buffers at `@group(0)
//! @binding(i)` in argument order, the scalars one `var<uniform>` struct at the next binding
//! (a u64 as `vec2<u32>`, low word first), the workgroup size the override constants `@id(0)`,
//! `@id(1)`, `@id(2)`, and the launch's shared bytes `@id(3)`.
//!
//! Timing is on the device's clock: timestamp queries written at the beginning and end of
//! compute passes (the TIMESTAMP_QUERY feature), one pass around a batch or one per dispatch.
//! wgpu orders the dispatches of a pass with barriers between them. A validation error (wgpu
//! reports them through error scopes, not return values) is caught around every call and
//! becomes this crate's [`WebGpuError`].
//!
//! One file per role, the same files as in the other backends:
//!
//! ```text
//! lib.rs       this overview, re-exports, probe() and open()
//! provider.rs  ApiInfo (WebGPU's name, words, guarantees) and the Provider the core calls
//! device.rs    the instance and its adapters: enumeration, identity
//! limits.rs    the launch limits under WebGPU's names
//! context.rs   the handle the rest hangs off: device + queue, error scopes, waits
//! builtin.rs   the built-in kernels' WGSL, and their loop check on llvmpipe
//! kernel.rs    building a kernel: WGSL read by naga (bindings, uniform block, overrides)
//! program.rs   the current program: its buffers, uniform block, bind group, pipelines
//! pipeline.rs  the launch's limits checked first; group 0's layout and bind group
//! memory.rs    buffers: the read-back buffer, the copy's buffers
//! timing.rs    run_batch: passes with timestamp queries, the copy ceiling's shader
//! backend.rs   the Backend impl, tying the above together
//! error.rs     WebGpuError
//! stderr.rs    the enumeration's Wayland line on stderr, dropped
//! ```

#![warn(clippy::undocumented_unsafe_blocks)]

mod backend;
mod builtin;
mod context;
mod device;
pub mod error;
mod kernel;
mod limits;
mod memory;
mod pipeline;
mod program;
mod provider;
mod stderr;
mod timing;

pub use backend::WebGpuBackend;
pub use error::WebGpuError;
pub use provider::{API, PROVIDER, WGSL};

use blocksweep_core::{trace, DeviceIdentity};

/// Which limits a device is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LimitsChoice {
    /// The adapter's own (`required_limits = adapter.limits()`): what this GPU can do.
    #[default]
    Adapter,
    /// The specification's defaults: what every WebGPU device gives.
    Default,
}

/// Options for [`open`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebGpuOptions {
    pub limits: LimitsChoice,
}

/// Every adapter, in wgpu's order (`index` is the position here), without opening a device.
pub fn probe() -> Result<Vec<DeviceIdentity>, WebGpuError> {
    let _t = trace::span("webgpu", "probe");
    let adapters = device::adapters()?;
    let identities = (adapters.iter().enumerate())
        .map(|(i, a)| device::identity(i, &a.get_info()))
        .collect();
    device::keep(adapters);
    Ok(identities)
}

/// Opens adapter `index` (its position in [`probe`]) as a device with the limits `options`
/// asks for.
pub fn open(index: usize, options: &WebGpuOptions) -> Result<WebGpuBackend, WebGpuError> {
    let _t = trace::span("webgpu", "open");
    let mut adapters = match device::take_kept() {
        Some(kept) => kept,
        None => device::adapters()?,
    };
    if index >= adapters.len() {
        return Err(WebGpuError::Unavailable(format!(
            "no WebGPU adapter {index}: {} found",
            adapters.len()
        )));
    }
    WebGpuBackend::new(index, adapters.swap_remove(index), options)
}
