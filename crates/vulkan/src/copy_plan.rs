//! How the compute-shader copy is laid out, from the device's limits alone (no Vulkan calls):
//! the padded byte count, the workgroup size, the grid and, for a copy above
//! maxStorageBufferRange, the dispatches it is split into.

use ash::vk;
use blocksweep_core::{BlockSize, Launch};

use crate::error::{VulkanError, VulkanResult};
use crate::timing::{check_launch, check_loop_iterations, DispatchLimits};

/// Bytes per shader element (`uvec4`).
pub(crate) const ELEMENT_BYTES: u64 = 16;
/// The copy shader's workgroup size, where the device allows it.
const WORKGROUP: u32 = 256;
/// Workgroups per SM where the SM count is known: 8 x 256 = 2048 invocations, a full Hopper or
/// Ampere SM, so every SM is busy for the whole grid-stride loop.
const GROUPS_PER_SM: u32 = 8;
/// The grid cap where the SM count is unknown (the Vulkan minimum of
/// maxComputeWorkGroupCount[0]).
const GRID_CAP_WITHOUT_SMS: u32 = 65535;

/// The device facts a copy plan needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopyLimits {
    pub dispatch: DispatchLimits,
    /// shaderSMCount (VK_NV_shader_sm_builtins), where known.
    pub sm_count: Option<u32>,
    /// maxStorageBufferRange: the most one descriptor, hence one dispatch, can cover.
    pub max_range: u64,
    /// minStorageBufferOffsetAlignment: where a later dispatch's range may start.
    pub offset_alignment: u64,
    /// The driver's loop-iteration cap (llvmpipe), see `AdapterInfo::max_loop_iterations`.
    pub loop_limit: Option<u64>,
}

/// One dispatch: `bytes` bytes from `offset` in both buffers, over `grid` workgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub offset: u64,
    pub bytes: u64,
    pub grid: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopyPlan {
    /// The bytes both methods copy: the asked count rounded up to a multiple of 16.
    pub bytes: u64,
    pub workgroup: u32,
    /// Where the grid cap came from, for the report.
    pub grid_cap: String,
    pub chunks: Vec<Chunk>,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl CopyLimits {
    pub fn of(
        l: &vk::PhysicalDeviceLimits,
        sm_count: Option<u32>,
        loop_limit: Option<u64>,
    ) -> CopyLimits {
        CopyLimits {
            dispatch: DispatchLimits::of(l),
            sm_count,
            max_range: l.max_storage_buffer_range.into(),
            offset_alignment: l.min_storage_buffer_offset_alignment,
            loop_limit,
        }
    }

    /// 256, or the device's largest 1-D workgroup where that is smaller.
    pub fn workgroup(&self) -> u32 {
        WORKGROUP
            .min(self.dispatch.max_invocations)
            .min(self.dispatch.max_size[0])
    }

    /// The most workgroups one dispatch launches, and where that number came from.
    fn grid_cap(&self) -> (u32, String) {
        let (cap, source) = match self.sm_count.filter(|&n| n > 0) {
            Some(sms) => (
                sms.saturating_mul(GROUPS_PER_SM),
                format!("shaderSMCount {sms} x {GROUPS_PER_SM}"),
            ),
            None => (GRID_CAP_WITHOUT_SMS, GRID_CAP_WITHOUT_SMS.to_string()),
        };
        let count = self.dispatch.max_count[0];
        if count < cap {
            (count, format!("maxComputeWorkGroupCount[x] = {count}"))
        } else {
            (cap, source)
        }
    }

    /// Lays out a copy of `asked` bytes, or refuses one the shader cannot do.
    pub fn plan(&self, asked: u64) -> VulkanResult<CopyPlan> {
        let bytes = asked
            .checked_next_multiple_of(ELEMENT_BYTES)
            .filter(|&b| b > 0)
            .ok_or_else(|| VulkanError::Usage(format!("cannot copy {asked} bytes")))?;
        // Every dispatch but the last covers `step` bytes: whole elements, and each later
        // start a multiple of minStorageBufferOffsetAlignment.
        let align = self.offset_alignment.max(1);
        let unit = ELEMENT_BYTES / gcd(ELEMENT_BYTES, align) * align;
        let step = self.max_range / unit * unit;
        if step == 0 {
            return Err(VulkanError::Unavailable(format!(
                "maxStorageBufferRange {} is below one {unit}-byte aligned element",
                self.max_range
            )));
        }
        let workgroup = self.workgroup();
        let (cap, grid_cap) = self.grid_cap();
        let mut chunks = Vec::new();
        let mut offset = 0;
        while offset < bytes {
            let len = step.min(bytes - offset);
            let elements = len / ELEMENT_BYTES;
            let grid = elements.div_ceil(workgroup.into()).min(cap.into()) as u32;
            check_launch(launch(workgroup, grid), &self.dispatch)?;
            check_loop_iterations(launch(workgroup, grid), elements, self.loop_limit)?;
            chunks.push(Chunk {
                offset,
                bytes: len,
                grid,
            });
            offset += len;
        }
        Ok(CopyPlan {
            bytes,
            workgroup,
            grid_cap,
            chunks,
        })
    }
}

/// The launch one dispatch of the copy shader makes, for the launch checks.
pub(crate) fn launch(workgroup: u32, grid: u32) -> Launch {
    Launch::linear(BlockSize::linear(workgroup), grid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(sm_count: Option<u32>) -> CopyLimits {
        CopyLimits {
            dispatch: DispatchLimits {
                max_invocations: 1024,
                max_size: [1024, 1024, 64],
                max_count: [65535, 65535, 65535],
            },
            sm_count,
            max_range: 1 << 27,
            offset_alignment: 64,
            loop_limit: None,
        }
    }

    #[test]
    fn the_h200_copy_is_one_dispatch_of_eight_workgroups_per_sm() {
        // The CLI's 4K copy: 3840 x 2160 pixels x 8 bytes = 63.3 MiB.
        let mut l = limits(Some(132));
        l.dispatch.max_count[0] = u32::MAX / 2;
        l.max_range = u32::MAX.into();
        let p = l.plan(3840 * 2160 * 8).unwrap();
        assert_eq!(p.bytes, 3840 * 2160 * 8);
        assert_eq!(p.workgroup, 256);
        assert_eq!(p.grid_cap, "shaderSMCount 132 x 8");
        assert_eq!(
            p.chunks,
            [Chunk {
                offset: 0,
                bytes: 3840 * 2160 * 8,
                grid: 1056
            }]
        );
    }

    #[test]
    fn bytes_round_up_to_whole_elements() {
        let p = limits(None).plan(40).unwrap();
        assert_eq!(p.bytes, 48);
        assert_eq!(p.chunks[0].grid, 1, "3 elements: one workgroup");
        assert_eq!(limits(None).plan(8).unwrap().bytes, 16);
        assert_eq!(limits(None).plan(32).unwrap().bytes, 32);
        assert!(limits(None).plan(0).is_err());
        assert!(limits(None).plan(u64::MAX).is_err());
    }

    #[test]
    fn without_sms_the_grid_stops_at_65535_or_the_device_count() {
        let l = limits(None);
        let p = l.plan(1 << 27).unwrap();
        assert_eq!(p.chunks[0].grid, 32768, "8 Mi elements / 256");
        assert_eq!(p.grid_cap, "65535");
        let mut small = limits(None);
        small.dispatch.max_count[0] = 1000;
        let p = small.plan(1 << 27).unwrap();
        assert_eq!(p.chunks[0].grid, 1000);
        assert_eq!(p.grid_cap, "maxComputeWorkGroupCount[x] = 1000");
        // A device whose workgroups hold fewer than 256 invocations gets its largest.
        small.dispatch.max_invocations = 128;
        assert_eq!(small.plan(16).unwrap().workgroup, 128);
    }

    #[test]
    fn copies_above_max_storage_buffer_range_split_at_aligned_offsets() {
        let mut l = limits(None);
        l.max_range = 1000; // 960 bytes per dispatch: whole elements, offsets a multiple of 64
        let p = l.plan(2500).unwrap();
        assert_eq!(p.bytes, 2512);
        let starts: Vec<_> = p.chunks.iter().map(|c| (c.offset, c.bytes)).collect();
        assert_eq!(starts, [(0, 960), (960, 960), (1920, 592)]);
        // An alignment that is no multiple of 16 still gives whole elements.
        l.offset_alignment = 48;
        let p = l.plan(2500).unwrap();
        assert!(p
            .chunks
            .iter()
            .all(|c| c.offset % 48 == 0 && c.bytes % 16 == 0));
        assert_eq!(p.chunks.iter().map(|c| c.bytes).sum::<u64>(), 2512);
        l.max_range = 40;
        assert!(l.plan(64).is_err(), "no aligned element fits");
    }

    #[test]
    fn llvmpipe_loop_limit_is_respected() {
        let mut l = limits(None);
        l.loop_limit = Some(65535);
        l.max_range = u32::MAX.into();
        l.dispatch.max_count[0] = 1;
        // One workgroup of 256: at most 256 x 65535 elements.
        assert!(l.plan(256 * 65535 * 16).is_ok());
        let e = l.plan(256 * 65535 * 16 + 16).unwrap_err();
        assert!(e.to_string().contains("LP_MAX_TGSI_LOOP_ITERATIONS"), "{e}");
        // The real cap (65535 workgroups) leaves every invocation one iteration here.
        l.dispatch.max_count[0] = 65535;
        assert_eq!(l.plan(1 << 27).unwrap().chunks[0].grid, 32768);
    }
}
