//! Lines a user reads that once said something false (issue 40), each checked against the
//! binary's own output.

use crate::support::{
    available_apis, bad_input, blocksweep, csv_field, csv_rows, stderr, succeeds,
};
use serde_json::Value;

/// validate's row 8 (a 1x1x65 block) is about an extent: who guarantees it names OpenCL's
/// CL_DEVICE_MAX_WORK_ITEM_SIZES (it named only CL_DEVICE_MAX_WORK_GROUP_SIZE).
#[test]
fn validate_names_the_extent_limit_for_a_1x1x65_block() {
    if available_apis().is_empty() {
        return;
    }
    let doc: Value = serde_json::from_str(&succeeds(&["validate", "--format", "json"])).unwrap();
    let row = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["assumption"]["claim"] == "a 1x1x65 block is rejected")
        .unwrap();
    let said = row["assumption"]["guarantee"].as_str().unwrap();
    assert!(
        said.contains(
            "OpenCL (CL_DEVICE_MAX_WORK_GROUP_SIZE ≥ 1; CL_DEVICE_MAX_WORK_ITEM_SIZES ≥ (1, 1, 1))"
        ),
        "{said}"
    );
}

/// The repository's shipped kernel spec `name` (examples/kernels/NAME/kernel.toml).
fn example(name: &str) -> String {
    format!(
        "{}/../../examples/kernels/{name}/kernel.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The shipped saxpy at blocks 64 and 256, both far below each driver's limit for the kernel:
/// no line may say a size ran above it (the reference row's note was counted as one).
#[test]
fn no_size_said_above_the_kernel_limit_when_none_is() {
    if available_apis().is_empty() {
        return;
    }
    let saxpy = example("saxpy");
    let args = [
        "sweep",
        "--kernel",
        &saxpy,
        "--blocks",
        "64,256",
        "--size",
        "65536",
        "--reps",
        "2",
        "--warmups",
        "1",
    ];
    for verbose in [false, true] {
        let mut args = args.to_vec();
        if verbose {
            args.push("--verbose");
        }
        let out = succeeds(&args);
        assert!(
            !out.contains("above the kernel's own stated limit"),
            "{out}"
        );
    }
}

/// A size past what any host can allocate names the key and the size asked, as docs/kernels.md
/// quotes it (it said "the host memory for 18446744073709551615 elements does not fit in 64
/// bits": neither); a size whose buffers fit one by one but not together says the sizes asked.
#[test]
fn a_size_past_the_host_names_the_key_and_the_size_as_the_docs_quote() {
    let saxpy = example("saxpy");
    let line = "args[0].elements: 'n' is 4000000000000000000 elements (16000000000000000000 \
                bytes), more than this host can allocate";
    bad_input(
        &["sweep", "--kernel", &saxpy, "--size", "4000000000000000000"],
        line,
    );
    let docs = std::fs::read_to_string(format!(
        "{}/../../docs/kernels.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert!(
        docs.contains(&format!("blocksweep: error: scale/kernel.toml: {line}\n")),
        "docs/kernels.md no longer quotes {line:?}"
    );
    let out = blocksweep()
        .args(["sweep", "--kernel", &saxpy, "--size", "2000000000000000000"])
        .output()
        .unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("kernel 'saxpy' at n=2000000000000000000"),
        "{said}"
    );
    assert!(!said.contains("18446744073709551615"), "{said}");
}

/// The kernel's source given where its spec goes: one line that says so and names the spec
/// beside it that names this source (it was a raw TOML error, "line 1, column 4: key with no
/// value"); a source with no spec beside it is told what a spec is.
#[test]
fn a_source_given_for_the_spec_names_the_spec() {
    let dir = format!(
        "{}/../../examples/kernels/saxpy",
        env!("CARGO_MANIFEST_DIR")
    );
    for source in ["saxpy.cu", "saxpy.cl", "saxpy.comp"] {
        let path = format!("{dir}/{source}");
        let spec = format!("{dir}/kernel.toml");
        bad_input(
            &["sweep", "--kernel", &path],
            &format!("{path}: a kernel source, not a spec file: give the spec that names it, --kernel {spec}"),
        );
    }
    let lone = crate::support::scratch("lone-source");
    let path = lone.join("k.cl");
    std::fs::write(&path, "__kernel void k(__global float* y) { y[0] = 1; }\n").unwrap();
    bad_input(
        &["validate", "--kernel", path.to_str().unwrap()],
        "k.cl: not a spec file: a spec is a TOML file that names the kernel's sources and \
         arguments (docs/kernels.md)",
    );
}

/// A spec with a CUDA source on a machine without CUDA: the run says CUDA did not run and why,
/// as docs/kernels.md section 5 promises ("CUDA reports `unavailable: libcuda.so.1 not
/// found` and the other two run"); it said nothing of CUDA.
#[test]
fn a_kernel_run_says_which_of_its_sources_did_not_run() {
    if available_apis().is_empty() {
        return;
    }
    let devices: Value = serde_json::from_str(&succeeds(&["devices", "--format", "json"])).unwrap();
    let Some(why) = devices["unavailable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["api"] == "cuda")
        .map(|u| u["reason"].as_str().unwrap().to_string())
    else {
        return; // CUDA is here: nothing to say
    };
    let saxpy = example("saxpy");
    let out = blocksweep()
        .args([
            "sweep", "--kernel", &saxpy, "--blocks", "64", "--size", "65536",
        ])
        .args(["--reps", "2", "--warmups", "1"])
        .output()
        .unwrap();
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let line = format!("CUDA: unavailable: {why}: the spec's CUDA source is not run");
    assert!(said.contains(&line), "{said:?} lacks {line:?}");
    // One API asked for: nothing to say about the others.
    let out = blocksweep()
        .args([
            "sweep", "--kernel", &saxpy, "--blocks", "64", "--size", "65536",
        ])
        .args([
            "--reps",
            "2",
            "--warmups",
            "1",
            "--backend",
            available_apis()[0],
        ])
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("CUDA"), "{}", stderr(&out));
}

/// The limits CSV writes a guarantee in its value's notation: `[1024,1024,1024]` beside
/// `[128,128,64]`, bytes as bytes (it wrote `(128, 128, 64)` and `16 KiB` beside the raw
/// values).
#[test]
fn the_limits_csv_writes_a_guarantee_as_its_value_is_written() {
    if available_apis().is_empty() {
        return;
    }
    let rows = csv_rows(&succeeds(&["limits", "--format", "csv"]));
    let (header, rows) = rows.split_first().unwrap();
    let mut checked = 0;
    for row in rows {
        let value = csv_field(header, row, "value");
        let promised = csv_field(header, row, "guaranteed");
        if value.is_empty() || promised.is_empty() {
            continue;
        }
        checked += 1;
        let dims = |s: &str| {
            s.strip_prefix('[')
                .and_then(|s| s.strip_suffix(']'))
                .map(|s| {
                    s.split(',')
                        .map(|n| n.parse::<u64>().is_ok())
                        .filter(|ok| *ok)
                        .count()
                })
        };
        match dims(value) {
            Some(3) => assert_eq!(dims(promised), Some(3), "{row:?}"),
            _ if value.parse::<u64>().is_ok() => {
                let head = promised.split_whitespace().next().unwrap();
                let number = head.parse::<u64>().is_ok() || head.starts_with("max(");
                assert!(number, "{row:?}");
                assert!(!promised.contains("iB"), "{row:?}");
            }
            _ => {}
        }
    }
    assert!(checked > 0);
}

/// `compare` says each warning once where a reader sees it: in the table on stdout, or on
/// stderr where stdout holds JSON or CSV for a script (the table had it on both).
#[test]
fn compare_says_each_warning_once() {
    let Some(api) = available_apis().first().copied() else {
        return;
    };
    let dir = crate::support::scratch("compare-once");
    let mut runs = Vec::new();
    for size in ["320x180", "160x90"] {
        let file = dir.join(format!("{size}.json"));
        let f = file.to_str().unwrap().to_string();
        succeeds(&[
            "sweep",
            "--backend",
            api,
            "--blocks",
            "32,64",
            "--size",
            size,
            "--reps",
            "2",
            "--warmups",
            "1",
            "-o",
            &f,
        ]);
        runs.push(f);
    }
    let warning = "The runs used different frame sizes";
    for (format, on_stdout) in [("table", 1), ("markdown", 1), ("json", 0), ("csv", 0)] {
        let out = blocksweep()
            .args(["compare", &runs[0], &runs[1], "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        if on_stdout == 1 {
            assert_eq!(stdout.matches(warning).count(), 1, "{format}: {stdout}");
        }
        let err = stderr(&out);
        assert_eq!(
            err.matches(warning).count(),
            1 - on_stdout,
            "{format}: {err}"
        );
    }
}

/// A file does not depend on the terminal: a sweep's `-o x.md` at COLUMNS=40 is, past the
/// replay's provenance note, the replay of its own JSON at COLUMNS=300. (Two sweeps' files
/// differ in length by their measurements: a noise warning, a tie.)
#[test]
fn a_markdown_file_is_the_same_at_any_terminal_width() {
    let Some(api) = available_apis().first().copied() else {
        return;
    };
    let dir = crate::support::scratch("md-width");
    let (md, json, again) = (dir.join("x.md"), dir.join("x.json"), dir.join("y.md"));
    let [md, json, again] = [&md, &json, &again].map(|p| p.to_str().unwrap().to_string());
    let quick = crate::support::quick_sweep(api, &["-o", &md, "-o", &json]);
    crate::support::succeeds_at("40", &quick);
    crate::support::succeeds_at("300", &["replay", &json, "-o", &again]);
    let swept = std::fs::read_to_string(&md).unwrap();
    let replayed = std::fs::read_to_string(&again).unwrap();
    let (note, rest) = replayed.split_once("\n\n").unwrap();
    assert!(note.starts_with("> Replay of a run"), "{replayed}");
    assert_eq!(rest, swept);
}

/// `--version` names the commit it was built from (where it was built in a git checkout) and
/// what the build holds: its features and the APIs it drives.
#[test]
fn version_names_the_commit_and_the_build() {
    let out = succeeds(&["--version"]);
    let line = out.trim_end();
    assert_eq!(line.lines().count(), 1, "{out}");
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = head.unwrap_or_else(|| "unknown".into());
    let apis = succeeds(&["apis"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(", ");
    let want = format!(
        "blocksweep {} (commit {commit}; features: none; APIs: {apis})",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(line, want);
    assert_eq!(succeeds(&["-V"]), out, "-V and --version say the same");
}

/// `blocksweep completions SHELL` prints the shell's completion script for every command.
#[test]
fn completions_for_bash_zsh_and_fish() {
    for (shell, marker, worker) in [
        ("bash", "complete -F _blocksweep", "blocksweep,worker)"),
        ("zsh", "#compdef blocksweep", "'worker:"),
        ("fish", "complete -c blocksweep", "-a \"worker\""),
    ] {
        let script = succeeds(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: {script}");
        for word in ["sweep", "validate", "--kernel", "--backend"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
        // The hidden worker role is not offered (only its own flag, --workers, is).
        assert!(
            !script.contains(worker),
            "{shell}: the worker role is offered"
        );
    }
    bad_input(&["completions", "tcsh"], "invalid value 'tcsh'");
}

/// `compare --fail-below F` (issue 40): exit 1 when a configuration or a best is slower than F
/// of the first file's, each named on stderr; exit 0 when none is; bad input for F past 1.
#[test]
fn compare_fails_below_a_fraction_of_the_first_file() {
    let run = |gpu: &str| {
        format!(
            "{}/../../docs/results/{gpu}-2026-12-06/call1/runs/sweep-2026-12-06.json",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let (h100, h200) = (run("h100"), run("h200"));
    // The H100's 4K rows take longer than the H200's: 0.75 of its time at block 64 on CUDA.
    let out = crate::support::blocksweep()
        .args([
            "compare",
            &h200,
            &h100,
            "--fail-below",
            "0.9",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = crate::support::stderr(&out);
    assert!(
        err.contains("CUDA block 64 grid wave: 0.746 of the baseline's"),
        "{err}"
    );
    assert!(err.contains("CUDA its best"), "{err}");
    // The other way round nothing is slower.
    let out = crate::support::blocksweep()
        .args([
            "compare",
            &h100,
            &h200,
            "--fail-below",
            "95%",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&out)
    );
    crate::support::bad_input(
        &["compare", &h100, &h200, "--fail-below", "1.5"],
        "--fail-below",
    );
}

/// docs/output-files.md: bad input writes nothing, and a run whose every API failed writes its
/// failures, typed, with no rows (it said "a run that measured nothing writes nothing", which
/// the failure documents contradicted; a new user's trial). The zoo's no-guard kernel fails its
/// first row on every API (exit 1); a block no API can run is bad input (exit 2).
#[test]
fn a_failed_run_writes_its_failures_and_bad_input_writes_nothing() {
    if available_apis().is_empty() {
        return;
    }
    let dir = crate::support::scratch("measured-nothing");
    let kept = dir.join("baseline.json");
    std::fs::write(&kept, "keep\n").unwrap();
    let spec = example("bugs/no-guard");
    let bad = blocksweep()
        .args(["sweep", "--kernel", &spec, "--blocks", "4096x4096", "-o"])
        .arg(&kept)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep\n");
    let failed = blocksweep()
        .args(["sweep", "--kernel", &spec, "-o"])
        .arg(&kept)
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    let kinds: Vec<&str> = doc["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"out_of_bounds"), "{doc}");
}

#[test]
fn an_api_without_a_source_is_said_and_the_others_run() {
    if !available_apis().contains(&"opencl") {
        return;
    }
    let dir = crate::support::scratch("one-source");
    let saxpy = format!(
        "{}/../../examples/kernels/saxpy",
        env!("CARGO_MANIFEST_DIR")
    );
    let spec = std::fs::read_to_string(format!("{saxpy}/kernel.toml")).unwrap();
    let only_cl: String = spec
        .lines()
        .filter(|l| {
            !["vulkan", "cuda", "webgpu"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join("kernel.toml"), only_cl).unwrap();
    std::fs::copy(format!("{saxpy}/saxpy.cl"), dir.join("saxpy.cl")).unwrap();
    let spec = dir.join("kernel.toml");
    let spec = spec.to_str().unwrap();
    for command in ["sweep", "validate"] {
        let out = blocksweep()
            .args([command, "--kernel", spec, "--size", "4096"])
            .output()
            .unwrap();
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{command}: {said}");
        let line = format!("Vulkan: not run: {spec} has no source for it");
        assert_eq!(said.matches(&line).count(), 1, "{command}: {said}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("OpenCL"));
    }
    bad_input(
        &["sweep", "--kernel", spec, "--backend", "vulkan"],
        "has no source for Vulkan (its [sources] has no 'vulkan')",
    );
}

/// README: replay "says where and when the run was measured; nothing is measured". A tune's
/// file replayed started at its answer, saying neither (a new user's trial).
#[test]
fn a_replayed_tune_says_it_is_a_replay() {
    let file = format!(
        "{}/../../docs/results/h200-2026-12-06/call1/tune/grayscale-map.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = succeeds(&["replay", &file, "--brief"]);
    let first = out.lines().next().unwrap_or_default();
    assert!(first.starts_with("Replay of a tune of grayscale"), "{out}");
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("measured on 2026-12-06 at"), "{out}");
    assert!(flat.contains("nothing was measured now"), "{out}");
}

/// A tune and a sweep of one device are refused naming each file, in one line, with nothing
/// of --fail-below's said before it (a new user's trial: 39 regression lines came first).
#[test]
fn a_tune_and_a_sweep_of_one_device_are_refused_by_file_alone() {
    let at = |p: &str| format!("{}/../../docs/results/{p}", env!("CARGO_MANIFEST_DIR"));
    let (sweep, map) = (
        at("h200-2026-12-06/call1/runs/sweep-2026-12-06.json"),
        at("h200-2026-12-06/call1/tune/grayscale-map.json"),
    );
    let needle = "a tune (grayscale-map) and a sweep (sweep-2026-12-06) of one device";
    bad_input(&["compare", &sweep, &map], needle);
    bad_input(&["compare", &sweep, &map, "--fail-below", "0.95"], needle);
}
