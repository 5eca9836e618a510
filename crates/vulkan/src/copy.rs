//! The copy ceiling: two device-local buffers copied by `vkCmdCopyBuffer` or by a compute
//! shader (shaders/copy.comp). When a size is first asked for, a short back-to-back batch of
//! each method picks the faster; the core then measures that one under the same protocol as
//! the kernel.
//!
//! Why both: NVIDIA serves vkCmdCopyBuffer on a copy engine, not on the SMs. On an H200
//! (driver 580.159.04) a 63.3 MiB copy took vkCmdCopyBuffer to 828 GB/s and this shader to
//! 3495 GB/s, beside cuMemcpyDtoD's 3514, clEnqueueCopyBuffer's 3606 and the grayscale
//! shader's own 3474. A ceiling must be something the grayscale shader could reach, so the
//! shader cores copy too. On lavapipe vkCmdCopyBuffer (a memcpy) is the faster.
//!
//! Byte counts: the shader copies 16-byte `uvec4` elements, so both methods copy the asked
//! count rounded up to a multiple of 16 (at most 15 bytes more; the caller's GB/s, computed
//! from the asked count, is then conservative by that much). [`CopyMeasurement`] keeps both
//! counts, and its description names the padding when there is any.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::{Limits, Stamps};

use crate::command::Commands;
use crate::context::DeviceContext;
pub(crate) use crate::copy_plan::CopyLimits;
use crate::copy_plan::CopyPlan;
pub use crate::copy_shader::COPY_SPIRV;
use crate::copy_shader::{CopyBuffers, CopyShader};
use crate::error::{VulkanError, VulkanResult};
use crate::limits::HEAP_NAME;
#[cfg(any(test, feature = "test-support"))]
use crate::memory::{Buffer, MemoryKind};
use crate::timing::Timestamps;

/// The copy ceiling's part of a backend: the copy shader, the limits that lay a copy out, the
/// buffers of the current size and which method copies them.
pub(crate) struct Copier {
    prepared: Option<Prepared>,
    shader: CopyShader,
    pub limits: CopyLimits,
    last: Option<CopyMeasurement>,
}

/// The buffers for one size, and the method the selection batch chose.
struct Prepared {
    buffers: CopyBuffers,
    bytes: u64,
    shader_is_faster: bool,
}

/// Copies per method in the batch that picks the faster one.
const SELECTION_COPIES: u32 = 5;

impl Copier {
    /// Builds the copy shader's pipeline (so that a driver that cannot build it fails `open`).
    pub fn new(device: &Arc<DeviceContext>, limits: CopyLimits) -> VulkanResult<Copier> {
        Ok(Copier {
            prepared: None,
            shader: CopyShader::new(device, limits.workgroup())?,
            limits,
            last: None,
        })
    }

    /// Both methods of the last successful copy, with their times; `None` before the first.
    #[cfg(any(test, feature = "test-support"))]
    pub fn last(&self) -> Option<&CopyMeasurement> {
        self.last.as_ref()
    }

    /// How the last copy was done, or how the next will be before there is one.
    pub fn describe(&self) -> String {
        match &self.last {
            Some(m) => m.describe(),
            None => "the faster of vkCmdCopyBuffer and a compute-shader copy \
                     (shaders/copy.comp), by mean"
                .into(),
        }
    }

    /// Lays out a copy of `bytes` (rounded up to 16) and allocates its two buffers, after
    /// checking that both fit the device-local heap.
    ///
    /// The sweep never gets here with a copy that does not fit (the core checks
    /// `Limits::copy_fits` first, and each buffer's own allocation is checked against
    /// maxMemoryAllocationSize in `Buffer::new`); the heap check stays for a copy handed to the
    /// backend directly, because the driver does not answer it with an error: lavapipe (Mesa
    /// 22.3.6) hands out both heap-sized buffers and then faults in its queue thread (SIGSEGV
    /// in memcpy) on the first commands over them.
    fn prepare(
        &self,
        device: &Arc<DeviceContext>,
        limits: &Limits,
        bytes: u64,
    ) -> VulkanResult<(CopyBuffers, CopyPlan)> {
        if bytes == 0 {
            return Err(VulkanError::Usage(
                "a copy of 0 bytes measures nothing".into(),
            ));
        }
        let plan = self.limits.plan(bytes)?;
        let padded = plan.bytes;
        if let Some(heap) = limits.global_mem_bytes.as_ref() {
            if padded.saturating_mul(2) > heap.value {
                return Err(VulkanError::TooLarge(format!(
                    "copy needs 2 x {padded} bytes; {HEAP_NAME} is {}",
                    heap.value
                )));
            }
        }
        let max_alloc = limits.max_alloc_bytes.as_ref();
        let buffers = CopyBuffers::new(device, &self.shader, &plan, max_alloc)?;
        Ok((buffers, plan))
    }

    /// Gets `bytes` ready to copy: allocates the buffers, fills the source (so no driver can
    /// shortcut reading never-written memory), and times a short back-to-back batch of each
    /// method to choose the faster. Does nothing when that size is already prepared.
    pub fn prepare_size(
        &mut self,
        commands: &mut Commands,
        timestamps: &mut Timestamps,
        device: &Arc<DeviceContext>,
        limits: &Limits,
        bytes: u64,
    ) -> VulkanResult<()> {
        if self.prepared.as_ref().is_some_and(|p| p.bytes == bytes) {
            return Ok(());
        }
        let _t = blocksweep_core::trace::span("vulkan", "copy: buffers and method selection");
        // A failed preparation leaves nothing for `describe` to misattribute.
        self.prepared = None;
        self.last = None;
        let (buffers, plan) = self.prepare(device, limits, bytes)?;
        let src = buffers.src.raw;
        let shader = &self.shader;
        let mut run = || {
            commands.run(|d, cb| crate::command::record_poison(d, cb, src))?;
            let mut time = |record: &dyn Fn(&ash::Device, vk::CommandBuffer)| {
                timestamps.run_batch(commands, SELECTION_COPIES, Stamps::None, record)?;
                timestamps.run_batch(commands, SELECTION_COPIES, Stamps::Each, record)
            };
            let transfer = time(&|d, cb| buffers.record_transfer(d, cb))?;
            let shader = time(&|d, cb| buffers.record_shader(d, cb, shader))?;
            Ok((transfer.each_ms, shader.each_ms))
        };
        let result = run();
        let (transfer_ms, shader_ms) = settle(device, result)?;
        let m = CopyMeasurement {
            bytes,
            copied_bytes: plan.bytes,
            transfer_ms,
            shader_ms,
            workgroup: plan.workgroup,
            grid: plan.chunks[0].grid,
            grid_cap: plan.grid_cap.clone(),
            dispatches: plan.chunks.len(),
        };
        self.prepared = Some(Prepared {
            buffers,
            bytes,
            shader_is_faster: m.shader_is_faster(),
        });
        self.last = Some(m);
        Ok(())
    }

    /// Records one copy of the prepared size by the chosen method (nothing when none is
    /// prepared: `prepare_size` comes first).
    pub fn record(&self, d: &ash::Device, cb: vk::CommandBuffer) {
        if let Some(p) = &self.prepared {
            match p.shader_is_faster {
                true => p.buffers.record_shader(d, cb, &self.shader),
                false => p.buffers.record_transfer(d, cb),
            }
        }
    }

    /// Test support (`test-support`): copies `words` by each method, over the buffers a copy of that size
    /// uses, into a poisoned destination, and reads the destination back; returns
    /// [vkCmdCopyBuffer's result, the shader's result].
    #[cfg(any(test, feature = "test-support"))]
    pub fn round_trip(
        &self,
        commands: &mut Commands,
        device: &Arc<DeviceContext>,
        limits: &Limits,
        words: &[u32],
    ) -> VulkanResult<[Vec<u32>; 2]> {
        let bytes = std::mem::size_of_val(words) as u64;
        let (buffers, _) = self.prepare(device, limits, bytes)?;
        let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        let mut staging = Buffer::new(device, bytes, usage, MemoryKind::Staging, None)?;
        // Bit for bit: f32::from_bits and to_bits keep every pattern, NaN payloads included.
        let as_f32: Vec<f32> = words.iter().map(|&w| f32::from_bits(w)).collect();
        staging.write(&as_f32)?;
        let (src, dst, stage) = (buffers.src.raw, buffers.dst.raw, staging.raw);
        let mut run = || {
            commands.run(|d, cb| crate::command::record_poison(d, cb, src))?;
            commands.run(|d, cb| crate::command::record_copy(d, cb, stage, src, bytes))?;
            let mut out = [Vec::new(), Vec::new()];
            for (method, result) in out.iter_mut().enumerate() {
                commands.run(|d, cb| crate::command::record_poison(d, cb, dst))?;
                commands.run(|d, cb| match method {
                    0 => buffers.record_transfer(d, cb),
                    _ => buffers.record_shader(d, cb, &self.shader),
                })?;
                commands.run(|d, cb| {
                    crate::command::record_copy(d, cb, dst, stage, bytes);
                    crate::command::record_host_read_barrier(d, cb);
                })?;
                let mut back = vec![0f32; words.len()];
                staging.read(&mut back)?;
                *result = back.iter().map(|v| v.to_bits()).collect();
            }
            Ok(out)
        };
        settle(device, run())
    }
}

/// Passes `result` on; after an error, first waits for the device, since a submission that
/// failed to finish may still use the buffers about to be dropped.
fn settle<T>(device: &DeviceContext, result: VulkanResult<T>) -> VulkanResult<T> {
    if result.is_err() {
        let _ = device.wait_idle();
    }
    result
}

/// What the selection batch of one copy size measured, both ways.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyMeasurement {
    /// The byte count asked for.
    pub bytes: u64,
    /// The byte count both methods copied: `bytes` rounded up to a multiple of 16.
    pub copied_bytes: u64,
    /// Device times of the timed `vkCmdCopyBuffer` copies, in milliseconds.
    pub transfer_ms: Vec<f64>,
    /// Device times of the timed compute-shader copies, in milliseconds.
    pub shader_ms: Vec<f64>,
    /// The shader copy's workgroup size (x) and the grid of its first dispatch.
    pub workgroup: u32,
    pub grid: u32,
    /// Where the grid's cap came from (e.g. "shaderSMCount 132 x 8").
    pub grid_cap: String,
    /// Dispatches per copy: more than one where the copy exceeds maxStorageBufferRange.
    pub dispatches: usize,
}

fn mean(times: &[f64]) -> f64 {
    times.iter().sum::<f64>() / times.len().max(1) as f64
}

impl CopyMeasurement {
    /// Bytes read + written per second over the asked byte count, as the core computes it.
    fn gbps(&self, times: &[f64]) -> f64 {
        2.0 * self.bytes as f64 / mean(times) / 1e6
    }

    pub fn transfer_gbps(&self) -> f64 {
        self.gbps(&self.transfer_ms)
    }

    pub fn shader_gbps(&self) -> f64 {
        self.gbps(&self.shader_ms)
    }

    /// Whether the compute-shader copy had the lower mean time (ties go to vkCmdCopyBuffer).
    pub fn shader_is_faster(&self) -> bool {
        mean(&self.shader_ms) < mean(&self.transfer_ms)
    }

    /// The times of the faster method: what the copy ceiling reports.
    #[cfg(any(test, feature = "test-support"))]
    pub fn fastest_ms(&self) -> &[f64] {
        if self.shader_is_faster() {
            &self.shader_ms
        } else {
            &self.transfer_ms
        }
    }

    /// Which method the ceiling uses, and what the selection batch measured for the other.
    pub fn describe(&self) -> String {
        let shader = format!(
            "compute-shader copy (shaders/copy.comp, workgroup {} x grid {}, grid capped at {}{})",
            self.workgroup,
            self.grid,
            self.grid_cap,
            match self.dispatches {
                1 => String::new(),
                n => format!(", {n} dispatches of at most maxStorageBufferRange"),
            }
        );
        let transfer = "vkCmdCopyBuffer";
        let mut s = if self.shader_is_faster() {
            format!(
                "{shader}, the faster in a selection batch; {transfer} measured {:.1} GB/s there",
                self.transfer_gbps()
            )
        } else {
            format!(
                "{transfer}, the faster in a selection batch; {shader} measured {:.1} GB/s there",
                self.shader_gbps()
            )
        };
        if self.copied_bytes != self.bytes {
            s.push_str(&format!(
                "; both copied {} bytes for the {} asked (16-byte elements)",
                self.copied_bytes, self.bytes
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measurement(transfer_ms: f64, shader_ms: f64, bytes: u64) -> CopyMeasurement {
        CopyMeasurement {
            bytes,
            copied_bytes: bytes.next_multiple_of(16),
            transfer_ms: vec![transfer_ms; 3],
            shader_ms: vec![shader_ms; 3],
            workgroup: 256,
            grid: 1056,
            grid_cap: "shaderSMCount 132 x 8".into(),
            dispatches: 1,
        }
    }

    #[test]
    fn the_h200_case_reports_the_shader_and_names_the_copy_engine_figure() {
        // 63.3 MiB at the H200's measured 828 and 3495 GB/s.
        let bytes = 3840 * 2160 * 8;
        let m = measurement(
            2.0 * bytes as f64 / 828.0e6,
            2.0 * bytes as f64 / 3495.0e6,
            bytes,
        );
        assert!(m.shader_is_faster());
        assert_eq!(m.fastest_ms(), &m.shader_ms[..]);
        assert_eq!(
            m.describe(),
            "compute-shader copy (shaders/copy.comp, workgroup 256 x grid 1056, grid capped at \
             shaderSMCount 132 x 8), the faster in a selection batch; vkCmdCopyBuffer measured 828.0 \
             GB/s there"
        );
    }

    #[test]
    fn a_faster_transfer_is_reported_with_the_shader_figure_and_the_padding() {
        let mut m = measurement(1.0, 4.0, 40);
        m.dispatches = 3;
        assert!(!m.shader_is_faster());
        assert_eq!(m.fastest_ms(), &m.transfer_ms[..]);
        let s = m.describe();
        assert!(
            s.starts_with("vkCmdCopyBuffer, the faster in a selection batch; compute-shader copy"),
            "{s}"
        );
        assert!(
            s.contains("3 dispatches of at most maxStorageBufferRange"),
            "{s}"
        );
        assert!(s.contains("measured 0.0 GB/s"), "{s}");
        assert!(
            s.ends_with("; both copied 48 bytes for the 40 asked (16-byte elements)"),
            "{s}"
        );
        // A tie goes to vkCmdCopyBuffer.
        assert!(!measurement(1.0, 1.0, 16).shader_is_faster());
    }
}
