//! The resource rows `validate` draws under its assumptions: one row per check, one column per
//! API, each cell with the launch the device made of the check.

use crate::claim::{Answer, ClaimTable};
use crate::text::Doc;
use blocksweep_core::backend::Api;
use blocksweep_core::lab::resources::{ProbeKernel, ResourceResult, RESOURCE_CHECKS};

/// One API's answer to one resource check, with its launch and, for the register probe, the
/// registers its kernel holds per thread.
fn answer(r: &ResourceResult) -> Answer<'_> {
    let regs = r
        .registers
        .filter(|_| r.assumption.kernel == ProbeKernel::Registers)
        .map(|n| format!(", {n} regs"))
        .unwrap_or_default();
    Answer {
        api: r.api,
        outcome: &r.outcome,
        holds: r.holds(),
        limits_say: r.limits_say.as_deref(),
        launch: Some((r.launch_text(), regs)),
    }
}

/// The resource rows of `validate`: one row per check, one column per API, the APIs' words and
/// who guarantees each check under the table. Nothing when there are no results.
pub(crate) fn render_resources(results: &[ResourceResult], apis: &[Api], doc: &mut Doc) {
    if results.is_empty() {
        return;
    }
    doc.heading(3, "Resources: shared memory and registers per block");
    let mut t = ClaimTable::new("assumption", apis, Some(11));
    for (i, check) in RESOURCE_CHECKS.iter().enumerate() {
        t.row(
            &format!("R{}", i + 1),
            check.claim.to_string(),
            &check.guarantee(),
            |api| {
                results
                    .iter()
                    .find(|r| r.api == api && r.assumption.claim == check.claim)
                    .map(answer)
            },
        );
    }
    t.render(doc);
}

#[cfg(test)]
mod tests {
    use super::super::testing::host_run;
    use super::*;
    use crate::layout::Layout;
    use blocksweep_core::claim::LaunchOutcome;
    use blocksweep_core::lab::run::run_resources;
    use blocksweep_core::testing::TEST_API_A;

    #[test]
    fn resources_name_what_each_limit_says() {
        let (mut b, frame, reference) = host_run(509, 253, 3);
        let r = run_resources(&mut b, &frame, &reference).unwrap();
        assert_eq!(r.len(), RESOURCE_CHECKS.len());
        let outcome = |i: usize| &r[i].outcome;
        // 16, 32, 48 KiB and the limit (48 KiB) run; 49 KiB is refused by the "API".
        for x in &r[..4] {
            assert_eq!(x.outcome, LaunchOutcome::Ran, "{x:?}");
        }
        assert!(
            matches!(outcome(4), LaunchOutcome::Rejected { .. }),
            "{:?}",
            r[4]
        );
        assert!(r[4].limits_say.as_deref().unwrap().contains("HOST_SHARED"));
        // The register-heavy kernel at the device's 1024: 100 x 1024 registers > 65536.
        assert!(
            matches!(outcome(6), LaunchOutcome::Rejected { .. }),
            "{:?}",
            r[6]
        );
        let json = serde_json::to_value(&r[4]).unwrap();
        assert_eq!(json["assumption"]["launch"]["shared_bytes"], 49 << 10);
        let mut doc = Doc::new(Layout::default(), false);
        render_resources(&r, &[TEST_API_A], &mut doc);
        let text = doc.finish();
        assert!(text.contains("R5"), "{text}");
        assert!(text.contains("HOST_OUT_OF_RESOURCES"), "{text}");
    }
}
