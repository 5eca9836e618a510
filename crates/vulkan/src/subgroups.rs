//! Required subgroup sizes (Vulkan 1.3 / VK_EXT_subgroup_size_control): whether the device
//! lets a compute pipeline require one, and the `--required-subgroup-size=N` option of a
//! user's program that asks for it, checked against the rules of
//! VkPipelineShaderStageRequiredSubgroupSizeCreateInfo before the driver sees it. The subgroup
//! probe that gives the option is the provider's (provider/subgroup_probe.rs).

use ash::vk;
use blocksweep_core::BlockSize;

use crate::error::{VulkanError, VulkanResult};
use crate::provider::REQUIRED_SIZE_OPTION;

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
}
