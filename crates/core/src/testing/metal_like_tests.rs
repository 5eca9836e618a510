//! The made-up API registered here, and nothing in the core changed for it: a user's kernel in
//! its language sweeps and validates, and `validate` runs its subgroup probe into the table.

use super::*;
use crate::options::OpenOptions;
use crate::provider::{ApiChoice, Provider, Registry, Targets};
use crate::report::Report;
use crate::sweep::{Quiet, SweepConfig};
use crate::validate::LaunchOutcome;
use crate::workload::Workload;
use crate::workload::{sweep, SweepJob};

/// The registry a provider list of this one API makes, and its one device as the target.
fn registered() -> (Registry, Targets) {
    let providers: [&'static dyn Provider; 1] = [&METAL_LIKE_PROVIDER];
    let registry = Registry::probe(&providers);
    let targets = registry
        .targets(&ApiChoice::Only(METAL_LIKE), None)
        .unwrap();
    (registry, targets)
}

#[test]
fn a_made_up_api_brings_its_language_and_probe_through_sweep_validate_and_subgroups() {
    let (registry, targets) = registered();
    let work = super::scale_workload(1000);
    let source = work.spec.sources_for("metal-like").unwrap();
    assert_eq!(source.language, METAL_LIKE_SL);

    // sweep --kernel: every row runs, checked against the API's own first size.
    let config = SweepConfig {
        blocks: crate::blocks::parse_blocks("32,64,256").unwrap(),
        protocol: crate::Protocol {
            warmups: 0,
            reps: crate::Reps::Fixed(2),
            ..crate::Protocol::default()
        },
        copy: false,
        ..SweepConfig::default()
    };
    let job = SweepJob {
        targets: targets.clone(),
        config: &config,
        overlap_close: false,
        clocks: None,
    };
    let open = |d: &DeviceIdentity| registry.open(d, &OpenOptions::default());
    let mut report = Report::new("t", "d");
    let mut made = Workload::from(work);
    let outcome = sweep(&open, &job, &mut made, &mut report, &mut Quiet, &mut |_| {});
    assert!(!outcome.unwrap().failed, "{:?}", report.failures);
    let result = &report.results[0];
    assert_eq!(result.api, METAL_LIKE);
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.rows.iter().filter(|r| r.ran()).count(), 3);
    let program = result.program.as_ref().unwrap();
    assert!(
        program
            .source
            .contains("(Metal-like shading language), entry scale"),
        "{program:?}"
    );

    // validate --kernel: the assumptions launched, the output checked where it ran.
    let work = super::scale_workload(1000);
    let (checks, failures) =
        crate::session::each(&registry, targets.clone(), &OpenOptions::default(), |b| {
            work.prepare(b)?;
            work.validate(b)
        });
    assert!(failures.is_empty(), "{failures:?}");
    let outcomes: Vec<&LaunchOutcome> = checks[0].iter().map(|c| &c.outcome).collect();
    assert!(
        outcomes.iter().any(|o| matches!(o, LaunchOutcome::Ran)),
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, LaunchOutcome::Rejected { .. })),
        "{outcomes:?}"
    );
    assert!(!checks[0].iter().any(|c| c.went_wrong()), "{:?}", checks[0]);

    // validate: the provider's probe measured (blocksweep-render's test draws it in the
    // subgroup table).
    let report = validated();
    let sg = &report.groups[0].subgroups[0];
    assert_eq!(sg.unmeasured, None);
    assert!(
        sg.probe.ends_with("(kernels/subgroup.metal)"),
        "{}",
        sg.probe
    );
    assert_eq!(
        sg.block(100).map(|d| d.lanes_text()).as_deref(),
        Some("12 x 8 + 4")
    );
    sg.self_consistent().unwrap();
}

#[test]
fn its_backend_refuses_a_source_in_another_language() {
    let mut b = MetalLikeBackend::new();
    let mut work = super::scale_workload(1000)
        .spec
        .sources_for("metal-like")
        .unwrap();
    work.language = Language::new("glsl", "GLSL");
    let e = b.load_program(&work, &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Build);
    assert!(
        e.message.contains("is GLSL; MetalLike builds Metal-like"),
        "{e}"
    );
}
