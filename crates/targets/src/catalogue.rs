//! The catalogue: every target of the embedded files, and a `--target` list resolved against
//! it (names, families, tags, or files of the user's own).

use std::path::Path;

use crate::load::{self, FileError};
use crate::model::Target;

mod files {
    include!(concat!(env!("OUT_DIR"), "/files.rs"));
}

/// A family of targets, as `--target` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    pub name: String,
    pub title: String,
    pub file: String,
}

/// Every target the binary knows.
#[derive(Debug, Clone)]
pub struct Catalogue {
    pub targets: Vec<Target>,
    pub families: Vec<Family>,
}

/// A `--target` list that cannot be resolved: bad input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("--target {word}: no such target, family or file (known: {known})")]
    Unknown { word: String, known: String },
    #[error("{0}")]
    File(#[from] FileError),
    #[error("--target: an empty list")]
    Empty,
}

impl Catalogue {
    /// The embedded catalogue. Its files are tested (crates/targets/tests), so an error here
    /// is a bug in the build, not bad input.
    pub fn embedded() -> Result<Catalogue, FileError> {
        Catalogue::from_files(files::FILES)
    }

    /// A catalogue from (file name, text) pairs; inheritance may cross files.
    pub fn from_files(files: &[(&str, &str)]) -> Result<Catalogue, FileError> {
        let mut parsed = Vec::new();
        let mut families = Vec::new();
        for (name, text) in files {
            let p = load::parse(name, text)?;
            if let Some((t, _)) = p.targets.first() {
                families.push(Family {
                    name: t.family.clone(),
                    title: p.title.clone(),
                    file: name.to_string(),
                });
            }
            parsed.extend(p.targets);
        }
        let mut seen = std::collections::BTreeSet::new();
        for (t, _) in &parsed {
            if !seen.insert(t.name.clone()) {
                return Err(FileError {
                    file: t.file.clone(),
                    message: format!("target '{}' is named twice in the catalogue", t.name),
                });
            }
        }
        let targets = load::inherit(parsed, &[])?;
        Ok(Catalogue { targets, families })
    }

    pub fn get(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }

    /// The targets a comma-separated `--target` list names: a target, a family, a tag,
    /// `all`, or a path to a target file (it contains '/' or ends in ".toml"). Each target
    /// once, in the order first named.
    pub fn select(&self, list: &str) -> Result<Vec<Target>, SelectError> {
        let mut out: Vec<Target> = Vec::new();
        let mut push = |t: Target| {
            if !out.iter().any(|o| o.name == t.name) {
                out.push(t);
            }
        };
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word.contains('/') || word.ends_with(".toml") {
                for t in self.read_file(Path::new(word))? {
                    push(t);
                }
                continue;
            }
            let found: Vec<&Target> = match word {
                "all" => self.targets.iter().collect(),
                // A target's own name first: a family may share it.
                w => match self.get(w) {
                    Some(t) => vec![t],
                    None => self.targets.iter().filter(|t| t.answers_to(w)).collect(),
                },
            };
            if found.is_empty() {
                return Err(SelectError::Unknown {
                    word: word.to_string(),
                    known: self.known(),
                });
            }
            found.into_iter().cloned().for_each(&mut push);
        }
        match out.is_empty() {
            true => Err(SelectError::Empty),
            false => Ok(out),
        }
    }

    /// A user's target file, whose targets may inherit the catalogue's.
    pub fn read_file(&self, path: &Path) -> Result<Vec<Target>, FileError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| FileError {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let parsed = load::parse(&file, &text)?;
        load::inherit(parsed.targets, &self.targets)
    }

    /// The names `--target` takes, families first: the line an unknown name lists.
    pub fn known(&self) -> String {
        let mut words: Vec<String> = self.families.iter().map(|f| f.name.clone()).collect();
        for t in &self.targets {
            for tag in &t.tags {
                if !words.contains(tag) {
                    words.push(tag.clone());
                }
            }
        }
        words.extend(self.targets.iter().map(|t| t.name.clone()));
        words.push("all".into());
        words.push("a path to a target file".into());
        words.join(", ")
    }
}
