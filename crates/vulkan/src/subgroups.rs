//! Required subgroup sizes (Vulkan 1.3 / VK_EXT_subgroup_size_control): whether the device
//! lets a compute pipeline require one, and the `--required-subgroup-size=N` option of a
//! user's program that asks for it, checked against the rules of
//! VkPipelineShaderStageRequiredSubgroupSizeCreateInfo before the driver sees it. And the
//! subgroup probe the provider declares to the core (shaders/subgroup.comp), which uses it.

use ash::vk;
use blocksweep_core::subgroup::{Claims, ProbeBuild, SubgroupProbe};
use blocksweep_core::{BlockSize, Limits};

use crate::error::{VulkanError, VulkanResult};
use crate::provider::GLSL;

/// The option a user's program (and the subgroup probe) gives to chain
/// VkPipelineShaderStageRequiredSubgroupSizeCreateInfo: `--required-subgroup-size=N`. The
/// backend takes it out before compiling.
pub const REQUIRED_SIZE_OPTION: &str = "--required-subgroup-size=";

/// What a compute pipeline may require, on a device whose subgroupSizeControl feature is
/// enabled and whose requiredSubgroupSizeStages include compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SubgroupSizeControl {
    pub min: u32,
    pub max: u32,
    /// maxComputeWorkgroupSubgroups.
    pub max_subgroups: u32,
}

/// Whether the subgroupSizeControl feature is supported (queried only where the struct is
/// valid: Vulkan 1.3 or the extension, which the caller has checked).
pub(super) fn size_control_feature(i: &ash::Instance, raw: vk::PhysicalDevice) -> bool {
    let mut f = vk::PhysicalDeviceSubgroupSizeControlFeatures::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f);
    // SAFETY: called only with Vulkan 1.3 or VK_EXT_subgroup_size_control (as the doc says), where
    // the chained struct is valid; both are locals that outlive the call.
    unsafe { i.get_physical_device_features2(raw, &mut f2) };
    f.subgroup_size_control == vk::TRUE
}

/// The size `options` require (the option removed from what goes to the compiler), refused
/// with the rule it breaks: no size control here, not a power of two, outside
/// minSubgroupSize..maxSubgroupSize.
pub(crate) fn required_size(
    options: &[String],
    control: Option<SubgroupSizeControl>,
) -> VulkanResult<(Option<u32>, Vec<String>)> {
    let (asked, rest): (Vec<&String>, Vec<&String>) = options
        .iter()
        .partition(|o| o.trim().starts_with(REQUIRED_SIZE_OPTION));
    let rest = rest.into_iter().cloned().collect();
    let Some(last) = asked.last() else {
        return Ok((None, rest));
    };
    let refuse = |why: String| VulkanError::LaunchRejected(format!("{}: {why}", last.trim()));
    let text = &last.trim()[REQUIRED_SIZE_OPTION.len()..];
    let size: u32 = text
        .parse()
        .map_err(|_| refuse(format!("{text:?} is not a number")))?;
    let Some(c) = control else {
        return Err(refuse(
            "this device cannot require a subgroup size for compute (needs the \
             subgroupSizeControl feature and COMPUTE in requiredSubgroupSizeStages)"
                .into(),
        ));
    };
    if !size.is_power_of_two() || size < c.min || size > c.max {
        return Err(refuse(format!(
            "requiredSubgroupSize must be a power of two within minSubgroupSize {} .. \
             maxSubgroupSize {}",
            c.min, c.max
        )));
    }
    Ok((Some(size), rest))
}

/// A workgroup a pipeline requiring `size` cannot take: more invocations than `size` x
/// maxComputeWorkgroupSubgroups.
pub(crate) fn check_block(block: BlockSize, size: u32, c: SubgroupSizeControl) -> VulkanResult<()> {
    let most = size as u64 * c.max_subgroups as u64;
    match block.threads() > most {
        true => Err(VulkanError::LaunchRejected(format!(
            "workgroup {block} = {} invocations > requiredSubgroupSize {size} x \
             maxComputeWorkgroupSubgroups {}",
            block.threads(),
            c.max_subgroups
        ))),
        false => Ok(()),
    }
}

/// The most invocations a workgroup of a pipeline requiring `required` may have (no bound
/// without a requirement).
pub(crate) fn most_invocations(required: Option<u32>, c: Option<SubgroupSizeControl>) -> u32 {
    match (required, c) {
        (Some(r), Some(c)) => r.saturating_mul(c.max_subgroups),
        _ => u32::MAX,
    }
}

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
            include_str!("../../../shaders/subgroup.comp"),
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

    const C: SubgroupSizeControl = SubgroupSizeControl {
        min: 8,
        max: 32,
        max_subgroups: 4,
    };

    fn o(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_option_is_taken_out_and_checked() {
        let (r, rest) =
            required_size(&o(&["-DX", "--required-subgroup-size=16"]), Some(C)).unwrap();
        assert_eq!((r, rest), (Some(16), o(&["-DX"])));
        assert_eq!(
            required_size(&o(&["-DX"]), None).unwrap(),
            (None, o(&["-DX"]))
        );
        for bad in ["--required-subgroup-size=12", "--required-subgroup-size=64"] {
            let e = required_size(&o(&[bad]), Some(C)).unwrap_err().to_string();
            assert!(e.contains("minSubgroupSize 8"), "{e}");
        }
        let e = required_size(&o(&["--required-subgroup-size=8"]), None).unwrap_err();
        assert!(e.to_string().contains("subgroupSizeControl"), "{e}");
        assert!(check_block(BlockSize::linear(64), 16, C).is_ok());
        let e = check_block(BlockSize::linear(65), 16, C)
            .unwrap_err()
            .to_string();
        assert!(e.contains("maxComputeWorkgroupSubgroups 4"), "{e}");
    }

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
