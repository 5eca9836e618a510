//! One module per subcommand, plus the device resolution they share.

mod compare;
mod devices;
mod limits;
mod sweep;
mod validate;

use std::process::ExitCode;

use blocksweep_core::{Api, DeviceIdentity, DeviceKind};

use crate::args::{BackendChoice, Command, DeviceArgs};
use crate::registry::{install_hint, Registry};
use crate::usage;

pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Devices(a) => devices::run(&a),
        Command::Limits(a) => limits::run(&a),
        Command::Sweep(a) => sweep::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Validate(a) => validate::run(&a),
    }
}

fn api_of(choice: BackendChoice) -> Option<Api> {
    match choice {
        BackendChoice::Cuda => Some(Api::Cuda),
        BackendChoice::Vulkan => Some(Api::Vulkan),
        BackendChoice::OpenCl => Some(Api::OpenCl),
        BackendChoice::All => None,
    }
}

/// The API devices a command runs on, and a note on how they were chosen.
pub struct Targets {
    pub devices: Vec<DeviceIdentity>,
    pub note: String,
}

/// Resolves `--backend` and `--device` into API devices.
/// - one API: that API's handle to the selected device (or its own default device);
/// - `all`: every available API, on the selected device where the API sees it;
/// - neither: every API that sees the selected (or default) device; with no GPU at all and no
///   `--device`, every API on its own default device.
pub fn resolve(reg: &Registry, args: &DeviceArgs) -> anyhow::Result<Targets> {
    let unavailable = |api: Api, why: &str| {
        let hint = if why.contains("install") {
            String::new()
        } else {
            format!("; to use it, {}", install_hint(api))
        };
        usage(format!("{api} is unavailable: {why}{hint}"))
    };
    match args.backend.and_then(api_of) {
        Some(api) => {
            if let Some(why) = reg.unavailable(api) {
                return Err(unavailable(api, why));
            }
            let dev = match &args.device {
                Some(spec) => {
                    let p = reg.select(Some(spec)).map_err(usage)?;
                    p.member(api).cloned().ok_or_else(|| {
                        usage(format!(
                            "device {} ({}) is not visible to {api}; it is seen by {}",
                            p.index,
                            p.name,
                            p.apis()
                                .iter()
                                .map(|a| a.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?
                }
                None => reg
                    .api_default(api)
                    .cloned()
                    .ok_or_else(|| unavailable(api, "no device"))?,
            };
            Ok(Targets {
                note: format!("{api} device {}", dev.index),
                devices: vec![dev],
            })
        }
        None => {
            let p = reg.select(args.device.as_deref()).map_err(usage)?;
            let mut devices: Vec<DeviceIdentity> = p.members.clone();
            let mut note = format!("physical device {} ({}, {})", p.index, p.name, p.rule);
            // Without a GPU there is no one device the APIs share; rather than measure a
            // single CPU driver, run each API on its own default device (as `--backend all`).
            let cpu_only =
                args.backend.is_none() && args.device.is_none() && p.kind != DeviceKind::Gpu;
            if cpu_only {
                note = format!("no GPU found, each API on its own default device: {note}");
            }
            if args.backend == Some(BackendChoice::All) || cpu_only {
                for api in Api::ALL {
                    if p.member(api).is_none() {
                        match reg.api_default(api) {
                            Some(d) => {
                                note.push_str(&format!("; {api} does not see it and runs on its own default device {} ({})", d.index, d.name));
                                devices.push(d.clone());
                            }
                            None => note.push_str(&format!(
                                "; {api} unavailable: {}",
                                reg.unavailable(api).unwrap_or("no device")
                            )),
                        }
                    }
                }
            }
            devices.sort_by_key(|d| d.api);
            Ok(Targets { devices, note })
        }
    }
}
