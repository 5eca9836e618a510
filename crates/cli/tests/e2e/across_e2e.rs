//! End to end: `compare` of the committed H100 run (2026-12-06, schema 5) and H200 run
//! (2026-12-01, schema 3) answers across the two GPUs in every format, its JSON within its
//! schema, and `--plot` draws a heat map per GPU and the portable map. Runs of different
//! kernels are refused with both files named.

use crate::support::schemas::{conforms, repo};
use crate::support::{blocksweep, stderr, succeeds};
use serde_json::Value;

const H100: &str = "docs/results/h100-2026-12-06/call1/runs/sweep-2026-12-06.json";
const H200: &str = "docs/results/h200-2026-12-01/call3/core/h200-2026-12-01.json";
const H100_SAXPY: &str = "docs/results/h100-2026-12-06/call1/runs/saxpy-2026-12-06.json";

fn path(p: &str) -> String {
    repo().join(p).to_str().unwrap().to_string()
}

#[test]
fn the_h100_and_the_h200_give_one_answer_across_both_gpus_within_its_schema() {
    let (a, b) = (path(H100), path(H200));
    let v = conforms(
        "compare",
        &succeeds(&["compare", &a, &b, "--format", "json"]),
    );
    let across = &v["across"];
    assert_eq!(across["kernel"], "grayscale");
    let gpus: Vec<&str> = across["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(gpus, ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]);
    let answer = &across["answer"];
    // Three APIs on each GPU: six columns, each with its best.
    let best = answer["best"].as_array().unwrap();
    assert_eq!(best.len(), 6, "{answer}");
    assert!(best
        .iter()
        .all(|b| b["gpu"].is_string() && b["api"].is_string()));
    let portable = answer["portable"].as_array().unwrap();
    assert!(!portable.is_empty(), "{answer}");
    let choice = &answer["choice"];
    assert_eq!(choice["portable"], true, "{choice}");
    let regret = choice["regret"].as_array().unwrap();
    assert_eq!(regret.len(), 6);
    // A portable choice is within 95 % of every column's best: regret ≤ 1/0.95.
    for r in regret {
        let x = r["regret"].as_f64().unwrap();
        assert!((1.0..=1.0 / 0.95).contains(&x), "{r}");
    }
    assert!(portable.contains(&choice["config"]), "{choice}");
    // The maps: one per GPU, then the portable one, whose cells are the worst of the GPUs'.
    let maps = across["maps"].as_array().unwrap();
    assert_eq!(maps.len(), 3);
    assert!(maps[2]["gpu"].is_null());
    let cell = |m: &Value, i: usize| m["cells"][i]["of_best"].as_f64();
    let n = maps[2]["cells"].as_array().unwrap().len();
    for i in 0..n {
        let worst = cell(&maps[0], i)
            .zip(cell(&maps[1], i))
            .map(|(x, y)| x.min(y));
        assert_eq!(cell(&maps[2], i), worst, "cell {i}");
    }
    // The portable map's cell is 1 ÷ a configuration's worst regret, so the least-regret
    // choice is the portable map's highest cell, at 1 ÷ its worst regret.
    let top = (0..n)
        .max_by(|&i, &j| {
            cell(&maps[2], i)
                .unwrap()
                .total_cmp(&cell(&maps[2], j).unwrap())
        })
        .unwrap();
    assert_eq!(maps[2]["cells"][top]["config"], choice["config"]);
    let worst = regret
        .iter()
        .map(|r| r["regret"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((cell(&maps[2], top).unwrap() - 1.0 / worst).abs() < 1e-9);
}

#[test]
fn the_answer_across_gpus_is_said_in_the_table_markdown_and_csv() {
    let (a, b) = (path(H100), path(H200));
    let table = succeeds(&["compare", &a, &b, "--wide"]);
    for needle in [
        "Across GPUs (grayscale)",
        "GPU NVIDIA H100 80GB HBM3: sweep-2026-12-06 (CUDA, Vulkan, OpenCL)",
        "GPU NVIDIA H200: h200-2026-12-01 (CUDA, Vulkan, OpenCL)",
        "Within 95 % of each GPU's and each API's best on every GPU",
        "Least-regret choice (portable):",
    ] {
        assert!(table.contains(needle), "{needle}:\n{table}");
    }
    let md = succeeds(&["compare", &a, &b, "--format", "markdown"]);
    assert!(md.contains("## Across GPUs (grayscale)"), "{md}");
    assert!(md.contains("| NVIDIA H200 "), "{md}");
    let csv = succeeds(&["compare", &a, &b, "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "gpu,api,params,block,grid,ms,of_best,best,portable,choice"
    );
    // 13 block sizes on three APIs of two GPUs.
    assert_eq!(lines.clone().count(), 13 * 3 * 2, "{csv}");
    let choices = lines.filter(|l| l.ends_with(",true")).count();
    assert_eq!(choices, 6, "the choice on each (GPU, API):\n{csv}");
}

#[test]
fn compare_plot_draws_a_map_per_gpu_and_the_portable_map() {
    let dir = crate::support::scratch("across-plot");
    let svg = dir.join("across.svg");
    let (a, b) = (path(H100), path(H200));
    let out = blocksweep()
        .args(["compare", &a, &b, "--plot", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(text.matches("class=\"heat-map\"").count(), 3);
    assert!(text.contains("data-title=\"NVIDIA H100 80GB HBM3: worst of its APIs\""));
    assert!(text.contains("data-title=\"portable: worst of every GPU\""));
    // Thirteen blocks by one grid policy, in each of the three maps.
    assert_eq!(text.matches("class=\"cell\"").count(), 13 * 3);
}

#[test]
fn runs_of_different_kernels_are_refused_with_each_file_named() {
    let (a, b) = (path(H200), path(H100_SAXPY));
    let out = blocksweep().args(["compare", &a, &b]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("different kernels (h200-2026-12-01: grayscale; saxpy-2026-12-06: saxpy)"),
        "{e}"
    );
}

/// The block × grid maps tuned on each GPU (the H100's of today's schema, the H200's of
/// schema 4): one answer across both, with no side-by-side table (tunes have no one grid).
#[test]
fn tunes_of_two_gpus_answer_across_them_within_the_schema() {
    let a = path("docs/results/h100-2026-12-06/call1/tune/grayscale-map.json");
    let b = path("docs/results/h200-2026-12-02/call14/tune/grayscale-map.json");
    let v = conforms(
        "compare",
        &succeeds(&["compare", &a, &b, "--format", "json"]),
    );
    assert!(v["runs"].as_array().unwrap().is_empty() && v["rows"].as_array().unwrap().is_empty());
    let answer = &v["across"]["answer"];
    assert_eq!(
        answer["gpus"],
        serde_json::json!(["NVIDIA H100 80GB HBM3", "NVIDIA H200"])
    );
    assert_eq!(answer["best"].as_array().unwrap().len(), 6);
    // Block × grid: the configurations name their grid policies.
    let grids: Vec<&str> = answer["portable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["grid"].as_str().unwrap())
        .collect();
    assert!(grids.contains(&"1w") && grids.contains(&"4w"), "{grids:?}");
    assert_eq!(answer["choice"]["regret"].as_array().unwrap().len(), 6);
    // The envelope lists the devices the tune files listed: three APIs of each GPU.
    assert_eq!(
        v["devices"].as_array().unwrap().len(),
        6,
        "{}",
        v["devices"]
    );
}

/// Bad input, one line and exit 2: `--plot` of runs of one GPU (nothing across to draw), and a
/// tune and a sweep of one GPU (neither merged nor answered across).
#[test]
fn what_compare_cannot_answer_is_refused_in_one_line() {
    let h200 = path(H200);
    let dir = crate::support::scratch("across-bad");
    let svg = dir.join("one.svg");
    crate::support::bad_input(
        &["compare", &h200, &h200, "--plot", svg.to_str().unwrap()],
        "--plot draws the maps across devices, and these runs measured one device",
    );
    assert!(!svg.exists());
    let tune = path("docs/results/h200-2026-12-02/call14/tune/grayscale-map.json");
    crate::support::bad_input(
        &["compare", &h200, &tune],
        "a tune (grayscale-map) and a sweep",
    );
}
