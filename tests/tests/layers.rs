//! Every crate's modules form layers: no top-level module reaches (through `crate::` paths,
//! `super::` paths that climb to the crate root, or a `macro_rules!` macro another module
//! defines) a module that reaches back to it. A name the crate root re-exports counts as a
//! reference to the module it comes from. A loop (say the CLI's `args` → `output` → `args`)
//! fails here, naming the modules of the loop and each arrow's file and path. The crate
//! root's own items (a backend crate's `open`, the CLI's `usage`) stand above every module and
//! are no node. The core is held to more: its modules never name anything through the root.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each arrow `from → to` with what makes it ("args/files.rs: crate::output").
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// One crate's module graph, and the references that went through its root (not a module).
struct Layers {
    graph: Graph,
    through_root: Vec<String>,
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

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier at the start of `s` ("" when none).
fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
    &s[..end]
}

/// Whether `text[..i]` ends where a path may start (not inside an identifier or after `::`).
fn starts_path(text: &str, i: usize) -> bool {
    let before = &text[..i];
    !before.ends_with(is_ident) && !before.ends_with("::")
}

/// The first segment of each path after `crate::`: `crate::a::X` gives `a`; `crate::{a, b::Y}`
/// gives `a` and `b`.
fn first_segments(rest: &str) -> Vec<&str> {
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(ident(group[start..i].trim_start()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(ident(group[start..i].trim_start()));
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// `text` without its attributes (`#[...]`, `#![...]`).
fn without_attributes(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('#') {
        out.push_str(&rest[..i]);
        let after = rest[i + 1..].trim_start_matches('!');
        if !after.starts_with('[') {
            out.push('#');
            rest = &rest[i + 1..];
            continue;
        }
        let (mut depth, mut end) = (0usize, after.len());
        for (j, c) in after.char_indices() {
            match c {
                '[' => depth += 1,
                ']' if depth == 1 => {
                    end = j + 1;
                    break;
                }
                ']' => depth -= 1,
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The modules a crate root declares (`mod x;`) and the names it re-exports or imports from
/// them (`pub use x::{A, B}` gives A and B → x).
fn root_names(root: &str) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let mut modules = BTreeSet::new();
    let mut names = BTreeMap::new();
    for stmt in root.split(';') {
        let stmt = without_attributes(stmt);
        let words: Vec<&str> = stmt.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "mod" || *w == "use") else {
            continue;
        };
        if !words[..at].iter().all(|w| w.starts_with("pub")) {
            continue;
        }
        let rest = words[at + 1..].join(" ");
        if words[at] == "mod" {
            if words.len() == at + 2 {
                modules.insert(ident(&rest).to_string());
            }
            continue;
        }
        let rest = rest.strip_prefix("self::").unwrap_or(&rest);
        let from = ident(rest).to_string();
        let leaves = rest[from.len()..].split(|c: char| !is_ident(c));
        for leaf in leaves.filter(|w| !w.is_empty() && *w != "self" && *w != "as") {
            names.insert(leaf.to_string(), from.clone());
        }
    }
    names.retain(|_, from| modules.contains(from));
    (modules, names)
}

/// How many inline modules (`mod x { ... }`) are open at the end of `text`.
fn inline_modules_open(text: &str) -> usize {
    let mut open: Vec<bool> = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                let before = text[..i].trim_end();
                let name = before.trim_end_matches(is_ident);
                open.push(name.len() < before.len() && name.trim_end().ends_with("mod"));
            }
            '}' => {
                open.pop();
            }
            _ => {}
        }
    }
    open.into_iter().filter(|m| *m).count()
}

/// The paths (after `crate::`, or after as many `super::` as climb to the root from a file
/// whose module is `depth` deep) in `text`.
fn root_paths(text: &str, depth: usize) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        if starts_path(text, i) {
            out.push(&text[i + "crate::".len()..]);
        }
    }
    for (i, _) in text.match_indices("super::") {
        if !starts_path(text, i) {
            continue;
        }
        let mut rest = &text[i..];
        let mut climbed = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            climbed += 1;
        }
        if climbed == depth + inline_modules_open(&text[..i]) {
            out.push(rest);
        }
    }
    out
}

/// How deep each file's module is below the crate root: `a.rs` and `a/mod.rs` 1, `a/b.rs` 2;
/// a file a `#[path = "..."]` attribute names is one below the module that names it.
fn depths(files: &[(PathBuf, String)]) -> BTreeMap<PathBuf, usize> {
    let by_path = |p: &Path| {
        let stem = p.file_stem().unwrap_or_default();
        p.components().count() - usize::from(stem == "mod")
    };
    let mut out: BTreeMap<PathBuf, usize> =
        files.iter().map(|(p, _)| (p.clone(), by_path(p))).collect();
    for (path, text) in files {
        for (i, _) in text.match_indices("#[path = \"") {
            let rest = &text[i + "#[path = \"".len()..];
            let named = &rest[..rest.find('"').unwrap_or(0)];
            let dir = path.parent().unwrap_or(Path::new(""));
            out.insert(dir.join(named), by_path(path) + 1);
        }
    }
    out
}

/// A crate's module graph from its sources: `files` are (path under src/, text) pairs, the
/// root (lib.rs or main.rs) among them. Test-only files (`tests.rs`, `*_tests.rs`, under
/// `tests/`) are left out: a test may reach anything.
fn layers(files: &[(PathBuf, String)]) -> Layers {
    let is_root = |p: &Path| p == Path::new("lib.rs") || p == Path::new("main.rs");
    let root = files
        .iter()
        .find(|(p, _)| is_root(p))
        .expect("lib.rs or main.rs");
    let (modules, names) = root_names(&code(&root.1));
    let depth_of = depths(files);
    let mut parts = Vec::new();
    let mut macros = BTreeMap::new();
    for (path, text) in files.iter().filter(|(p, _)| !is_root(p)) {
        let stem = path.file_stem().unwrap().to_string_lossy();
        let in_tests = path.components().any(|c| c.as_os_str() == "tests");
        if stem == "tests" || stem.ends_with("_tests") || in_tests {
            continue;
        }
        let top = path
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if !modules.contains(&top) {
            continue;
        }
        let depth = depth_of[path];
        let text = code(text);
        for (i, _) in text.match_indices("macro_rules!") {
            let name = ident(text[i + "macro_rules!".len()..].trim_start());
            macros.insert(name.to_string(), top.clone());
        }
        parts.push((path.display().to_string(), top, depth, text));
    }
    let mut graph = Graph::new();
    let mut through_root = Vec::new();
    for (file, top, depth, text) in &parts {
        let arrows = graph.entry(top.clone()).or_default();
        let mut arrow = |to: &String, why: String| {
            if to != top {
                arrows.entry(to.clone()).or_default().insert(why);
            }
        };
        for rest in root_paths(text, *depth) {
            for name in first_segments(rest) {
                if modules.contains(name) {
                    arrow(&name.to_string(), format!("{file}: crate::{name}"));
                } else {
                    through_root.push(format!("{file}: crate::{name}"));
                    if let Some(from) = names.get(name) {
                        arrow(from, format!("{file}: crate::{name} (from {from})"));
                    }
                }
            }
        }
        for (name, at) in &macros {
            let call = format!("{name}!");
            if text.match_indices(&call).any(|(i, _)| starts_path(text, i)) {
                arrow(at, format!("{file}: {call}"));
            }
        }
    }
    Layers {
        graph,
        through_root,
    }
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
            stack.extend(g.get(&m).into_iter().flat_map(|a| a.keys()).cloned());
        }
    }
    false
}

/// Each loop of modules (those that reach one another), with the arrows between them.
fn loops(g: &Graph) -> Vec<String> {
    let mut placed = BTreeSet::new();
    let mut out = Vec::new();
    for m in g.keys() {
        if placed.contains(m) {
            continue;
        }
        let together: Vec<&String> = g
            .keys()
            .filter(|o| *o == m || (reaches(g, m, o) && reaches(g, o, m)))
            .collect();
        if together.len() < 2 {
            continue;
        }
        let mut text = format!("loop of {} modules:", together.len());
        for from in &together {
            placed.insert((*from).clone());
            for (to, why) in &g[*from] {
                if together.contains(&to) {
                    let why: Vec<&str> = why.iter().map(String::as_str).collect();
                    text.push_str(&format!("\n  {from} -> {to} ({})", why.join("; ")));
                }
            }
        }
        out.push(text);
    }
    out
}

fn sources(dir: &Path, under: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, under, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = fs::read_to_string(&path).unwrap();
            out.push((path.strip_prefix(under).unwrap().to_path_buf(), text));
        }
    }
}

/// Every crate under crates/, by directory name, with its sources.
fn crates() -> Vec<(String, Vec<(PathBuf, String)>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    let mut out = Vec::new();
    for entry in fs::read_dir(&root).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            let mut files = Vec::new();
            sources(&src, &src, &mut files);
            let name = src.parent().unwrap().file_name().unwrap();
            out.push((name.to_string_lossy().into_owned(), files));
        }
    }
    out.sort();
    out
}

#[test]
fn no_crate_has_an_import_loop() {
    let all = crates();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "core",
        "cli",
        "render",
        "cuda",
        "vulkan",
        "opencl",
        "conformance",
    ] {
        assert!(
            names.contains(&expected),
            "crates/{expected} not found: {names:?}"
        );
    }
    let mut found = Vec::new();
    for (name, files) in &all {
        let l = layers(files);
        if name == "core" || name == "cli" {
            assert!(l.graph.len() > 8, "{name}'s modules were not found");
        }
        found.extend(
            loops(&l.graph)
                .into_iter()
                .map(|x| format!("crates/{name}: {x}")),
        );
    }
    assert!(found.is_empty(), "import loops:\n{}", found.join("\n"));
}

#[test]
fn the_core_names_nothing_through_its_root() {
    let (_, files) = crates().into_iter().find(|(n, _)| n == "core").unwrap();
    let l = layers(&files);
    assert!(l.through_root.is_empty(), "{:#?}", l.through_root);
}

fn file(path: &str, text: &str) -> (PathBuf, String) {
    (PathBuf::from(path), text.to_string())
}

#[test]
fn a_loop_is_found_and_named_through_every_kind_of_path() {
    let root = "#[macro_use]\nmod out;\nmod args;\npub mod run;\npub use run::{Runner, go};";
    let arrows = [
        // crate:: in a group, through a re-exported name, and `super::super::` from a child.
        ("args.rs", "use crate::{out::x, Runner};"),
        ("args/deep.rs", "use super::super::run::y;"),
        (
            "out/mod.rs",
            "macro_rules! say { () => {} }\nuse crate::args::A;",
        ),
        ("run.rs", "fn f() { say!(); }"),
    ];
    let with = |i: usize| {
        let mut files = vec![file("main.rs", root)];
        files.push(file(arrows[i].0, arrows[i].1));
        files
    };
    assert!(loops(&layers(&with(0)).graph).is_empty());
    // args → out (group) and out → args: a loop, named with its files.
    let mut files = with(0);
    files.push(file(arrows[2].0, arrows[2].1));
    let found = loops(&layers(&files).graph);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("args -> out (args.rs: crate::out)"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("out -> args (out/mod.rs: crate::args)"),
        "{}",
        found[0]
    );
    // args → run (re-export; super::super from args/deep.rs), run → out (macro), out → args.
    for via in [0, 1] {
        let mut files = vec![file("main.rs", root)];
        for i in [via, 2, 3] {
            files.push(file(arrows[i].0, arrows[i].1));
        }
        let found = loops(&layers(&files).graph).join("\n");
        assert!(found.contains("run -> out (run.rs: say!)"), "{found}");
        assert!(found.contains("args -> run"), "{found}");
    }
    // A comment, a test module, a test file and a deeper `super::` make no arrow.
    let quiet = [
        (
            "out.rs",
            "// crate::args\n#[cfg(test)]\nmod tests {\n use crate::args; }",
        ),
        ("out_tests.rs", "use crate::args;"),
        ("out/inner.rs", "use super::args;"),
        ("args.rs", "use crate::out;"),
    ];
    let mut files = vec![file("main.rs", root)];
    files.extend(quiet.iter().map(|(p, t)| file(p, t)));
    assert!(loops(&layers(&files).graph).is_empty());
    // An inline module's `super::super::`, and a `#[path]` file's, climb one more level.
    for (path, text) in [
        ("out.rs", "mod inner {\n use super::super::args::A;\n}"),
        ("out/x.rs", "#[path = \"y.rs\"]\nmod y;"),
    ] {
        let mut files = vec![file("main.rs", root), file("args.rs", "use crate::out;")];
        files.push(file(path, text));
        files.push(file("out/y.rs", "use super::super::super::args::A;"));
        assert_eq!(loops(&layers(&files).graph).len(), 1, "{path}");
    }
}
