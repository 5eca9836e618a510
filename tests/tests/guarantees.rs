//! The drivers' typed guarantees say what the specifications say, and "who guarantees it" in
//! `validate` and the lab is made from them for every API of the provider list.

use blocksweep_core::lab::resources::RESOURCE_CHECKS;
use blocksweep_core::stance::{stance, Stance};
use blocksweep_core::subgroup::{promise, SUBGROUP_ASSUMPTIONS};
use blocksweep_core::validate::ASSUMPTIONS;
use blocksweep_core::Api;

fn apis() -> Vec<Api> {
    let apis: Vec<Api> = blocksweep_apis::all().iter().map(|d| d.api()).collect();
    apis.iter().for_each(|&a| Api::register(a));
    apis
}

fn assumption(claim: &str) -> &'static blocksweep_core::validate::Assumption {
    ASSUMPTIONS.iter().find(|a| a.claim == claim).unwrap()
}

/// Where `key`'s specification stands on the claim, if the API is in the provider list.
fn on(key: &str, claim: &str) -> Option<Stance> {
    let api = apis().into_iter().find(|a| a.key() == key)?;
    Some(stance(api, &assumption(claim).needs()))
}

#[test]
fn the_specifications_minimums_and_cudas_fixed_limits() {
    let runs = |s: Option<Stance>| matches!(s, Some(Stance::Runs(_)));
    let refused = |s: Option<Stance>| matches!(s, Some(Stance::Refused(_)));
    let open = |s: Option<Stance>| matches!(s, Some(Stance::DeviceSpecific(_)));
    // Vulkan promises 128 invocations, OpenCL one work-item, CUDA exactly 1024 threads.
    assert!(runs(on("vulkan", "128 threads per block run")));
    assert!(open(on("vulkan", "256 threads per block run")));
    assert!(open(on("opencl", "128 threads per block run")));
    assert!(runs(on("cuda", "1024 threads per block run")));
    assert!(refused(on("cuda", "1025 threads per block are rejected")));
    assert!(open(on("vulkan", "1025 threads per block are rejected")));
    // Each extent fits CUDA's (1024, 1024, 64); z = 65 does not, nor a product of 2048.
    assert!(runs(on("cuda", "a 1x1x64 block runs")));
    assert!(refused(on("cuda", "a 1x1x65 block is rejected")));
    assert!(refused(on("cuda", "a 32x32x2 block is rejected")));
    assert!(open(on("vulkan", "a 32x32 block (1024 threads) runs")));
    // Vulkan promises 65535 workgroups per dimension; CUDA's y stops at 65535.
    assert!(runs(on("vulkan", "a grid of 65535 blocks runs")));
    assert!(open(on("vulkan", "a grid of 65536 blocks runs")));
    assert!(runs(on("cuda", "a grid of 65536 blocks runs")));
    assert!(refused(on("cuda", "a grid of 65536 blocks in y runs")));
}

#[test]
fn every_note_names_every_api_of_the_driver_list() {
    let apis = apis();
    let notes = ASSUMPTIONS
        .iter()
        .map(|a| (a.claim, a.guarantee()))
        .chain(RESOURCE_CHECKS.iter().map(|c| (c.claim, c.guarantee())));
    for (claim, note) in notes {
        for api in &apis {
            assert!(note.contains(api.name()), "{claim}: {api} not in {note:?}");
        }
    }
    // The subgroup notes that speak per API (the width, the layout).
    for (which, claim) in &SUBGROUP_ASSUMPTIONS[1..3] {
        let note = promise(*which);
        for api in &apis {
            assert!(note.contains(api.name()), "{claim}: {api} not in {note:?}");
        }
    }
}
