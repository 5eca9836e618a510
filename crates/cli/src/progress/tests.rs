use super::*;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

fn api() -> Api {
    blocksweep_apis::all()[0].api()
}

fn rows(done: usize, count: usize, spent_s: u64) -> (Rows, Instant) {
    let started = Instant::now();
    let last_done = started + Duration::from_secs(spent_s);
    let r = Rows {
        api: api(),
        index: done,
        count,
        block: BlockSize::linear(256),
        started,
        done,
        last_done,
        row_started: last_done,
    };
    (r, last_done)
}

#[test]
fn time_left_is_the_mean_row_times_the_rows_left() {
    let (r, now) = rows(0, 13, 0);
    assert_eq!(r.left(now), None);
    assert_eq!(r.describe(now), "row 1 of 13 (block 256)");
    let (r, now) = rows(4, 13, 8);
    assert_eq!(r.left(now), Some(Duration::from_secs(18)));
    assert_eq!(r.describe(now), "row 5 of 13 (block 256), 18 s left");
    // 1.5 s into the running row: its share shrinks, the rows after it do not.
    let later = now + Duration::from_millis(1500);
    assert_eq!(r.left(later), Some(Duration::from_millis(16500)));
    assert_eq!(
        r.left(now + Duration::from_secs(30)),
        Some(Duration::from_secs(16))
    );
    let (r, now) = rows(12, 13, 24);
    assert_eq!(
        r.describe(now + Duration::from_secs(5)),
        "row 13 of 13 (block 256), under 1 s left"
    );
    let (r, now) = rows(13, 13, 26);
    assert_eq!(r.left(now), Some(Duration::ZERO));
}

#[test]
fn durations_read_as_words() {
    assert_eq!(human(Duration::from_millis(850)), "850 ms");
    assert_eq!(human(Duration::from_millis(1940)), "1.9 s");
    assert_eq!(human(Duration::from_secs(12)), "12 s");
    assert_eq!(human(Duration::from_secs(60)), "1 min");
    assert_eq!(human(Duration::from_secs(185)), "3 min 5 s");
    assert_eq!(human(Duration::from_secs(7800)), "2 h 10 min");
    assert_eq!(human(Duration::from_secs(7200)), "2 h");
}

#[test]
fn phases_are_named() {
    let t = Instant::now();
    let p = Phase::Status {
        api: None,
        what: "opening the devices and building the kernels".into(),
        since: t,
    };
    assert_eq!(
        p.describe(t + Duration::from_secs(4)).unwrap(),
        "opening the devices and building the kernels (4 s)"
    );
    let p = Phase::Status {
        api: Some(api()),
        what: "timing the copy ceiling".into(),
        since: t,
    };
    assert_eq!(
        p.describe(t).unwrap(),
        format!("{}: timing the copy ceiling", api())
    );
    assert!(Phase::Idle.describe_with(t, &[]).is_none());
    // What other threads are busy with follows the phase.
    let busy = |what: &str, secs, fraction, left: Option<u64>| Busy {
        scope: "core",
        what: what.into(),
        elapsed: Duration::from_secs(secs),
        fraction,
        left: left.map(Duration::from_secs),
    };
    let frame = busy("making the frame", 2, Some(0.4), Some(3));
    let mut upload = busy("uploading the frame 50000x50000", 4, None, None);
    // The scope is an API's key, named as the API once registered (the CLI registers all).
    Api::register(api());
    upload.scope = api().key();
    let line = p.describe_with(t, &[frame.clone(), upload]).unwrap();
    assert_eq!(
        line,
        format!(
            "{a}: timing the copy ceiling; making the frame 40 %, 3 s left; \
             {a}: uploading the frame 50000x50000 (4 s)",
            a = api()
        )
    );
    assert_eq!(
        Phase::Idle.describe_with(t, &[busy("verifying", 0, Some(0.0), None)]),
        Some("verifying".into())
    );
}

#[test]
fn notes_come_late_and_seldom() {
    let t0 = Instant::now();
    let s = |n| t0 + Duration::from_secs(n);
    assert!(!note_due(s(9), t0, None, 5), "nothing in the first 10 s");
    assert!(note_due(s(10), t0, None, 5));
    assert!(!note_due(s(15), t0, Some((s(10), 5)), 6), "10 s apart");
    assert!(note_due(s(20), t0, Some((s(10), 5)), 6), "a new row");
    assert!(!note_due(s(20), t0, Some((s(10), 5)), 5), "nothing new");
    assert!(
        note_due(s(70), t0, Some((s(10), 5)), 5),
        "a minute: still running"
    );
}

#[test]
fn a_run_too_long_for_max_time_is_warned_about_once() {
    let settings = Settings {
        quiet: true,
        notes: false,
        max_time: Some(Duration::from_millis(1)),
        saves_rows: false,
    };
    let mut bar = Bar::with_target(ProgressDrawTarget::hidden(), settings, false);
    let row = |b: u32| SweepRow::new(BlockSize::linear(b));
    for i in 0..3 {
        bar.row_started(api(), i, 3, BlockSize::linear(64));
        std::thread::sleep(Duration::from_millis(3));
        bar.row_finished(api(), &row(64));
    }
    assert_eq!(bar.shared.lock().unwrap().warned, vec![api()]);
    bar.finish();
}

/// A terminal on which every write fails with ENOSPC, counting the attempts.
#[derive(Debug)]
struct FullTerminal(Arc<AtomicUsize>);

impl FullTerminal {
    fn fail(&self) -> io::Result<()> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(io::Error::from_raw_os_error(libc::ENOSPC))
    }
}

impl indicatif::TermLike for FullTerminal {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, _: usize) -> io::Result<()> {
        self.fail()
    }
    fn move_cursor_down(&self, _: usize) -> io::Result<()> {
        self.fail()
    }
    fn move_cursor_right(&self, _: usize) -> io::Result<()> {
        self.fail()
    }
    fn move_cursor_left(&self, _: usize) -> io::Result<()> {
        self.fail()
    }
    fn write_line(&self, _: &str) -> io::Result<()> {
        self.fail()
    }
    fn write_str(&self, _: &str) -> io::Result<()> {
        self.fail()
    }
    fn clear_line(&self) -> io::Result<()> {
        self.fail()
    }
    fn flush(&self) -> io::Result<()> {
        self.fail()
    }
}

#[test]
fn a_full_terminal_never_panics() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let term = FullTerminal(attempts.clone());
    let target = ProgressDrawTarget::term_like_with_hz(Box::new(term), 1);
    let mut bar = Bar::with_target(target, Settings::default(), false);
    let api = api();
    bar.status(Some(api), "compiling the kernel");
    for i in 0..3 {
        bar.row_started(api, i, 3, BlockSize::linear(64));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    bar.finish();
    assert!(
        attempts.load(Ordering::SeqCst) > 0,
        "the bar tried to draw on the failing terminal"
    );
}

#[test]
fn a_pipe_gets_notes_only_when_asked() {
    let asked = Settings {
        notes: true,
        ..Settings::default()
    };
    assert!(
        !super::notes_wanted(false, &Settings::default()),
        "a pipe, not asked"
    );
    assert!(super::notes_wanted(false, &asked), "a pipe, --progress");
    assert!(
        !super::notes_wanted(true, &asked),
        "a terminal draws its line instead"
    );
    let quiet = Settings {
        quiet: true,
        ..asked
    };
    assert!(!super::notes_wanted(false, &quiet));
}
