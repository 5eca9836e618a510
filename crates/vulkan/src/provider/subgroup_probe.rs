//! The subgroup probe the provider declares to the core (shaders/subgroup.comp): what a
//! compute pipeline may require, read from the limits' Vulkan names, and the option that
//! requires a size ([`REQUIRED_SIZE_OPTION`], which subgroups.rs checks before the driver
//! sees it).

use blocksweep_core::subgroup::{Claims, ProbeBuild, SubgroupProbe};
use blocksweep_core::Limits;

use super::GLSL;

/// The option a user's program (and the subgroup probe) gives to chain
/// VkPipelineShaderStageRequiredSubgroupSizeCreateInfo: `--required-subgroup-size=N`. The
/// backend takes it out before compiling.
pub const REQUIRED_SIZE_OPTION: &str = "--required-subgroup-size=";

/// The subgroup probe: gl_SubgroupSize, gl_SubgroupID and a ballot, at the device's size and
/// at each size a pipeline may require.
#[derive(Debug)]
pub(crate) struct Probe;

fn extra<'a>(limits: &'a Limits, key: &str) -> Option<&'a str> {
    let mut all = limits.extra.iter();
    all.find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

impl SubgroupProbe for Probe {
    /// Refused where the device's limits say it has no ballot in compute shaders.
    fn builds(&self, limits: &Limits) -> Result<Vec<ProbeBuild>, String> {
        let ops = extra(limits, "subgroupSupportedOperations");
        let stages = extra(limits, "subgroupSupportedStages");
        if let (Some(ops), Some(stages)) = (ops, stages) {
            if !ops.contains("BALLOT") || !stages.contains("COMPUTE") {
                return Err(format!(
                    "no subgroup ballot in compute shaders on this device \
                     (subgroupSupportedOperations {ops}; subgroupSupportedStages {stages})"
                ));
            }
        }
        Ok(vec![ProbeBuild::new(
            GLSL,
            include_str!("../../../../shaders/subgroup.comp"),
            "shaders/subgroup.comp",
            "main",
            "gl_SubgroupSize, gl_SubgroupID, subgroupBallotBitCount(subgroupBallot(true))",
        )])
    }

    /// The warp size, and minSubgroupSize..maxSubgroupSize with whether a compute pipeline
    /// may require a size, from the names limits.rs gives them.
    fn claims(&self, limits: &Limits) -> Claims {
        let c = Claims::of(limits);
        let number = |k: &str| extra(limits, k).and_then(|v| v.trim().parse::<u32>().ok());
        let Some(range) = number("minSubgroupSize").zip(number("maxSubgroupSize")) else {
            return c;
        };
        let control = extra(limits, "subgroupSizeControl").map(|v| v == "true");
        let stages = extra(limits, "requiredSubgroupSizeStages").unwrap_or_default();
        let required_not = match (control, stages.contains("COMPUTE")) {
            (Some(true), true) => None,
            (Some(true), false) => Some(format!(
                "requiredSubgroupSizeStages ({stages}) lacks the compute stage"
            )),
            (Some(false), _) => Some("the subgroupSizeControl feature is not supported".into()),
            (None, _) => {
                Some("the device does not say whether subgroupSizeControl is supported".into())
            }
        };
        c.with_range(range, required_not)
    }

    fn require(&self, size: u32) -> Option<String> {
        Some(format!("{REQUIRED_SIZE_OPTION}{size}"))
    }

    fn range_names(&self) -> (&'static str, &'static str) {
        ("minSubgroupSize", "maxSubgroupSize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_claims_come_from_the_limits_native_names() {
        let extra = |k: &str, v: &str| (k.to_string(), v.to_string());
        let mut l = Limits {
            warp_size: Some(blocksweep_core::Named::new(32, "subgroupSize")),
            extra: vec![
                extra("minSubgroupSize", "8"),
                extra("maxSubgroupSize", "32"),
                extra("subgroupSizeControl", "true"),
                extra("requiredSubgroupSizeStages", "COMPUTE"),
            ],
            ..Limits::default()
        };
        let c = Probe.claims(&l);
        assert_eq!(c.claimed(), Some(32));
        assert_eq!(
            (c.range, c.required.clone()),
            (Some((8, 32)), vec![8, 16, 32])
        );
        l.extra[3] = extra("requiredSubgroupSizeStages", "FRAGMENT");
        let c = Probe.claims(&l);
        assert!(c.required.is_empty() && c.required_not.unwrap().contains("compute"));
        assert_eq!(
            Probe.require(16).as_deref(),
            Some("--required-subgroup-size=16")
        );
        assert_eq!(Probe.builds(&l).unwrap()[0].source.language, GLSL);
        l.extra.push(extra("subgroupSupportedOperations", "BASIC"));
        l.extra.push(extra("subgroupSupportedStages", "COMPUTE"));
        let why = Probe.builds(&l).unwrap_err();
        assert!(
            why.starts_with("no subgroup ballot in compute shaders"),
            "{why}"
        );
    }
}
