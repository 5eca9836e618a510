//! Verdicts and occupancy against outcomes derived by hand (docs/targets.md works the same
//! examples): the catalogue's own targets, and made-up ones for what no real target shows.

use blocksweep_targets::occupancy::{largest_block, residency, Limiter};
use blocksweep_targets::{check, Catalogue, Needs, Word};

fn catalogue() -> Catalogue {
    Catalogue::embedded().expect("the embedded catalogue reads")
}

fn at_shared(block: u64, shared: u64) -> Needs {
    Needs {
        shared_bytes: Some(shared),
        registers_per_thread: Some(16),
        ..Needs::block([block, 1, 1])
    }
}

#[test]
fn a_block_of_1024_is_refused_by_webgpus_default_of_256_and_runs_on_cuda() {
    let c = catalogue();
    let v = check(
        c.get("webgpu-default").unwrap(),
        &Needs::block([1024, 1, 1]),
    );
    assert_eq!(v.word, Word::Refused);
    assert!(
        v.line()
            .starts_with("refused: maxComputeInvocationsPerWorkgroup = 256 (W3C WebGPU"),
        "{}",
        v.line()
    );
    let v = check(c.get("cuda-cc-9.0").unwrap(), &at_shared(1024, 0));
    assert_eq!(v.word, Word::Launches, "{}", v.line());
    let v = check(c.get("webgpu-default").unwrap(), &Needs::block([256, 1, 1]));
    assert_eq!(v.word, Word::Launches, "{}", v.line());
}

#[test]
fn forty_eight_kib_of_shared_memory_is_refused_by_webgpu_and_roadmap_2026_and_fits_cc_9_0() {
    let c = catalogue();
    let need = at_shared(256, 48 * 1024);
    let webgpu = check(c.get("webgpu-default").unwrap(), &need);
    assert_eq!(webgpu.word, Word::Refused);
    assert_eq!(webgpu.findings[0].name, "maxComputeWorkgroupStorageSize");
    assert_eq!(
        webgpu.short(),
        "refused: maxComputeWorkgroupStorageSize = 16384"
    );
    let roadmap = check(c.get("roadmap-2026").unwrap(), &need);
    assert_eq!(roadmap.word, Word::Refused, "{}", roadmap.line());
    assert!(roadmap.short().ends_with("= 32768"), "{}", roadmap.short());
    let hopper = check(c.get("cuda-cc-9.0").unwrap(), &need);
    assert_eq!(hopper.word, Word::Launches, "{}", hopper.line());
    // One byte more needs CUDA's opt-in, which cc 9.0 has: it launches, and says so.
    let more = check(
        c.get("cuda-cc-9.0").unwrap(),
        &at_shared(256, 48 * 1024 + 1),
    );
    assert_eq!(more.word, Word::Launches);
    assert!(more.notes[0].contains("opt-in"), "{:?}", more.notes);
}

#[test]
fn a_kernel_of_128_registers_per_thread_launches_at_most_512_threads_on_cc_9_0() {
    let c = catalogue();
    let hopper = c.get("cuda-cc-9.0").unwrap();
    // 128 registers × 32 lanes = 4096 per warp; 65536 / 4096 = 16 warps = 512 threads.
    assert_eq!(largest_block(hopper, 128), Some(512));
    let need = |t| Needs {
        registers_per_thread: Some(128),
        ..Needs::block([t, 1, 1])
    };
    assert_eq!(check(hopper, &need(512)).word, Word::Launches);
    let v = check(hopper, &need(1024));
    assert_eq!(v.word, Word::Refused);
    assert!(
        v.line().contains("32 warps × 4096 = 131072"),
        "{}",
        v.line()
    );
    // Unknown registers: 1024 threads fit only at 64 or fewer, which the verdict says.
    let v = check(hopper, &Needs::block([1024, 1, 1]));
    assert_eq!(v.word, Word::Unknown);
    assert!(v.line().contains("at most with 64"), "{}", v.line());
    // 256 threads fit even at the 255 allowed: no register count is needed.
    assert_eq!(
        check(hopper, &Needs::block([256, 1, 1])).word,
        Word::Launches
    );
}

/// The seed's T4 table (cc 7.5: 16 blocks, 32 warp slots per SM) and the README's H200 table
/// (cc 9.0: 32 blocks, 64 warp slots), row by row: blk/SM, warps/SM and what limits them.
#[test]
fn residency_matches_the_seeds_t4_table_and_the_h200s() {
    let c = catalogue();
    let t4 = c.get("cuda-cc-7.5").unwrap();
    let rows = [
        (16, 16, 16),
        (32, 16, 16),
        (64, 16, 32),
        (96, 10, 30),
        (100, 8, 32),
        (128, 8, 32),
        (160, 6, 30),
        (192, 5, 30),
        (256, 4, 32),
        (384, 2, 24),
        (512, 2, 32),
        (768, 1, 24),
        (1024, 1, 32),
    ];
    for (threads, blocks, warps) in rows {
        let r = residency(t4, threads, Some(16), 0).unwrap();
        assert_eq!(
            (r.blocks_per_sm, r.warps_per_sm),
            (blocks, warps),
            "T4 at {threads}"
        );
    }
    assert_eq!(
        residency(t4, 32, Some(16), 0).unwrap().limiter,
        Limiter::Blocks
    );
    let hopper = c.get("cuda-cc-9.0").unwrap();
    for (threads, blocks, warps) in [(16, 32, 32), (96, 21, 63), (768, 2, 48), (1024, 2, 64)] {
        let r = residency(hopper, threads, Some(16), 0).unwrap();
        assert_eq!(
            (r.blocks_per_sm, r.warps_per_sm),
            (blocks, warps),
            "cc 9.0 at {threads}"
        );
    }
    // 128 registers: 4096 per warp, 16 warps of the register file per SM: 2 blocks of 256.
    let r = residency(hopper, 256, Some(128), 0).unwrap();
    assert_eq!((r.blocks_per_sm, r.limiter), (2, Limiter::Registers));
    assert!((r.occupancy - 0.25).abs() < 1e-9);
}

const MADE_UP: &str = r#"
family = "made-up"
[sources.s]
document = "by hand, for a test"
read = "2026-12-06"
[[targets]]
name = "wide-wave"
api = "vulkan"
source = "s"
kind = "device"
[targets.limits]
threads_per_block = { value = 1024, name = "maxComputeWorkGroupInvocations" }
block_dims = { value = [1024, 1024, 1024], name = "maxComputeWorkGroupSize" }
[targets.subgroup]
min = 64
max = 64
default = 64
[[targets]]
name = "variable-wave"
api = "vulkan"
source = "s"
inherits = "wide-wave"
[targets.subgroup]
min = 8
max = 32
"#;

#[test]
fn a_target_that_states_nothing_about_a_need_says_unknown() {
    let c = Catalogue::from_files(&[("made-up.toml", MADE_UP)]).unwrap();
    let t = c.get("wide-wave").unwrap();
    let need = Needs {
        shared_bytes: Some(4096),
        ..Needs::block([256, 1, 1])
    };
    let v = check(t, &need);
    assert_eq!(v.word, Word::Unknown);
    assert_eq!(
        v.line(),
        "unknown: wide-wave does not state maxComputeSharedMemorySize"
    );
}

#[test]
fn a_kernel_that_rests_on_32_wide_subgroups_is_refused_on_64_and_unknown_on_8_to_32() {
    let c = Catalogue::from_files(&[("made-up.toml", MADE_UP)]).unwrap();
    let need = Needs {
        subgroup_size: Some(32),
        ..Needs::block([128, 1, 1])
    };
    let wide = check(c.get("wide-wave").unwrap(), &need);
    assert_eq!(wide.word, Word::Refused);
    assert!(
        wide.line().contains("it runs subgroups of 64"),
        "{}",
        wide.line()
    );
    let variable = check(c.get("variable-wave").unwrap(), &need);
    assert_eq!(variable.word, Word::Unknown);
    assert!(variable.line().contains("8–32"), "{}", variable.line());
    // Inherited: the block limits came from wide-wave.
    let v = c.get("variable-wave").unwrap();
    assert_eq!(
        v.get(blocksweep_targets::Key::ThreadsPerBlock)
            .unwrap()
            .inherited_from
            .as_deref(),
        Some("wide-wave")
    );
}

/// With no register count: the counts where each block's residency changes on cc 9.0, by hand
/// from the catalogue's figures (asserted first, so a changed catalogue says so here): 64 warp
/// slots, 32 blocks, 65536 registers per SM and per block, a warp's registers in units of 256,
/// 255 per thread. A warp at R registers holds ⌈32R / 256⌉ × 256 = ⌈R / 8⌉ × 256.
/// - 32 threads (1 warp): 32 blocks (the block limit), 50 %; 32 blocks stay while 65536 ÷
///   (⌈R/8⌉ × 256) ≥ 32, so ⌈R/8⌉ ≤ 8: R ≤ 64. One warp fits 65536 at any R ≤ 255, where
///   65536 ÷ 8192 = 8 blocks of 1 warp: 12.5 %.
/// - 256 threads (8 warps): 8 blocks (64 ÷ 8), 100 %; 65536 ÷ (8 × ⌈R/8⌉ × 256) ≥ 8 while
///   R ≤ 32; launches at 255 (8 × 8192 = 65536), 1 block: 12.5 %.
/// - 1024 threads (32 warps): 2 blocks, 100 %, kept while 32 × ⌈R/8⌉ × 256 × 2 ≤ 65536: R ≤ 32;
///   launches while 32 × ⌈R/8⌉ × 256 ≤ 65536: R ≤ 64, 1 block of 32 warps: 50 %.
#[test]
fn without_a_register_count_each_block_is_worked_out_where_its_residency_changes_on_cc_9_0() {
    use blocksweep_targets::occupancy::{figures, register_steps};
    let c = catalogue();
    let hopper = c.get("cuda-cc-9.0").unwrap();
    let f = figures(hopper).unwrap();
    assert_eq!((f.warp, f.threads_per_sm, f.blocks_per_sm), (32, 2048, 32));
    assert_eq!(
        (f.registers_per_sm, f.registers_per_block, f.register_unit),
        (65536, 65536, 256)
    );
    assert_eq!(f.registers_per_thread, 255);
    let steps = |t| {
        let s = register_steps(hopper, t, 0).unwrap();
        (
            (s.unbound.blocks_per_sm, s.unbound.occupancy),
            s.kept_up_to,
            s.launches_up_to,
            (s.at_launch_limit.blocks_per_sm, s.at_launch_limit.occupancy),
        )
    };
    assert_eq!(steps(32), ((32, 0.5), 64, 255, (8, 0.125)));
    assert_eq!(steps(256), ((8, 1.0), 32, 255, (1, 0.125)));
    assert_eq!(steps(1024), ((2, 1.0), 32, 64, (1, 0.5)));
    // Beyond the threads per block there is nothing to work out.
    assert!(register_steps(hopper, 1025, 0).is_none());
}
