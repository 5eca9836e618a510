//! Issue 11 point 4, through the real binary: every command honours every format it lists;
//! `-o` prints as well as writes (and `--quiet` only writes); an unknown `-o` extension is bad
//! input unless `--format` says.

use crate::support::{available, available_apis, bad_input, quick_sweep, scratch, succeeds_at};

#[test]
fn output_files_are_written_and_the_results_printed() {
    if !available("opencl") {
        return;
    }
    let d = scratch("print");
    let csv = d.join("run.csv");
    let csv = csv.to_str().unwrap();
    let mut args = quick_sweep("opencl", &[]);
    args.extend(["-o", csv]);
    let s = succeeds_at("100", &args);
    assert!(s.starts_with("Answer"), "the table on stdout: {s}");
    let text = std::fs::read_to_string(csv).unwrap();
    assert!(text.starts_with("api,device,block,"), "{text}");
    // --quiet: the files only.
    let mut args = quick_sweep("opencl", &["--quiet"]);
    args.extend(["-o", csv]);
    assert_eq!(succeeds_at("100", &args), "", "--quiet prints nothing");
    // A file that is stdout itself is not printed twice.
    let mut args = quick_sweep("opencl", &["--format", "csv"]);
    args.extend(["-o", "/dev/stdout"]);
    let s = succeeds_at("100", &args);
    assert_eq!(s.matches("api,device,block,").count(), 1, "{s}");
}

#[test]
fn an_output_extension_that_names_no_format_is_bad_input_unless_format_says() {
    if !available("opencl") {
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
    succeeds_at("100", &quick_sweep("opencl", &["--format", "csv", "-o", x]));
    let text = std::fs::read_to_string(&xlsx).unwrap();
    assert!(
        text.starts_with("api,device,block,"),
        "--format csv wins: {text}"
    );
    // .txt and .md name theirs.
    let (txt, md) = (d.join("run.txt"), d.join("run.md"));
    let mut args = quick_sweep("opencl", &[]);
    args.extend(["-o", txt.to_str().unwrap(), "-o", md.to_str().unwrap()]);
    succeeds_at("100", &args);
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
    let apis = available_apis();
    if apis.is_empty() {
        return;
    }
    let d = scratch("formats");
    let a = d.join("a.json");
    let mut args = quick_sweep(apis[0], &[]);
    args.extend(["-o", a.to_str().unwrap()]);
    succeeds_at("100", &args);
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
            let s = succeeds_at("100", &args);
            assert_format(&s, format, &args.join(" "));
        }
    }
    // compare's CSV: one line per (column, block size).
    let csv = succeeds_at("100", &["compare", a, a, "--format", "csv"]);
    assert!(
        csv.starts_with("column,label,api,device,frame,discipline,block,"),
        "{csv}"
    );
    // devices' CSV: one line per API device, and the unavailable APIs with their reasons.
    let csv = succeeds_at("100", &["devices", "--format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.starts_with(&format!("{},0,", apis[0]))),
        "{csv}"
    );
}
