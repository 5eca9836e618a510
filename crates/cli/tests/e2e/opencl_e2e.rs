//! End to end on the OpenCL device this machine has (PoCL in CI).

use crate::support::{
    available, bad_input, csv_rows, read_json, scratch, succeeds, succeeds_at, words,
};

#[test]
fn default_sweep_gives_13_verified_rows() {
    if !available("opencl") {
        return;
    }
    let s = succeeds(&words(
        "sweep --backend opencl --size 640x360 --reps 3 --warmups 1 --format csv",
    ));
    let rows = csv_rows(&s);
    let head = &rows[0];
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let body = &rows[1..];
    assert_eq!(body.len(), 13, "{rows:?}");
    let blocks: Vec<&str> = body.iter().map(|r| r[col("block")].as_str()).collect();
    assert_eq!(
        blocks,
        ["16", "32", "64", "96", "100", "128", "160", "192", "256", "384", "512", "768", "1024"]
    );
    for r in body {
        assert_eq!(r[col("api")], "opencl");
        assert_eq!(r[col("verified")], "true", "{r:?}");
        assert!(r[col("ms_mean")].parse::<f64>().unwrap() > 0.0);
    }
    // One best row, and each row's "of best" is the fastest mean over its own, computed here
    // from the ms column (two rows may read 1.0000: a tie is not an error).
    let ms = |r: &Vec<String>| r[col("ms_mean")].parse::<f64>().unwrap();
    let fastest = body.iter().map(ms).fold(f64::INFINITY, f64::min);
    for r in body {
        let of_best: f64 = r[col("of_best")].parse().unwrap();
        assert!(
            (of_best - fastest / ms(r)).abs() < 1e-3,
            "{r:?}: fastest {fastest} ms"
        );
    }
    let best: Vec<&Vec<String>> = body
        .iter()
        .filter(|r| r[col("verdict")] == "best")
        .collect();
    assert_eq!(best.len(), 1, "exactly one best row: {rows:?}");
    assert_eq!(ms(best[0]), fastest, "{rows:?}");
}

#[test]
fn verbose_table_has_the_apis_header_and_summary() {
    if !available("opencl") {
        return;
    }
    // Unwrapped, so that phrases read whole.
    let s = succeeds_at(
        "1000",
        &words("sweep --backend opencl --size 320x180 --blocks 64,100,256 --reps 2 --verbose"),
    );
    // In OpenCL's words: work-items per work-group, sub-groups; a CPU device has no
    // residency columns (blk/SM, occupancy) and says why.
    for needle in [
        "wi/wg",
        "wi/wg: work-items per work-group",
        "sub-groups",
        "idle",
        "wg\n",
        "count",
        "GB/s",
        "of best",
        "Image: 320 x 180",
        "2 timed dispatches per row (fixed by --reps) after 3 warm-ups",
        "resolution",
        "Fastest measured:",
        "of 3 configurations reach at least 95 percent",
    ] {
        assert!(s.contains(needle), "table lacks {needle:?}:\n{s}");
    }
    for absent in ["thr/blk", "blk/SM", "warps/SM"] {
        assert!(
            !s.contains(absent),
            "CUDA's words in an OpenCL table: {absent:?}:\n{s}"
        );
    }
}

#[test]
fn json_output_file_and_partial_rewrite() {
    if !available("opencl") {
        return;
    }
    let dir = scratch("json");
    let path = dir.join("run.json");
    let mut args = words("sweep --backend opencl --size 128x128 --blocks 32,64 --reps 2");
    args.extend(["--output", path.to_str().unwrap()]);
    // Written to the file and printed too (hyperfine's way); the file holds JSON, stdout the
    // table.
    let stdout = succeeds(&args);
    assert!(
        stdout.starts_with("Answer\n")
            && stdout.contains("wi/wg")
            && !stdout.contains("schema_version"),
        "the table goes to stdout as well: {stdout}"
    );
    let v = read_json(&path);
    assert_eq!(v["schema_version"], blocksweep_core::report::SCHEMA_VERSION);
    let r = &v["results"][0];
    assert_eq!(r["api"], "opencl");
    assert_eq!(r["rows"].as_array().unwrap().len(), 2);
    let timing = &r["rows"][0]["timing"];
    assert_eq!(timing["samples_ms"].as_array().unwrap().len(), 2);
    assert_eq!(
        (timing["reps"].as_u64(), timing["discipline"].as_str()),
        (Some(2), Some("batch"))
    );
    assert!(r["timer"]["resolution_ns"].as_f64().unwrap() > 0.0);
    assert!(r["limits"]["max_threads_per_block"]["name"]
        .as_str()
        .unwrap()
        .starts_with("CL_"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn oversize_blocks_are_skipped_or_refused() {
    if !available("opencl") {
        return;
    }
    let sweep = |blocks: &'static str| {
        let mut args = words("sweep --backend opencl --size 64x64 --blocks");
        args.push(blocks);
        args
    };
    // Mixed with a block that runs: a skipped row naming the limit, exit 0.
    let mut mixed = sweep("64,1000000");
    mixed.extend(words("--reps 1 --format csv"));
    let s = succeeds(&mixed);
    assert!(s.contains("CL_DEVICE_MAX_WORK_GROUP_SIZE"), "{s}");
    // Only impossible blocks: nothing can run, exit 2 with the reasons.
    bad_input(&sweep("1000000"), "no block size can run");
    bad_input(&sweep("1024x1024x64"), "threads >");
}

#[test]
fn devices_and_limits_name_native_queries() {
    if !available("opencl") {
        return;
    }
    assert!(succeeds(&["devices"]).contains("OpenCL #0"));
    let s = succeeds(&["limits", "--backend", "opencl"]);
    for n in [
        "CL_DEVICE_MAX_WORK_GROUP_SIZE",
        "CL_DEVICE_MAX_WORK_ITEM_SIZES",
        "CL_DEVICE_MAX_COMPUTE_UNITS",
        "CL_KERNEL_WORK_GROUP_SIZE",
    ] {
        assert!(s.contains(n), "limits lack {n}:\n{s}");
    }
}

#[test]
fn a_frame_too_large_for_the_device_is_refused_before_allocation() {
    if !available("opencl") {
        return;
    }
    // 4.3e9 pixels fit the 32-bit launch fields but not a CI machine's device or host memory
    // (17 GB a plane); the refusal must come before 100 GB of host planes are generated.
    bad_input(
        &["sweep", "--backend", "opencl", "--size", "65535x65535"],
        "frame 65535x65535",
    );
}

/// `--cl-build-options`, declared by the OpenCL driver, reaches clBuildProgram: an option the
/// compiler knows builds and sweeps; one it does not fails the run, naming the option.
#[test]
fn the_drivers_build_options_reach_the_compiler() {
    if !available("opencl") {
        return;
    }
    let quick = words("limits --backend opencl --format json --cl-build-options");
    succeeds(&[&quick[..], &["-cl-mad-enable"]].concat());
    let out = crate::support::blocksweep()
        .args([&quick[..], &["-no-such-option"]].concat())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("CL_INVALID_BUILD_OPTIONS") && err.contains("-no-such-option"),
        "{err}"
    );
}
