//! Which programming interface a device, a row or a failure belongs to: data, not a closed enum.
//!
//! Each backend crate defines one `static` [`ApiInfo`] (its name, its words for the launch
//! concepts, what its specification guarantees, how to install a driver) and hands it out as an
//! [`Api`]. The core never names CUDA, Vulkan or OpenCL: a fourth API is a fourth `static`.
//!
//! An [`Api`] is serialised as its key (`"cuda"`, `"vulkan"`, `"opencl"`). Reading a report
//! back resolves the key against the APIs registered in this process ([`Api::register`], done
//! by the provider list); a key nobody registered (a report from a newer blocksweep) still
//! round-trips, named by its key.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use crate::guarantee::Guarantee;
use crate::language::Language;
use crate::limits::Concept;
use crate::options::ApiOption;
use crate::subgroup_probe::SubgroupProbe;

/// What an API calls the things a launch is made of. Used for headers, legends and sentences,
/// so each API's output reads in its own vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vocabulary {
    /// One thread of the kernel: "thread", "invocation", "work-item".
    pub thread: &'static str,
    /// The group the sweep varies: "thread block", "workgroup", "work-group".
    pub block: &'static str,
    /// The launch's number of groups: "grid", "workgroup count", "number of work-groups".
    pub grid: &'static str,
    /// The SIMD unit: "warp", "subgroup", "sub-group".
    pub warp: &'static str,
    /// The unit that groups are scheduled on: "SM", "compute unit".
    pub multiprocessor: &'static str,
    /// The call that launches: "cuLaunchKernel", "vkCmdDispatch", "clEnqueueNDRangeKernel".
    pub launch: &'static str,
}

/// Everything static about one API.
#[derive(Debug)]
pub struct ApiInfo {
    /// Lower-case key for the command line, CSV and JSON: "cuda".
    pub key: &'static str,
    /// Other spellings accepted on the command line: "vk", "cl".
    pub aliases: &'static [&'static str],
    /// Display name: "CUDA".
    pub name: &'static str,
    /// Where the API sorts among the others (smaller first); ties sort by key.
    pub rank: u16,
    pub words: Vocabulary,
    /// The minimum the API's specification promises for a limit concept, in words ("128",
    /// "16 KiB"); concepts it makes no promise about are absent. `docs/limits.md` names the
    /// sections quoted.
    pub guarantees: &'static [Guarantee],
    /// One sentence on how to get a driver, for "unavailable" messages.
    pub install_hint: &'static str,
    /// Host bytes per pixel this API's backend holds beyond the core's own planes (a
    /// host-visible staging plane), for the host-memory estimate ([`crate::hostmem`]).
    pub host_bytes_per_pixel: u64,
    /// What opening its devices may be told ([`crate::options`]); the command line offers
    /// these on every command that opens a device.
    pub options: &'static [ApiOption],
    pub conduct: Conduct,
    /// What a user's kernel for this API may be written in (`[sources]` in a spec file): file
    /// extensions and their languages; one language takes a file of any name. Empty where the
    /// backend runs no user kernel.
    pub kernel_languages: &'static [(&'static str, Language)],
    /// The entry point a spec may leave out ("main" for a GLSL shader); `None`: it must say.
    pub default_entry: Option<&'static str>,
    /// How `validate` measures its subgroups ([`crate::subgroup::SubgroupProbe`]); `None`:
    /// no probe row.
    pub subgroup_probe: Option<&'static dyn SubgroupProbe>,
    /// The key of the API this one runs over on this build, where it is a layer over another
    /// (WebGPU through wgpu on Vulkan): the merged table also gives its ratio to that API, the
    /// cost of the layer. `None` for an API with its own driver.
    pub over: Option<&'static str>,
}

/// "CUDA", "CUDA and OpenCL", "CUDA, Vulkan and OpenCL": APIs named in a sentence.
pub fn named_in_words(apis: &[Api]) -> String {
    let names: Vec<&str> = apis.iter().map(|a| a.name()).collect();
    crate::words::and_list(&names)
}

/// How an API answers what its limits do not settle, in its own words, for the "who
/// guarantees it" notes of `validate` and the lab.
#[derive(Debug)]
pub struct Conduct {
    /// A launch beyond a limit the device states is undefined behaviour (so the backend
    /// refuses it before the driver), not an error the API returns.
    pub undefined_beyond_limits: bool,
    /// The query for a compiled kernel's own limit on threads per block, where there is one.
    pub kernel_block_query: Option<&'static str>,
    /// Its answer to a block within the thread limit whose registers do not fit.
    pub too_many_registers: &'static str,
    /// What fixes the subgroup size, and where it is answered.
    pub subgroup_size: &'static str,
    /// Whether subgroups are consecutive invocations, where the API documents it.
    pub subgroup_layout: Option<&'static str>,
    /// How a kernel may require a subgroup size, where it can.
    pub subgroup_request: Option<&'static str>,
}

impl Conduct {
    /// An API that says nothing about any of it (test doubles, a key read from a report).
    pub const UNSTATED: Conduct = Conduct {
        undefined_beyond_limits: false,
        kernel_block_query: None,
        too_many_registers: "not stated",
        subgroup_size: "not stated",
        subgroup_layout: None,
        subgroup_request: None,
    };
}

/// A handle on one API's static facts; cheap to copy, compared by key.
#[derive(Clone, Copy)]
pub struct Api(&'static ApiInfo);

/// The rank of an API known only by a key read from a report.
const UNKNOWN_RANK: u16 = u16::MAX;

/// APIs known to this process, so that a report read back resolves its keys.
static REGISTERED: Mutex<Vec<&'static ApiInfo>> = Mutex::new(Vec::new());

impl Api {
    pub const fn new(info: &'static ApiInfo) -> Api {
        Api(info)
    }

    pub fn info(self) -> &'static ApiInfo {
        self.0
    }

    pub fn key(self) -> &'static str {
        self.0.key
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn words(self) -> &'static Vocabulary {
        &self.0.words
    }

    /// What each API calls the unit the sweep varies.
    pub fn block_word(self) -> &'static str {
        self.0.words.block
    }

    /// What the specification promises for `concept`, where it promises anything.
    pub fn guarantee(self, concept: Concept) -> Option<&'static Guarantee> {
        self.0.guarantees.iter().find(|g| g.concept == concept)
    }

    /// Makes `api` resolvable by key in this process (idempotent).
    pub fn register(api: Api) {
        let mut known = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        match known.iter_mut().find(|k| k.key == api.0.key) {
            // A key first met in a report read back stood for an API not yet registered.
            Some(k) if k.rank == UNKNOWN_RANK => *k = api.0,
            Some(_) => {}
            None => known.push(api.0),
        }
    }

    /// Every API registered in this process, in rank order: the ones "who guarantees it"
    /// speaks of.
    pub fn known() -> Vec<Api> {
        let known = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        let mut apis: Vec<Api> = known.iter().map(|k| Api(k)).collect();
        apis.sort();
        apis
    }

    /// How the API answers launches its limits do not cover.
    pub fn conduct(self) -> &'static Conduct {
        &self.0.conduct
    }

    /// The registered API whose key or alias is `s` (case-insensitive).
    pub fn from_key(s: &str) -> Option<Api> {
        let s = s.trim().to_ascii_lowercase();
        let known = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        known
            .iter()
            .find(|k| k.key == s || k.aliases.contains(&s.as_str()))
            .map(|k| Api(k))
    }

    /// An API named only by its key, for a report that names one this process does not know.
    fn unknown(key: &str) -> Api {
        let key: &'static str = Box::leak(key.to_owned().into_boxed_str());
        let info = Box::leak(Box::new(ApiInfo {
            key,
            aliases: &[],
            name: key,
            rank: UNKNOWN_RANK,
            words: Vocabulary {
                thread: "thread",
                block: "block",
                grid: "grid",
                warp: "SIMD group",
                multiprocessor: "multiprocessor",
                launch: "launch",
            },
            guarantees: &[],
            install_hint: "",
            host_bytes_per_pixel: 0,
            options: &[],
            conduct: Conduct::UNSTATED,
            kernel_languages: &[],
            default_entry: None,
            subgroup_probe: None,
            over: None,
        }));
        Api::register(Api(info));
        Api(info)
    }
}

impl PartialEq for Api {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl Eq for Api {}

impl Hash for Api {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.key.hash(state)
    }
}

impl Ord for Api {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0.rank, self.0.key).cmp(&(other.0.rank, other.0.key))
    }
}
impl PartialOrd for Api {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Serialize for Api {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.key)
    }
}

impl<'de> Deserialize<'de> for Api {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Api, D::Error> {
        let key = String::deserialize(d)?;
        Ok(Api::from_key(&key).unwrap_or_else(|| Api::unknown(&key)))
    }
}

/// Languages met by key only (read from a request or a report), kept so each is leaked once.
static MET: Mutex<Vec<Language>> = Mutex::new(Vec::new());

impl Language {
    /// The language a registered API's provider declares under `key`, else one named by its
    /// key (its backend still knows it: languages compare by key).
    pub fn from_key(key: &str) -> Language {
        let declared = Api::known().into_iter().find_map(|a| {
            let declared = a.info().kernel_languages.iter();
            declared.map(|(_, l)| *l).find(|l| l.key == key)
        });
        if let Some(l) = declared {
            return l;
        }
        let mut met = MET.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = met.iter().find(|l| l.key == key) {
            return *l;
        }
        let key: &'static str = Box::leak(key.to_owned().into_boxed_str());
        met.push(Language::new(key, key));
        Language::new(key, key)
    }
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Language, D::Error> {
        Ok(Language::from_key(&String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TEST_API_A, TEST_API_B};

    #[test]
    fn keys_round_trip_and_unknown_keys_survive() {
        Api::register(TEST_API_A);
        let json = serde_json::to_string(&TEST_API_A).unwrap();
        assert_eq!(json, "\"alpha\"");
        let back: Api = serde_json::from_str(&json).unwrap();
        assert_eq!(back, TEST_API_A);
        assert_eq!(back.name(), "Alpha");
        let hip: Api = serde_json::from_str("\"hip\"").unwrap();
        assert_eq!((hip.key(), hip.name()), ("hip", "hip"));
        assert_eq!(Api::from_key("HIP"), Some(hip));
    }

    /// A key read from a report before its API registered stands in for it until it does.
    #[test]
    fn a_registered_api_supersedes_the_key_a_report_named() {
        static LATE: ApiInfo = crate::testing::bare_api("late-api", "Late", 5, &[]);
        let read: Api = serde_json::from_str("\"late-api\"").unwrap();
        assert_eq!(read.name(), "late-api");
        Api::register(Api::new(&LATE));
        assert_eq!(Api::from_key("late-api").map(|a| a.name()), Some("Late"));
    }

    #[test]
    fn order_is_by_rank_and_aliases_resolve() {
        Api::register(TEST_API_B);
        assert!(TEST_API_A < TEST_API_B);
        assert_eq!(Api::from_key("b"), Some(TEST_API_B));
        assert_eq!(
            TEST_API_B
                .guarantee(Concept::MaxThreadsPerBlock)
                .map(|g| g.to_string()),
            Some("128".into())
        );
        assert_eq!(TEST_API_A.guarantee(Concept::MaxThreadsPerBlock), None);
    }
}
