//! Issue 12 and issue 11 point 4, through the real binary: every command's text fits 100
//! columns at `COLUMNS=100`; every command honours every format it lists; `-o` prints as well
//! as writes; an unknown `-o` extension is bad input; a merged run answers first, says which
//! devices the APIs ran on, and speaks each API's words; a CPU run says what carries over to a
//! GPU; `compare` warns when runs differ. Plus the H200 run of 2026-11-30 rendered in each
//! API's words (no GPU needed).

mod common;

use std::path::PathBuf;

use blocksweep_core::report::layout::Layout;
use blocksweep_core::report::{parse_report, Render, Report};
use common::{api, available, bad_input, blocksweep};

const H200: &str = include_str!("../../core/src/report/testdata/h200-2026-11-30-v2.json");

fn h200() -> Report {
    for d in blocksweep_drivers::all() {
        blocksweep_core::Api::register(d.api());
    }
    let mut r = parse_report(H200).expect("the fixture parses");
    r.refresh_answer();
    r
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("blocksweep-design-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the binary at `COLUMNS=100`; returns (exit code, stdout, stderr).
fn run_at(columns: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = blocksweep()
        .env("COLUMNS", columns)
        .env_remove("BLOCKSWEEP_WIDE")
        .args(args)
        .output()
        .expect("run blocksweep");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok_at(columns: &str, args: &[&str]) -> String {
    let (code, stdout, stderr) = run_at(columns, args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    stdout
}

/// The widest line, in characters, with the line itself for the message.
fn widest(text: &str) -> (usize, String) {
    text.lines()
        .map(|l| (l.chars().count(), l.to_string()))
        .max_by_key(|(n, _)| *n)
        .unwrap_or_default()
}

fn assert_fits(text: &str, width: usize, what: &str) {
    let (n, line) = widest(text);
    assert!(
        n <= width,
        "{what}: a line of {n} characters:\n{line}\n\n{text}"
    );
}

const QUICK: [&str; 6] = ["--size", "320x180", "--reps", "2", "--warmups", "1"];

#[test]
fn the_h200_run_reads_in_each_apis_words_within_100_columns() {
    let r = h200();
    let s = r.table(Layout::new(100));
    if std::env::var_os("SHOW").is_some() {
        println!("{s}");
    }
    assert_fits(&s, 100, "H200 table");
    assert!(
        s.starts_with(
            "Answer\n- Within 95 % of each API's best on all three APIs (CUDA, Vulkan, OpenCL):"
        ),
        "{s}"
    );
    let head = |api: &str| {
        let at = s.find(&format!("\n{api}: NVIDIA H200")).unwrap();
        s[at..].to_string()
    };
    for (api, size, warps, per_mp) in [
        ("CUDA", "thr/blk", "warps", "blk/SM"),
        ("Vulkan", "inv/wg", "subgroups", "wg/SM"),
        ("OpenCL", "wi/wg", "sub-groups", "wg/CU"),
    ] {
        let section = head(api);
        let header = section
            .lines()
            .find(|l| l.trim_start().starts_with(size))
            .unwrap_or_else(|| panic!("{api}: no header starting {size}:\n{section}"));
        assert!(
            header.contains(warps) && header.contains(per_mp),
            "{api}: {header}"
        );
    }
    // Long per-row notes are footnotes, not a 100-character cell.
    assert!(s.contains("ok [1]"), "{s}");
    assert!(s.contains("[1] 384: ran although 384 threads > CL_KERNEL_WORK_GROUP_SIZE"));
    // The merged table: one device, neutral words mapped in the legend.
    assert!(s.contains("All APIs on one device\n"), "{s}");
    assert!(s.contains("OpenCL/CUDA"), "{s}");
    assert!(
        s.contains("CUDA thread block of threads, Vulkan workgroup of invocations, OpenCL"),
        "{s}"
    );
    assert!(!s.contains("own device"), "{s}");
    // A GPU run says nothing about CPUs.
    assert!(!s.contains("What carries over"), "{s}");
    // Wide: every column, nothing left out.
    let wide = r.table(Layout::WIDE);
    assert!(wide.contains("sg/SM"), "{wide}");
    assert!(!wide.contains("Left out"), "{wide}");
    // Markdown: no cell as long as a sentence.
    let md = r.markdown(Layout::new(100));
    for line in md.lines().filter(|l| l.starts_with('|')) {
        assert!(line.chars().count() <= 160, "{line}");
    }
    assert!(md.contains("## All APIs on one device"), "{md}");
}

#[test]
fn the_h200_limits_fit_100_columns_and_mark_what_the_apis_disagree_on() {
    use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};
    let r = h200();
    let views: Vec<ApiLimits> = r
        .results
        .iter()
        .map(|x| ApiLimits {
            device: x.device.clone(),
            limits: x.limits.clone(),
            kernel: x.kernel.clone(),
            timer: x.timer.clone(),
        })
        .collect();
    let report = LimitsReport {
        groups: vec![LimitsGroup {
            heading: None,
            one_physical_device: true,
            views,
        }],
    };
    let s = report.table(Layout::new(100));
    if std::env::var_os("SHOW").is_some() {
        println!("{s}");
    }
    assert_fits(&s, 100, "H200 limits");
    // The kernel's own limit: 1024 in CUDA, 256 in NVIDIA's OpenCL for the same code.
    assert!(s.contains("kernel: max block size  ≠"), "{s}");
    assert!(
        s.contains("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        "no name is cut: {s}"
    );
}

#[test]
fn every_command_fits_100_columns() {
    let (vk, cl) = (available(api("vulkan")), available(api("opencl")));
    if !(vk || cl) {
        return;
    }
    let d = scratch("fit");
    let a = d.join("a.json");
    let b = d.join("b.json");
    let mut runs: Vec<Vec<String>> = vec![
        vec!["devices".into()],
        vec!["limits".into()],
        vec!["validate".into()],
        vec!["limits".into(), "--backend".into(), "all".into()],
        vec!["validate".into(), "--backend".into(), "all".into()],
    ];
    let mut apis = Vec::new();
    if vk {
        apis.push("vulkan");
    }
    if cl {
        apis.push("opencl");
    }
    for a in &apis {
        runs.push(vec!["limits".into(), "--backend".into(), a.to_string()]);
        let mut sweep: Vec<String> = ["sweep", "--backend", a].map(String::from).to_vec();
        sweep.extend(QUICK.map(String::from));
        runs.push(sweep);
    }
    let mut merged: Vec<String> = ["sweep", "--backend", "all"].map(String::from).to_vec();
    merged.extend(QUICK.map(String::from));
    runs.push(merged.clone());
    for (path, size) in [(&a, "320x180"), (&b, "160x90")] {
        let mut args = merged.clone();
        args[4] = size.into();
        args.extend(["-o".into(), path.to_string_lossy().into_owned()]);
        runs.push(args);
    }
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let s = ok_at("100", &args);
        assert_fits(&s, 100, &args.join(" "));
    }
    let cmp = ok_at(
        "100",
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_fits(&cmp, 100, "compare");
    // And narrower still, where a terminal is 80 wide.
    let s = ok_at("80", &["validate"]);
    assert_fits(&s, 80, "validate at 80");
}

fn both() -> bool {
    // Evaluate both, so a CI run that requires both fails on whichever is missing.
    let v = available(api("vulkan"));
    let o = available(api("opencl"));
    v && o
}

#[test]
fn a_merged_run_answers_first_and_names_each_apis_device() {
    if !both() {
        return;
    }
    let mut args = vec!["sweep", "--backend", "all"];
    args.extend(QUICK);
    let s = ok_at("100", &args);
    let first: Vec<&str> = s.lines().take(2).collect();
    assert_eq!(first[0], "Answer", "{s}");
    assert!(
        first[1].starts_with("- ") && first[1].contains("95 % of each API's best"),
        "the portable answer comes first: {s}"
    );
    for line in ["- Vulkan on ", "- OpenCL on "] {
        let at = s.find(line).unwrap_or_else(|| panic!("no {line:?}:\n{s}"));
        let item: String = s[at..]
            .lines()
            .take(3)
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            item.contains("fastest") && item.contains("sizes within 95 %"),
            "{item}"
        );
    }
    // The answer comes before any table.
    assert!(s.find("Answer").unwrap() < s.find("Image:").unwrap(), "{s}");
    let devices: serde_json::Value =
        serde_json::from_str(&ok_at("100", &["devices", "--format", "json"])).unwrap();
    let shared = devices["physical_devices"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["members"].as_array().unwrap().len() > 1);
    if shared {
        assert!(s.contains("All APIs on one device"), "{s}");
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
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("block: threads per block (Vulkan workgroup of invocations, OpenCL work-group of work-items)"),
        "{s}"
    );
    assert!(flat.contains("grid: blocks launched"), "{s}");
    // Ties and spread stay visible.
    assert!(
        s.contains(" ≈") && s.contains("spread") && s.contains('±'),
        "{s}"
    );
}

#[test]
fn a_cpu_run_says_once_what_carries_over_to_a_gpu() {
    if !available(api("opencl")) {
        return;
    }
    let devices = ok_at("100", &["devices", "--format", "json"]);
    let mut args = vec!["sweep", "--backend", "opencl"];
    args.extend(QUICK);
    let s = ok_at("1000", &args);
    let v: serde_json::Value = serde_json::from_str(&devices).unwrap();
    let cpu = v["physical_devices"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["kind"] == "cpu" && p["members"][0]["api"] == "opencl");
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
fn output_files_are_written_and_the_results_printed() {
    if !available(api("opencl")) {
        return;
    }
    let d = scratch("print");
    let csv = d.join("run.csv");
    let mut args = vec!["sweep", "--backend", "opencl"];
    args.extend(QUICK);
    args.extend(["-o", csv.to_str().unwrap()]);
    let s = ok_at("100", &args);
    assert!(s.starts_with("Answer"), "the table on stdout: {s}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("api,device,block,"), "{text}");
    // --quiet: the files only.
    let mut args = vec!["sweep", "--backend", "opencl", "--quiet"];
    args.extend(QUICK);
    args.extend(["-o", csv.to_str().unwrap()]);
    assert_eq!(ok_at("100", &args), "", "--quiet prints nothing");
    // A file that is stdout itself is not printed twice.
    let mut args = vec!["sweep", "--backend", "opencl", "--format", "csv"];
    args.extend(QUICK);
    args.extend(["-o", "/dev/stdout"]);
    let s = ok_at("100", &args);
    assert_eq!(s.matches("api,device,block,").count(), 1, "{s}");
}

#[test]
fn an_output_extension_that_names_no_format_is_bad_input_unless_format_says() {
    if !available(api("opencl")) {
        return;
    }
    let d = scratch("ext");
    let xlsx = d.join("run.xlsx");
    let x = xlsx.to_str().unwrap();
    bad_input(
        &["sweep", "--backend", "opencl", "--size", "64x64", "-o", x],
        ".xlsx names no output format",
    );
    assert!(!xlsx.exists(), "nothing written");
    let mut args = vec!["sweep", "--backend", "opencl", "--format", "csv", "-o", x];
    args.extend(QUICK);
    ok_at("100", &args);
    let text = std::fs::read_to_string(&xlsx).unwrap();
    assert!(
        text.starts_with("api,device,block,"),
        "--format csv wins: {text}"
    );
    // .txt and .md name theirs.
    let (txt, md) = (d.join("run.txt"), d.join("run.md"));
    let mut args = vec!["sweep", "--backend", "opencl"];
    args.extend(QUICK);
    args.extend(["-o", txt.to_str().unwrap(), "-o", md.to_str().unwrap()]);
    ok_at("100", &args);
    assert!(std::fs::read_to_string(&txt)
        .unwrap()
        .starts_with("Answer\n"));
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("# blocksweep results"));
}

/// Checks that `text` is `format` (csv: a header and rows of as many fields; json: parses;
/// markdown: a table).
fn assert_format(text: &str, format: &str, what: &str) {
    match format {
        "json" => {
            serde_json::from_str::<serde_json::Value>(text)
                .unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{text}"));
        }
        "csv" => {
            let lines: Vec<&str> = text.lines().collect();
            assert!(lines.len() >= 2, "{what}: {text}");
            assert!(
                lines[0]
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == ','),
                "{what}: not a CSV header: {}",
                lines[0]
            );
        }
        "markdown" => assert!(
            text.lines().any(|l| l.starts_with("| "))
                && (text.contains("| --") || text.contains("| :-")),
            "{what}: no markdown table:\n{text}"
        ),
        _ => unreachable!(),
    }
}

#[test]
fn every_command_honours_every_format() {
    let apis: Vec<&str> = ["vulkan", "opencl"]
        .into_iter()
        .filter(|k| available(api(k)))
        .collect();
    if apis.is_empty() {
        return;
    }
    let d = scratch("formats");
    let a = d.join("a.json");
    let mut args = vec!["sweep", "--backend", apis[0]];
    args.extend(QUICK);
    args.extend(["-o", a.to_str().unwrap()]);
    ok_at("100", &args);
    let a = a.to_str().unwrap();
    for format in ["csv", "json", "markdown"] {
        for cmd in [
            vec!["devices"],
            vec!["limits"],
            vec!["limits", "--backend", apis[0]],
            vec!["validate"],
            vec!["compare", a, a],
        ] {
            let mut args = cmd.clone();
            args.extend(["--format", format]);
            let s = ok_at("100", &args);
            assert_format(&s, format, &args.join(" "));
        }
    }
    // compare's CSV: one line per (column, block size).
    let csv = ok_at("100", &["compare", a, a, "--format", "csv"]);
    assert!(
        csv.starts_with("column,label,api,device,frame,discipline,block,"),
        "{csv}"
    );
    // devices' CSV: one line per API device, and the unavailable APIs with their reasons.
    let csv = ok_at("100", &["devices", "--format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.starts_with(&format!("{},0,", apis[0]))),
        "{csv}"
    );
}

#[test]
fn compare_warns_when_runs_differ() {
    if !available(api("opencl")) {
        return;
    }
    let d = scratch("warn");
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    for (path, extra) in [
        (&a, ["--size", "160x90", "--reps", "2"]),
        (&b, ["--size", "96x64", "--reps", "3"]),
    ] {
        let mut args = vec!["sweep", "--backend", "opencl", "--blocks", "32,64"];
        args.extend(extra);
        args.extend(["-o", path.to_str().unwrap()]);
        ok_at("100", &args);
    }
    let (code, stdout, stderr) = run_at(
        "100",
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 2, "frame and repetitions: {stderr}");
    assert!(warnings[0].contains("different frame sizes (column 1: 160 x 90; column 2: 96 x 64)"));
    assert!(warnings[1].contains("repeated differently"), "{stderr}");
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Warning: The runs used different frame sizes"),
        "{stdout}"
    );
    // The same run twice: nothing to warn about.
    let (_, _, stderr) = run_at(
        "100",
        &["compare", a.to_str().unwrap(), a.to_str().unwrap()],
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn wide_lifts_the_width() {
    let apis: Vec<&str> = ["vulkan", "opencl"]
        .into_iter()
        .filter(|k| available(api(k)))
        .collect();
    if apis.is_empty() {
        return;
    }
    let narrow = ok_at("60", &["limits", "--backend", apis[0]]);
    assert_fits(&narrow, 60, "limits at 60");
    let wide = ok_at("60", &["limits", "--backend", apis[0], "--wide"]);
    assert!(widest(&wide).0 > 60, "--wide does not wrap:\n{wide}");
    let out = blocksweep()
        .env("COLUMNS", "60")
        .env("BLOCKSWEEP_WIDE", "1")
        .args(["limits", "--backend", apis[0]])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), wide);
}

#[test]
fn wide_shows_every_column_on_one_line_per_row() {
    let r = h200();
    // BLOCKSWEEP_WIDE and COLUMNS=1000 both lift the limit (the CLI maps them to this).
    let s = r.table(Layout::new(1000));
    let header = s
        .lines()
        .find(|l| l.contains("inv/wg") && l.contains("check"))
        .unwrap();
    assert!(
        header.contains("sg/SM") && header.contains("% copy"),
        "{header}"
    );
    assert!(!s.contains("Left out"), "{s}");
    let narrow = r.table(Layout::new(80));
    assert_fits(&narrow, 80, "H200 at 80 columns");
    assert!(narrow.contains("Left out to fit 80 columns"), "{narrow}");
}
