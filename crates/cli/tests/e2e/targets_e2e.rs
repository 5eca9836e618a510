//! `--target` end to end on the CPU drivers: validate's verdicts against outcomes derived by
//! hand, a target file written by `limits -o` and read back giving the verdicts the live
//! devices gave, and bad input refused in one line before anything runs.

use crate::support::{available_apis, bad_input_before_any_phase, succeeds};
use serde_json::Value;

/// The verdict of target `target` on validate's row `id`.
fn verdict<'a>(doc: &'a Value, id: &str, target: &str) -> &'a Value {
    let t = &doc["targets"];
    let col = t["targets"]
        .as_array()
        .unwrap()
        .iter()
        .position(|x| x["name"] == target)
        .unwrap_or_else(|| panic!("no target {target}"));
    let row = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id}"));
    &row["verdicts"][col]
}

#[test]
fn validate_says_per_target_which_launches_work_and_why_not() {
    if available_apis().is_empty() {
        return;
    }
    let out = succeeds(&[
        "validate",
        "--kernel",
        "../../examples/kernels/reduce/kernel.toml",
        "--target",
        "webgpu-default,roadmap-2026,cuda-cc-9.0,amd-rdna3",
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    // Row 3: 1024 threads. WebGPU's default allows 256 (the spec's limits table).
    let v = verdict(&doc, "3", "webgpu-default");
    assert_eq!(v["word"], "refused", "{v}");
    assert_eq!(
        v["findings"][0]["name"],
        "maxComputeInvocationsPerWorkgroup"
    );
    assert_eq!(v["findings"][0]["value"], 256);
    assert!(v["findings"][0]["source"]["read"].is_string(), "{v}");
    // Row 8: a 1x1x65 block; roadmap 2026 allows z = 64, an RX 7800 XT 1024.
    assert_eq!(verdict(&doc, "8", "roadmap-2026")["word"], "refused");
    assert_eq!(verdict(&doc, "8", "amd-rdna3")["word"], "launches");
    // Row 11: a grid of 65536 in x: above Vulkan's 65535, within CUDA's 2^31-1.
    assert_eq!(verdict(&doc, "11", "roadmap-2026")["word"], "refused");
    // Row 1: 128 threads with 512 bytes of shared memory launches everywhere at any register
    // count (255 × 32 × 4 warps is within 65536).
    for t in ["webgpu-default", "roadmap-2026", "cuda-cc-9.0", "amd-rdna3"] {
        assert_eq!(verdict(&doc, "1", t)["word"], "launches", "{t}");
    }
    let needs = &doc["targets"]["rows"][0]["needs"];
    // reduce: block * 4 dynamic bytes at 128, beside what the builds report as static (a
    // shared array's declared size where the build counts it).
    let shared = needs["shared_bytes"].as_u64().unwrap();
    assert!((512..1024).contains(&shared), "{needs}");
    assert_eq!(needs["storage_buffers"], 2, "{needs}");
    // A 1024-thread block on cc 9.0: no CPU driver reports registers, so it cannot say.
    let hopper = verdict(&doc, "3", "cuda-cc-9.0");
    if needs["registers_per_thread"].is_null() {
        assert_eq!(hopper["word"], "unknown", "{hopper}");
        assert!(hopper["findings"][0]["need"]
            .as_str()
            .unwrap()
            .contains("at most with 64"));
    }
}

#[test]
fn a_target_file_written_by_limits_gives_the_verdicts_the_live_devices_gave() {
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let dir = crate::support::scratch("targets");
    let file = dir.join("here.toml");
    let f = file.to_str().unwrap();
    succeeds(&["limits", "-o", f, "--quiet"]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("[[targets]]") && text.contains("read = \"20"),
        "{text}"
    );
    let doc: Value =
        serde_json::from_str(&succeeds(&["validate", "--target", f, "--format", "json"])).unwrap();
    let targets = doc["targets"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), apis.len(), "one target per API view");
    let mut compared = 0;
    for (col, t) in targets.iter().enumerate() {
        let api = t["api"].as_str().unwrap();
        for (i, row) in doc["targets"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            // The live outcome of the same assumption on the same API.
            let live = doc["checks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["api"] == api && c["assumption"]["launch"].is_object())
                .nth(i)
                .unwrap();
            assert_eq!(
                live["assumption"]["claim"],
                row["claim"].as_str().unwrap().split(" [").next().unwrap()
            );
            let kind = live["outcome"]["kind"].as_str().unwrap();
            let word = row["verdicts"][col]["word"].as_str().unwrap();
            let ran = matches!(kind, "verified" | "ran_unchecked" | "wrong");
            match word {
                "launches" => assert!(ran, "{api} row {}: file says launches, live {kind}", i + 1),
                "refused" => assert_eq!(kind, "rejected", "{api} row {}", i + 1),
                other => panic!("{api} row {}: {other}: {}", i + 1, row["verdicts"][col]),
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 12 * apis.len());
}

#[test]
fn an_unknown_target_lists_the_known_ones_and_a_malformed_file_names_its_key() {
    bad_input_before_any_phase(
        &["validate", "--target", "webgpu,no-such-gpu"],
        "--target no-such-gpu: no such target, family or file (known: cuda-cc, devices,",
    );
    let dir = crate::support::scratch("targets-bad");
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "family = \"x\"\n[sources.s]\ndocument = \"d\"\nread = \"2026-12-06\"\n[[targets]]\n\
         name = \"t\"\napi = \"vulkan\"\nsource = \"s\"\n[targets.limits]\n\
         threads = { value = 1, name = \"n\" }\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    bad_input_before_any_phase(
        &["validate", "--target", f],
        "bad.toml: targets[0] ('t').limits.threads: not a limit",
    );
    // A value of the wrong kind names its key and what it is (it said "data did not match any
    // variant of untagged enum RawValue (at byte 861)"); a TOML error says its line.
    let text = std::fs::read_to_string(&file).unwrap();
    let lots = text.replace(
        "threads = { value = 1,",
        "threads_per_block = { value = \"lots\",",
    );
    std::fs::write(&file, lots).unwrap();
    bad_input_before_any_phase(
        &["limits", "--target", f],
        "bad.toml: targets[0] ('t').limits.threads_per_block.value: \"lots\" is not one whole number",
    );
    std::fs::write(&file, text.replace("value = 1,", "value = 1")).unwrap();
    bad_input_before_any_phase(&["limits", "--target", f], "bad.toml: line 10, column");
    bad_input_before_any_phase(&["limits", "--target", "nvidia-h1000"], "no such target");
}

#[test]
fn a_sweeps_answer_keeps_only_the_sizes_every_target_launches() {
    let apis = available_apis();
    let Some(api) = apis.first() else {
        return;
    };
    let out = succeeds(&[
        "sweep",
        "--backend",
        api,
        "--size",
        "160x90",
        "--reps",
        "2",
        "--warmups",
        "0",
        "--blocks",
        "64,128,256,512",
        "--target",
        "webgpu-default,android-baseline-2022",
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let a = &doc["targets"]["answer"];
    // WebGPU's default allows 256 threads, Android's 2022 baseline 128: 64 and 128 launch on
    // both, 256 only on WebGPU, 512 on neither.
    assert_eq!(
        a["launch_everywhere"],
        serde_json::json!(["64", "128"]),
        "{a}"
    );
    let portable_here: Vec<String> = doc["answer"]["portable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["block"]["x"].to_string())
        .collect();
    for p in a["portable"].as_array().unwrap() {
        let p = p.as_str().unwrap();
        assert!(["64", "128"].contains(&p), "{p} launches everywhere");
        assert!(portable_here.iter().any(|x| x == p), "{p} is portable here");
    }
    for (size, why) in a["elsewhere"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (&e[0], &e[1]))
    {
        let why = why.to_string();
        match size.as_str().unwrap() {
            "256" => assert!(why.contains("android-baseline-2022") && !why.contains("webgpu")),
            "512" => assert!(
                why.contains("maxComputeInvocationsPerWorkgroup 256"),
                "{why}"
            ),
            other => panic!("{other} launches everywhere: {why}"),
        }
    }
}

/// With no register count (no CPU driver reports one), validate on a compute capability still
/// shows the course's register arithmetic, at the register counts that matter to each block.
/// By hand from cuda-cc.toml for cc 9.0 (checked against the catalogue in
/// crates/targets/tests/verdicts.rs): 2048 threads per SM = 64 warp slots, 32 blocks per SM,
/// 65536 registers per SM and per block, 256 per warp the allocation unit, 255 per thread.
/// A 256-thread block (8 warps): 8 blocks (64 ÷ 8 warps), 100 %, while 8 × 8 warps × ⌈R×32/256⌉
/// × 256 ≤ 65536, i.e. R ≤ 32; it launches up to 255 (8 × 8192 = 65536), where 1 block of 8 warps
/// stays: 12 %. A 1024-thread block: 2 blocks, 100 %, up to 32; launches up to 64 (32 warps ×
/// 2048 = 65536), 1 block, 50 %.
#[test]
fn validate_on_a_compute_capability_shows_the_register_arithmetic_without_a_register_count() {
    if available_apis().is_empty() {
        return;
    }
    let text = succeeds(&["validate", "--target", "cuda-cc-9.0", "--wide"]);
    assert!(text.contains("registers per thread: unknown"), "{text}");
    assert!(
        text.contains("If the kernel uses R registers per thread"),
        "{text}"
    );
    let row = |block: &str| {
        text.lines()
            .find(|l| l.split_whitespace().take(2).eq(["cuda-cc-9.0", block]))
            .unwrap_or_else(|| panic!("no row of block {block}:\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("256"),
        ["cuda-cc-9.0", "256", "8", "8·100%", "32", "255", "1·12%"]
    );
    assert_eq!(
        row("1024"),
        ["cuda-cc-9.0", "1024", "32", "2·100%", "32", "64", "1·50%"]
    );
    let json = succeeds(&["validate", "--target", "cuda-cc-9.0", "--format", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let steps = &doc["targets"]["if_registers"][0];
    assert_eq!(steps["targets"][0], "cuda-cc-9.0", "{steps}");
    let b1024 = steps["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["threads"] == 1024)
        .unwrap();
    assert_eq!(b1024["launches_up_to"], 64, "{b1024}");
    assert_eq!(b1024["kept_up_to"], 32, "{b1024}");
}
