//! What a Vulkan backend shows beyond the core's `Backend`: the validation layer's log, and,
//! for the crate's tests only (`test-support`), the hooks they drive the layer and the copy
//! ceiling with. A child of `backend.rs`, so that it reads the backend's fields without
//! widening them.

use super::VulkanBackend;

impl VulkanBackend {
    /// Validation-layer findings at WARNING or ERROR severity so far (never the loader's
    /// notices), and any error met while dropping. Always empty without
    /// `VulkanOptions::validation`, except for drop errors.
    pub fn validation_messages(&self) -> Vec<String> {
        self.log.messages()
    }
}

#[cfg(any(test, feature = "test-support"))]
mod hooks {
    use ash::vk;

    use super::VulkanBackend;
    use crate::copy::CopyMeasurement;
    use crate::instance::MessageLog;
    use crate::memory::{Buffer, MemoryKind};

    impl VulkanBackend {
        /// A handle on the same message log that stays readable after the backend is dropped,
        /// to see what the layer said about the destruction itself.
        pub fn message_log(&self) -> MessageLog {
            self.log.clone()
        }

        /// Records two fills of one buffer with no barrier between them, a write-after-write
        /// hazard that synchronization validation must report (the validation test proves with
        /// it that the layer, its synchronization checks and the messenger are all live, so
        /// that an empty log means something). The result on the device is harmless.
        pub fn provoke_sync_hazard_for_tests(
            &mut self,
        ) -> Result<(), blocksweep_core::BackendError> {
            let usage = vk::BufferUsageFlags::TRANSFER_DST;
            let scratch = Buffer::new(&self.device, 256, usage, MemoryKind::DeviceLocal, None)?;
            let raw = scratch.raw;
            self.commands.run(|d, cb| {
                crate::command::record_poison(d, cb, raw);
                crate::command::record_poison(d, cb, raw);
            })?;
            Ok(())
        }

        /// Both methods of the last successful copy preparation
        /// ([`blocksweep_core::Work::Copy`]), with their times; `None` before the first.
        pub fn last_copy(&self) -> Option<&CopyMeasurement> {
            self.copier.last()
        }

        /// Copies `words` by vkCmdCopyBuffer and by the copy shader, each into a poisoned
        /// destination of the buffers a `Work::Copy` would use for that size, and returns what
        /// each left there: [vkCmdCopyBuffer's, the shader's].
        pub fn copy_round_trip_for_tests(
            &mut self,
            words: &[u32],
        ) -> Result<[Vec<u32>; 2], blocksweep_core::BackendError> {
            let (commands, device) = (&mut self.commands, &self.device);
            Ok(self
                .copier
                .round_trip(commands, device, &self.limits, words)?)
        }

        /// Makes a built-in's planes past `bytes` split into pieces of `bytes` (a power of two,
        /// 4 or more) as the device's own `frame_piece_bytes` would, so that small frames run
        /// the split shaders; `false` where the device cannot split (no bufferDeviceAddress).
        pub fn set_frame_piece_bytes_for_tests(&mut self, bytes: u64) -> bool {
            let Some(piece) = self.limits.frame_piece_bytes.as_mut() else {
                return false;
            };
            piece.value = bytes;
            true
        }

        /// Makes the shader copy split at `bytes` as if that were maxStorageBufferRange, so
        /// small copies exercise the multi-dispatch path.
        pub fn set_copy_dispatch_bytes_for_tests(&mut self, bytes: u64) {
            let limits = &mut self.copier.limits;
            limits.max_range = limits.max_range.min(bytes);
        }
    }
}
