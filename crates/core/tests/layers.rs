//! The core's modules form layers: no module reaches (through `crate::...`) a module that
//! reaches back to it, and none goes through the crate root's re-exports. A cycle between two
//! top-level modules (say `validate` → `lab` → `validate`) fails here, naming the modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

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

/// Each top-level module's `crate::<module>` references ("ROOT" for the crate root's names).
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut g = Graph::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        let text = code(&std::fs::read_to_string(&file).unwrap());
        let refs = g.entry(top.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let root = name.is_empty() || name.starts_with(|c: char| c.is_ascii_uppercase());
            let to = if root { "ROOT".to_string() } else { name };
            if to != top {
                refs.insert(to);
            }
        }
    }
    g
}

/// Whether `to` is reachable from `from`.
fn reaches(g: &Graph, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        if m == to {
            return true;
        }
        if seen.insert(m.clone()) {
            stack.extend(g.get(&m).into_iter().flatten().cloned());
        }
    }
    false
}

#[test]
fn no_module_of_the_core_reaches_back_to_one_that_reaches_it() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        g.len() > 20,
        "the core's modules were not found: {:?}",
        g.keys()
    );
    let mut back = Vec::new();
    for (from, tos) in &g {
        for to in tos {
            if to == "ROOT" {
                back.push(format!("{from} -> the crate root"));
            } else if g.contains_key(to) && reaches(&g, to, from) {
                back.push(format!("{from} -> {to} (and {to} reaches {from})"));
            }
        }
    }
    assert!(back.is_empty(), "arrows back up: {back:#?}");
}

#[test]
fn the_check_sees_a_cycle_when_there_is_one() {
    let mut g = Graph::new();
    g.entry("lab".into()).or_default().insert("validate".into());
    g.entry("validate".into()).or_default().insert("lab".into());
    assert!(reaches(&g, "lab", "validate") && reaches(&g, "validate", "lab"));
    let text = "use crate::lab::x; // crate::validate\n#[cfg(test)]\nmod tests {\n use crate::y; }";
    assert_eq!(code(text).matches("crate::").count(), 1);
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
