//! The pipeline's order of events, with host backends that take a set time to open.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::SessionError;
use crate::backend::{Api, Backend, BackendError, DeviceIdentity, DeviceKind};
use crate::blocks::{parse_blocks, BlockSize};
use crate::frame::Frame;
use crate::limits::Named;
use crate::provider::Targets;
use crate::report::Report;
use crate::sweep::{Observer, SweepConfig, SweepRow};
use crate::testing::{DropLog, HostBackend, TEST_API_A, TEST_API_B};
use crate::workload::Workload;
use crate::workload::{sweep, SweepJob};
use crate::{Protocol, Reps};

/// How one test API opens: after `delay`, with these settings.
#[derive(Clone, Copy)]
struct Opening {
    api: Api,
    delay_ms: u64,
    kind: DeviceKind,
    residency: Option<u32>,
    memory: Option<u64>,
    /// Waits in its opening (at most [`MEETING_WAIT`]) until every API that meets has begun
    /// opening: only openings that run at once all get there.
    meet: bool,
}

/// Long enough for any loaded machine to start a thread; openings one after another would
/// wait it out and miss.
const MEETING_WAIT: Duration = Duration::from_secs(60);

fn gpu(api: Api, delay_ms: u64) -> Opening {
    Opening {
        api,
        delay_ms,
        kind: DeviceKind::Gpu,
        residency: None,
        memory: None,
        meet: false,
    }
}

/// When each API finished opening and first started a row, on one clock.
#[derive(Default)]
struct Events {
    /// When each API's opening ended.
    opened: Mutex<Vec<(Api, Instant)>>,
    /// When each API's backend was dropped (closed).
    closed: Arc<Mutex<Vec<(Api, Instant)>>>,
    first_row: Vec<(Api, Instant)>,
    last_row: Vec<(Api, Instant)>,
    /// Uploads of the frame, every API together.
    uploads: usize,
    /// Whether an API that meets waited out [`MEETING_WAIT`] for the others.
    missed_the_meeting: bool,
    /// An API whose close the other API's second row waits for (at most [`MEETING_WAIT`]):
    /// a close on its own thread gets there; one left for the end never does.
    awaits_close: Option<Api>,
    /// Whether that wait ran out.
    close_missed: bool,
}

impl Observer for Events {
    fn row_started(&mut self, api: Api, index: usize, _count: usize, _block: BlockSize) {
        if index == 0 {
            self.first_row.push((api, Instant::now()));
        }
        if let Some(awaited) = self.awaits_close.filter(|&a| a != api && index > 0) {
            let start = Instant::now();
            let closed = || {
                self.closed
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|(a, _)| *a == awaited)
            };
            while !closed() && start.elapsed() < MEETING_WAIT {
                std::thread::sleep(Duration::from_millis(1));
            }
            self.close_missed |= !closed();
        }
    }
    fn row_finished(&mut self, api: Api, _row: &SweepRow) {
        self.last_row.retain(|(a, _)| *a != api);
        self.last_row.push((api, Instant::now()));
    }
}

impl Events {
    fn opened(&self, api: Api) -> Instant {
        let o = self.opened.lock().unwrap();
        o.iter().find(|(a, _)| *a == api).expect("opened").1
    }
    fn closed(&self, api: Api) -> Instant {
        let c = self.closed.lock().unwrap();
        c.iter().find(|(a, _)| *a == api).expect("closed").1
    }
    fn finished(&self, api: Api) -> Instant {
        self.last_row
            .iter()
            .find(|(a, _)| *a == api)
            .expect("ran")
            .1
    }
    fn started(&self, api: Api) -> Instant {
        self.first_row
            .iter()
            .find(|(a, _)| *a == api)
            .expect("ran")
            .1
    }
}

pub(super) fn config() -> SweepConfig {
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

/// Runs the pipeline over `openings`; returns the report, the outcome and the events.
fn run(
    openings: &[Opening],
    one_device: bool,
    overlap_close: bool,
) -> (Report, Result<super::SweepOutcome, SessionError>, Events) {
    run_sized(openings, one_device, overlap_close, (64, 16), None)
}

fn run_sized(
    openings: &[Opening],
    one_device: bool,
    overlap_close: bool,
    (w, h): (u32, u32),
    awaits_close: Option<Api>,
) -> (Report, Result<super::SweepOutcome, SessionError>, Events) {
    let mut made = Workload::frame(Frame::generate(w, h, 5));
    let devices: Vec<DeviceIdentity> = openings
        .iter()
        .map(|o| {
            let mut id = HostBackend::new(o.api).identity;
            id.kind = o.kind;
            id
        })
        .collect();
    let config = config();
    let job = SweepJob {
        targets: Targets {
            devices,
            note: "test device".into(),
            one_physical_device: one_device,
        },
        config: &config,
        overlap_close,
        clocks: None,
    };
    let opened_at = Mutex::new(Vec::new());
    let opened = &opened_at;
    let mut events = Events {
        awaits_close,
        ..Events::default()
    };
    let closed_at = events.closed.clone();
    let uploads = Arc::new(AtomicUsize::new(0));
    let (meeting, missed) = ((Mutex::new(0usize), Condvar::new()), AtomicBool::new(false));
    let meeting_size = openings.iter().filter(|o| o.meet).count();
    let open = |d: &DeviceIdentity| -> Result<Box<dyn Backend>, BackendError> {
        let o = openings.iter().find(|o| o.api == d.api).unwrap();
        if o.meet {
            let (here, arrived) = &meeting;
            let mut n = here.lock().unwrap();
            *n += 1;
            arrived.notify_all();
            let wait = arrived.wait_timeout_while(n, MEETING_WAIT, |n| *n < meeting_size);
            missed.fetch_or(wait.unwrap().1.timed_out(), Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(o.delay_ms));
        let mut b = HostBackend::new(o.api);
        b.identity.kind = o.kind;
        b.residency = o.residency;
        b.drop_log = Some(DropLog {
            api: o.api,
            log: closed_at.clone(),
        });
        b.uploads = Some(uploads.clone());
        if let Some(bytes) = o.memory {
            b.limits.global_mem_bytes = Some(Named::new(bytes, "TEST_TINY_MEMORY"));
        }
        opened.lock().unwrap().push((o.api, Instant::now()));
        Ok(Box::new(b))
    };
    let mut report = Report::new("t", "d");
    let outcome = sweep(
        &open,
        &job,
        &mut made,
        &mut report,
        &mut events,
        &mut |_| {},
    );
    events.opened = opened_at;
    events.uploads = uploads.load(Ordering::SeqCst);
    events.missed_the_meeting = missed.load(Ordering::SeqCst);
    (report, outcome, events)
}

#[test]
fn nothing_is_timed_while_an_api_still_opens_and_results_keep_target_order() {
    // Alpha opens at once, Beta in 300 ms: opening a context does work on the GPU, so Alpha's
    // rows wait for Beta to be open.
    let (report, outcome, ev) = run(&[gpu(TEST_API_A, 0), gpu(TEST_API_B, 300)], true, false);
    outcome.unwrap();
    assert!(ev.started(TEST_API_A) > ev.opened(TEST_API_B));
    let apis: Vec<Api> = report.results.iter().map(|r| r.api).collect();
    assert_eq!(apis, vec![TEST_API_A, TEST_API_B]);
    assert!(report.results.iter().all(|r| r.rows_run() == 2));
    assert_eq!(
        ev.uploads, 2,
        "one upload each, while opening, none in the turn"
    );
    // Not even on separate devices (no shared plan to wait for): they may share a host bus,
    // and the rule is the same everywhere.
    let (_, outcome, ev) = run(&[gpu(TEST_API_A, 0), gpu(TEST_API_B, 300)], false, false);
    outcome.unwrap();
    assert!(ev.started(TEST_API_A) > ev.opened(TEST_API_B));
    // Every API opens at once: each waits in its opening until the other has begun (a 100 ms
    // bound on when Beta began lost the race to a loaded machine's scheduler).
    let meets = |o: Opening| Opening { meet: true, ..o };
    let both = [meets(gpu(TEST_API_A, 0)), meets(gpu(TEST_API_B, 0))];
    let (_, outcome, ev) = run(&both, true, false);
    outcome.unwrap();
    assert!(!ev.missed_the_meeting, "the APIs opened one after another");
}

#[test]
fn no_api_closes_before_the_last_is_measured_unless_asked_and_never_on_a_cpu() {
    // Closes left for the end come after every row by the pipeline's order, not by timing.
    let size = (64, 16);
    let both = [gpu(TEST_API_A, 0), gpu(TEST_API_B, 0)];
    let (_, outcome, ev) = run_sized(&both, true, false, size, None);
    outcome.unwrap();
    assert!(
        ev.closed(TEST_API_A) > ev.finished(TEST_API_B),
        "the default"
    );
    // Overlapped, Alpha's close lands while Beta measures: Beta's second row waits for it
    // (it never comes where the close is left for the end), so the order is the pipeline's,
    // not the scheduler's.
    let (_, outcome, ev) = run_sized(&both, true, true, size, Some(TEST_API_A));
    outcome.unwrap();
    assert!(
        !ev.close_missed,
        "overlap_close: Alpha closed only at the end"
    );
    assert!(
        ev.closed(TEST_API_A) < ev.finished(TEST_API_B),
        "overlap_close"
    );
    let cpu = Opening {
        kind: DeviceKind::Cpu,
        ..gpu(TEST_API_B, 0)
    };
    let (_, outcome, ev) = run_sized(&[both[0], cpu], true, true, size, None);
    outcome.unwrap();
    assert!(
        ev.closed(TEST_API_A) > ev.finished(TEST_API_B),
        "on a CPU device the host's cores are the device"
    );
}

/// Who planned each API's grids ("Alpha on host test device: ...").
fn grid_sources(report: &Report) -> Vec<&str> {
    report
        .results
        .iter()
        .map(|r| r.grid_source.as_str())
        .collect()
}

#[test]
fn the_shared_plan_comes_from_the_first_api_that_answers_residency() {
    let beta = Opening {
        residency: Some(3),
        ..gpu(TEST_API_B, 0)
    };
    let (report, outcome, _) = run(&[gpu(TEST_API_A, 0), beta], true, false);
    outcome.unwrap();
    assert!(report.shared_plan);
    for r in &report.results {
        assert!(r.grid_source.starts_with("Beta on"), "{}", r.grid_source);
    }
    assert_eq!(
        report.results[0].rows[0].grid,
        report.results[1].rows[0].grid
    );
    // None answers: the first API's model plans for both.
    let (report, outcome, _) = run(&[gpu(TEST_API_A, 0), gpu(TEST_API_B, 0)], true, false);
    outcome.unwrap();
    assert!(report.shared_plan);
    let sources = grid_sources(&report);
    assert!(
        sources.iter().all(|s| s.starts_with("Alpha on")),
        "{sources:?}"
    );
    // Separate devices: each plans for itself.
    let (report, outcome, _) = run(&[gpu(TEST_API_A, 0), beta], false, false);
    outcome.unwrap();
    assert!(!report.shared_plan);
    let sources = grid_sources(&report);
    assert!(
        sources[0].starts_with("Alpha on") && sources[1].starts_with("Beta on"),
        "{sources:?}"
    );
}

#[test]
fn a_frame_one_api_refuses_is_that_apis_failure_and_bad_input_when_all_refuse() {
    let tiny = |o: Opening| Opening {
        memory: Some(1024),
        ..o
    };
    let (report, outcome, _) = run(&[tiny(gpu(TEST_API_A, 0)), gpu(TEST_API_B, 0)], true, false);
    outcome.unwrap();
    assert_eq!(report.results.len(), 1);
    assert_eq!(report.results[0].api, TEST_API_B);
    let f = &report.failures[0];
    assert_eq!(f.api, TEST_API_A);
    assert!(
        f.message.starts_with("frame 64x16 is too large for Alpha")
            && f.message.contains("TEST_TINY_MEMORY"),
        "{}",
        f.message
    );
    let (_, outcome, _) = run(
        &[tiny(gpu(TEST_API_A, 0)), tiny(gpu(TEST_API_B, 0))],
        true,
        false,
    );
    match outcome {
        Err(SessionError::Input(m)) => assert!(m.contains("too large for Alpha"), "{m}"),
        other => panic!("expected bad input, got {other:?}"),
    }
}
