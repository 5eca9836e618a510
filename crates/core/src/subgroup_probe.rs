//! What a provider declares about its API's subgroups ([`crate::ApiInfo::subgroup_probe`]): the
//! probe kernel and how to build it on a device, and what the device's limits claim, under
//! the API's own names. The core runs whatever is declared; an API that declares nothing has
//! no probe row.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::language::Language;
use crate::limits::{KernelFacts, Limits, Named};
use crate::program::ProgramSource;

/// What an API claims about its subgroups, each under its native name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// The size query: CU_DEVICE_ATTRIBUTE_WARP_SIZE, subgroupSize, CL_DEVICE_WARP_SIZE_NV.
    pub size: Option<Named<u64>>,
    /// A width that is no subgroup claim (OpenCL's CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    /// where a device has no warp size query): shown, never judged.
    pub hint: Option<Named<u64>>,
    /// The sizes a kernel may run at, where the API says (Vulkan's
    /// minSubgroupSize..maxSubgroupSize); [`SubgroupProbe::range_names`] names its ends.
    pub range: Option<(u32, u32)>,
    /// The sizes a compute pipeline may require (powers of two within `range`); empty where
    /// none may be required, and then `required_not` says why.
    pub required: Vec<u32>,
    pub required_not: Option<String>,
    /// Per-kernel answers after the probe is built (OpenCL
    /// CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE), as (native name, value).
    pub per_kernel: Vec<(String, String)>,
}

impl Claims {
    /// The claim every API's limits carry: the warp size query, under its native name.
    pub fn of(limits: &Limits) -> Claims {
        Claims {
            size: limits.warp_size.clone(),
            ..Claims::default()
        }
    }

    /// These claims with the sizes a kernel may vary between, `min..=max`, and the sizes it
    /// may require: each power of two in that range, or none for the reason given.
    pub fn with_range(mut self, (min, max): (u32, u32), required_not: Option<String>) -> Claims {
        self.range = Some((min, max));
        self.required = match required_not {
            None => powers_of_two(min, max),
            Some(_) => Vec::new(),
        };
        self.required_not = required_not;
        self
    }

    /// The size claimed, as a number.
    pub fn claimed(&self) -> Option<u32> {
        self.size.as_ref().and_then(|n| u32::try_from(n.value).ok())
    }
}

fn powers_of_two(min: u32, max: u32) -> Vec<u32> {
    (0..32)
        .map(|s| 1u32 << s)
        .filter(|&p| p >= min && p <= max)
        .collect()
}

/// [`SubgroupProbe::range_names`] where an API gives its range's ends no names of its own.
pub const UNNAMED_RANGE: (&str, &str) = ("smallest subgroup size", "largest subgroup size");

/// One way to build the probe: its source (with options), and what it asks the API, in the
/// API's words ("warpSize, linear thread index / warpSize, __popc(__activemask())").
#[derive(Debug, Clone)]
pub struct ProbeBuild {
    pub source: ProgramSource,
    pub asks: &'static str,
}

impl ProbeBuild {
    /// The probe's text from `origin` (a path in the repository, for messages), with no
    /// options.
    pub fn new(
        language: Language,
        code: &str,
        origin: &str,
        entry: &str,
        asks: &'static str,
    ) -> ProbeBuild {
        ProbeBuild {
            source: ProgramSource {
                language,
                code: code.as_bytes().to_vec(),
                entry: entry.into(),
                origin: origin.into(),
                options: Vec::new(),
            },
            asks,
        }
    }

    /// The same build with these compiler options.
    pub fn with_options(mut self, options: &[&str]) -> ProbeBuild {
        self.source.options = options.iter().map(|o| o.to_string()).collect();
        self
    }
}

/// An API's subgroup probe. The probe kernel writes, per invocation, [`crate::subgroup::WORDS`] u32:
/// the size the API reports, its subgroup's id, and the active lanes a ballot counts (or
/// [`crate::subgroup::UNWRITTEN`] untouched); its one argument is that buffer.
pub trait SubgroupProbe: Sync + fmt::Debug {
    /// The builds to try on a device with these limits, in order (the first that builds is
    /// used), or why this device cannot run the probe at all.
    fn builds(&self, limits: &Limits) -> Result<Vec<ProbeBuild>, String>;

    /// What the limits claim about subgroups: by default the warp size query alone.
    fn claims(&self, limits: &Limits) -> Claims {
        Claims::of(limits)
    }

    /// The build option that makes the probe require subgroups of `size` (each size of
    /// [`Claims::required`] is probed with it), where a kernel can require one.
    fn require(&self, _size: u32) -> Option<String> {
        None
    }

    /// Why the probe could not be built, from each build's first error line.
    fn none_built(&self, _limits: &Limits, errors: &[String]) -> String {
        errors.join(" | ")
    }

    /// The built probe's own subgroup facts among its kernel facts, as (native name, value).
    fn per_kernel(&self, _facts: &KernelFacts) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The native names of [`Claims::range`]'s ends, for the table's notes.
    fn range_names(&self) -> (&'static str, &'static str) {
        UNNAMED_RANGE
    }
}
