//! What one launch of a kernel needs of a target: its block and grid, and what the local builds
//! tell of the kernel (shared memory, registers, arguments). A need nobody could tell is
//! `None`, and a limit it would be checked against then says `unknown`, never `launches`.

use serde::Serialize;

/// One launch's needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Needs {
    /// The block's extents.
    pub block: [u64; 3],
    /// The grid's extents, in blocks; `None` where the launch's grid is not in question.
    pub grid: Option<[u64; 3]>,
    /// Shared (workgroup, local) memory per block: the static plus the dynamic at this block.
    pub shared_bytes: Option<u64>,
    /// Bytes of push constants a Vulkan or WebGPU port passes its scalars in.
    pub push_constant_bytes: Option<u64>,
    /// Bytes of kernel arguments (pointers and scalars) where they are passed by value.
    pub parameter_bytes: Option<u64>,
    /// Storage buffers bound at once.
    pub storage_buffers: Option<u64>,
    /// The largest buffer, in bytes, bound as one storage binding.
    pub largest_buffer_bytes: Option<u64>,
    /// 32-bit registers per thread, from a local build that says (CUDA's
    /// CU_FUNC_ATTRIBUTE_NUM_REGS, NVIDIA's OpenCL build log); `None` where none did.
    pub registers_per_thread: Option<u64>,
    /// Where the register count came from ("CUDA: CU_FUNC_ATTRIBUTE_NUM_REGS").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers_from: Option<String>,
    /// The subgroup size the kernel's correctness rests on (a spec's `subgroup_size`).
    pub subgroup_size: Option<u64>,
}

impl Needs {
    /// A launch of `block` threads (x, y, z), nothing else known.
    pub fn block(block: [u64; 3]) -> Needs {
        Needs {
            block,
            ..Needs::default()
        }
    }

    pub fn threads(&self) -> u64 {
        self.block.iter().product()
    }
}

/// The bytes of `scalars` (each its size) laid out in one push-constant block with std430
/// rules, each aligned to its own size, as the program contract says (crates/core program.rs).
pub fn push_constant_bytes(scalars: &[u64]) -> u64 {
    scalars.iter().fold(0u64, |at, &size| {
        let size = size.max(1);
        at.div_ceil(size) * size + size
    })
}
