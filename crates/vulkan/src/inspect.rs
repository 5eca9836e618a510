//! What a Vulkan backend shows beyond the core's `Backend`: the validation layer's log, the
//! copy ceiling's two methods, and the hooks the crate's tests drive them with. A child of
//! `backend.rs`, so that it reads the backend's fields without widening them.

use ash::vk;

use super::VulkanBackend;
use crate::copy::CopyMeasurement;
use crate::instance::MessageLog;
use crate::memory::{Buffer, MemoryKind};

impl VulkanBackend {
    /// Validation-layer findings at WARNING or ERROR severity so far (never the loader's
    /// notices), and any error met while dropping. Always empty without
    /// `VulkanOptions::validation`, except for drop errors.
    pub fn validation_messages(&self) -> Vec<String> {
        self.log.messages()
    }

    /// A handle on the same message log that stays readable after the backend is dropped, to
    /// see what the layer said about the destruction itself.
    pub fn message_log(&self) -> MessageLog {
        self.log.clone()
    }

    /// Test hook: records two fills of one buffer with no barrier between them, a
    /// write-after-write hazard that synchronization validation must report (the validation
    /// test proves with it that the layer, its synchronization checks and the messenger are
    /// all live, so that an empty log means something). The result on the device is harmless.
    #[doc(hidden)]
    pub fn provoke_sync_hazard_for_tests(&mut self) -> Result<(), blocksweep_core::BackendError> {
        let usage = vk::BufferUsageFlags::TRANSFER_DST;
        let scratch = Buffer::new(&self.device, 256, usage, MemoryKind::DeviceLocal, None)?;
        let raw = scratch.raw;
        self.commands.run(|d, cb| {
            crate::command::record_poison(d, cb, raw);
            crate::command::record_poison(d, cb, raw);
        })?;
        Ok(())
    }

    /// Both methods of the last successful copy preparation ([`blocksweep_core::Work::Copy`]), with their
    /// times; `None` before the first.
    pub fn last_copy(&self) -> Option<&CopyMeasurement> {
        self.copier.last()
    }

    /// Test hook: copies `words` by vkCmdCopyBuffer and by the copy shader, each into a
    /// poisoned destination of the buffers a `Work::Copy` would use for that size, and returns
    /// what each left there: [vkCmdCopyBuffer's, the shader's].
    #[doc(hidden)]
    pub fn copy_round_trip_for_tests(
        &mut self,
        words: &[u32],
    ) -> Result<[Vec<u32>; 2], blocksweep_core::BackendError> {
        let (commands, device) = (&mut self.commands, &self.device);
        Ok(self
            .copier
            .round_trip(commands, device, &self.limits, words)?)
    }

    /// Test hook: makes the shader copy split at `bytes` as if that were
    /// maxStorageBufferRange, so small copies exercise the multi-dispatch path.
    #[doc(hidden)]
    pub fn set_copy_dispatch_bytes_for_tests(&mut self, bytes: u64) {
        let limits = &mut self.copier.limits;
        limits.max_range = limits.max_range.min(bytes);
    }
}
