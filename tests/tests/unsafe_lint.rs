//! Every crate of the workspace turns on clippy's `undocumented_unsafe_blocks`, so that an
//! `unsafe` block without a `// SAFETY:` comment fails `make lint` (clippy with -D warnings).
//! The attribute is per crate: a crate added without it, or one that loses it, fails here.

#![warn(clippy::undocumented_unsafe_blocks)]

use std::fs;
use std::path::{Path, PathBuf};

const LINT: &str = "clippy::undocumented_unsafe_blocks";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether `text` has the lint as a crate-level attribute at warn, deny or forbid (a line of
/// code, not a comment, and not an `allow`).
fn has_lint(text: &str) -> bool {
    text.lines().map(str::trim).any(|line| {
        ["warn", "deny", "forbid"]
            .iter()
            .any(|level| line.starts_with(&format!("#![{level}(")) && line.contains(LINT))
    })
}

/// Whether a line of `text`, outside `//` comments, uses the `unsafe` keyword.
fn uses_unsafe(text: &str) -> bool {
    text.lines().any(|line| {
        let code = line.split("//").next().unwrap_or("");
        code.split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|word| word == "unsafe")
    })
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
}

/// Every crate root of the workspace's libraries and binaries: each crate's src/lib.rs,
/// src/main.rs and src/bin/*.rs, and the tests crate's lib.rs.
fn crate_roots() -> Vec<PathBuf> {
    let root = workspace();
    let mut crates: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .expect("crates/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    let mut roots = Vec::new();
    for c in &crates {
        let found: Vec<PathBuf> = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|f| c.join(f))
            .filter(|p| p.is_file())
            .chain(rs_files(&c.join("src/bin")))
            .collect();
        assert!(
            !found.is_empty(),
            "{} has no lib.rs or main.rs",
            c.display()
        );
        roots.extend(found);
    }
    roots.push(root.join("tests/lib.rs"));
    roots
}

/// The roots of the crates cargo builds from tests/, benches/ and examples/ directories:
/// each is its own crate, outside the library's attribute.
fn target_roots() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs = vec![root.join("tests/tests")];
    for c in fs::read_dir(root.join("crates")).expect("crates/ is readable") {
        let c = c.expect("a crates/ entry").path();
        dirs.extend(["tests", "benches", "examples"].map(|d| c.join(d)));
    }
    dirs.iter().flat_map(|d| rs_files(d)).collect()
}

#[test]
fn every_library_and_binary_crate_warns_on_undocumented_unsafe() {
    let roots = crate_roots();
    assert!(
        roots
            .iter()
            .any(|p| p.ends_with("crates/vulkan/src/lib.rs"))
            && roots.iter().any(|p| p.ends_with("crates/cli/src/main.rs")),
        "the crate roots were not found: {roots:?}"
    );
    let missing: Vec<String> = roots
        .iter()
        .filter(|p| !has_lint(&fs::read_to_string(p).expect("a crate root is readable")))
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "add `#![warn({LINT})]` to: {}",
        missing.join(", ")
    );
}

#[test]
fn every_test_crate_that_uses_unsafe_warns_on_undocumented_unsafe() {
    let missing: Vec<String> = target_roots()
        .iter()
        .filter(|p| {
            let text = fs::read_to_string(p).expect("a test file is readable");
            uses_unsafe(&text) && !has_lint(&text)
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "these use unsafe; add `#![warn({LINT})]` to: {}",
        missing.join(", ")
    );
}

#[test]
fn the_check_tells_the_attribute_from_a_comment_or_an_allow() {
    assert!(has_lint(
        "//! docs\n\n#![warn(clippy::undocumented_unsafe_blocks)]\n"
    ));
    assert!(has_lint("#![deny(clippy::undocumented_unsafe_blocks)]"));
    assert!(!has_lint("//! docs\nmod a;\n"));
    assert!(!has_lint("// #![warn(clippy::undocumented_unsafe_blocks)]"));
    assert!(!has_lint("#![allow(clippy::undocumented_unsafe_blocks)]"));
    assert!(uses_unsafe("let x = unsafe { f() };"));
    assert!(!uses_unsafe("// unsafe { f() }\nlet unsafe_ok = 1;"));
}
