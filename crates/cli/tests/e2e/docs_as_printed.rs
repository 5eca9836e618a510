//! The docs run as printed (issue 40): docs/kernels.md section 5 built from the page alone (its
//! spec from section 2, its sources from the files section 5 names) and its commands run in a
//! folder of their own; the messages the page quotes are the binary's own; every command of
//! docs/day10.md runs on the CPU drivers with the exit code the page gives.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{available, blocksweep, scratch, stderr};

fn doc(name: &str) -> String {
    let path = format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The code block that opens with the first line after `from` that starts with ```` ```kind ````.
fn block_after<'a>(text: &'a str, from: &str, kind: &str) -> &'a str {
    let at = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let open = format!("```{kind}\n");
    let start = at + text[at..].find(&open).expect("a code block") + open.len();
    let len = text[start..].find("```").expect("the block's end");
    &text[start..start + len]
}

/// `scale/` as section 5 says to make it: the spec of section 2, and each source printed under
/// its file name ("`scale/scale.cl`:").
fn scale_folder(dir: &Path) {
    let page = doc("kernels.md");
    std::fs::create_dir_all(dir.join("scale")).unwrap();
    let spec = block_after(&page, "## 2. The spec file", "toml");
    std::fs::write(dir.join("scale/kernel.toml"), spec).unwrap();
    for (file, kind) in [
        ("scale.cu", "cuda"),
        ("scale.cl", "c"),
        ("scale.comp", "glsl"),
    ] {
        let code = block_after(&page, &format!("`scale/{file}`:\n"), kind);
        std::fs::write(dir.join("scale").join(file), code).unwrap();
    }
}

/// Runs the binary in `dir` with the words of `line` (a command as printed, its program name
/// and comment left out) at 100 columns.
fn run_in(dir: &Path, line: &str) -> Output {
    let words: Vec<&str> = line.split_whitespace().collect();
    blocksweep()
        .current_dir(dir)
        .env("COLUMNS", "100")
        .args(&words)
        .output()
        .unwrap()
}

/// Every line of a quoted output but the elisions is a line of `out`, in order.
fn quoted_lines_appear(quote: &str, out: &str) {
    let mut lines = out.lines();
    for q in quote.lines().filter(|q| q.trim() != "[...]") {
        assert!(
            lines.any(|l| l.trim_end() == q.trim_end()),
            "the page quotes {q:?}, which the binary no longer prints in this order:\n{out}"
        );
    }
}

#[test]
fn kernels_section_5_runs_as_printed_and_its_quotes_are_the_binarys() {
    if !(available("vulkan") & available("opencl")) {
        return;
    }
    let dir = scratch("docs-section-5");
    scale_folder(&dir);
    let page = doc("kernels.md");
    let section = &page[page.find("## 5. A worked example").unwrap()..];

    let out = run_in(&dir, "sweep --kernel scale/kernel.toml");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}\n{text}", stderr(&out));
    // The kernel's header as quoted: the source each API ran.
    quoted_lines_appear(block_after(section, "each API's device:", "text"), &text);

    let command = "validate --kernel scale/kernel.toml";
    assert!(section.contains(&format!("blocksweep {command}\n")));
    let out = run_in(&dir, command);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}\n{text}", stderr(&out));
    quoted_lines_appear(block_after(section, command, "text"), &text);
}

/// Section 2's quoted errors, made as their names say: a misspelt `written`, a C type name, a
/// size past the host.
#[test]
fn the_spec_errors_kernels_md_quotes_are_the_binarys() {
    let dir = scratch("docs-section-2");
    scale_folder(&dir);
    let spec = std::fs::read_to_string(dir.join("scale/kernel.toml")).unwrap();
    std::fs::create_dir_all(dir.join("bad")).unwrap();
    for file in ["scale.cu", "scale.cl", "scale.comp"] {
        std::fs::copy(dir.join("scale").join(file), dir.join("bad").join(file)).unwrap();
    }
    let k1 = spec.replacen("written = true", "writen = true", 1);
    let k2 = spec.replacen("buffer = \"f32\"", "buffer = \"float\"", 1);
    std::fs::write(dir.join("bad/k1.toml"), k1).unwrap();
    std::fs::write(dir.join("bad/k2.toml"), k2).unwrap();
    let page = doc("kernels.md");
    let quoted = block_after(&page, "Real examples:", "text");
    let runs = [
        "validate --kernel bad/k1.toml",
        "validate --kernel bad/k2.toml",
        "sweep --kernel scale/kernel.toml --size 4000000000000000000",
    ];
    for (command, quote) in runs.iter().zip(quoted.lines()) {
        let out = run_in(&dir, command);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert_eq!(stderr(&out).trim_end(), quote, "{command}");
    }
}

/// The lines of docs/day10.md's sh blocks that run the binary, continuations joined, comments
/// dropped, the program name left out.
fn day10_commands() -> Vec<String> {
    let page = doc("day10.md");
    let mut out = Vec::new();
    for block in page.split("```sh\n").skip(1) {
        let body = block.split("```").next().unwrap().replace("\\\n", " ");
        for line in body.lines() {
            let line = line.split(" # ").next().unwrap().trim();
            if let Some(args) = line.strip_prefix("./target/release/blocksweep ") {
                out.push(args.to_string());
            }
        }
    }
    out
}

/// Each command of the handout on the CPU drivers: 0, and 2 for `--backend cuda` where CUDA is
/// not here, as the page says. They run in a folder of their own that sees the repository's
/// docs/ (compare reads committed runs), so their -o files stay there.
#[test]
fn every_day10_command_runs_on_the_cpu_drivers_with_the_exit_code_the_page_gives() {
    if !(available("vulkan") & available("opencl")) {
        return;
    }
    let commands = day10_commands();
    assert_eq!(commands.len(), 5, "{commands:?}");
    let dir = scratch("docs-day10");
    let docs: PathBuf = format!("{}/../../docs", env!("CARGO_MANIFEST_DIR")).into();
    std::os::unix::fs::symlink(docs.canonicalize().unwrap(), dir.join("docs")).unwrap();
    let page = doc("day10.md");
    // Whether CUDA is here, asked without noting a skip: this test runs either way.
    let devices = crate::support::succeeds_json(&["devices", "--format", "json"]);
    let cuda = !devices["unavailable"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|u| u["api"] == "cuda");
    for command in &commands {
        let out = run_in(&dir, command);
        let said = stderr(&out);
        let expected = match command.contains("--backend cuda") && !cuda {
            true => {
                assert!(page.contains("`--backend cuda` stops at once with exit code 2"));
                assert!(said.contains("CUDA is unavailable"), "{command}: {said}");
                2
            }
            false => 0,
        };
        assert_eq!(out.status.code(), Some(expected), "{command}: {said}");
    }
}
