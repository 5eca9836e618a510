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

fn parse_report_fixture() -> Report {
    crate::report::parse_report(include_str!("testdata/h200-2026-11-30-v2.json")).unwrap()
}
