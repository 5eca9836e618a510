//! The sweep report's exports on a host sweep: every row in every format, and the JSON read
//! back whole.

use blocksweep_core::report::{parse_report, Report};
use blocksweep_core::sweep::{Quiet, SweepError, SweepResult, SweepRun};
use blocksweep_core::testing::{HostBackend, TEST_API_A, TEST_API_B, TEST_API_C};
use blocksweep_core::{Backend, Frame, SweepConfig};

use crate::{Format, Layout, Render};

/// A whole sweep of `f` on `b`.
fn run(b: &mut dyn Backend, f: &Frame, cfg: &SweepConfig) -> (SweepResult, Option<SweepError>) {
    let how = SweepRun {
        config: cfg,
        shared: None,
        observer: &mut Quiet,
        on_row: &mut |_| {},
        clock: None,
    };
    blocksweep_core::sweep::run(b, f, &f.reference(), how)
}

/// A sweep of two host APIs' frames, its answer derived: every export's input.
fn report() -> Report {
    report_of(&[TEST_API_A, TEST_API_B])
}

/// A sweep of `apis`' frames, each on its own host backend, its answer derived.
fn report_of(apis: &[blocksweep_core::Api]) -> Report {
    let f = Frame::generate(128, 16, 3);
    let cfg = SweepConfig {
        blocks: blocksweep_core::blocks::parse_blocks("32,100,2048").unwrap(),
        protocol: blocksweep_core::Protocol {
            warmups: 0,
            reps: blocksweep_core::Reps::Fixed(2),
            discipline: blocksweep_core::Discipline::Batch,
            caches: blocksweep_core::Caches::Hot,
        },
        ..Default::default()
    };
    let mut rep = Report::new("blocksweep test", "2026-11-30T00:00:00Z");
    for &api in apis {
        let (r, e) = run(&mut HostBackend::new(api), &f, &cfg);
        assert!(e.is_none());
        rep.results.push(r);
    }
    rep.refresh_answer();
    rep
}

/// An API layered over another (Gamma over Beta, as WebGPU over Vulkan) gets a second ratio
/// column, to the API under it, beside the one to the first API; the others get none.
#[test]
fn a_layer_is_compared_with_the_api_under_it() {
    let table =
        report_of(&[TEST_API_A, TEST_API_B, TEST_API_C]).render(Format::Table, Layout::default());
    let text = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("(Beta/Alpha, Gamma/Alpha, Gamma/Beta)"),
        "{table}"
    );
    assert!(text.contains("the cost of the layer"), "{table}");
    let header: Vec<&str> = table.lines().filter(|l| l.starts_with("block ")).collect();
    let cells = header.concat();
    assert_eq!(cells.matches("÷Alpha").count(), 2, "{table}");
    assert_eq!(cells.matches("÷Beta").count(), 1, "{table}");
    let two = report().render(Format::Table, Layout::default());
    assert!(!two.contains("cost of the layer"), "{two}");
}

#[test]
fn exports_carry_every_row() {
    let rep = report();
    let csv = rep.render(Format::Csv, Layout::default());
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("api,device,block,threads,warps,idle,blocks_per_sm,warps_per_sm,occupancy,grid,ms_mean,each_ms_mean,each_ms_min,each_ms_median,each_ms_max,each_ms_cv,reps,discipline,gbps,of_best,ties_best"));
    assert_eq!(lines.len(), 1 + 6);
    assert!(
        lines[3].contains("2048") && lines[3].contains("HOST_MAX_THREADS"),
        "{}",
        lines[3]
    );
    let table = rep.render(Format::Table, Layout::default().verbose(true));
    assert!(table.contains("Fastest measured:"), "{table}");
    assert!(table.contains("configurations reach at least 95 percent"));
    assert!(
        table.contains("Beta/Alpha"),
        "merged ratio column missing:\n{table}"
    );
    let md = rep.render(Format::Markdown, Layout::default().verbose(true));
    assert!(md.contains("| thr/blk |"), "{md}");
    let json = rep.render(Format::Json, Layout::default());
    let back = parse_report(&json).unwrap();
    let t = back.results[0].rows[0].timing.as_ref().unwrap();
    assert_eq!(
        (t.reps, t.samples_ms.len(), t.discipline),
        (2, 2, blocksweep_core::Discipline::Batch)
    );
    assert_eq!(back.answer, rep.answer);
    assert_eq!(back.measurements, rep.measurements);
    assert!(rep.answer.is_some());
    assert_eq!(back.results.len(), 2);
    assert!(parse_report("{\"x\":1}")
        .unwrap_err()
        .contains("schema_version"));
    assert!(parse_report("not json").unwrap_err().contains("not JSON"));
}
