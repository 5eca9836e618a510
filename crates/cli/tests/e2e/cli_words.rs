//! What the command line says: `--help` in plain words, and errors that keep clap's list of
//! valid values and its "did you mean", still on one line (exit code 2).

use crate::support::{available, bad_input, flat, succeeds, succeeds_json};

#[test]
fn sweep_help_speaks_plainly_and_points_to_the_guide() {
    let help = succeeds(&["sweep", "--help"]);
    assert!(!help.contains("seed's"), "course jargon:\n{help}");
    assert!(
        flat(&help).contains("[default: 16,32,64,96,100,128,160,192,256,384,512,768,1024"),
        "--blocks shows its default list:\n{help}"
    );
    assert!(help.contains("docs/guide.md"), "{help}");
    for flag in ["--quiet", "--wide", "--max-time <SECONDS>"] {
        assert!(help.contains(flag), "no {flag}:\n{help}");
    }
    assert!(!help.contains("-B,"), "-B is gone:\n{help}");
    let top = succeeds(&["--help"]);
    assert!(top.contains("docs/guide.md"), "{top}");
    for sub in ["devices", "limits", "validate", "compare"] {
        let h = succeeds(&[sub, "--help"]);
        assert!(h.contains("--wide"), "{sub} --help has no --wide:\n{h}");
    }
}

#[test]
fn errors_keep_the_valid_values_and_the_suggestion() {
    let keys: Vec<&str> = blocksweep_apis::all()
        .iter()
        .map(|d| d.api().key())
        .collect();
    bad_input(
        &["sweep", "--backend", "metal"],
        &format!("possible values: {}, all", keys.join(", ")),
    );
    bad_input(&["swep"], "did you mean 'sweep'?");
    bad_input(&["frobnicate"], "subcommands: devices, limits, sweep");
    bad_input(&["sweep", "--blokcs", "64"], "did you mean '--blocks'?");
    bad_input(&["sweep", "--format", "jsn"], "did you mean 'json'?");
    bad_input(&["sweep", "-B", "64"], "use --blocks");
    bad_input(
        &["sweep", "--grid", "2147483648"],
        "more blocks than the 3840x2160 frame has pixels (8294400)",
    );
}

#[test]
fn numbers_are_trimmed_like_sizes() {
    if !available("opencl") {
        return;
    }
    let v = succeeds_json(&[
        "sweep",
        "--backend",
        " opencl",
        "--size",
        " 64x64",
        "--blocks",
        "64",
        "--reps",
        " 7",
        "--warmups",
        "1 ",
        "--seed",
        " 3",
        "--grid",
        " 4",
        "--format",
        "json ",
    ]);
    let r = &v["results"][0];
    assert_eq!(r["rows"][0]["grid"], 4, "{r}");
    assert_eq!(r["rows"][0]["timing"]["reps"], 7, "{r}");
    assert_eq!(r["frame"]["seed"], 3, "{r}");
}

/// At 80 columns no help example wraps a comment onto a line that reads as a command: each
/// example line is a `# comment`, a `blocksweep` command, or the continuation of one whose
/// line ends in `\`, and fits the terminal.
#[test]
fn help_examples_fit_80_columns_and_read_as_commands() {
    let subcommands = "devices limits sweep validate shapes tail launch-cost compare replay apis \
                       completions";
    for sub in subcommands.split_whitespace() {
        let out = crate::support::blocksweep()
            .env("COLUMNS", "80")
            .args([sub, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        let examples = help
            .split_once("Example")
            .map(|(_, rest)| rest)
            .unwrap_or_else(|| panic!("{sub} --help has no examples:\n{help}"));
        let mut continued = false;
        for line in examples.lines().skip(1) {
            if line.trim().is_empty() {
                break;
            }
            let l = line.trim_start();
            let reads = continued || l.starts_with("# ") || l.starts_with("blocksweep ");
            assert!(reads && line.len() <= 80, "{sub} --help: {line:?}\n{help}");
            continued = l.ends_with('\\');
        }
    }
}

/// `validate --size` without `--kernel` said clap's "the following required arguments were not
/// provided: --kernel", which read as if validate needed a kernel (a new user's trial).
#[test]
fn validate_size_without_a_kernel_says_what_size_is_for() {
    bad_input(
        &["validate", "--size", "640x360"],
        "--size sets a kernel's sizes, with --kernel SPEC.toml; validate's built-in frame has a \
         size of its own (509x253)",
    );
}
