//! [`each`] and the pipeline's [`run`] of any task: the one place where what an API could not do,
//! and what its checking layer said, become failures.

use super::*;
use crate::backend::{BackendResult, DeviceIdentity, ErrorKind, KernelVariant};
use crate::frame::CheckedFrame;
use crate::lab::shapes;
use crate::lab::task::Shapes;
use crate::limits::Named;
use crate::provider::{ApiChoice, ApiProvider, Provider};
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};
use crate::{Protocol, Reps};

fn probe_a() -> Result<Vec<DeviceIdentity>, BackendError> {
    Ok(vec![HostBackend::new(TEST_API_A).identity().clone()])
}

fn probe_b() -> Result<Vec<DeviceIdentity>, BackendError> {
    Ok(vec![HostBackend::new(TEST_API_B).identity().clone()])
}

/// A backend whose checking layer said two things.
fn open_saying(_: usize, _: &OpenOptions) -> BackendResult<Box<dyn Backend>> {
    let mut b = HostBackend::new(TEST_API_A);
    b.said = vec!["VUID-1".into(), "VUID-2".into()];
    Ok(Box::new(b))
}

fn open_failing(_: usize, _: &OpenOptions) -> BackendResult<Box<dyn Backend>> {
    Err(BackendError::new(
        TEST_API_B,
        ErrorKind::Driver,
        "no context",
    ))
}

static SAYING: ApiProvider = ApiProvider {
    api: TEST_API_A,
    probe: probe_a,
    open: open_saying,
};

static FAILING: ApiProvider = ApiProvider {
    api: TEST_API_B,
    probe: probe_b,
    open: open_failing,
};

fn registered() -> (Registry, Targets) {
    let providers: [&'static dyn Provider; 2] = [&SAYING, &FAILING];
    let registry = Registry::probe(&providers);
    let targets = registry.targets(&ApiChoice::All, None).unwrap();
    (registry, targets)
}

/// The work asks the backend many times (as the lab's sweeps do, once per thread count, where
/// the messages were once said after each): they are still one failure, said once.
#[test]
fn a_checking_layers_messages_are_one_failure_however_often_the_work_asks() {
    let (registry, targets) = registered();
    let (answers, failures) = each(&registry, targets, &OpenOptions::default(), |b| {
        for _ in 0..3 {
            crate::builtin::load_kernel(b, KernelVariant::GridStride, 1, 1)?;
        }
        Ok(b.api())
    });
    assert_eq!(answers, [TEST_API_A]);
    let said: Vec<&Failure> = failures.iter().filter(|f| f.api == TEST_API_A).collect();
    assert_eq!(said.len(), 1, "{failures:?}");
    assert_eq!(said[0].message, "2 validation message(s): VUID-1 | VUID-2");
}

fn open_panicking(_: usize, _: &OpenOptions) -> BackendResult<Box<dyn Backend>> {
    panic!("a driver's bug at open")
}

static PANICKING: ApiProvider = ApiProvider {
    api: TEST_API_B,
    probe: probe_b,
    open: open_panicking,
};

/// `each` opens through the sweep's opening threads: an open that panics is that API's
/// failure, and the others answer.
#[test]
fn an_open_that_panics_is_its_apis_failure_and_the_others_answer() {
    let providers: [&'static dyn Provider; 2] = [&PANICKING, &SAYING];
    let registry = Registry::probe(&providers);
    let targets = registry.targets(&ApiChoice::All, None).unwrap();
    let (answers, failures) = each(&registry, targets, &OpenOptions::default(), |b| Ok(b.api()));
    assert_eq!(answers, [TEST_API_A]);
    let b: Vec<&Failure> = failures.iter().filter(|f| f.api == TEST_API_B).collect();
    assert_eq!(b.len(), 1, "{failures:?}");
    assert_eq!(b[0].message, "opening panicked");
}

/// A lab sweep of two thread counts through the pipeline asks the backend after each (as
/// `shapes --vk-validation` did, which once reported every message twice): what the checking
/// layer said is one failure, said once; the API that could not open is the other.
#[test]
fn a_lab_sweep_of_two_thread_counts_reports_the_checking_layers_messages_once() {
    let (registry, targets) = registered();
    let plans = [32, 64]
        .iter()
        .map(|&t| (t, shapes::plan(t, 64, 16).unwrap()))
        .collect();
    let protocol = Protocol {
        warmups: 0,
        reps: Reps::Fixed(1),
        ..Protocol::default()
    };
    let mut task = Shapes {
        on: CheckedFrame::make(64, 16, 1).unwrap(),
        plans,
        protocol,
    };
    let f = run(&registry, &targets, &OpenOptions::default(), &(), &mut task).unwrap();
    assert_eq!(f.answers.len(), 1);
    assert_eq!(f.answers[0].len(), 2, "one result per thread count");
    assert!(f.answers[0].iter().all(|r| r.error.is_none()));
    let said: Vec<&Failure> = f.failures.iter().filter(|x| x.api == TEST_API_A).collect();
    assert_eq!(said.len(), 1, "{:?}", f.failures);
    assert_eq!(said[0].message, "2 validation message(s): VUID-1 | VUID-2");
    let other: Vec<&Failure> = f.failures.iter().filter(|x| x.api == TEST_API_B).collect();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].message, "no context");
}

fn open_tiny(_: usize, _: &OpenOptions) -> BackendResult<Box<dyn Backend>> {
    let mut b = HostBackend::new(TEST_API_A);
    b.limits.global_mem_bytes = Some(Named::new(1024, "TEST_TINY_MEMORY"));
    Ok(Box::new(b))
}

static TINY: ApiProvider = ApiProvider {
    api: TEST_API_A,
    probe: probe_a,
    open: open_tiny,
};

/// Any task's fit is the pipeline's: refused by every API that opened, the run is bad input
/// naming the limit, and no turn ran; a task that cannot be made ends the run with its error.
#[test]
fn a_task_no_device_holds_is_bad_input_and_a_task_not_made_is_the_runs_error() {
    let providers: [&'static dyn Provider; 1] = [&TINY];
    let registry = Registry::probe(&providers);
    let targets = registry.targets(&ApiChoice::All, None).unwrap();
    let mut task = crate::validate::Validation::default();
    let f = run(&registry, &targets, &OpenOptions::default(), &(), &mut task).unwrap();
    assert!(!f.measured_any && f.answers.is_empty());
    match f.require_any() {
        Err(SessionError::Input(m)) => assert!(
            m.starts_with("frame 509x253 is too large for Alpha") && m.contains("TEST_TINY_MEMORY"),
            "{m}"
        ),
        other => panic!("expected bad input, got {:?}", other.err()),
    }
    let mut never = Later::new(|| -> Result<Shapes, SessionError> {
        Err(SessionError::Input("no such frame".into()))
    });
    match run(
        &registry,
        &targets,
        &OpenOptions::default(),
        &(),
        &mut never,
    ) {
        Err(SessionError::Input(m)) => assert_eq!(m, "no such frame"),
        other => panic!("expected the source's error, got {:?}", other.err()),
    }
}
