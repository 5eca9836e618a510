//! One module per subcommand, plus the device resolution they share.

mod compare;
mod devices;
mod limits;
mod sweep;
mod validate;

use std::process::ExitCode;

use blocksweep_core::{Registry, Targets};

use crate::args::{Command, DeviceArgs};
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

/// Every API in the driver list, probed.
pub fn registry() -> Registry {
    Registry::probe(blocksweep_drivers::all())
}

/// Resolves `--backend` and `--device` into API devices, one [`Targets`] per physical device
/// (`--device all` or a list gives several); a choice that matches nothing is bad input.
pub fn resolve_each(reg: &Registry, args: &DeviceArgs) -> anyhow::Result<Vec<Targets>> {
    reg.targets_each(&args.choice(), args.device.as_deref())
        .map_err(usage)
}

/// "Device 1: NVIDIA H200 (UUID ...)" above each device's part of a multi-device output.
pub fn device_heading(targets: &Targets, md: bool) -> String {
    let d = &targets.devices[0];
    let uuid = d
        .uuid_string()
        .map(|u| format!(" (UUID {u})"))
        .unwrap_or_default();
    let h = format!("{}{uuid}", targets.note);
    match md {
        true => format!("# {h}\n\n"),
        false => format!("{h}\n{}\n\n", "=".repeat(h.chars().count().min(100))),
    }
}
