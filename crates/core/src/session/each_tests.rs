//! [`Session::each`] and [`Session::each_ready`]: the one place where what an API could not do,
//! and what its checking layer said, become failures.

use super::*;
use crate::backend::{Api, BackendResult, DeviceIdentity, KernelVariant};
use crate::provider::{ApiChoice, ApiProvider, Provider};
use crate::testing::{HostBackend, TEST_API_A, TEST_API_B};

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
    let (answers, failures) = Session::each(&registry, targets, &OpenOptions::default(), |b| {
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

/// `ready` sees every API that opened and the failures of those that did not; what it makes
/// reaches every call of the work; its error closes everything and is the answer.
#[test]
fn ready_sees_what_opened_and_its_error_is_the_answer() {
    let (registry, targets) = registered();
    let ready = |backends: &mut [Box<dyn Backend>], failures: &[Failure]| {
        assert_eq!(backends.len(), 1);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].message, "no context");
        Ok::<_, String>(backends[0].api())
    };
    let work = |made: &Api, b: &mut dyn Backend| Ok(*made == b.api());
    let (made, answers, failures) = Session::each_ready(
        &registry,
        targets.clone(),
        &OpenOptions::default(),
        ready,
        work,
    )
    .unwrap();
    assert_eq!((made, answers), (TEST_API_A, vec![true]));
    assert_eq!(
        failures.len(),
        2,
        "the open failure and the messages: {failures:?}"
    );
    let refuse = |_: &mut [Box<dyn Backend>], _: &[Failure]| Err::<(), _>("frame too large");
    let mut worked = false;
    let e = Session::each_ready(
        &registry,
        targets,
        &OpenOptions::default(),
        refuse,
        |_, _| {
            worked = true;
            Ok(())
        },
    )
    .unwrap_err();
    assert_eq!(e, "frame too large");
    assert!(!worked);
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
    let (answers, failures) =
        Session::each(&registry, targets, &OpenOptions::default(), |b| Ok(b.api()));
    assert_eq!(answers, [TEST_API_A]);
    assert_eq!(failures[0].api, TEST_API_B, "{failures:?}");
    assert_eq!(failures[0].message, "opening panicked");
}
