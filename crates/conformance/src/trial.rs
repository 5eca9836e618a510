//! What every trial shares, below the harness that runs trials and the scenarios that make
//! them: where a trial runs ([`Target`]) and what its body may return ([`IntoCompletion`],
//! [`skip`]).

use blocksweep_core::{Api, Backend, DeviceIdentity, OpenOptions, Provider};
use libtest_mimic::Completion;

use crate::required;

/// Where a scenario runs: one device of one driver, among all the devices it listed.
pub struct Target {
    pub provider: &'static dyn Provider,
    /// Every device the driver listed, in its order.
    pub devices: Vec<DeviceIdentity>,
    /// The device under test (for per-API scenarios, 0).
    pub index: usize,
}

impl Target {
    pub fn device(&self) -> &DeviceIdentity {
        &self.devices[self.index]
    }

    /// Opens the device under test with default options; failing to open a device the driver
    /// listed fails the trial.
    pub fn open(&self) -> Box<dyn Backend> {
        let d = self.device();
        self.provider
            .open(d, &OpenOptions::default())
            .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
    }
}

/// What a trial's body may return: `()` (it ran; a panic is a failure) or a [`Completion`]
/// (it may decide at run time that it cannot run here, with the reason).
pub trait IntoCompletion {
    fn into_completion(self) -> Completion;
}

impl IntoCompletion for () {
    fn into_completion(self) -> Completion {
        Completion::Completed
    }
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Completion {
        self
    }
}

/// The trial did not run here, for `reason` (shown as `ignored (<reason>)`).
pub fn skip(reason: impl Into<String>) -> Completion {
    Completion::ignored_with(reason.into())
}

/// [`skip`], except that it fails the trial when `BLOCKSWEEP_REQUIRE` names `api`: for what
/// the API's tests need beyond its driver (a validation layer, a shader compiler).
pub fn skip_unless_required(api: Api, reason: impl Into<String>) -> Completion {
    let reason = reason.into();
    if required(api) {
        panic!(
            "{} is required by BLOCKSWEEP_REQUIRE but {reason}",
            api.key()
        );
    }
    skip(reason)
}
