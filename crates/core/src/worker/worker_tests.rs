//! A worker that misbehaves: a crash, a silence past the deadline, an answer cut short, a
//! death in the middle of a checked dispatch. Each is that backend's error in words, never a
//! panic or a wait without end; and the protocol forwards every call of the trait.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::link::Waits;
use super::protocol::{Opened, Reply, FORWARDED};
use super::{RemoteBackend, WorkerCommand};
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::options::OpenOptions;
use crate::testing::{HostBackend, TEST_API_A};

/// Short waits, so that a silent worker is given up on at once.
const QUICK: Waits = Waits {
    slow: Duration::from_secs(20),
    deadline: Duration::from_millis(300),
    grace: Duration::from_millis(200),
    closing: Duration::from_secs(2),
};

/// A worker played by `sh`: it answers the open with what a host backend would, then reads
/// the next request and does `then` (shell commands).
fn fake_worker(then: &str) -> (RemoteBackend, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let host = HostBackend::new(TEST_API_A);
    let opened = Reply::Opened(Box::new(Opened {
        identity: host.identity().clone(),
        limits: host.limits().clone(),
        facts: host.kernel_facts().clone(),
        timer: host.timer(),
        copy_method: host.copy_method(),
        builtins: Vec::new(),
    }));
    let reply: PathBuf = dir.path().join("opened.json");
    std::fs::write(&reply, serde_json::to_string(&opened).unwrap() + "\n").unwrap();
    let script = format!("read -r open; cat \"$1\"; read -r request; {then}");
    let command = WorkerCommand {
        program: Path::new("sh").to_path_buf(),
        args: vec![
            "-c".into(),
            script,
            "sh".into(),
            reply.to_string_lossy().into_owned(),
        ],
    };
    let device = host.identity().clone();
    let remote = RemoteBackend::open_waiting(&command, &device, &OpenOptions::default(), QUICK);
    (remote.expect("the fake worker opens"), dir)
}

fn launch() -> Launch {
    Launch::linear(BlockSize::linear(64), 4)
}

fn batch(b: &mut RemoteBackend) -> BackendResult<BatchTimes> {
    b.run_batch(Work::Kernel(launch()), 1, Stamps::Batch)
}

/// The error of `result`, after which every later call fails with the same words.
fn ends_with<T: std::fmt::Debug>(b: &mut RemoteBackend, result: BackendResult<T>) -> String {
    let e = result.expect_err("the call fails");
    assert_eq!(e.api, TEST_API_A);
    let later = batch(b).expect_err("a worker that ended answers nothing more");
    assert_eq!(later.message, e.message);
    assert_eq!(later.kind, ErrorKind::Fault);
    e.message
}

#[test]
fn a_request_that_crashes_the_worker_is_a_fault_that_names_the_signal() {
    let (mut b, _dir) = fake_worker("kill -SEGV $$");
    let result = batch(&mut b);
    assert_eq!(result.as_ref().map_err(|e| e.kind), Err(ErrorKind::Fault));
    let message = ends_with(&mut b, result);
    assert!(
        message
            .starts_with("the kernel crashed the driver: its worker process was killed by SIGSEGV"),
        "{message}"
    );
}

#[test]
fn a_worker_silent_past_the_deadline_is_killed_and_said_to_have_hung() {
    let (mut b, _dir) = fake_worker("exec sleep 60");
    let result = batch(&mut b);
    assert_eq!(result.as_ref().map_err(|e| e.kind), Err(ErrorKind::Fault));
    let message = ends_with(&mut b, result);
    assert!(message.starts_with("no answer within"), "{message}");
    assert!(
        message.contains("(the kernel or the provider hung): its worker process was killed"),
        "{message}"
    );
}

#[test]
fn an_answer_cut_short_ends_the_worker_instead_of_reading_the_pipe_out_of_step() {
    let (mut b, _dir) = fake_worker("printf '{\"Times\":{\"batch_ms\":1.'; exit 0");
    let result = batch(&mut b);
    assert_eq!(result.as_ref().map_err(|e| e.kind), Err(ErrorKind::Driver));
    let message = ends_with(&mut b, result);
    assert!(
        message.starts_with("the worker's answer is not understood"),
        "{message}"
    );
    assert!(message.contains("{\"Times\":{\"batch_ms\":1."), "{message}");
}

#[test]
fn a_worker_killed_during_a_checked_dispatch_is_that_dispatchs_failure() {
    // The first request maps the shared region: answered, then the checked dispatch is read.
    let (mut b, _dir) = fake_worker("echo '\"Done\"'; read -r request; kill -KILL $$");
    let fills = vec![Fill {
        offset: 0,
        len: 16,
        byte: 0xFF,
    }];
    let run = CheckedRun {
        resets: vec![Reset::Fill { arg: 0, fills }],
        launch: Some(launch()),
        reads: vec![Span {
            arg: 0,
            offset: 0,
            len: 16,
        }],
    };
    let mut out = vec![vec![0u8; 16]];
    let dispatched = b.run_checked(&run, &mut out);
    let Ok(Err(e)) = dispatched else {
        panic!("not the dispatch's failure: {dispatched:?}");
    };
    assert_eq!(e.kind, ErrorKind::Fault);
    assert!(
        e.message
            .starts_with("the kernel crashed the driver: its worker process was killed by SIGKILL"),
        "{}",
        e.message
    );
    // Lost before the next one: that call's own error, nothing dispatched.
    let again = b.run_checked(&run, &mut out);
    assert!(
        matches!(again, Err(ref later) if later.message == e.message),
        "{again:?}"
    );
}

/// Every method of the trait is forwarded as it is (one list, [`super::protocol`]), answered
/// from what the worker said when it opened, or handled by the remote by hand: a method added
/// to the trait and to none of these fails here, instead of silently taking its default in a
/// worker's parent.
#[test]
fn every_backend_method_crosses_to_the_worker() {
    const FROM_OPENED: [&str; 7] = [
        "identity",
        "limits",
        "kernel_facts",
        "timer",
        "api",
        "copy_method",
        "builtin",
    ];
    const BY_HAND: [&str; 7] = [
        "prepare",
        "diagnostics",
        "read_buffer_staged",
        "load_program",
        "write_buffer",
        "read_buffer",
        "run_checked",
    ];
    let source = include_str!("../backend.rs");
    let start = source.find("pub trait Backend: Send {").unwrap();
    let end = start + source[start..].find("\n}\n").unwrap();
    let methods: Vec<&str> = source[start..end]
        .lines()
        .filter_map(|l| l.trim().strip_prefix("fn "))
        .map(|l| l.split(['(', '<']).next().unwrap())
        .collect();
    assert!(methods.len() > 15, "{methods:?}");
    for m in &methods {
        let ways = [
            FORWARDED.contains(m),
            FROM_OPENED.contains(m),
            BY_HAND.contains(m),
        ];
        let count = ways.iter().filter(|w| **w).count();
        assert_eq!(
            count, 1,
            "Backend::{m} crosses to the worker in {count} ways"
        );
    }
    let listed = FORWARDED.len() + FROM_OPENED.len() + BY_HAND.len();
    assert_eq!(
        listed,
        methods.len(),
        "a listed method the trait lacks: {methods:?}"
    );
}
