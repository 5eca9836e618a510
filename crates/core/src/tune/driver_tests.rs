//! The driver on the host backends (no GPU): shares of the space, the budget by count, the
//! cache skipping what it holds, and the second measurement of the winners.

use std::collections::BTreeMap;

use super::*;
use crate::backend::{Backend, BackendError, DeviceIdentity};
use crate::blocks::parse_blocks;
use crate::grid::parse_grid_list;
use crate::sweep::{Observer, SweepConfig};
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
use crate::{Protocol, Reps};

/// The program's side, recorded: how many sweeps ran, what was said, what was saved.
#[derive(Default)]
struct Recorded {
    sweeps: usize,
    said: Vec<String>,
    /// The entries of the last report saved, after each save.
    saved: Vec<usize>,
}

impl Caller for Recorded {
    fn with_progress(&mut self, sweep: &mut dyn FnMut(&mut dyn Observer)) {
        self.sweeps += 1;
        struct Quiet;
        impl Observer for Quiet {}
        sweep(&mut Quiet);
    }
    fn say(&mut self, line: &str) {
        self.said.push(line.to_string());
    }
    fn saved(&mut self, so_far: &[TuneReport]) {
        self.saved
            .push(so_far.last().map_or(0, |r| r.measurements.len()));
    }
}

fn config() -> SweepConfig {
    SweepConfig {
        blocks: parse_blocks("32,64").unwrap(),
        protocol: Protocol {
            warmups: 0,
            reps: Reps::Fixed(2),
            ..Protocol::default()
        },
        copy: false,
        ..SweepConfig::default()
    }
}

fn targets() -> Targets {
    Targets {
        devices: vec![
            HostBackend::new(TEST_API_A).identity,
            HostBackend::new(TEST_API_B).identity,
        ],
        note: "test device".into(),
        one_physical_device: true,
    }
}

fn open(d: &DeviceIdentity) -> Result<Box<dyn Backend>, BackendError> {
    Ok(Box::new(HostBackend::new(d.api)))
}

const FRAME: Work = Work::Frame {
    width: 64,
    height: 16,
    seed: 5,
};

/// Tunes the frame over blocks 32, 64 and the grids `grids` on both test APIs.
fn tune(
    grids: &str,
    budget: Option<Budget>,
    shard: Option<(usize, usize)>,
    cache: Option<&mut Cache>,
) -> (TuneReport, Recorded) {
    let config = config();
    let grids = parse_grid_list(grids).unwrap();
    let tune = Tune {
        work: &FRAME,
        config: &config,
        grids: &grids,
        budget,
        sample_seed: 7,
        shard,
        tool: "t",
        date: "d",
        overlap_close: false,
        clocks: None,
        open: &open,
    };
    let mut caller = Recorded::default();
    let mut reports = run(&tune, vec![targets()], cache, &mut caller);
    assert_eq!(reports.len(), 1, "one device, one report");
    (reports.remove(0), caller)
}

fn configs_of(report: &TuneReport, api: Api) -> Vec<String> {
    let mut v: Vec<String> = report
        .measurements
        .iter()
        .filter(|e| e.api == api)
        .map(|e| e.config.to_string())
        .collect();
    v.sort();
    v
}

fn batch(params: &[u64], configs: usize) -> (BTreeMap<String, u64>, Vec<Config>) {
    let p: BTreeMap<String, u64> = params.iter().map(|v| (format!("P{v}"), *v)).collect();
    let c = (0..configs)
        .map(|i| Config {
            params: p.clone(),
            block: crate::blocks::BlockSize::linear(32 * (i as u32 + 1)),
            grid: GridPolicy::Wave.into(),
        })
        .collect();
    (p, c)
}

#[test]
fn a_share_deals_the_parameter_sets_round_robin_or_the_configurations_of_one_set() {
    let sets = vec![batch(&[1], 2), batch(&[2], 2), batch(&[3], 2)];
    let second: Vec<_> = shard(sets.clone(), Some((2, 2)))
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(second, vec![sets[1].0.clone()]);
    let first = shard(sets.clone(), Some((1, 2)));
    assert_eq!(first.len(), 2, "sets 1 and 3");
    assert_eq!(shard(sets.clone(), None), sets, "no share: every set");
    // One set, three shares: its configurations dealt, an empty share dropped.
    let one = vec![batch(&[], 4)];
    let got = shard(one.clone(), Some((2, 3)));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, vec![one[0].1[1].clone()]);
    assert!(shard(vec![batch(&[], 1)], Some((2, 3))).is_empty());
}

#[test]
fn every_configuration_runs_on_every_api_and_each_winner_is_measured_twice() {
    let (report, caller) = tune("1w,2w", None, None, None);
    assert_eq!(report.search.space, 4, "2 blocks x 2 grids");
    assert_eq!(report.search.covered, 4);
    assert_eq!(report.search.measured, 8, "4 configurations on 2 APIs");
    assert_eq!(report.kernel, "grayscale frame 64x16");
    for api in [TEST_API_A, TEST_API_B] {
        assert_eq!(configs_of(&report, api).len(), 4, "{api}");
    }
    assert!(
        report.measurements.iter().all(|e| e.ms().is_some()),
        "{report:?}"
    );
    // The one set's sweep, then the winners' second one.
    assert_eq!(caller.sweeps, 2);
    assert_eq!(caller.saved, vec![8], "saved after the set");
    assert_eq!(report.answer.best.len(), 2);
    let held = report.answer.best.iter().filter(|b| b.held.is_some());
    assert_eq!(held.count(), 2, "{:?}", report.answer);
    assert!(nothing_ran(&[report]).is_none());
}

#[test]
fn a_count_budget_covers_that_many_configurations_in_its_sampled_order() {
    let (report, _) = tune("1w,2w", Some(Budget::Count(3)), None, None);
    assert_eq!(report.search.covered, 3);
    assert_eq!(report.search.order, "sampled (seed 7)");
    let a = configs_of(&report, TEST_API_A);
    assert_eq!(a.len(), 3, "{a:?}");
    assert_eq!(a, configs_of(&report, TEST_API_B), "the same three on both");
    let (again, _) = tune("1w,2w", Some(Budget::Count(3)), None, None);
    assert_eq!(
        configs_of(&again, TEST_API_A),
        a,
        "the same seed, the same sample"
    );
}

#[test]
fn a_seconds_budget_stops_the_search_between_sets_and_says_where() {
    // Spent before the first set: nothing is swept, and the report says why.
    let (report, caller) = tune("1w,2w", Some(Budget::Seconds(1e-9)), None, None);
    assert_eq!(caller.sweeps, 0);
    assert_eq!(report.search.covered, 0);
    assert_eq!(
        report.search.stopped.as_deref(),
        Some("the 0.000000001 s budget ran out after 0 configurations")
    );
    // A budget that lasts: every set, nothing stopped.
    let (report, _) = tune("1w,2w", Some(Budget::Seconds(3600.0)), None, None);
    assert_eq!(report.search.covered, 4);
    assert_eq!(report.search.stopped, None);
}

#[test]
fn a_share_of_one_set_measures_its_configurations_only_and_says_so() {
    let (report, _) = tune("1w,2w", None, Some((2, 2)), None);
    assert_eq!(report.search.covered, 2);
    assert_eq!(configs_of(&report, TEST_API_A).len(), 2);
    assert!(
        report.search.order.ends_with(", share 2/2"),
        "{}",
        report.search.order
    );
    // Merged with the other share, the order is both shares' (it said "share 1/2 (merged)").
    let (first, _) = tune("1w,2w", None, Some((1, 2)), None);
    let merged = crate::tune::merge::merge(vec![first, report]).unwrap();
    assert_eq!(merged.search.order, "exhaustive (merged from 2 shares)");
    assert_eq!(merged.search.covered, 4);
}

#[test]
fn a_cached_set_is_not_swept_again_and_its_entries_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tune.json");
    let mut cache = Cache::open(&path).unwrap();
    let (first, caller) = tune("1w,2w", None, None, Some(&mut cache));
    assert_eq!(caller.sweeps, 2);
    assert_eq!(first.search.from_cache, 0);
    // A fresh run reads the file: every configuration and each winner's second time are there.
    let mut cache = Cache::open(&path).unwrap();
    let (second, caller) = tune("1w,2w", None, None, Some(&mut cache));
    assert_eq!(caller.sweeps, 0, "nothing swept");
    assert_eq!(second.search.from_cache, 8);
    assert_eq!(second.search.measured, 0);
    assert_eq!(second.search.compiles, 0);
    assert!(second.measurements.iter().all(|e| e.cached));
    let held = second.answer.best.iter().filter(|b| b.held.is_some());
    assert_eq!(held.count(), 2, "the second times from the cache");
    for api in [TEST_API_A, TEST_API_B] {
        assert_eq!(configs_of(&second, api), configs_of(&first, api));
    }
    // Another grid list adds configurations: only the new set's are measured.
    let mut cache = Cache::open(&path).unwrap();
    let (third, caller) = tune("1w,2w,4w", None, None, Some(&mut cache));
    assert_eq!(third.search.from_cache, 8);
    assert_eq!(third.search.measured, 4, "2 new configurations on 2 APIs");
    assert!(caller.sweeps >= 1);
}

#[test]
fn a_tune_where_nothing_ran_says_why() {
    let mut report = tune("1w", Some(Budget::Count(1)), None, None).0;
    report.measurements.clear();
    report.errors.push("at P=1: no source".into());
    let why = nothing_ran(&[report]).unwrap();
    assert_eq!(why, "no configuration ran on any API: at P=1: no source");
}

/// A restrict that rules out the whole space is bad input, said by rule ("no configuration
/// ran on any API", an API's failure, before); an error beside it is not.
#[test]
fn a_space_refused_whole_says_by_which_rule() {
    let mut report = tune("1w", Some(Budget::Count(1)), None, None).0;
    let config = report.measurements[0].config.clone();
    report.measurements.clear();
    for i in 0..3 {
        report.rejected.push(crate::tune::Rejected {
            config: config.clone(),
            why: format!("restrict: block * P > 100000 (block {i})"),
        });
    }
    assert_eq!(
        all_refused(std::slice::from_ref(&report)).as_deref(),
        Some(
            "every configuration (3) was refused before it ran: 3 by restrict: block * P > 100000"
        )
    );
    report.errors.push("at P=1: no source".into());
    assert_eq!(all_refused(&[report]), None);
}

#[test]
fn a_grid_list_is_refused_only_for_a_kernel_whose_grid_covers_its_work() {
    crate::testing::register_kernel_apis();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kernels");
    let data = crate::spec::KernelSpec::load(dir.join("transpose/kernel.toml")).unwrap();
    let stride = crate::spec::KernelSpec::load(dir.join("saxpy/kernel.toml")).unwrap();
    let kernel = |spec: crate::spec::KernelSpec| Work::Kernel {
        sizes: spec.sizes.clone(),
        spec: Box::new(spec),
    };
    let (one, two) = (
        parse_grid_list("1w").unwrap(),
        parse_grid_list("1w,2w").unwrap(),
    );
    let why = check_grids(&kernel(data.clone()), &two).unwrap_err();
    assert!(why.starts_with("--grid 1w,2w: "), "{why}");
    assert!(why.contains("grid = \"data\""), "{why}");
    assert!(check_grids(&kernel(data), &one).is_ok());
    assert!(check_grids(&kernel(stride), &two).is_ok());
    assert!(check_grids(&FRAME, &two).is_ok());
}

/// The made-up API's `scale` (y = K · x) as a spec tuned over `K`: each value a different
/// output, so every set after the first differs from the first set's.
fn scaled_by_k(dir: &std::path::Path) -> Work {
    use crate::testing::metal_like::METAL_LIKE;
    use crate::testing::metal_like::{scale_spec, SCALE_SOURCE};
    Api::register(METAL_LIKE);
    std::fs::write(dir.join("scale.metal"), SCALE_SOURCE).unwrap();
    let spec = scale_spec(1000, "\"K\"", "[tune]\nK = [2, 3]", "");
    let spec = crate::spec::KernelSpec::parse("scale.toml", &spec, dir).unwrap();
    Work::Kernel {
        sizes: spec.sizes.clone(),
        spec: Box::new(spec),
    }
}

#[test]
fn a_set_whose_output_differs_from_the_first_sets_is_named_wrong_and_never_ranked() {
    use crate::testing::metal_like::{MetalLikeBackend, METAL_LIKE};
    let dir = tempfile::tempdir().unwrap();
    let work = scaled_by_k(dir.path());
    let config = config();
    let grids = parse_grid_list("1w").unwrap();
    let open = |_: &DeviceIdentity| -> Result<Box<dyn Backend>, BackendError> {
        Ok(Box::new(MetalLikeBackend::new()))
    };
    let tune = Tune {
        work: &work,
        config: &config,
        grids: &grids,
        budget: None,
        sample_seed: 1,
        shard: None,
        tool: "t",
        date: "d",
        overlap_close: false,
        clocks: None,
        open: &open,
    };
    let targets = Targets {
        devices: vec![MetalLikeBackend::new().identity().clone()],
        note: "test device".into(),
        one_physical_device: true,
    };
    let mut caller = Recorded::default();
    let report = run(&tune, vec![targets], None, &mut caller).remove(0);
    assert_eq!(report.kernel, "kernel 'scale' at n=1000");
    assert_eq!(report.search.compiles, 2, "one compile per set: {report:?}");
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.wrong.len(), 1, "{:?}", report.wrong);
    let wrong = &report.wrong[0];
    assert_eq!(wrong.api, METAL_LIKE);
    assert_eq!(wrong.params.get("K"), Some(&3));
    assert!(
        wrong
            .detail
            .ends_with("differs from the first configuration's (K=2)"),
        "{}",
        wrong.detail
    );
    // Both sets ran; only the first is ranked.
    assert!(report
        .measurements
        .iter()
        .any(|e| e.config.params["K"] == 3 && e.ms().is_some()));
    let best = &report.answer.best[0];
    assert_eq!(best.config.params.get("K"), Some(&2));
    assert_eq!(best.ranked, 2, "the two blocks of K=2");
}

/// Every API's clocks at 1500 MHz, from an idle 300 MHz at the first reading of each.
struct Warming(std::sync::Mutex<Vec<crate::backend::Api>>);

impl crate::clocks::ClockReader for Warming {
    fn read(&self, device: &crate::backend::DeviceIdentity) -> Option<crate::clocks::Clocks> {
        let mut seen = self.0.lock().unwrap();
        let first = !seen.contains(&device.api);
        seen.push(device.api);
        Some(crate::clocks::Clocks {
            sm_mhz: if first { 300 } else { 1500 },
            mem_mhz: 2000,
            max_sm_mhz: Some(1500),
            reasons: Vec::new(),
        })
    }
}

/// A tune's document keeps each parameter set's clocks on each API, and says where they moved
/// (the first set's turns, from idle); the sweeps of its sets had them and it dropped them.
#[test]
fn a_tune_keeps_the_clocks_of_every_set_and_api() {
    let config = config();
    let grids = parse_grid_list("1w,2w").unwrap();
    let reader = Warming(Default::default());
    let tune = Tune {
        work: &FRAME,
        config: &config,
        grids: &grids,
        budget: None,
        sample_seed: 7,
        shard: None,
        tool: "t",
        date: "d",
        overlap_close: false,
        clocks: Some(&reader),
        open: &open,
    };
    let mut caller = Recorded::default();
    let report = run(&tune, vec![targets()], None, &mut caller).remove(0);
    let apis: Vec<_> = report.clocks.iter().map(|c| c.api).collect();
    assert!(
        apis.contains(&TEST_API_A) && apis.contains(&TEST_API_B),
        "{apis:?}"
    );
    let first = &report.clocks[0];
    assert_eq!(
        (first.clocks.start.sm_mhz, first.clocks.end.sm_mhz),
        (300, 1500)
    );
    assert!(
        first
            .moved
            .as_deref()
            .unwrap()
            .contains("300 MHz → 1500 MHz"),
        "{first:?}"
    );
    let text = crate::tune::document::document(&[report], &[]);
    assert!(text.contains("\"clocks\""), "the document keeps them");
}
