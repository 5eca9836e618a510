//! One module per subcommand, plus the device resolution they share.

mod compare;
mod devices;
mod lab;
pub mod layout;
mod limits;
mod sweep;
mod validate;

use std::process::ExitCode;

use blocksweep_core::driver::{self, is_multi_device};
use blocksweep_core::{Api, ApiChoice, DeviceIdentity, Registry, Targets};

use crate::args::{Command, DeviceArgs};
use crate::usage;

pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Devices(a) => devices::run(&a),
        Command::Limits(a) => limits::run(&a),
        Command::Sweep(a) => sweep::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Validate(a) => validate::run(&a),
        Command::Shapes(a) => lab::shapes(&a),
        Command::Tail(a) => lab::tail(&a),
    }
}

/// Every API in the driver list, probed.
pub fn registry() -> Registry {
    Registry::probe(blocksweep_drivers::all())
}

/// Every API probed; each API the command will use also opens, right after its own probe,
/// the device it will most likely run on: its default device without `--device`, or the one
/// device of its own list that a name or UUID `--device` names (an index names a physical
/// device across APIs, known only once every API has probed: nothing is opened early then).
pub fn registry_opening(args: &DeviceArgs) -> Registry {
    let choice = args.choice();
    let spec = args.device.as_deref().map(str::trim);
    let pick = |api: Api, devices: &[DeviceIdentity]| -> Option<usize> {
        if matches!(&choice, ApiChoice::Only(a) if *a != api) {
            return None;
        }
        match spec {
            None => driver::default_of(devices).map(|d| d.index),
            Some(s) if is_multi_device(s) || s.parse::<usize>().is_ok() => None,
            Some(s) => {
                let hits: Vec<_> = devices.iter().filter(|d| names(d, s)).collect();
                (hits.len() == 1).then(|| hits[0].index)
            }
        }
    };
    Registry::probe_opening(blocksweep_drivers::all(), &pick, &args.open_options())
}

/// Whether `spec` names `d` by name substring or UUID prefix (as `--device` does).
fn names(d: &DeviceIdentity, spec: &str) -> bool {
    let hex: String = spec
        .chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_lowercase();
    let by_uuid = hex.len() >= 4
        && hex.chars().all(|c| c.is_ascii_hexdigit())
        && d.uuid_string()
            .is_some_and(|u| u.replace('-', "").starts_with(&hex));
    by_uuid || d.name.to_lowercase().contains(&spec.to_lowercase())
}

/// Resolves `--backend` and `--device` into API devices, one [`Targets`] per physical device
/// (`--device all` or a list gives several); a choice that matches nothing is bad input.
pub fn resolve_each(reg: &Registry, args: &DeviceArgs) -> anyhow::Result<Vec<Targets>> {
    reg.targets_each(&args.choice(), args.device.as_deref())
        .map_err(usage)
}

/// "physical device 1 (NVIDIA H200, matched by UUID) (UUID ...)": the heading of each
/// device's part of a multi-device output.
pub fn heading(targets: &Targets) -> String {
    let uuid = targets
        .devices
        .first()
        .and_then(|d| d.uuid_string())
        .map(|u| format!(" (UUID {u})"))
        .unwrap_or_default();
    format!("{}{uuid}", targets.note)
}
