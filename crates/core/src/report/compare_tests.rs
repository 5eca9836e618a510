use super::*;

/// Two runs of one device whose rows disagree beyond their own noise
/// are flagged; two that agree are not.
#[test]
fn runs_of_one_device_that_disagree_beyond_their_noise_are_flagged() {
    let r = parse_report_fixture();
    let same = Comparison::of(&[("a".into(), r.clone()), ("b".into(), r.clone())]);
    assert!(
        !same.warnings.iter().any(|w| w.contains("disagree")),
        "{:?}",
        same.warnings
    );
    let mut slow = r.clone();
    let row = &mut slow.results[0].rows[1];
    if let Some(t) = &mut row.timing {
        t.stats.mean *= 1.6;
    }
    slow.refresh_answer();
    let c = Comparison::of(&[("a".into(), r), ("b".into(), slow)]);
    let w: Vec<&String> = c
        .warnings
        .iter()
        .filter(|w| w.contains("disagree"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(
        w[0].starts_with("Columns 1 and 4 measured the same device"),
        "{w:?}"
    );
}

/// A hot run beside a cold one of the same device is said, and their rows, apart by design,
/// are not called disturbed.
#[test]
fn hot_and_cold_runs_are_told_apart_not_flagged_as_disturbed() {
    let hot = parse_report_fixture();
    let mut cold = hot.clone();
    for r in &mut cold.results {
        r.protocol = r.protocol.clone().with_caches(crate::flush::Caches::COLD);
        for t in r.rows.iter_mut().filter_map(|x| x.timing.as_mut()) {
            t.stats.mean *= 1.6;
        }
    }
    cold.refresh_answer();
    let c = Comparison::of(&[("hot".into(), hot), ("cold".into(), cold)]);
    let said: Vec<&String> = c.warnings.iter().filter(|w| w.contains("caches")).collect();
    assert_eq!(said.len(), 1, "{:?}", c.warnings);
    let groups = "(hot: hot; cold: cold)";
    assert!(said[0].contains(groups), "{said:?}");
    assert!(
        !c.warnings.iter().any(|w| w.contains("disagree")),
        "{:?}",
        c.warnings
    );
}

fn parse_report_fixture() -> Report {
    crate::report::parse_report(include_str!("testdata/h200-2026-11-30-v2.json")).unwrap()
}
