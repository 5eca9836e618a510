//! The launches each command makes or assumes, as needs: `validate`'s assumptions, and a
//! sweep's block sizes at its grids.

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::validate::ASSUMPTIONS;

use crate::report::{Kernel, Launch};

/// Threads of a block, as the needs take them.
fn extents(b: BlockSize) -> [u64; 3] {
    [b.x, b.y, b.z].map(u64::from)
}

/// Every assumption `validate` launches, with `kernel`'s needs at its block; `dynamic` is the
/// kernel's dynamic shared memory at a block (a spec's `shared_bytes`).
pub fn assumptions(kernel: &Kernel, dynamic: &dyn Fn(BlockSize) -> u64) -> Vec<Launch> {
    ASSUMPTIONS
        .iter()
        .enumerate()
        .map(|(i, asm)| {
            let g = asm.launch.grid;
            let grid = [u64::from(g.x), u64::from(g.y), 1];
            Launch {
                id: (i + 1).to_string(),
                claim: format!("{} [{} x {}]", asm.claim, asm.launch.block, g),
                needs: kernel.needs(
                    extents(asm.launch.block),
                    Some(grid),
                    dynamic(asm.launch.block),
                ),
            }
        })
        .collect()
}

/// The distinct 1-D block sizes of `validate`'s assumptions, smallest first: the columns of
/// the register and idle-lane tables.
pub fn assumption_blocks() -> Vec<u64> {
    let mut out: Vec<u64> = ASSUMPTIONS
        .iter()
        .map(|a| a.launch.block)
        .filter(|b| b.y == 1 && b.z == 1 && b.x <= 1024)
        .map(|b| u64::from(b.x))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A sweep's rows: each block at the grid the sweep launches it with (`None` where the grid
/// is not in question: a grid-stride kernel at one wave fits every target's grid limits).
pub fn blocks(
    kernel: &Kernel,
    blocks: &[BlockSize],
    grid: &dyn Fn(BlockSize) -> Option<[u64; 3]>,
    dynamic: &dyn Fn(BlockSize) -> u64,
) -> Vec<Launch> {
    blocks
        .iter()
        .map(|&b| Launch {
            id: b.to_string(),
            claim: format!("block {b}"),
            needs: kernel.needs(extents(b), grid(b), dynamic(b)),
        })
        .collect()
}
