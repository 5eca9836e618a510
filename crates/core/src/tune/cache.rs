//! Every measured configuration, kept in a file keyed by device UUID, driver version, API,
//! the spec's hash and the configuration, so an interrupted tune resumes and a rerun measures
//! only what is new. Beside the entries: each parameter set's verdict (right or wrong) and
//! each API's reference output (a file of its own in `<cache>.d/`), which new parameter sets
//! are compared with.
//!
//! The file is JSON, rewritten atomically after every parameter set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{params_text, Config, Measurement};
use crate::backend::DeviceIdentity;

const VERSION: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    /// "device key|configuration" → what it measured.
    entries: BTreeMap<String, Measurement>,
    /// "device key|parameters" → `None` right, `Some(why)` wrong.
    verdicts: BTreeMap<String, Option<String>>,
}

/// The cache of one run, loaded at the start and saved as it goes.
pub use crate::spec::hash;

#[derive(Debug)]
pub struct Cache {
    path: PathBuf,
    file: File,
}

/// Which device, driver and API measured, under which spec hash.
pub fn device_key(d: &DeviceIdentity, spec_hash: &str) -> String {
    let uuid = d
        .uuid_string()
        .unwrap_or_else(|| format!("{} #{}", d.name, d.index));
    format!("{uuid}|{}|{}|{spec_hash}", d.driver_version, d.api.key())
}

fn config_key(c: &Config) -> String {
    format!("{}|{}|{}", params_text(&c.params), c.block, c.grid.0)
}

impl Cache {
    /// Reads `path`; a missing file is an empty cache, an unreadable one an error in words.
    pub fn open(path: &Path) -> Result<Cache, String> {
        let file = match std::fs::read(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => File {
                version: VERSION,
                ..File::default()
            },
            Err(e) => return Err(format!("cannot read the cache {}: {e}", path.display())),
            Ok(bytes) => serde_json::from_slice::<File>(&bytes)
                .ok()
                .filter(|f| f.version == VERSION)
                .ok_or_else(|| {
                    format!(
                        "{} is not a blocksweep tune cache (version {VERSION}): move it away or \
                         give another --cache",
                        path.display()
                    )
                })?,
        };
        Ok(Cache {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn get(&self, device: &str, c: &Config) -> Option<Measurement> {
        let mut e = self
            .file
            .entries
            .get(&format!("{device}|{}", config_key(c)))?
            .clone();
        e.cached = true;
        Some(e)
    }

    pub fn put(&mut self, device: &str, e: &Measurement) {
        let mut e = e.clone();
        e.cached = false;
        self.file
            .entries
            .insert(format!("{device}|{}", config_key(&e.config)), e);
    }

    /// A parameter set's verdict on a device: `Some(None)` right, `Some(Some(why))` wrong.
    pub fn verdict(&self, device: &str, params: &BTreeMap<String, u64>) -> Option<Option<String>> {
        self.file
            .verdicts
            .get(&format!("{device}|{}", params_text(params)))
            .cloned()
    }

    pub fn put_verdict(
        &mut self,
        device: &str,
        params: &BTreeMap<String, u64>,
        wrong: Option<String>,
    ) {
        self.file
            .verdicts
            .insert(format!("{device}|{}", params_text(params)), wrong);
    }

    fn reference_path(&self, device: &str) -> PathBuf {
        let mut dir = self.path.clone().into_os_string();
        dir.push(".d");
        PathBuf::from(dir).join(format!("{}.bin", &hash(&[device.as_bytes()])[..32]))
    }

    /// An API's reference outputs (the first parameter set's), where a run saved them.
    pub fn reference(&self, device: &str) -> Option<Vec<Vec<u8>>> {
        let bytes = std::fs::read(self.reference_path(device)).ok()?;
        let mut out = Vec::new();
        let mut at = 0usize;
        while at < bytes.len() {
            let len = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?) as usize;
            out.push(bytes.get(at + 8..at + 8 + len)?.to_vec());
            at += 8 + len;
        }
        Some(out)
    }

    pub fn put_reference(&self, device: &str, outputs: &[Vec<u8>]) -> Result<(), String> {
        let path = self.reference_path(device);
        let mut bytes = Vec::new();
        for o in outputs {
            bytes.extend((o.len() as u64).to_le_bytes());
            bytes.extend(o);
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .and_then(|_| write_atomic(&path, &bytes))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Rewrites the file atomically: an interrupt leaves the last whole one.
    pub fn save(&self) -> Result<(), String> {
        let text = serde_json::to_vec(&self.file).map_err(|e| e.to_string())?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        write_atomic(&self.path, &text)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::BlockSize;
    use crate::grid::GridPolicy;
    use crate::tune::Outcome;

    #[test]
    fn entries_verdicts_and_references_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tune.json");
        let config = Config {
            params: [("ELEMS".to_string(), 4)].into_iter().collect(),
            block: BlockSize::linear(64),
            grid: GridPolicy::Waves(200).into(),
        };
        let entry = Measurement {
            api: crate::testing::TEST_API_A,
            gpu: None,
            config: config.clone(),
            grid_blocks: 8,
            outcome: Outcome::Refused {
                why: "too big".into(),
            },
            cached: false,
        };
        let mut c = Cache::open(&path).unwrap();
        c.put("dev", &entry);
        c.put_verdict("dev", &config.params, Some("differs".into()));
        c.put_reference("dev", &[vec![1, 2, 3], vec![]]).unwrap();
        c.save().unwrap();
        let c = Cache::open(&path).unwrap();
        let got = c.get("dev", &config).unwrap();
        assert!(got.cached);
        assert_eq!(got.outcome, entry.outcome);
        assert!(c.get("other", &config).is_none());
        assert_eq!(
            c.verdict("dev", &config.params),
            Some(Some("differs".into()))
        );
        assert_eq!(c.reference("dev"), Some(vec![vec![1, 2, 3], vec![]]));
        std::fs::write(&path, b"{}").unwrap();
        assert!(Cache::open(&path)
            .unwrap_err()
            .contains("not a blocksweep tune cache"));
    }
}
