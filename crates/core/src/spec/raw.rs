//! The spec file exactly as written: serde structs, every one `deny_unknown_fields` so that a
//! misspelt key is an error rather than a silently ignored setting. Values with more than one
//! form (an init, a scalar's value, `work`) stay `toml::Value` here and are read, with a message
//! naming their key, by `super::load`.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub work: toml::Value,
    pub sizes: BTreeMap<String, u64>,
    /// One source per API key; the keys are checked against the APIs registered.
    pub sources: BTreeMap<String, RawSource>,
    #[serde(default)]
    pub args: Vec<RawArg>,
    #[serde(default)]
    pub check: RawCheck,
    #[serde(default)]
    pub launch: RawLaunch,
    /// The kernel's own parameters and `restrict` (read by `super::tune`).
    #[serde(default)]
    pub tune: Option<BTreeMap<String, toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSource {
    pub file: String,
    pub entry: Option<String>,
    #[serde(default)]
    pub options: Vec<String>,
}

/// One `[[args]]` table: exactly one of `buffer`, `scalar`, `local` says its kind; the other
/// keys belong to one kind each, and a key of another kind is an error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawArg {
    pub buffer: Option<String>,
    pub scalar: Option<String>,
    pub local: Option<bool>,
    pub name: String,
    // Buffers.
    pub elements: Option<toml::Value>,
    pub init: Option<toml::Value>,
    pub seed: Option<u64>,
    pub range: Option<[toml::Value; 2]>,
    pub written: Option<bool>,
    pub compare: Option<String>,
    /// A file holding what the kernel must write to this buffer (raw or .npy).
    pub reference: Option<String>,
    // Scalars.
    pub value: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCheck {
    pub bytes_per_item: Option<f64>,
    pub tolerance_ulps: Option<u64>,
    pub tolerance_abs: Option<f64>,
    pub tolerance_rel: Option<f64>,
    pub nonfinite: Option<String>,
    pub timing_only: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLaunch {
    pub grid: Option<String>,
    pub max_grid: Option<toml::Value>,
    pub shared_bytes: Option<toml::Value>,
    pub blocks: Option<String>,
    pub subgroup_size: Option<u64>,
}
