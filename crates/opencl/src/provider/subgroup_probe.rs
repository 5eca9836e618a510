//! OpenCL's subgroup probe, as its provider declares it to the core: kernels/subgroup.cl built
//! with the sub-group built-ins where the device has them (cl_khr_subgroups, or OpenCL C 3.0's
//! __opencl_c_subgroups), else with NVIDIA's PTX warp registers.

use blocksweep_core::subgroup::{Claims, ProbeBuild, SubgroupProbe};
use blocksweep_core::{KernelFacts, Limits};

use super::OPENCL_C;

/// The name the backend gives its stand-in width where a device has no warp size query: a
/// hint, never a subgroup claim.
const PREFERRED_MULTIPLE: &str = "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE";

/// The sub-group built-ins the probe asks for.
const SUB_GROUPS: &str = "get_sub_group_size(), get_sub_group_id(), sub_group_reduce_add(1)";

#[derive(Debug)]
pub(crate) struct Probe;

fn extra<'a>(limits: &'a Limits, key: &str) -> Option<&'a str> {
    let mut all = limits.extra.iter();
    all.find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn warp_name(limits: &Limits) -> &str {
    limits.warp_size.as_ref().map_or("", |w| w.name.as_str())
}

impl SubgroupProbe for Probe {
    fn builds(&self, limits: &Limits) -> Result<Vec<ProbeBuild>, String> {
        let cl = ProbeBuild::new(
            OPENCL_C,
            include_str!("../../../../kernels/subgroup.cl"),
            "kernels/subgroup.cl",
            "subgroup_probe",
            SUB_GROUPS,
        );
        let mut list = vec![cl.clone().with_options(&["-DBLOCKSWEEP_SUBGROUPS"])];
        // OpenCL C 3.0 defines __opencl_c_subgroups only under -cl-std=CL3.0.
        if extra(limits, "CL_DEVICE_OPENCL_C_VERSION").is_some_and(|v| v.contains(" 3.")) {
            let opts = ["-DBLOCKSWEEP_SUBGROUPS", "-cl-std=CL3.0"];
            list.push(cl.clone().with_options(&opts));
        }
        if warp_name(limits).contains("CL_DEVICE_WARP_SIZE_NV") {
            let nv = ProbeBuild {
                asks: "PTX WARP_SZ, local id / WARP_SZ, popcount(activemask.b32)",
                ..cl
            };
            list.push(nv.with_options(&["-DBLOCKSWEEP_NV_PTX"]));
        }
        Ok(list)
    }

    fn claims(&self, limits: &Limits) -> Claims {
        let mut c = Claims::of(limits);
        if warp_name(limits).contains(PREFERRED_MULTIPLE) {
            c.hint = c.size.take();
        }
        c
    }

    fn none_built(&self, limits: &Limits, errors: &[String]) -> String {
        let nv = match warp_name(limits).contains("_NV") {
            true => "; the NVIDIA PTX probe did not build either",
            false => ", and no cl_nv_device_attribute_query",
        };
        format!(
            "no subgroup query in this API on this device (neither cl_khr_subgroups nor \
             __opencl_c_subgroups{nv}): {}",
            errors.join(" | ")
        )
    }

    fn per_kernel(&self, facts: &KernelFacts) -> Vec<(String, String)> {
        let all = facts.extra.iter();
        all.filter(|(k, _)| k.contains("SUB_GROUP"))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::Named;

    fn limits(warp: &str, version: &str) -> Limits {
        Limits {
            warp_size: Some(Named::new(32, warp)),
            extra: vec![("CL_DEVICE_OPENCL_C_VERSION".into(), version.into())],
            ..Limits::default()
        }
    }

    #[test]
    fn an_opencl_c_3_nvidia_device_gets_three_builds_in_order() {
        let l = limits("CL_DEVICE_WARP_SIZE_NV", "OpenCL C 3.0 ");
        let builds = Probe.builds(&l).unwrap();
        let options: Vec<String> = builds.iter().map(|b| b.source.options.join(" ")).collect();
        assert_eq!(
            options,
            [
                "-DBLOCKSWEEP_SUBGROUPS",
                "-DBLOCKSWEEP_SUBGROUPS -cl-std=CL3.0",
                "-DBLOCKSWEEP_NV_PTX"
            ]
        );
        assert!(builds.iter().all(|b| b.source.language == OPENCL_C));
        assert_eq!(Probe.claims(&l).claimed(), Some(32));
        let why = Probe.none_built(&l, &["e1".into(), "e2".into()]);
        assert!(
            why.ends_with("the NVIDIA PTX probe did not build either): e1 | e2"),
            "{why}"
        );
    }

    #[test]
    fn a_preferred_multiple_is_a_hint_not_a_claim() {
        let l = limits(PREFERRED_MULTIPLE, "OpenCL C 1.2 pocl");
        assert_eq!(Probe.builds(&l).unwrap().len(), 1);
        let c = Probe.claims(&l);
        assert_eq!((c.claimed(), c.hint.map(|h| h.value)), (None, Some(32)));
        let why = Probe.none_built(&l, &["e".into()]);
        assert!(
            why.contains(", and no cl_nv_device_attribute_query): e"),
            "{why}"
        );
    }
}
