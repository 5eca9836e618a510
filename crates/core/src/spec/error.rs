//! The one error a spec file can give: a single line naming the file and the key, so that the
//! CLI prints it as it is ("examples/kernels/saxpy/kernel.toml: args[1].init: ..."); and what a
//! file given for a spec that is not one is told.

use std::fmt;
use std::path::Path;

use super::raw::{RawSource, RawSpec};

/// What went wrong in a spec file, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file as the user named it.
    pub file: String,
    /// The key path inside it ("args\[1\].init", "sources.cuda.file"); empty for the whole file.
    pub key: String,
    /// What is wrong, in one line.
    pub message: String,
}

impl SpecError {
    pub fn new(
        file: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        SpecError {
            file: file.into(),
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key.is_empty() {
            true => write!(f, "{}: {}", self.file, self.message),
            false => write!(f, "{}: {}: {}", self.file, self.key, self.message),
        }
    }
}

impl std::error::Error for SpecError {}

/// A TOML syntax or shape error as one line: toml's own message (which names an unknown or
/// missing key) with the line and column of its span and the table it sits in.
pub(crate) fn from_toml(file: &str, text: &str, err: &toml::de::Error) -> SpecError {
    let message = err.message().trim().replace('\n', " ");
    let Some(span) = err.span() else {
        return SpecError::new(file, "", message);
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let key = enclosing_table(before).unwrap_or_default();
    SpecError::new(
        file,
        key,
        format!("line {line}, column {column}: {message}"),
    )
}

/// The table header above a position: `args[2]` for the third `[[args]]`, `check` for
/// `[check]`, None at top level.
fn enclosing_table(before: &str) -> Option<String> {
    let mut arrays = std::collections::HashMap::<String, usize>::new();
    let mut current = None;
    for line in before.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("[[").and_then(|r| r.split_once("]]")) {
            let name = name.0.trim().to_string();
            let n = arrays.entry(name.clone()).or_insert(0);
            current = Some(format!("{name}[{n}]"));
            *n += 1;
        } else if let Some(name) = t.strip_prefix('[').and_then(|r| r.split_once(']')) {
            current = Some(name.0.trim().to_string());
        }
    }
    current
}

/// Why a file that is not TOML cannot be a spec: a source given for its spec names the spec
/// beside it that names it, anything else is told what a spec is.
pub(crate) fn not_a_spec(path: &Path, dir: &Path) -> String {
    let source = path.canonicalize().ok();
    let names_it = |spec: &Path| {
        let text = std::fs::read_to_string(spec).unwrap_or_default();
        let raw = toml::from_str::<RawSpec>(&text).ok()?;
        let named = |s: &RawSource| dir.join(&s.file).canonicalize().ok() == source;
        raw.sources
            .values()
            .any(named)
            .then(|| spec.strip_prefix(".").unwrap_or(spec).display().to_string())
    };
    let here = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    let mut specs: Vec<String> = std::fs::read_dir(here)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| names_it(&p))
        .collect();
    specs.sort();
    match specs.first() {
        Some(spec) => format!(
            "a kernel source, not a spec file: give the spec that names it, --kernel {spec}"
        ),
        None => "not a spec file: a spec is a TOML file that names the kernel's sources and \
                 arguments (docs/kernels.md)"
            .into(),
    }
}
