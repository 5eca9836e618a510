//! Device launch limits, normalised across APIs but never stripped of their native names.
//!
//! Every field is a [`Named`] value: the number, plus the name the API itself uses for it
//! (`CL_DEVICE_MAX_WORK_GROUP_SIZE`, `maxComputeWorkGroupInvocations`,
//! `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`), so a reader can look it up in that API's
//! specification. A field is `None` where the API has no such query.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A launch-limit concept that every API names in its own way. The limits tables are built
/// from these, and each API states its specification's minimum per concept
/// ([`crate::ApiInfo::guarantees`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Concept {
    MaxThreadsPerBlock,
    MaxBlockDims,
    MaxGridDims,
    WarpSize,
    Multiprocessors,
    MaxThreadsPerMp,
    MaxBlocksPerMp,
    SharedMemPerBlock,
    SharedMemPerBlockOptin,
    RegistersPerBlock,
    MaxAlloc,
    MaxBufferBinding,
    GlobalMemory,
    LastLevelCache,
    TimerResolution,
    KernelMaxBlock,
    KernelRegisters,
}

/// A value together with the API-native name it was queried under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Named<T> {
    pub value: T,
    pub name: String,
}

impl<T> Named<T> {
    pub fn new(value: T, name: impl Into<String>) -> Self {
        Named {
            value,
            name: name.into(),
        }
    }
}

impl<T: fmt::Display> fmt::Display for Named<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.value, self.name)
    }
}

/// The host's hardware threads, named `name`: what stands in for compute units on a CPU device
/// whose API has no compute-unit query (one block per thread is what a CPU driver runs at once).
pub fn host_threads(name: &str) -> Option<Named<u64>> {
    let n = std::thread::available_parallelism().ok()?.get() as u64;
    Some(Named::new(n, name))
}

/// Three extents (x, y, z).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dims(pub [u64; 3]);

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.0[0], self.0[1], self.0[2])
    }
}

/// The per-multiprocessor numbers an occupancy model needs, with where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiprocessorModel {
    pub warp_size: u32,
    pub max_warps: u32,
    pub max_blocks: u32,
    /// 32-bit registers per multiprocessor, where known.
    pub registers: Option<u32>,
    /// Register allocation granularity per warp (NVIDIA: 256).
    pub register_granularity: u32,
    /// Where the figures come from, shown in reports.
    pub source: String,
}

/// What one API reports about one device's launch limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Largest number of threads in one block (product of the three dimensions).
    pub max_threads_per_block: Option<Named<u64>>,
    pub max_block_dims: Option<Named<Dims>>,
    pub max_grid_dims: Option<Named<Dims>>,
    /// Warp / subgroup / SIMD width.
    pub warp_size: Option<Named<u64>>,
    /// Streaming multiprocessors / compute units.
    pub multiprocessors: Option<Named<u64>>,
    pub max_threads_per_mp: Option<Named<u64>>,
    pub max_blocks_per_mp: Option<Named<u64>>,
    pub shared_mem_per_block: Option<Named<u64>>,
    pub shared_mem_per_block_optin: Option<Named<u64>>,
    pub registers_per_block: Option<Named<u64>>,
    pub registers_per_mp: Option<Named<u64>>,
    pub max_alloc_bytes: Option<Named<u64>>,
    pub max_buffer_binding_bytes: Option<Named<u64>>,
    /// Where a frame's plane past `max_alloc_bytes` or `max_buffer_binding_bytes` is split
    /// into pieces of this many bytes (each its own allocation), named by how the kernel
    /// reaches them; `None` where a plane must fit both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_piece_bytes: Option<Named<u64>>,
    pub global_mem_bytes: Option<Named<u64>>,
    pub l2_bytes: Option<Named<u64>>,
    /// Theoretical DRAM bandwidth in GB/s (10^9 bytes/s), where it can be derived.
    pub theoretical_gbps: Option<Named<f64>>,
    pub timer_resolution_ns: Option<Named<f64>>,
    /// Compute capability (NVIDIA), e.g. (9, 0).
    pub compute_capability: Option<Named<(u32, u32)>>,
    /// Iterations one invocation's loop may run before the driver silently ends it (llvmpipe
    /// stops loops at 65535); `None` where loops run to completion. The wave grid is raised
    /// so that no invocation needs more.
    pub max_loop_iterations: Option<Named<u64>>,
    /// Per-multiprocessor limits for the residency model, where the device exposes enough to
    /// build one (see `grid`). `None` on CPU devices.
    pub mp_model: Option<MultiprocessorModel>,
    /// Everything else worth showing, under its native name, in the API's order.
    pub extra: Vec<(String, String)>,
}

impl Limits {
    pub fn value(field: &Option<Named<u64>>) -> Option<u64> {
        field.as_ref().map(|n| n.value)
    }

    /// The warp (subgroup) size every column that counts warps uses: the residency model's,
    /// else the API's own query; `None` where neither says (or says 0).
    pub fn warp(&self) -> Option<u64> {
        self.mp_model
            .as_ref()
            .map(|m| m.warp_size as u64)
            .or_else(|| Limits::value(&self.warp_size))
            .filter(|&w| w > 0)
    }

    /// Whether a frame of `pixels` fits this device: four f32 planes, each one allocation
    /// bound to the kernel as one buffer, or (`frame_piece_bytes`) split into pieces that
    /// each fit. Checked before anything is allocated, host or device.
    pub fn frame_fits(&self, pixels: u64) -> Result<(), String> {
        let plane = pixels
            .checked_mul(4)
            .ok_or_else(|| format!("{pixels} pixels need more than 2^64 bytes per plane"))?;
        match &self.frame_piece_bytes {
            Some(piece) if plane > piece.value => {
                let total = plane.saturating_mul(4);
                self.buffers_fit(
                    1,
                    piece.value,
                    total - piece.value,
                    "one piece",
                    "four planes",
                )
            }
            _ => self.buffers_fit(4, plane, 0, "one plane", "four planes"),
        }
    }

    /// Whether the copy ceiling's two buffers of `bytes` fit beside the `resident` bytes the
    /// workload holds on the device (the frame's four planes, a kernel's buffers).
    pub fn copy_fits(&self, bytes: u64, resident: u64) -> Result<(), String> {
        self.buffers_fit(
            2,
            bytes,
            resident,
            "one copy buffer",
            "the copy's two buffers and the workload's",
        )
    }

    /// Whether a program's buffers (each a name and its bytes, guard bands included) fit: all
    /// of them against the device's memory, then each against the per-allocation and
    /// per-binding limits; the error names the buffer and the limit that refuses it.
    pub fn program_fits(&self, buffers: &[(String, u64)]) -> Result<(), String> {
        let total = buffers.iter().fold(0u64, |t, (_, b)| t.saturating_add(*b));
        if let Some(g) = self.global_mem_bytes.as_ref().filter(|g| total > g.value) {
            return Err(format!(
                "its buffers, guard bands included, are {total} bytes > {} = {}",
                g.name, g.value
            ));
        }
        for (name, bytes) in buffers {
            let limits = [&self.max_alloc_bytes, &self.max_buffer_binding_bytes];
            if let Some(limit) = limits.into_iter().flatten().find(|l| *bytes > l.value) {
                return Err(format!(
                    "buffer '{name}' is {bytes} bytes > {} = {}",
                    limit.name, limit.value
                ));
            }
        }
        Ok(())
    }

    /// `count` buffers of `bytes` each, beside `reserved` bytes already in use, against the
    /// per-allocation, per-binding and total memory limits; the error names the limit.
    fn buffers_fit(
        &self,
        count: u64,
        bytes: u64,
        reserved: u64,
        one: &str,
        all: &str,
    ) -> Result<(), String> {
        for limit in [&self.max_alloc_bytes, &self.max_buffer_binding_bytes]
            .into_iter()
            .flatten()
        {
            if bytes > limit.value {
                return Err(format!(
                    "{one} is {bytes} bytes; {} is {}",
                    limit.name, limit.value
                ));
            }
        }
        if let Some(g) = &self.global_mem_bytes {
            let total = bytes.saturating_mul(count).saturating_add(reserved);
            if total > g.value {
                return Err(format!(
                    "{all} are {total} bytes; {} is {}",
                    g.name, g.value
                ));
            }
        }
        Ok(())
    }

    /// Internal consistency checks every backend's limits must pass; returns the problems.
    /// (Tests run it on every real device: a backend that reads a field wrong shows up here.)
    pub fn inconsistencies(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let v = Self::value;
        // A per-dimension maximum above the total is legal in every API (Vulkan and OpenCL
        // bound the product separately), so only zeros are inconsistent here.
        if let Some(d) = &self.max_block_dims {
            if d.value.0.contains(&0) {
                bad.push(format!("a max block dimension is zero: {}", d.value));
            }
        }
        if v(&self.max_threads_per_block) == Some(0) {
            bad.push("max threads per block is zero".into());
        }
        if let (Some(t), Some(mp)) = (v(&self.max_threads_per_block), v(&self.max_threads_per_mp)) {
            if t > mp {
                bad.push(format!(
                    "max threads per block {t} exceeds max threads per multiprocessor {mp}"
                ));
            }
        }
        if let (Some(a), Some(g)) = (v(&self.max_alloc_bytes), v(&self.global_mem_bytes)) {
            if a > g {
                bad.push(format!("max allocation {a} exceeds global memory {g}"));
            }
        }
        if let (Some(s), Some(o)) = (
            v(&self.shared_mem_per_block),
            v(&self.shared_mem_per_block_optin),
        ) {
            if s > o {
                bad.push(format!(
                    "default shared memory per block {s} exceeds the opt-in maximum {o}"
                ));
            }
        }
        if v(&self.multiprocessors) == Some(0) {
            bad.push("zero multiprocessors / compute units".into());
        }
        if let Some(w) = v(&self.warp_size) {
            if w == 0 || !w.is_power_of_two() {
                bad.push(format!("warp/subgroup size {w} is not a power of two"));
            }
        }
        bad
    }
}

/// Facts about the compiled grayscale kernel on this device: they bound the legal block sizes
/// and drive the residency model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelFacts {
    /// Largest block this compiled kernel can be launched with (CUDA
    /// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, OpenCL CL_KERNEL_WORK_GROUP_SIZE).
    pub max_block: Option<Named<u64>>,
    /// OpenCL CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE and the like.
    pub preferred_multiple: Option<Named<u64>>,
    /// Registers per thread.
    pub registers: Option<Named<u64>>,
    /// Private/local (per-thread spill) memory in bytes.
    pub private_bytes: Option<Named<u64>>,
    /// Static shared/local memory per block in bytes.
    pub shared_bytes: Option<Named<u64>>,
    /// How the kernel was compiled (e.g. "NVRTC 13.0", "PTX JIT", "clBuildProgram").
    pub compiled_by: String,
    /// Anything else worth showing, under its native name.
    pub extra: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_fits_names_the_limit_that_refuses() {
        let l = Limits {
            max_alloc_bytes: Some(Named::new(100, "MAX_ALLOC")),
            global_mem_bytes: Some(Named::new(250, "GLOBAL")),
            ..Limits::default()
        };
        let named = |sizes: &[u64]| -> Vec<(String, u64)> {
            sizes
                .iter()
                .enumerate()
                .map(|(i, &b)| (format!("b{i}"), b))
                .collect()
        };
        assert!(l.program_fits(&named(&[100, 100, 50])).is_ok());
        let e = l.program_fits(&named(&[50, 101])).unwrap_err();
        assert!(e.contains("'b1' is 101 bytes > MAX_ALLOC = 100"), "{e}");
        let e = l.program_fits(&named(&[100, 100, 51])).unwrap_err();
        assert!(e.contains("are 251 bytes > GLOBAL = 250"), "{e}");
        assert!(l.program_fits(&[]).is_ok());
    }

    #[test]
    fn frame_fits_names_the_limit_that_refuses() {
        let l = Limits {
            max_alloc_bytes: Some(Named::new(1 << 30, "CL_DEVICE_MAX_MEM_ALLOC_SIZE")),
            max_buffer_binding_bytes: Some(Named::new(1 << 27, "maxStorageBufferRange")),
            global_mem_bytes: Some(Named::new(1 << 28, "GLOBAL")),
            ..Limits::default()
        };
        assert!(l.frame_fits(1 << 24).is_ok()); // 64 MiB planes, 256 MiB in all
        assert!(l
            .frame_fits((1 << 25) + 1)
            .unwrap_err()
            .contains("maxStorageBufferRange"));
        let l = Limits {
            max_buffer_binding_bytes: None,
            ..l
        };
        assert!(l.frame_fits((1 << 24) + 1).unwrap_err().contains("GLOBAL"));
        assert!(
            Limits::default().frame_fits(u64::MAX / 4).is_ok(),
            "no limits known: nothing to refuse"
        );
        assert!(
            Limits::default()
                .frame_fits(u64::MAX)
                .unwrap_err()
                .contains("2^64"),
            "a byte count that does not fit 64 bits is refused, never wrapped"
        );
    }

    #[test]
    fn planes_in_pieces_fit_by_the_device_memory_only() {
        // NVIDIA's Vulkan: 4 GiB allocations and bindings, 80 GB of memory, 2 GiB pieces.
        let l = Limits {
            max_alloc_bytes: Some(Named::new(0xffe0_0000, "maxMemoryAllocationSize")),
            max_buffer_binding_bytes: Some(Named::new(u32::MAX.into(), "maxStorageBufferRange")),
            global_mem_bytes: Some(Named::new(80_000_000_000, "heap")),
            ..Limits::default()
        };
        let pixels = 50_000u64 * 50_000; // 10 GB planes
        assert!(l
            .frame_fits(pixels)
            .unwrap_err()
            .contains("maxMemoryAllocationSize"));
        let l = Limits {
            frame_piece_bytes: Some(Named::new(1 << 31, "pieces by bufferDeviceAddress")),
            ..l
        };
        assert!(
            l.frame_fits(pixels).is_ok(),
            "40 GB in pieces of 2 GiB fit 80 GB"
        );
        let e = l.frame_fits(75_000 * 75_000).unwrap_err(); // 90 GB of planes
        assert!(e.contains("four planes") && e.contains("heap"), "{e}");
        assert!(
            l.frame_fits(1 << 20).is_ok(),
            "planes under a piece are whole"
        );
    }
}
