//! The derivation and the verdicts, from fake probe outputs.

use super::*;
use crate::limits::Named;
use crate::testing::{HostBackend, TEST_API_A};

/// What a `width`-wide machine that forms subgroups of consecutive invocations writes for a
/// block of `block`, reporting `reported` as its size.
fn fake(block: u32, width: u32, reported: u32) -> Vec<u32> {
    let mut words = vec![UNWRITTEN; 256 * WORDS];
    for i in 0..block {
        let id = i / width;
        let lanes = width.min(block - id * width);
        words[(i as usize) * WORDS..][..WORDS].copy_from_slice(&[reported, id, lanes]);
    }
    words
}

fn machine(api: Api, width: u32, reported: u32, claims: Claims) -> ApiSubgroups {
    ApiSubgroups {
        api,
        claims,
        probe: "fake".into(),
        dispatches: PROBE_BLOCKS
            .iter()
            .map(|&b| Dispatch {
                block: b,
                required: None,
                ran: derive(b, &fake(b, width, reported)),
            })
            .collect(),
        unmeasured: None,
    }
}

fn claiming(size: u64) -> Claims {
    Claims {
        size: Some(Named::new(size, "WARP")),
        ..Claims::default()
    }
}

#[test]
fn a_100_block_on_a_32_wide_fake_is_four_subgroups_the_last_with_four_lanes() {
    let d = Dispatch {
        block: 100,
        required: None,
        ran: derive(100, &fake(100, 32, 32)),
    };
    let sg = d.subgroups().unwrap();
    assert_eq!(sg.len(), 4);
    assert_eq!(d.last().unwrap().active(), 4);
    assert_eq!(d.lanes_text(), "3 x 32 + 4");
    assert_eq!(d.reported(), [32]);
    assert_eq!(d.inconsistency(), None);
    let s = machine(TEST_API_A, 32, 32, claiming(32));
    let c = evaluate(&s, SubgroupAssumption::Last100);
    assert_eq!(c.holds, Some(true));
    assert_eq!(
        c.text(),
        "claims 32, measured 4 active in the last of 4 subgroups: holds"
    );
    let c = evaluate(&s, SubgroupAssumption::Two48);
    assert_eq!(c.text(), "claims 32, measured 2 subgroups (32 + 16): holds");
    let c = evaluate(&s, SubgroupAssumption::Warp32);
    assert_eq!(c.text(), "claims 32, measured 32: holds");
    assert_eq!(evaluate(&s, SubgroupAssumption::Fixed).holds, Some(true));
    assert_eq!(s.self_consistent(), Ok(()));
}

#[test]
fn a_device_reporting_32_while_ballots_count_8_does_not_hold_its_claim() {
    let s = machine(TEST_API_A, 8, 32, claiming(32));
    let d = s.block(100).unwrap();
    assert_eq!(d.subgroups().unwrap().len(), 13);
    assert_eq!(d.width(), Some(8));
    let c = evaluate(&s, SubgroupAssumption::Warp32);
    assert_eq!(c.holds, Some(false));
    assert_eq!(
        c.text(),
        "claims 32, reports 32, ballots count 8: the claim does not hold"
    );
    // 100 = 12 x 8 + 4: the assumption holds by luck, the claim (4 subgroups) does not.
    let c = evaluate(&s, SubgroupAssumption::Last100);
    assert_eq!(
        c.text(),
        "claims 32, measured 4 active in the last of 13 subgroups: the claim does not hold"
    );
    assert_eq!(c.holds, Some(false));
    // Its ballots still count its invocations; the reported size is what contradicts them.
    assert!(s
        .self_consistent()
        .unwrap_err()
        .contains("block 32 (required None): size 32, but 4 x 8"));
}

#[test]
fn an_8_wide_machine_claiming_8_is_judged_on_its_own_width() {
    let s = machine(TEST_API_A, 8, 8, claiming(8));
    assert_eq!(
        evaluate(&s, SubgroupAssumption::Warp32).text(),
        "claims 8, measured 8: not 32"
    );
    let c = evaluate(&s, SubgroupAssumption::Two48);
    assert_eq!(c.holds, None);
    assert_eq!(
        c.text(),
        "claims 8, measured 6 subgroups (6 x 8): not a 32-wide machine"
    );
    assert_eq!(
        evaluate(&s, SubgroupAssumption::Fixed).text(),
        "claims 8, measured 8 at every block: holds"
    );
    // Without a size-control range there is nothing to require.
    assert_eq!(evaluate(&s, SubgroupAssumption::Required).holds, None);
}

#[test]
fn a_64_wide_machine_in_a_32_block_is_one_partial_subgroup_not_another_size() {
    let s = machine(TEST_API_A, 64, 64, claiming(64));
    assert_eq!(s.block(32).unwrap().width(), Some(32));
    let c = evaluate(&s, SubgroupAssumption::Fixed);
    assert_eq!(c.text(), "claims 64, measured 64 at every block: holds");
    assert_eq!(
        evaluate(&s, SubgroupAssumption::Two48).text(),
        "claims 64, measured 1 subgroups (48): not a 32-wide machine"
    );
}

#[test]
fn required_sizes_that_run_as_required_hold_and_a_range_is_not_fixed() {
    let mut claims = claiming(32);
    claims.range = Some((16, 32));
    claims.required = vec![16, 32];
    let mut s = machine(TEST_API_A, 32, 32, claims);
    for r in [16, 32] {
        for b in PROBE_BLOCKS {
            s.dispatches.push(Dispatch {
                block: b,
                required: Some(r),
                ran: derive(b, &fake(b, r, r)),
            });
        }
    }
    let c = evaluate(&s, SubgroupAssumption::Required);
    assert_eq!(
        c.text(),
        "may require 16..32, measured 16 when 16 is required, 32 when 32 is required: holds"
    );
    let c = evaluate(&s, SubgroupAssumption::Fixed);
    assert_eq!(c.holds, Some(false));
    assert!(c.text().ends_with("varies per pipeline"), "{}", c.text());
}

#[test]
fn unwritten_invocations_and_miscounted_ballots_are_named() {
    let mut words = fake(48, 32, 32);
    words[47 * WORDS..][..WORDS].copy_from_slice(&[UNWRITTEN; 3]);
    let d = Dispatch {
        block: 48,
        required: None,
        ran: derive(48, &words),
    };
    let why = d.inconsistency().unwrap();
    assert!(why.contains("1 invocations wrote nothing"), "{why}");
    assert!(
        why.contains("subgroup 1: 15 invocations, ballots counted 16"),
        "{why}"
    );
}

#[test]
fn claims_are_the_warp_size_and_a_range_may_require_its_powers_of_two() {
    let b = HostBackend::new(TEST_API_A);
    let c = Claims::of(&b.limits);
    assert_eq!((c.claimed(), c.range), (Some(32), None));
    let c = Claims::of(&b.limits).with_range((8, 32), None);
    assert_eq!(
        (c.range, c.required.clone(), c.required_not),
        (Some((8, 32)), vec![8, 16, 32], None)
    );
    let c = Claims::of(&b.limits).with_range((4, 4), Some("no control".into()));
    assert!(c.required.is_empty() && c.required_not.as_deref() == Some("no control"));
}

#[test]
fn a_backend_without_user_kernels_is_unmeasured_not_failed() {
    let mut b = HostBackend::new(TEST_API_A);
    let s = probe(&mut b);
    assert!(s.dispatches.is_empty());
    assert!(s.unmeasured.is_some());
    let c = evaluate(&s, SubgroupAssumption::Warp32);
    assert_eq!(c.holds, None);
}
