//! The JSON Schemas in docs/schemas, and a document checked against one.

use std::path::{Path, PathBuf};

use jsonschema::Registry;
use serde_json::Value;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Every schema file, by name ("sweep", "common", ...).
pub fn schemas() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(repo().join("docs/schemas")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".schema.json") {
            out.push((stem.to_string(), read(&path)));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The schema violations of `doc` against `command`'s schema (its references to the other
/// schema files resolved from the files themselves, never fetched).
pub fn violations(command: &str, doc: &Value) -> Vec<String> {
    let all = schemas();
    let resources = all
        .iter()
        .map(|(_, s)| (s["$id"].as_str().unwrap().to_string(), s.clone()));
    let registry = Registry::new()
        .extend(resources)
        .unwrap()
        .prepare()
        .unwrap();
    let schema = &all.iter().find(|(n, _)| n == command).expect("a schema").1;
    let validator = jsonschema::options()
        .with_registry(&registry)
        .build(schema)
        .unwrap_or_else(|e| panic!("{command}'s schema: {e}"));
    validator
        .iter_errors(doc)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect()
}

/// `text` is JSON that `command`'s schema accepts; returns it.
pub fn conforms(command: &str, text: &str) -> Value {
    let doc: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{command}: {e}"));
    let bad = violations(command, &doc);
    assert!(bad.is_empty(), "{command}: {}", bad.join("\n"));
    doc
}
