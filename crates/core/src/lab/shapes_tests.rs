//! Tests of the shape sweep's planning: every split of a thread count, the data-sized grids, what
//! each shape does to a warp's loads, and where it goes past a specification's promise.

use super::*;
use crate::api::{ApiInfo, Vocabulary};
use crate::guarantee::{Amount, Guarantee};
use crate::limits::Concept;
use crate::limits::{Dims, Named};
use crate::testing::{bare_api, TEST_API_A, TEST_API_B};

/// An API with Vulkan's promises.
static VK_LIKE: ApiInfo = ApiInfo {
    words: Vocabulary {
        thread: "invocation",
        block: "workgroup",
        grid: "workgroup count",
        warp: "subgroup",
        multiprocessor: "SM",
        launch: "vkCmdDispatch",
    },
    ..bare_api("vk-like", "VkLike", 9, &VK_PROMISES)
};

/// Vulkan's minimums for a block: invocations, and each extent.
const VK_PROMISES: [Guarantee; 2] = [
    Guarantee::at_least(
        Concept::MaxThreadsPerBlock,
        Amount::Count(128),
        "invocations",
    ),
    Guarantee::at_least(Concept::MaxBlockDims, Amount::Dims([128, 128, 64]), "size"),
];

fn names(v: &[BlockSize]) -> Vec<String> {
    v.iter().map(|b| format!("{}x{}", b.x, b.y)).collect()
}

#[test]
fn every_power_of_two_split_widest_first() {
    assert_eq!(
        names(&shapes(256).unwrap()),
        ["256x1", "128x2", "64x4", "32x8", "16x16", "8x32", "4x64", "2x128", "1x256"]
    );
    assert_eq!(shapes(1024).unwrap().len(), 11);
    assert_eq!(names(&shapes(1).unwrap()), ["1x1"]);
    assert!(shapes(0).is_err());
    assert!(shapes(96).unwrap_err().contains("power of two"));
    assert!(shapes(1 << 17).is_err());
    assert_eq!(parse_threads(" 256 "), Ok(256));
    assert!(parse_threads("abc").is_err());
    assert!(parse_threads("100").is_err());
}

#[test]
fn data_sized_grids_cover_the_frame() {
    let g = shape_grid(BlockSize { x: 256, y: 1, z: 1 }, 3840, 2160);
    assert_eq!((g.x, g.y), (15, 2160));
    let g = shape_grid(BlockSize { x: 1, y: 256, z: 1 }, 3840, 2160);
    assert_eq!((g.x, g.y), (3840, 9)); // 2304 rows launched for 2160: 6.7% idle threads
    let g = shape_grid(BlockSize { x: 16, y: 16, z: 1 }, 509, 253);
    assert_eq!((g.x, g.y), (32, 16));
    // Capped at 65535 per extent: the loops cover the rest.
    let g = shape_grid(BlockSize { x: 1, y: 1, z: 1 }, 100_000, 3);
    assert_eq!((g.x, g.y), (65535, 3));
    let rows = plan(256, 3840, 2160).unwrap();
    assert_eq!(rows.len(), 9);
    assert_eq!(rows[0].threads, 3840 * 2160);
    assert_eq!(rows[8].threads, 3840 * 2304);
}

#[test]
fn warp_rows_and_sectors_per_shape() {
    let c = |x, y| coalescing(BlockSize { x, y, z: 1 }, 32);
    // 256x1, 32x8: one row of 128 bytes, fully coalesced.
    for (x, y) in [(256, 1), (32, 8)] {
        let k = c(x, y);
        assert_eq!((k.rows, k.bytes_per_row, k.sectors), (1, 128, 4));
        assert_eq!(k.sector_use, 1.0);
        assert!(k.words.starts_with("coalesced"), "{}", k.words);
    }
    // 16x16: two rows of 64 bytes; 8x32: four of 32; all sectors full.
    let k = c(16, 16);
    assert_eq!((k.rows, k.bytes_per_row, k.sectors), (2, 64, 4));
    assert_eq!(k.sector_use, 1.0);
    let k = c(8, 32);
    assert_eq!((k.rows, k.bytes_per_row, k.sectors), (4, 32, 4));
    // 4x64: eight rows of 16 bytes, 8 sectors for 128 bytes; 1x256: 32 sectors.
    let k = c(4, 64);
    assert_eq!((k.rows, k.bytes_per_row, k.sectors), (8, 16, 8));
    assert_eq!(k.sector_use, 0.5);
    let k = c(1, 256);
    assert_eq!((k.rows, k.bytes_per_row, k.sectors), (32, 4, 32));
    assert_eq!(k.sector_use, 0.125);
    assert!(
        k.words.contains("12%") || k.words.contains("13%"),
        "{}",
        k.words
    );
    // A block smaller than a warp: the rows are bounded by the block.
    let k = coalescing(BlockSize { x: 4, y: 2, z: 1 }, 32);
    assert_eq!((k.lanes, k.rows, k.bytes_per_row), (8, 2, 16));
    // An 8-lane subgroup (llvmpipe): 8x32 already spans one row.
    let k = coalescing(BlockSize { x: 8, y: 32, z: 1 }, 8);
    assert_eq!((k.rows, k.bytes_per_row, k.sectors), (1, 32, 1));
}

#[test]
fn limits_and_guarantees_are_named() {
    let limits = Limits {
        max_threads_per_block: Some(Named::new(1024, "maxComputeWorkGroupInvocations")),
        max_block_dims: Some(Named::new(
            Dims([1024, 1024, 64]),
            "maxComputeWorkGroupSize",
        )),
        ..Limits::default()
    };
    let tall = BlockSize { x: 1, y: 256, z: 1 };
    assert_eq!(limit_passed(&limits, tall), None);
    // TEST_API_B promises 128 threads and no per-dimension extents.
    let b = beyond_guarantee(TEST_API_B, tall, &limits).unwrap();
    assert!(
        b.contains("256 threads > 128 (maxComputeWorkGroupInvocations)"),
        "{b}"
    );
    assert_eq!(beyond_guarantee(TEST_API_A, tall, &limits), None);
    let small = Limits {
        max_block_dims: Some(Named::new(Dims([1024, 128, 64]), "maxComputeWorkGroupSize")),
        ..limits
    };
    let l = limit_passed(&small, tall).unwrap();
    assert!(l.contains("maxComputeWorkGroupSize[y] = 128"), "{l}");
    // Vulkan's promises: 1x128 is portable, 1x256 is not (in y and in total), 2x128 not
    // in total only.
    let vk = Api::new(&VK_LIKE);
    let b = beyond_guarantee(vk, tall, &small).unwrap();
    assert!(
        b.contains("y = 256 > 128 (maxComputeWorkGroupSize[y])"),
        "{b}"
    );
    let b = beyond_guarantee(vk, BlockSize { x: 2, y: 128, z: 1 }, &small).unwrap();
    assert!(!b.contains("[y]"), "{b}");
    assert_eq!(
        beyond_guarantee(vk, BlockSize { x: 1, y: 128, z: 1 }, &small),
        None
    );
    assert_eq!(beyond_parts(vk, tall), ["y", "threads"]);
    assert_eq!(
        beyond_parts(vk, BlockSize { x: 128, y: 1, z: 1 }),
        Vec::<&str>::new()
    );
    assert_eq!(beyond_parts(TEST_API_A, tall), Vec::<&str>::new());
}
