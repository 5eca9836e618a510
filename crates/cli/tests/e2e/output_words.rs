//! What a run says, through the real binary: a merged run answers first, says which devices
//! the APIs ran on, and speaks each API's words; a CPU run says what carries over to a GPU;
//! `compare` warns when runs differ.

use crate::support::{
    a_device_serves_several_apis, available, both, csv_field, csv_rows, flat, physical_devices,
    quick_sweep, run_at, scratch, succeeds_at,
};

#[test]
fn a_merged_run_answers_first_and_names_each_apis_device() {
    if !both() {
        return;
    }
    let d = scratch("answer");
    let csv = d.join("run.csv");
    let mut args = quick_sweep("all", &["--verbose"]);
    args.extend(["-o", csv.to_str().unwrap()]);
    let s = succeeds_at("100", &args);
    let first: Vec<&str> = s.lines().take(2).collect();
    assert_eq!(first[0], "Answer", "{s}");
    assert!(
        first[1].starts_with("- ") && first[1].contains("95 % of each API's best"),
        "the portable answer comes first: {s}"
    );
    for line in ["- Vulkan on ", "- OpenCL on "] {
        let at = s.find(line).unwrap_or_else(|| panic!("no {line:?}:\n{s}"));
        let item = flat(&s[at..].lines().take(4).collect::<Vec<_>>().join("\n"));
        assert!(
            item.contains("fastest") && item.contains("sizes within 95 %"),
            "{item}"
        );
    }
    // The answer comes before any table.
    assert!(s.find("Answer").unwrap() < s.find("Image:").unwrap(), "{s}");
    if a_device_serves_several_apis() && physical_devices().len() == 1 {
        assert!(s.contains("All APIs on one device"), "{s}");
    } else if a_device_serves_several_apis() {
        // Vulkan and WebGPU on lavapipe, OpenCL on PoCL: which APIs shared which device.
        assert!(s.contains("APIs side by side, on 2 devices"), "{s}");
        assert!(flat(&s).contains("Vulkan and WebGPU on llvmpipe"), "{s}");
        assert!(!s.contains("Each API ran on its own device"), "{s}");
    } else {
        assert!(!s.contains("All APIs on one device"), "{s}");
        assert!(
            s.contains("APIs side by side, each on its own device"),
            "{s}"
        );
        assert!(
            s.contains("Each API ran on its own device: Vulkan on "),
            "{s}"
        );
    }
    // Each section in its API's words; the merged legend maps the neutral words.
    assert!(s.contains("inv/wg: invocations per workgroup"), "{s}");
    assert!(s.contains("wi/wg: work-items per work-group"), "{s}");
    assert!(
        !s.contains("thr/blk"),
        "CUDA's words where CUDA did not run:\n{s}"
    );
    let phrases = flat(&s);
    assert!(
        phrases.contains("block: threads per block (Vulkan workgroup of invocations, OpenCL work-group of work-items"),
        "{s}"
    );
    assert!(phrases.contains("grid: blocks launched"), "{s}");
    // Ties and spread stay visible: each answer's ≈ list is the rows the CSV's verdict calls
    // tied with the best (not the best itself, nor a row below 95 % the noise cannot rank).
    assert!(s.contains("spread") && s.contains('±'), "{s}");
    let rows = csv_rows(&std::fs::read_to_string(&csv).unwrap());
    for (key, name) in [("vulkan", "Vulkan"), ("opencl", "OpenCL")] {
        let tied: Vec<&str> = rows[1..]
            .iter()
            .filter(|r| r[0] == key && csv_field(&rows[0], r, "verdict") == "tied")
            .map(|r| csv_field(&rows[0], r, "block"))
            .collect();
        let item = &phrases[phrases.find(&format!("- {name} on ")).unwrap()..];
        let item = &item[..item.find("sizes within 95 %").unwrap()];
        match item.split_once("within the measurement noise of it (≈): ") {
            Some((_, list)) => {
                let said: Vec<&str> = list.split(';').next().unwrap().split(", ").collect();
                assert_eq!(said, tied, "{name}'s ≈ list against the CSV: {item}");
            }
            None => {
                assert!(tied.is_empty(), "{name}: the CSV ties {tied:?}: {item}");
                assert!(
                    item.contains("no other size is within the measurement noise"),
                    "{item}"
                );
            }
        }
    }
}

#[test]
fn a_cpu_run_says_once_what_carries_over_to_a_gpu() {
    if !available("opencl") {
        return;
    }
    let cpu = physical_devices()
        .iter()
        .any(|p| p["kind"] == "cpu" && p["members"][0]["api"] == "opencl");
    let s = succeeds_at("1000", &quick_sweep("opencl", &["--verbose"]));
    if !cpu {
        assert!(!s.contains("What carries over"), "{s}");
        return;
    }
    assert_eq!(s.matches("What carries over to a GPU").count(), 1, "{s}");
    assert!(
        s.contains("which block size is fastest here says nothing about a GPU"),
        "{s}"
    );
    // A CPU has no residency: those columns are left out rather than filled with dashes.
    let header = s.lines().find(|l| l.starts_with("wi/wg")).unwrap();
    assert!(
        !header.contains("occ") && !header.contains("/CU"),
        "{header}"
    );
    // Single API: the fastest size and the count within 95 % come first.
    let first: Vec<&str> = s.lines().take(2).collect();
    assert_eq!(first[0], "Answer");
    assert!(
        first[1].contains("fastest") && first[1].contains("sizes within 95 % of it"),
        "{s}"
    );
}

#[test]
fn compare_warns_when_runs_differ() {
    if !available("opencl") {
        return;
    }
    let d = scratch("warn");
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for (path, extra) in [
        (a, ["--size", "160x90", "--reps", "2"]),
        (b, ["--size", "96x64", "--reps", "3"]),
    ] {
        let mut args = vec!["sweep", "--backend", "opencl", "--blocks", "32,64"];
        args.extend(extra);
        args.extend(["-o", path]);
        succeeds_at("100", &args);
    }
    // The table leads with the warnings; stderr repeats none of them.
    let (code, stdout, stderr) = run_at("100", &["compare", a, b]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let stdout = flat(&stdout);
    assert!(
        stdout.contains("Warning: The runs used different frame sizes (a: 160 x 90; b: 96 x 64)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Warning: The runs repeated differently"),
        "{stdout}"
    );
    // JSON on stdout: stderr says them.
    let (code, _, stderr) = run_at("100", &["compare", a, b, "--format", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 2, "frame and repetitions: {stderr}");
    assert!(warnings[0].contains("different frame sizes (a: 160 x 90; b: 96 x 64)"));
    assert!(warnings[1].contains("repeated differently"), "{stderr}");
    // The same run twice: nothing to warn about.
    let (code, _, stderr) = run_at("100", &["compare", a, a]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
