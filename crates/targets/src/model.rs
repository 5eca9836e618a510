//! A target as data: the limits a GPU, a profile or a specification states, each value with
//! the name its API gives it and the source it was read from.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// A launch limit a target may state. The keys are the catalogue's (API-neutral); each value
/// carries its API's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Key {
    ThreadsPerBlock,
    BlockDims,
    GridDims,
    SharedBytes,
    SharedBytesOptin,
    PushConstantBytes,
    ParameterBytes,
    StorageBuffers,
    StorageBindingBytes,
    RegistersPerThread,
    RegistersPerBlock,
    RegistersPerSm,
    RegisterGranularity,
    ThreadsPerSm,
    BlocksPerSm,
    SharedBytesPerSm,
    SharedReservedPerBlock,
    SharedGranularity,
}

impl Key {
    pub const ALL: [Key; 18] = [
        Key::ThreadsPerBlock,
        Key::BlockDims,
        Key::GridDims,
        Key::SharedBytes,
        Key::SharedBytesOptin,
        Key::PushConstantBytes,
        Key::ParameterBytes,
        Key::StorageBuffers,
        Key::StorageBindingBytes,
        Key::RegistersPerThread,
        Key::RegistersPerBlock,
        Key::RegistersPerSm,
        Key::RegisterGranularity,
        Key::ThreadsPerSm,
        Key::BlocksPerSm,
        Key::SharedBytesPerSm,
        Key::SharedReservedPerBlock,
        Key::SharedGranularity,
    ];

    /// The key as the files write it.
    pub fn key(self) -> &'static str {
        match self {
            Key::ThreadsPerBlock => "threads_per_block",
            Key::BlockDims => "block_dims",
            Key::GridDims => "grid_dims",
            Key::SharedBytes => "shared_bytes",
            Key::SharedBytesOptin => "shared_bytes_optin",
            Key::PushConstantBytes => "push_constant_bytes",
            Key::ParameterBytes => "parameter_bytes",
            Key::StorageBuffers => "storage_buffers",
            Key::StorageBindingBytes => "storage_binding_bytes",
            Key::RegistersPerThread => "registers_per_thread",
            Key::RegistersPerBlock => "registers_per_block",
            Key::RegistersPerSm => "registers_per_sm",
            Key::RegisterGranularity => "register_granularity",
            Key::ThreadsPerSm => "threads_per_sm",
            Key::BlocksPerSm => "blocks_per_sm",
            Key::SharedBytesPerSm => "shared_bytes_per_sm",
            Key::SharedReservedPerBlock => "shared_reserved_per_block",
            Key::SharedGranularity => "shared_granularity",
        }
    }

    pub fn parse(s: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.key() == s)
    }

    /// What the limit bounds, in words (docs/targets.md has the same list).
    pub fn what(self) -> &'static str {
        match self {
            Key::ThreadsPerBlock => "threads in one block",
            Key::BlockDims => "a block's extent per dimension",
            Key::GridDims => "blocks per grid dimension",
            Key::SharedBytes => "shared memory per block",
            Key::SharedBytesOptin => "shared memory per block, opted in",
            Key::PushConstantBytes => "push-constant bytes",
            Key::ParameterBytes => "kernel argument bytes",
            Key::StorageBuffers => "storage buffers bound at once",
            Key::StorageBindingBytes => "bytes of one storage binding",
            Key::RegistersPerThread => "registers per thread",
            Key::RegistersPerBlock => "registers per block",
            Key::RegistersPerSm => "registers per multiprocessor",
            Key::RegisterGranularity => "register allocation unit per warp",
            Key::ThreadsPerSm => "resident threads per multiprocessor",
            Key::BlocksPerSm => "resident blocks per multiprocessor",
            Key::SharedBytesPerSm => "shared memory per multiprocessor",
            Key::SharedReservedPerBlock => "shared memory reserved per block",
            Key::SharedGranularity => "shared memory allocation unit",
        }
    }

    pub fn is_dims(self) -> bool {
        matches!(self, Key::BlockDims | Key::GridDims)
    }

    pub fn is_bytes(self) -> bool {
        matches!(
            self,
            Key::SharedBytes
                | Key::SharedBytesOptin
                | Key::PushConstantBytes
                | Key::ParameterBytes
                | Key::StorageBindingBytes
                | Key::SharedBytesPerSm
                | Key::SharedReservedPerBlock
                | Key::SharedGranularity
        )
    }

    /// The name an API gives the limit, for a target that does not state it (the
    /// `unknown` verdict names what is missing in the target's own words).
    pub fn name_in(self, api: &str) -> &'static str {
        let names: [&'static str; 4] = match self {
            Key::ThreadsPerBlock => [
                "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
                "maxComputeWorkGroupInvocations",
                "CL_DEVICE_MAX_WORK_GROUP_SIZE",
                "maxComputeInvocationsPerWorkgroup",
            ],
            Key::BlockDims => [
                "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z",
                "maxComputeWorkGroupSize",
                "CL_DEVICE_MAX_WORK_ITEM_SIZES",
                "maxComputeWorkgroupSizeX/Y/Z",
            ],
            Key::GridDims => [
                "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X/Y/Z",
                "maxComputeWorkGroupCount",
                "the global size (no per-dimension limit)",
                "maxComputeWorkgroupsPerDimension",
            ],
            Key::SharedBytes => [
                "48 KiB static __shared__ per block",
                "maxComputeSharedMemorySize",
                "CL_DEVICE_LOCAL_MEM_SIZE",
                "maxComputeWorkgroupStorageSize",
            ],
            Key::PushConstantBytes => [
                "kernel parameters",
                "maxPushConstantsSize",
                "CL_DEVICE_MAX_PARAMETER_SIZE",
                "immediate data",
            ],
            Key::StorageBuffers => [
                "buffer arguments",
                "maxPerStageDescriptorStorageBuffers",
                "buffer arguments",
                "maxStorageBuffersPerShaderStage",
            ],
            Key::StorageBindingBytes => [
                "CU_DEVICE_ATTRIBUTE_TOTAL_MEMORY",
                "maxStorageBufferRange",
                "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
                "maxStorageBufferBindingSize",
            ],
            _ => return self.key_name(),
        };
        match api {
            "cuda" => names[0],
            "vulkan" => names[1],
            "opencl" => names[2],
            "webgpu" => names[3],
            _ => self.key_name(),
        }
    }

    fn key_name(self) -> &'static str {
        self.key()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A stated value: one number, or three extents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    One(u64),
    Dims([u64; 3]),
}

impl Value {
    pub fn one(self) -> Option<u64> {
        match self {
            Value::One(v) => Some(v),
            Value::Dims(_) => None,
        }
    }

    pub fn dims(self) -> Option<[u64; 3]> {
        match self {
            Value::Dims(d) => Some(d),
            Value::One(_) => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::One(v) => write!(f, "{v}"),
            Value::Dims([x, y, z]) => write!(f, "({x}, {y}, {z})"),
        }
    }
}

/// Where a value was read: a document and section, or a repository, path and commit; and when.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Source {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub read: String,
}

impl Source {
    /// Whether the source says where (a document, a repository and path, or an address) and when.
    pub fn is_complete(&self) -> bool {
        let located = self.document.is_some()
            || (self.repository.is_some() && self.path.is_some())
            || self.url.is_some();
        located && !self.read.trim().is_empty()
    }

    /// The source in one line: the document, else repository/path@commit, else the address;
    /// then when it was read.
    pub fn cite(&self) -> String {
        let place = match (&self.document, &self.repository, &self.path, &self.url) {
            (Some(d), _, _, _) => d.clone(),
            (None, Some(r), Some(p), _) => match &self.commit {
                Some(c) => format!("{r} {p} @{}", &c[..c.len().min(12)]),
                None => format!("{r} {p}"),
            },
            (_, _, _, Some(u)) => u.clone(),
            _ => self.id.clone(),
        };
        format!("{place}, read {}", self.read)
    }
}

/// One value a target states.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stated {
    pub value: Value,
    /// The API's own name for it (`maxComputeWorkGroupInvocations`).
    pub name: String,
    pub source: Source,
    /// The target it came from, where it was inherited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherited_from: Option<String>,
}

/// The subgroup (warp, wavefront, SIMD) sizes a target runs a kernel with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subgroup {
    /// The smallest size it may run (a profile may state only this bound).
    pub min: u64,
    /// The largest; `None` where the source states no upper bound.
    pub max: Option<u64>,
    /// The size the driver picks unless a pipeline requires another.
    pub default: Option<u64>,
    pub name: String,
    pub source: Source,
}

impl Subgroup {
    /// The one size it always runs, where min and max agree.
    pub fn fixed(&self) -> Option<u64> {
        self.max.filter(|&m| m == self.min)
    }

    /// "32", "8–32", "≥ 4".
    pub fn range(&self) -> String {
        match self.max {
            Some(m) if m == self.min => m.to_string(),
            Some(m) => format!("{}–{m}", self.min),
            None => format!("≥ {}", self.min),
        }
    }
}

/// What a target's numbers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A specification's, profile's or compute capability's guaranteed figures: a device
    /// that meets only these may refuse more.
    Minimum,
    /// What one real device reports.
    Device,
}

/// A GPU, profile or specification a kernel may be ported to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    pub name: String,
    pub title: String,
    pub family: String,
    /// Whose names the limits use (`vulkan`, `cuda`, ...).
    pub api: String,
    pub kind: Kind,
    pub tags: Vec<String>,
    pub limits: BTreeMap<Key, Stated>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subgroup: Option<Subgroup>,
    /// The file it was read from (a catalogue file's name, or a user's path).
    pub file: String,
}

impl Target {
    pub fn get(&self, key: Key) -> Option<&Stated> {
        self.limits.get(&key)
    }

    pub fn one(&self, key: Key) -> Option<u64> {
        self.get(key).and_then(|s| s.value.one())
    }

    pub fn dims(&self, key: Key) -> Option<[u64; 3]> {
        self.get(key).and_then(|s| s.value.dims())
    }

    /// Whether this target selects for `word`: its name, family or a tag.
    pub fn answers_to(&self, word: &str) -> bool {
        self.name == word || self.family == word || self.tags.iter().any(|t| t == word)
    }
}
