//! `--cold` through the pipeline: each API's flush sized from its own last-level cache, else
//! from another API's of the same device, else assumed; recorded on its result and rows.

use crate::blocks::parse_blocks;
use crate::flush::{Caches, Flush, ASSUMED_LLC_BYTES};
use crate::limits::Named;
use crate::measure::Discipline;
use crate::report::Report;
use crate::sweep::SweepConfig;
use crate::testing::{HostBackend, TEST_API_A};
use crate::{Protocol, Reps};

const MIB: u64 = 1 << 20;

/// Alpha states a 4 MiB last-level cache, Beta none; both swept cold.
fn sweep_cold(one_device: bool) -> Report {
    let protocol = Protocol {
        warmups: 1,
        reps: Reps::Fixed(2),
        ..Protocol::default()
    };
    let config = SweepConfig {
        blocks: parse_blocks("32,64").unwrap(),
        protocol: protocol.with_caches(Caches::COLD),
        ..SweepConfig::default()
    };
    let make = |api| {
        let mut b = HostBackend::new(api);
        if api == TEST_API_A {
            b.limits.l2_bytes = Some(Named::new(4 * MIB, "ALPHA_L2"));
        }
        b
    };
    super::alpha_beta_tests::sweep_alpha_beta(&config, (one_device, None), &make)
}

fn flush(report: &Report, i: usize) -> Flush {
    let r = &report.results[i];
    let Caches::Cold { flush: Some(f) } = &r.protocol.caches else {
        panic!("{} not recorded cold: {:?}", r.api, r.protocol.caches);
    };
    // Every row and the copy ceiling were timed after that flush, each dispatch alone.
    let timings = r.rows.iter().filter_map(|x| x.timing.as_ref());
    let copy = r.copy.as_ref().map(|c| &c.timing);
    for t in timings.chain(copy) {
        assert_eq!(t.flush_bytes, Some(f.bytes), "{}", r.api);
        assert_eq!(t.discipline, Discipline::Each);
    }
    assert_eq!(r.rows.iter().filter(|x| x.timing.is_some()).count(), 2);
    assert_eq!(r.protocol.discipline, Discipline::Each);
    f.clone()
}

#[test]
fn an_api_without_a_cache_query_borrows_the_same_devices_answer() {
    let report = sweep_cold(true);
    let alpha = flush(&report, 0);
    assert_eq!(
        (alpha.bytes, alpha.llc_source.as_str()),
        (8 * MIB, "ALPHA_L2")
    );
    let beta = flush(&report, 1);
    assert_eq!(beta.bytes, 8 * MIB);
    assert_eq!(beta.llc_source, "Alpha ALPHA_L2, the same device");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["results"][1]["protocol"]["caches"]["mode"], "cold");
    assert_eq!(
        json["results"][1]["rows"][0]["timing"]["flush_bytes"],
        8 * MIB
    );
}

#[test]
fn on_separate_devices_an_api_without_one_assumes_and_says_so() {
    let report = sweep_cold(false);
    assert_eq!(flush(&report, 0).bytes, 8 * MIB);
    let beta = flush(&report, 1);
    assert_eq!(beta.llc_bytes, ASSUMED_LLC_BYTES);
    assert!(
        beta.llc_source.starts_with("assumed"),
        "{}",
        beta.llc_source
    );
}
