//! The promises as the specifications write them, and the stance each API takes on a claim.

use super::*;
use crate::api::ApiInfo;
use crate::guarantee::*;
use crate::limits::Concept;
use crate::testing::bare_api;

/// Fixed limits, as CUDA's.
static FIXED: ApiInfo = bare_api(
    "fixed-api",
    "Fixed",
    0,
    &[
        Guarantee::fixed(Concept::MaxThreadsPerBlock, Amount::Count(1024), "THREADS").when("v2"),
        Guarantee::fixed(
            Concept::MaxBlockDims,
            Amount::Dims([1024, 1024, 64]),
            "DIMS",
        ),
    ],
);

/// Minimums, as Vulkan's; no promise on block extents.
static MINIMUM: ApiInfo = bare_api(
    "minimum-api",
    "Minimum",
    1,
    &[Guarantee::at_least(
        Concept::MaxThreadsPerBlock,
        Amount::Count(128),
        "maxThreads",
    )],
);

fn needs(threads: u64, dims: [u64; 3]) -> [Need; 2] {
    [
        Need::new(Concept::MaxThreadsPerBlock, Amount::Count(threads)),
        Need::new(Concept::MaxBlockDims, Amount::Dims(dims)),
    ]
}

#[test]
fn guarantees_print_as_the_specifications_write_them() {
    let g = |amount| Guarantee::at_least(Concept::MaxAlloc, amount, "N");
    assert_eq!(FIXED.guarantees[0].to_string(), "1024 (v2)");
    assert_eq!(
        g(Amount::Dims([0x7fff_ffff, 65535, 65535])).to_string(),
        "(2^31-1, 65535, 65535)"
    );
    assert_eq!(g(Amount::Bytes(48 << 10)).to_string(), "48 KiB");
    assert_eq!(g(Amount::Bytes(1 << 30)).to_string(), "1 GiB");
    assert_eq!(g(Amount::Bytes(1000)).to_string(), "1000 B");
    let share = Amount::ShareOfGlobal {
        divisor: 4,
        floor: 128 << 20,
    };
    assert_eq!(g(share).to_string(), "max(global/4, 128 MiB)");
    assert_eq!(FIXED.guarantees[1].stated(), "DIMS = (1024, 1024, 64)");
    assert_eq!(MINIMUM.guarantees[0].stated(), "maxThreads ≥ 128");
}

#[test]
fn an_amount_allows_what_it_covers_and_only_its_own_kind() {
    assert_eq!(Amount::Count(128).allows(Amount::Count(128)), Some(true));
    assert_eq!(Amount::Count(128).allows(Amount::Count(129)), Some(false));
    let dims = Amount::Dims([1024, 1024, 64]);
    assert_eq!(dims.allows(Amount::Dims([1, 1, 64])), Some(true));
    assert_eq!(dims.allows(Amount::Dims([1, 1, 65])), Some(false));
    let share = Amount::ShareOfGlobal {
        divisor: 4,
        floor: 128 << 20,
    };
    assert_eq!(share.allows(Amount::Bytes(128 << 20)), Some(true));
    assert_eq!(share.allows(Amount::Bytes((128 << 20) + 1)), Some(false));
    assert_eq!(Amount::Count(1).allows(Amount::Bytes(1)), None);
}

#[test]
fn a_fixed_limit_refuses_what_a_minimum_leaves_to_the_device() {
    let (fixed, minimum) = (Api::new(&FIXED), Api::new(&MINIMUM));
    let within = needs(128, [128, 1, 1]);
    assert_eq!(stance(fixed, &within), Stance::Runs(&FIXED.guarantees[0]));
    assert_eq!(stance(minimum, &within), Stance::DeviceSpecific(vec![]));
    let wide = needs(1025, [1025, 1, 1]);
    assert_eq!(stance(fixed, &wide), Stance::Refused(&FIXED.guarantees[0]));
    assert_eq!(
        stance(minimum, &wide),
        Stance::DeviceSpecific(vec![&MINIMUM.guarantees[0]])
    );
    // Every extent fits, the fixed product does not.
    let deep = needs(2048, [32, 32, 2]);
    assert_eq!(stance(fixed, &deep), Stance::Refused(&FIXED.guarantees[0]));
    let tall = needs(65, [1, 1, 65]);
    assert_eq!(stance(fixed, &tall), Stance::Refused(&FIXED.guarantees[1]));
    let threads_only = [Need::new(Concept::MaxThreadsPerBlock, Amount::Count(64))];
    assert_eq!(
        stance(minimum, &threads_only),
        Stance::Runs(&MINIMUM.guarantees[0])
    );
}

#[test]
fn who_guarantees_groups_the_apis_and_names_their_figures() {
    let apis = [Api::new(&FIXED), Api::new(&MINIMUM)];
    let threads = |n| [Need::new(Concept::MaxThreadsPerBlock, Amount::Count(n))];
    assert_eq!(
        who_guarantees(&apis, &threads(100)),
        "every device runs it: Fixed (THREADS = 1024, v2), Minimum (maxThreads ≥ 128)"
    );
    assert_eq!(
        who_guarantees(&apis, &threads(2000)),
        "every device refuses it: Fixed (THREADS = 1024, v2); device-specific: Minimum \
         (maxThreads ≥ 128)"
    );
    let grid = [Need::new(Concept::MaxGridDims, Amount::Dims([1, 2, 1]))];
    assert_eq!(
        who_guarantees(&apis[1..], &grid),
        "device-specific: Minimum (its specification states no figure)"
    );
}

/// Minimums for both threads and extents, as OpenCL's (CL_DEVICE_MAX_WORK_GROUP_SIZE ≥ 1,
/// CL_DEVICE_MAX_WORK_ITEM_SIZES ≥ (1, 1, 1)).
static BOTH: ApiInfo = bare_api(
    "both-api",
    "Both",
    2,
    &[
        Guarantee::at_least(Concept::MaxThreadsPerBlock, Amount::Count(1), "GROUP"),
        Guarantee::at_least(Concept::MaxBlockDims, Amount::Dims([1, 1, 1]), "ITEMS"),
    ],
);

/// A 1x1x65 block is short of both minimums: "who guarantees it" names both, not only the
/// first (it named only the thread count, where the extent is what the claim is about).
#[test]
fn a_claim_short_of_several_minimums_names_each() {
    let both = Api::new(&BOTH);
    let tall = needs(65, [1, 1, 65]);
    assert_eq!(
        stance(both, &tall),
        Stance::DeviceSpecific(vec![&BOTH.guarantees[0], &BOTH.guarantees[1]])
    );
    let said = who_guarantees(&[both], &tall);
    assert_eq!(said, "device-specific: Both (GROUP ≥ 1; ITEMS ≥ (1, 1, 1))");
}
