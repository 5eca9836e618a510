//! What a driver declares about its API's subgroups ([`crate::ApiInfo::subgroup_probe`]): the
//! probe kernel and how to build it on a device, and what the device's limits claim, under
//! the API's own names. The core runs whatever is declared; an API that declares nothing has
//! no probe row.

use std::fmt;

use super::Claims;
use crate::backend::KernelFacts;
use crate::limits::Limits;
use crate::program::{Language, ProgramSource};

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

/// An API's subgroup probe. The probe kernel writes, per invocation, [`super::WORDS`] u32:
/// the size the API reports, its subgroup's id, and the active lanes a ballot counts (or
/// [`super::UNWRITTEN`] untouched); its one argument is that buffer.
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
