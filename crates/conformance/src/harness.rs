//! A libtest-mimic harness in which a missing driver is a visible skip: trials that need a
//! device are reported as ignored with the reason, or, when `BLOCKSWEEP_REQUIRE` names the
//! API, replaced by one failing `driver_available::<api>` trial.

use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use blocksweep_core::{Api, DeviceIdentity, Provider};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::required;
use crate::scenarios::SCENARIOS;
use crate::trial::{skip, IntoCompletion, Target};

/// Every device `driver` lists, or why there is none (a probe error, or an empty list).
pub fn probe(provider: &dyn Provider) -> Result<Vec<DeviceIdentity>, String> {
    match provider.probe() {
        Ok(d) if d.is_empty() => Err(format!("the {} driver lists no device", provider.api())),
        Ok(d) => Ok(d),
        Err(e) => Err(e.message),
    }
}

/// A trial's name, and whether the trial runs only when asked for (`--ignored`,
/// `--include-ignored`), like `#[ignore]`. A plain name (`&str`, `String`) always runs; see
/// [`ignored`].
pub struct TrialName {
    name: String,
    ignored: bool,
}

impl From<&str> for TrialName {
    fn from(name: &str) -> Self {
        name.to_string().into()
    }
}

impl From<String> for TrialName {
    fn from(name: String) -> Self {
        TrialName {
            name,
            ignored: false,
        }
    }
}

/// `name` for a trial that runs only when asked for: slow runs, and children that a parent
/// trial starts in a process of its own.
pub fn ignored(name: impl Into<String>) -> TrialName {
    TrialName {
        name: name.into(),
        ignored: true,
    }
}

fn trial<R: IntoCompletion>(name: TrialName, body: impl FnOnce() -> R + Send + 'static) -> Trial {
    Trial::ignorable_test(name.name, move || Ok(body().into_completion()))
        .with_ignored_flag(name.ignored)
}

/// A list of trials, and the APIs whose trials could not be made for want of a device.
#[derive(Default)]
pub struct Harness {
    trials: Vec<Trial>,
    /// APIs required by BLOCKSWEEP_REQUIRE that have no device, with the reason.
    missing: Vec<(Api, String)>,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::default()
    }

    /// A trial that needs no device. The body panics to fail; it may return a [`Completion`].
    pub fn test<R: IntoCompletion>(
        mut self,
        name: impl Into<TrialName>,
        body: impl FnOnce() -> R + Send + 'static,
    ) -> Self {
        self.trials.push(trial(name.into(), body));
        self
    }

    /// Adds a trial made elsewhere.
    pub fn push(mut self, trial: Trial) -> Self {
        self.trials.push(trial);
        self
    }

    /// Trials `<name>::<api>` for each of `names`, which need a device of `api` that it does
    /// not have (`why`): each reported as ignored with the reason, or, when
    /// `BLOCKSWEEP_REQUIRE` names the API, none of them and one failing
    /// `driver_available::<api>` trial.
    pub fn unavailable<S: AsRef<str>>(mut self, api: Api, why: &str, names: &[S]) -> Self {
        if required(api) {
            if !self.missing.iter().any(|(a, _)| *a == api) {
                self.missing.push((api, why.to_string()));
            }
            return self;
        }
        let reason = format!("{api} unavailable: {why}");
        for name in names {
            let reason = reason.clone();
            self.trials.push(trial(
                format!("{}::{}", name.as_ref(), api.key()).into(),
                move || skip(reason),
            ));
        }
        self
    }

    /// The trials, with a failing `driver_available::<api>` for each required API that has
    /// no device.
    pub fn into_trials(mut self) -> Vec<Trial> {
        for (api, why) in std::mem::take(&mut self.missing) {
            let message = format!(
                "{api} is required by BLOCKSWEEP_REQUIRE ({}) but unavailable: {why}",
                std::env::var("BLOCKSWEEP_REQUIRE").unwrap_or_default()
            );
            self.trials.push(Trial::test(
                format!("driver_available::{}", api.key()),
                move || Err(Failed::from(message)),
            ));
        }
        self.trials
    }

    /// Runs the trials under the command line's arguments (filters, `--ignored`, `--list`,
    /// `--test-threads`, ...), prints libtest's summary, and returns the exit code.
    pub fn run(self) -> ExitCode {
        let args = Arguments::from_args();
        crate::set_verbose(args.nocapture || args.show_output);
        libtest_mimic::run(&args, self.into_trials()).exit_code()
    }
}

type DeviceBody = Arc<dyn Fn(&[DeviceIdentity], usize) -> Completion + Send + Sync>;

/// The trials of one API: per-device trials on every device its driver lists (probed once,
/// when the first one is added), and trials that need no device.
pub struct Suite {
    provider: &'static dyn Provider,
    devices: OnceLock<Result<Arc<Vec<DeviceIdentity>>, String>>,
    harness: Harness,
}

impl Suite {
    pub fn new(provider: &'static dyn Provider) -> Suite {
        Suite {
            provider,
            devices: OnceLock::new(),
            harness: Harness::new(),
        }
    }

    pub fn api(&self) -> Api {
        self.provider.api()
    }

    /// The driver's devices, or why it has none (probed on first use).
    pub fn devices(&self) -> Result<&[DeviceIdentity], &str> {
        match self
            .devices
            .get_or_init(|| probe(self.provider).map(Arc::new))
        {
            Ok(d) => Ok(d.as_slice()),
            Err(e) => Err(e.as_str()),
        }
    }

    fn add_per_device(mut self, name: TrialName, body: DeviceBody) -> Self {
        let devices = match self.devices() {
            Ok(_) => self.devices.get().unwrap().as_ref().unwrap().clone(),
            Err(why) => {
                let why = why.to_string();
                let api = self.api();
                self.harness = self.harness.unavailable(api, &why, &[&name.name]);
                return self;
            }
        };
        let key = self.api().key();
        for (i, d) in devices.iter().enumerate() {
            let (devices, body) = (devices.clone(), body.clone());
            let trial_name = TrialName {
                name: format!("{}::{key}#{} {}", name.name, d.index, d.name),
                ignored: name.ignored,
            };
            let t = trial(trial_name, move || body(&devices, i));
            self.harness = self.harness.push(t);
        }
        self
    }

    /// `name` on every device: one trial `<name>::<api>#<index> <device name>` each, whose
    /// body gets the device's identity (and opens it with the crate's own `open`).
    pub fn each_device<R: IntoCompletion>(
        self,
        name: impl Into<TrialName>,
        body: impl Fn(&DeviceIdentity) -> R + Send + Sync + 'static,
    ) -> Self {
        let body: DeviceBody = Arc::new(move |d, i| body(&d[i]).into_completion());
        self.add_per_device(name.into(), body)
    }

    /// `name` once for the API, with all its devices: one trial `<name>::<api>`.
    pub fn all_devices<R: IntoCompletion>(
        mut self,
        name: &str,
        body: impl FnOnce(&[DeviceIdentity]) -> R + Send + 'static,
    ) -> Self {
        let api = self.api();
        match self.devices() {
            Ok(_) => {
                let devices = self.devices.get().unwrap().as_ref().unwrap().clone();
                self.harness = self
                    .harness
                    .test(format!("{name}::{}", api.key()), move || body(&devices));
            }
            Err(why) => {
                let why = why.to_string();
                self.harness = self.harness.unavailable(api, &why, &[name]);
            }
        }
        self
    }

    /// A trial that needs no device (see [`Harness::test`]).
    pub fn test<R: IntoCompletion>(
        mut self,
        name: impl Into<TrialName>,
        body: impl FnOnce() -> R + Send + 'static,
    ) -> Self {
        self.harness = self.harness.test(name, body);
        self
    }

    /// Every scenario of the kit ([`SCENARIOS`]), through this suite's driver.
    pub fn kit(mut self) -> Self {
        let provider = self.provider;
        for s in SCENARIOS {
            let check = s.check;
            let run = move |devices: &[DeviceIdentity], index: usize| {
                check(&Target {
                    provider,
                    devices: devices.to_vec(),
                    index,
                })
            };
            self = if s.per_device {
                self.add_per_device(s.name.into(), Arc::new(run))
            } else {
                self.all_devices(s.name, move |d| run(d, 0))
            };
        }
        self
    }

    pub fn into_trials(self) -> Vec<Trial> {
        self.harness.into_trials()
    }

    pub fn run(self) -> ExitCode {
        self.harness.run()
    }
}
