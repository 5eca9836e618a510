//! Several APIs in one run (Vulkan on lavapipe and OpenCL on PoCL in CI): the merged sweep,
//! the cross-API limits table, the SVG plot and `compare`.

use crate::support::{
    a_device_serves_several_apis, available, available_apis, bad_input, both, csv_field, csv_rows,
    flat, read_json, run_at, scratch, succeeds, succeeds_json, words,
};

#[test]
fn backend_all_csv_has_verified_rows_for_both_apis() {
    if !both() {
        return;
    }
    let s = succeeds(&words(
        "sweep --backend all --size 640x360 --format csv --reps 2 --warmups 1",
    ));
    // By column name: `,true,` alone would also match the ties_best column.
    let rows = csv_rows(&s);
    let header = &rows[0];
    for api in ["vulkan", "opencl"] {
        let mine: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == api).collect();
        assert_eq!(mine.len(), 13, "{api}: {s}");
        for r in mine {
            assert_eq!(csv_field(header, r, "verified"), "true", "{api}: {r:?}");
            assert_eq!(csv_field(header, r, "skipped"), "", "{api}: {r:?}");
        }
    }
}

#[test]
fn limits_side_by_side_with_spec_minimums() {
    if !both() {
        return;
    }
    let s = succeeds(&["limits", "--backend", "all"]);
    for needle in [
        "Vulkan: ",
        "OpenCL: ",
        "spec ≥",
        "maxComputeWorkGroupInvocations",
        "CL_DEVICE_MAX_WORK_GROUP_SIZE",
        "(128, 128, 64)",
        "max threads per block",
    ] {
        assert!(s.contains(needle), "limits lacks {needle:?}:\n{s}");
    }
    // Each API's row under the concept, with its value, its specification's minimum and its
    // native name.
    let row = |api: &str, name: &str| {
        s.lines()
            .find(|l| l.trim_start().starts_with(api) && l.contains(name))
            .unwrap_or_else(|| panic!("no {api} row naming {name}:\n{s}"))
            .to_string()
    };
    assert!(row("Vulkan", "maxComputeWorkGroupInvocations").contains(" 128 "));
    assert!(row("OpenCL", "CL_DEVICE_MAX_WORK_GROUP_SIZE").contains(" 1 "));
    // ≠ means "the APIs disagree about one device": on different devices it is not marked.
    if a_device_serves_several_apis() {
        // One GPU seen by both APIs: the legend counts the concepts they disagree on.
        assert!(
            s.contains("≠: the APIs report different values") || s.contains("different devices"),
            "{s}"
        );
    } else {
        assert!(!s.contains("≠:") && !s.contains("  ≠\n"), "{s}");
        assert!(s.contains("different devices"), "{s}");
    }
}

#[test]
fn plot_is_a_well_formed_svg_with_axes_and_legend() {
    if !both() {
        return;
    }
    let svg = scratch("plot").join("plot.svg");
    let mut args =
        words("sweep --backend all --size 160x90 --blocks 32,64,128,256 --reps 2 --format csv");
    args.extend(["--plot", svg.to_str().unwrap()]);
    succeeds(&args);
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the plot parses as XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect();
    let has = |needle: &str| texts.iter().any(|t| t.contains(needle));
    for needle in [
        "threads per block (one slot per size, as in the table)",
        "GB/s",
        "Vulkan (copy",
        "OpenCL (copy",
        "device-to-device copy",
        "within 95 % of that API's best",
        "128",
    ] {
        assert!(has(needle), "SVG has no text {needle:?}: {texts:?}");
    }
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .count();
    assert!(lines >= 2, "one line per API, found {lines} polylines");
}

#[test]
fn compare_two_runs_and_refuse_foreign_files() {
    if !available("opencl") {
        return;
    }
    let dir = scratch("compare");
    let (a, b, bad) = (dir.join("a.json"), dir.join("b.json"), dir.join("bad.json"));
    let (a, b, bad) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        bad.to_str().unwrap(),
    );
    for (path, blocks) in [(a, "32,64,128"), (b, "64,128,256")] {
        let mut args = words("sweep --backend opencl --size 160x90 --reps 2 --blocks");
        args.extend([blocks, "-o", path]);
        succeeds(&args);
    }
    let s = succeeds(&["compare", a, b]);
    assert!(
        s.contains("[1] a: OpenCL") && s.contains("[2] b: OpenCL"),
        "{s}"
    );
    assert!(
        s.contains("not swept"),
        "mismatched block lists are shown, not dropped: {s}"
    );
    assert!(s.contains("fastest"), "{s}");
    std::fs::write(bad, "{ this is not json").unwrap();
    bad_input(&["compare", a, bad], "not JSON");
    std::fs::write(bad, r#"{"name": "something else"}"#).unwrap();
    bad_input(&["compare", a, bad], "not a blocksweep report");
    bad_input(&["compare", a, "/no/such/file.json"], "/no/such/file.json");
    // One file holding one API of one device has nothing to compare it with.
    bad_input(&["compare", a], "one run only");
}

#[test]
fn validate_shows_what_each_api_runs_and_rejects() {
    if !both() {
        return;
    }
    let v = succeeds_json(&words("validate --backend all --format json"));
    let checks = v["checks"].as_array().unwrap();
    let find = |api: &str, claim: &str| {
        checks
            .iter()
            .find(|c| c["api"] == api && c["assumption"]["claim"].as_str().unwrap().contains(claim))
            .unwrap_or_else(|| panic!("no check {api} {claim}"))
    };
    // lavapipe's limit is 1024 invocations: the product rule refuses 32x32x2, naming the limit.
    let c = find("vulkan", "32x32x2");
    assert_eq!(c["outcome"]["kind"], "rejected", "{c}");
    // The claim says "rejected", and lavapipe rejects it: the verdict the cell leads with.
    assert_eq!(c["assumption"]["expects"], "refused", "{c}");
    assert_eq!(c["holds"], true, "{c}");
    assert!(
        c["outcome"]["message"]
            .as_str()
            .unwrap()
            .contains("maxComputeWorkGroupInvocations"),
        "{c}"
    );
    assert!(c["limits_say"]
        .as_str()
        .unwrap()
        .contains("maxComputeWorkGroupInvocations"));
    // Within every limit: runs and verifies on both.
    for api in ["vulkan", "opencl"] {
        assert_eq!(find(api, "128 threads")["outcome"]["kind"], "verified");
        assert_eq!(find(api, "128 threads")["holds"], true);
        assert_eq!(find(api, "100 threads")["outcome"]["kind"], "verified");
    }
    let s = succeeds(&["validate", "--backend", "all"]);
    assert!(
        s.contains("Who guarantees it:")
            && s.contains("holds: runs ")
            && s.contains("holds: rejected ["),
        "{s}"
    );
    // The rejection's own words, under the table.
    assert!(
        s.contains("Vulkan: workgroup 32x32x2 = 2048 invocations > maxComputeWorkGroupInvocations"),
        "{s}"
    );
}

#[test]
fn vulkan_validation_layers_stay_silent_through_a_cli_sweep() {
    if !available("vulkan") {
        return;
    }
    let args =
        words("sweep --backend vulkan --vk-validation --size 160x90 --blocks 32,100,256 --reps 2");
    let (code, stdout, stderr) = run_at("200", &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !stderr.contains("validation:"),
        "the layers spoke: {stderr}"
    );
    // The output says the layer was on, and that it was silent.
    assert!(
        stdout.contains(
            "Validation: VK_LAYER_KHRONOS_validation on, with synchronization validation; it \
             raised no message"
        ),
        "{stdout}"
    );
}

#[test]
fn limits_json_and_csv_carry_native_names() {
    if !available("opencl") {
        return;
    }
    let v = succeeds_json(&words("limits --backend opencl --format json"));
    assert_eq!(
        v["limits"][0]["limits"]["max_threads_per_block"]["name"],
        "CL_DEVICE_MAX_WORK_GROUP_SIZE"
    );
    let csv = succeeds(&words("limits --backend opencl --format csv"));
    assert!(csv.starts_with("api,concept,value,native_name"), "{csv}");
    assert!(
        csv.lines().any(|l| l.starts_with("opencl,max_block_dims,")
            && l.contains("CL_DEVICE_MAX_WORK_ITEM_SIZES")),
        "{csv}"
    );
}

/// A size one asked API refuses is never portable, and the answer and the
/// JSON name the API and the limit (its name and value).
#[test]
fn a_size_vulkan_refuses_is_named_and_never_portable() {
    if !both() {
        return;
    }
    let json = scratch("refused").join("refused.json");
    let mut args = words("sweep --backend all --size 256x256 --blocks 2048 --reps 2 --warmups 1");
    args.extend(["-o", json.to_str().unwrap()]);
    let s = succeeds(&args);
    let phrases = flat(&s);
    assert!(
        phrases.contains("2048 (Vulkan: 2048 threads > maxComputeWorkGroupInvocations = 1024"),
        "{s}"
    );
    if available("webgpu") {
        let webgpu = "WebGPU: 2048 threads > maxComputeInvocationsPerWorkgroup = 1024";
        assert!(phrases.contains(webgpu), "{s}");
    }
    assert!(phrases.contains("No block size is within 95 %"), "{s}");
    let v = read_json(&json);
    let p = &v["answer"];
    let asked: Vec<&str> = available_apis();
    assert_eq!(p["apis"], serde_json::json!(asked), "{p}");
    assert_eq!(p["portable"], serde_json::json!([]), "{p}");
    let short = &p["exceptions"][0]["short"][0];
    assert_eq!(short["api"], "vulkan", "{p}");
    assert!(
        short["why"]
            .as_str()
            .unwrap()
            .contains("maxComputeWorkGroupInvocations = 1024"),
        "{p}"
    );
}
