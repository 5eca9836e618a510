//! The core draws nothing: presentation is blocksweep-render's. (That no module of the core,
//! or of any crate, reaches back to one that reaches it is tests/tests/layers.rs's check.)

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n != "tests" && n != "testdata")
            {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if name != "tests" && !name.ends_with("_tests") {
                out.push(path);
            }
        }
    }
}

/// The code of a file without its comments and its inline `#[cfg(test)] mod tests`.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(i) => &text[..i],
        None => text,
    };
    let lines = text.lines().map(|l| match l.find("//") {
        Some(i) => &l[..i],
        None => l,
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// Presentation lives apart from measurement, in blocksweep-render: the core declares no
/// table-drawing or CSV crate, and no module of it is a renderer's (`layout`, `text`).
#[test]
fn the_core_draws_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|s| s.split("\n[").next())
        .expect("a [dependencies] table");
    for drawer in ["tabled", "csv"] {
        assert!(
            !deps
                .lines()
                .any(|l| l.starts_with(&format!("{drawer} "))
                    || l.starts_with(&format!("{drawer}."))),
            "the core depends on {drawer}:\n{deps}"
        );
    }
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    for f in &files {
        let text = code(&std::fs::read_to_string(f).unwrap());
        assert!(
            !text.contains("impl Render for") && !text.contains("mod layout;"),
            "{} draws",
            f.display()
        );
    }
}
