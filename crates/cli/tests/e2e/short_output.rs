//! End to end: the default sweep is short (the answer, a line per API, the evidence), the
//! details are behind --verbose and always in the files, and a saved run replays either way.

use crate::support::{available, scratch, succeeds_at as stdout};

fn results(path: &str) -> String {
    format!("{}/../../docs/results/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn widest(s: &str) -> usize {
    crate::support::widest(s).0
}

/// The committed three-API H200 run: about 50 lines at 100 columns as the sweep printed it
/// (--brief), every API's own table and protocol by default.
#[test]
fn the_h200_run_is_short_by_default_and_whole_on_replay() {
    let file = results("h200-2026-11-30-d/core/h200-2026-11-30.json");
    for columns in ["80", "100"] {
        let brief = stdout(columns, &["replay", "--brief", &file]);
        let whole = stdout(columns, &["replay", &file]);
        let width: usize = columns.parse().unwrap();
        assert!(widest(&brief) <= width && widest(&whole) <= width);
        // The replay's own note (two lines at 100 columns) and a blank line come first.
        let lines = brief.lines().count() - 3;
        if columns == "100" {
            assert!(lines <= 50, "{lines} lines:\n{brief}");
        }
        assert!(whole.lines().count() > 3 * lines, "{whole}");
        for table in ["thr/blk", "inv/wg", "wi/wg"] {
            assert!(!brief.contains(table) && whole.contains(table), "{table}");
        }
        assert!(brief.contains("All APIs on one device") && whole.contains("occ"));
    }
}

/// A real two-API run on the CPU drivers: short on stdout, everything in the files.
#[test]
fn the_default_sweep_is_short_and_its_files_hold_everything() {
    if !available("opencl") || !available("vulkan") {
        return;
    }
    let dir = scratch("short");
    let (md, txt) = (dir.join("run.md"), dir.join("run.txt"));
    let args = [
        "sweep",
        "--size",
        "128x128",
        "--blocks",
        "32,64,128",
        "--reps",
        "2",
    ];
    let mut with_files: Vec<&str> = args.to_vec();
    with_files.extend(["-o", md.to_str().unwrap(), "-o", txt.to_str().unwrap()]);
    let short = stdout("100", &with_files);
    let verbose = stdout("100", &[&args[..], &["--verbose"]].concat());
    assert!(widest(&short) <= 100 && widest(&verbose) <= 100);
    assert!(short.starts_with("Answer\n"), "{short}");
    assert!(short.contains("side by side"), "{short}");
    assert!(short.contains("--verbose"), "{short}");
    for detail in ["Timing (batch)", "wi/wg", "inv/wg"] {
        assert!(!short.contains(detail), "{detail}:\n{short}");
        assert!(verbose.contains(detail), "{detail}:\n{verbose}");
        for f in [&md, &txt] {
            let text = std::fs::read_to_string(f).unwrap();
            assert!(
                text.contains(detail),
                "{detail} in {}:\n{text}",
                f.display()
            );
        }
    }
    assert!(short.lines().count() * 2 < verbose.lines().count());
}
