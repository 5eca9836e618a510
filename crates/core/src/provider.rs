//! The seam between the core and the API crates: one [`Provider`] per API, and the [`Registry`]
//! that probes a list of them and groups what they see into physical devices.
//!
//! A backend crate exports one `static` [`ApiProvider`] (its probe and open); the list of
//! providers is one slice in `blocksweep-apis`. Everything else (device selection, opening,
//! planning, measuring, reporting) is written here once.

use std::thread;

use crate::api::Api;
use crate::backend::{Backend, BackendError, BackendResult, DeviceIdentity, DeviceKind};
use crate::options::OpenOptions;
use crate::physical::{self, PhysicalDevice};

/// One API: its static facts, its devices, and how to open one.
pub trait Provider: Sync {
    fn api(&self) -> Api;

    /// Every device the API enumerates, in its own order (`DeviceIdentity::index`). A missing
    /// library or driver is an [`ErrorKind::Unavailable`](crate::ErrorKind) error.
    fn probe(&self) -> Result<Vec<DeviceIdentity>, BackendError>;

    /// Opens `device` (an identity from [`Provider::probe`]) with the kernels built.
    fn open(
        &self,
        device: &DeviceIdentity,
        options: &OpenOptions,
    ) -> Result<Box<dyn Backend>, BackendError>;
}

/// A [`Provider`] made of an API's facts and its crate's two entry points: each backend crate's
/// `PROVIDER` is one, so that what differs between APIs is only how their options are read.
pub struct ApiProvider {
    pub api: Api,
    /// Every device the API enumerates ([`Provider::probe`]).
    pub probe: fn() -> Result<Vec<DeviceIdentity>, BackendError>,
    /// Opens the device at this index of the API's own order, told what [`OpenOptions`]
    /// apply to the API.
    pub open: fn(usize, &OpenOptions) -> BackendResult<Box<dyn Backend>>,
}

impl Provider for ApiProvider {
    fn api(&self) -> Api {
        self.api
    }

    fn probe(&self) -> Result<Vec<DeviceIdentity>, BackendError> {
        (self.probe)()
    }

    fn open(
        &self,
        device: &DeviceIdentity,
        options: &OpenOptions,
    ) -> Result<Box<dyn Backend>, BackendError> {
        (self.open)(device.index, options)
    }
}

/// What probing one API found: its devices, or why it has none.
pub struct Probed {
    pub provider: &'static dyn Provider,
    pub devices: Result<Vec<DeviceIdentity>, String>,
}

impl Probed {
    pub fn api(&self) -> Api {
        self.provider.api()
    }
}

/// Every API's devices, and the physical devices they make up.
pub struct Registry {
    pub probes: Vec<Probed>,
    pub physical: Vec<PhysicalDevice>,
}

impl Registry {
    /// Probes every provider, each on its own thread (driver loading and platform start-up are
    /// the slow part of a short run, and the APIs do not depend on each other).
    pub fn probe(providers: &[&'static dyn Provider]) -> Registry {
        for d in providers {
            Api::register(d.api());
        }
        if serial() {
            let _t = crate::trace::span("core", "probe, one API at a time");
            let probes = providers
                .iter()
                .map(|&provider| Probed {
                    provider,
                    devices: probe_one(provider),
                })
                .collect();
            return Registry::from_probes(probes);
        }
        let _t = crate::trace::span("core", "probe, every API in parallel");
        let probes: Vec<Probed> = thread::scope(|s| {
            let handles: Vec<_> = providers
                .iter()
                .map(|&provider| (provider, s.spawn(move || probe_one(provider))))
                .collect();
            handles
                .into_iter()
                .map(|(provider, h)| Probed {
                    provider,
                    devices: h
                        .join()
                        .unwrap_or_else(|_| Err("probing panicked".to_string())),
                })
                .collect()
        });
        Registry::from_probes(probes)
    }

    /// A registry from probes already made (tests build fake enumerations with this).
    pub fn from_probes(probes: Vec<Probed>) -> Registry {
        let all: Vec<DeviceIdentity> = probes
            .iter()
            .filter_map(|p| p.devices.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        let physical = physical::group(&all);
        Registry { probes, physical }
    }

    pub fn apis(&self) -> impl Iterator<Item = Api> + '_ {
        self.probes.iter().map(Probed::api)
    }

    pub(crate) fn probe_of(&self, api: Api) -> Option<&Probed> {
        self.probes.iter().find(|p| p.api() == api)
    }

    /// Why `api` has no device, or `None` when it has some.
    pub fn unavailable(&self, api: Api) -> Option<&str> {
        match self.probe_of(api) {
            None => Some("not built into this blocksweep"),
            Some(p) => p.devices.as_ref().err().map(String::as_str),
        }
    }

    pub fn devices(&self, api: Api) -> &[DeviceIdentity] {
        self.probe_of(api)
            .and_then(|p| p.devices.as_ref().ok())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The physical device `selector` names (an index, a UUID, a PCI address or part of a
    /// name), or the default one.
    pub fn select(&self, selector: Option<&str>) -> Result<&PhysicalDevice, String> {
        match selector {
            Some(s) => physical::select(&self.physical, s),
            None => physical::default_device(&self.physical).ok_or_else(|| self.nothing_found()),
        }
    }

    /// An API's own default device: its first GPU, else its first device.
    pub fn api_default(&self, api: Api) -> Option<&DeviceIdentity> {
        let d = self.devices(api);
        d.iter().find(|x| x.kind == DeviceKind::Gpu).or(d.first())
    }

    pub fn nothing_found(&self) -> String {
        let reasons: Vec<String> = self
            .probes
            .iter()
            .filter_map(|p| {
                p.devices
                    .as_ref()
                    .err()
                    .map(|e| format!("{}: {e}", p.api()))
            })
            .collect();
        format!("no GPU API found a device ({})", reasons.join("; "))
    }

    /// Opens `device` through its API's provider, in this process ([`crate::worker::open`] is
    /// the one that honours [`OpenOptions::worker`]).
    pub fn open(
        &self,
        device: &DeviceIdentity,
        options: &OpenOptions,
    ) -> Result<Box<dyn Backend>, BackendError> {
        match self.probe_of(device.api) {
            Some(p) => p.provider.open(device, options),
            None => Err(BackendError::new(
                device.api,
                crate::backend::ErrorKind::Unavailable,
                "not built into this blocksweep",
            )),
        }
    }

    /// `CUDA is unavailable: <why>; to use it, <hint>`, without repeating an install hint
    /// the reason already gives.
    pub fn unavailable_message(&self, api: Api) -> String {
        let why = self.unavailable(api).unwrap_or("no device");
        let hint = api.info().install_hint;
        if why.contains("install") || hint.is_empty() {
            format!("{api} is unavailable: {why}")
        } else {
            format!("{api} is unavailable: {why}; to use it, {hint}")
        }
    }
}

/// Whether the APIs are probed one at a time (`BLOCKSWEEP_PROBE=serial`) instead of each on a
/// thread of its own; the CLI asks for it under a tool that injects itself into the process.
pub fn serial() -> bool {
    std::env::var("BLOCKSWEEP_PROBE").is_ok_and(|v| v == "serial")
}

/// Whether a `--device` value names several devices (`all`, or a comma-separated list).
pub fn is_multi_device(selector: &str) -> bool {
    selector.trim().eq_ignore_ascii_case("all") || selector.contains(',')
}

fn probe_one(provider: &dyn Provider) -> Result<Vec<DeviceIdentity>, String> {
    match provider.probe() {
        Ok(d) if d.is_empty() => Err(format!("the {} driver lists no device", provider.api())),
        Ok(d) => Ok(d),
        Err(e) => Err(e.message),
    }
}

/// Which APIs a command should use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ApiChoice {
    /// Every API that sees the selected device (with no GPU and no device named: every API on
    /// its own default device).
    #[default]
    Seeing,
    /// One API only.
    Only(Api),
    /// Every available API: on the selected device where it sees it, else on its own default.
    All,
}

/// The API devices a command runs on, and a note on how they were chosen.
#[derive(Debug, Clone)]
pub struct Targets {
    pub devices: Vec<DeviceIdentity>,
    pub note: String,
    /// Every device is one API's view of the same physical device.
    pub one_physical_device: bool,
}

impl Registry {
    /// Resolves an API choice and a `--device` selector into API devices. Errors are bad input.
    pub fn targets(&self, choice: &ApiChoice, device: Option<&str>) -> Result<Targets, String> {
        if let ApiChoice::Only(api) = choice {
            return self.one_api_target(*api, device);
        }
        let p = self.select(device)?;
        let mut devices: Vec<DeviceIdentity> = p.members.clone();
        let mut note = format!("physical device {} ({}, {})", p.index, p.name, p.rule);
        // Without a GPU there is no one device the APIs share; rather than measure a single
        // CPU driver, run each API on its own default device (as `All`).
        let cpu_only =
            *choice == ApiChoice::Seeing && device.is_none() && p.kind != DeviceKind::Gpu;
        if cpu_only {
            note = format!("no GPU found, each API on its own default device: {note}");
        }
        if *choice == ApiChoice::All || cpu_only {
            for api in self.apis() {
                if p.member(api).is_some() {
                    continue;
                }
                match self.api_default(api) {
                    Some(d) => {
                        note.push_str(&format!(
                            "; {api} does not see it and runs on its own default device {} ({})",
                            d.index, d.name
                        ));
                        devices.push(d.clone());
                    }
                    None => note.push_str(&format!(
                        "; {api} unavailable: {}",
                        self.unavailable(api).unwrap_or("no device")
                    )),
                }
            }
        }
        devices.sort_by_key(|d| d.api);
        let one_physical_device = devices.iter().all(|d| p.members.contains(d));
        Ok(Targets {
            devices,
            note,
            one_physical_device,
        })
    }

    /// Resolves a device selector that may name several physical devices, one [`Targets`] per
    /// device in device order: `all` (every GPU; every device when there is no GPU), or a
    /// comma-separated list of what `--device` accepts. A selector naming one device gives one.
    pub fn targets_each(
        &self,
        choice: &ApiChoice,
        device: Option<&str>,
    ) -> Result<Vec<Targets>, String> {
        let Some(spec) = device.filter(|s| is_multi_device(s)) else {
            return Ok(vec![self.targets(choice, device)?]);
        };
        let mut chosen: Vec<usize> = Vec::new();
        if spec.trim().eq_ignore_ascii_case("all") {
            // With one API chosen, `all` means every device that API sees.
            let seen = |p: &&PhysicalDevice| match choice {
                ApiChoice::Only(api) => p.member(*api).is_some(),
                _ => true,
            };
            let candidates: Vec<&PhysicalDevice> = self.physical.iter().filter(seen).collect();
            let gpus: Vec<usize> = candidates
                .iter()
                .filter(|p| p.kind == DeviceKind::Gpu)
                .map(|p| p.index)
                .collect();
            chosen = match gpus.is_empty() {
                true => candidates.iter().map(|p| p.index).collect(),
                false => gpus,
            };
            if chosen.is_empty() {
                return Err(self.nothing_found());
            }
        } else {
            for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let p = self.select(Some(part))?;
                if !chosen.contains(&p.index) {
                    chosen.push(p.index);
                }
            }
        }
        let one = |i: usize| match choice {
            // `all` APIs per device means: every API that sees this device.
            ApiChoice::All => self.targets(&ApiChoice::Seeing, Some(&i.to_string())),
            c => self.targets(c, Some(&i.to_string())),
        };
        chosen.into_iter().map(one).collect()
    }

    fn one_api_target(&self, api: Api, device: Option<&str>) -> Result<Targets, String> {
        if self.unavailable(api).is_some() {
            return Err(self.unavailable_message(api));
        }
        let dev = match device {
            Some(spec) => {
                let p = self.select(Some(spec))?;
                p.member(api).cloned().ok_or_else(|| {
                    let seen: Vec<String> = p.apis().iter().map(|a| a.to_string()).collect();
                    format!(
                        "device {} ({}) is not visible to {api}; it is seen by {}",
                        p.index,
                        p.name,
                        seen.join(", ")
                    )
                })?
            }
            None => self
                .api_default(api)
                .cloned()
                .ok_or_else(|| self.unavailable_message(api))?,
        };
        Ok(Targets {
            note: format!("{api} device {}", dev.index),
            devices: vec![dev],
            one_physical_device: true,
        })
    }
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
