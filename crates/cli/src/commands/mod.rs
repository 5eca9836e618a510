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

/// Resolves `--backend` and `--device` into API devices; a choice that matches nothing is bad
/// input.
pub fn resolve(reg: &Registry, args: &DeviceArgs) -> anyhow::Result<Targets> {
    reg.targets(&args.choice(), args.device.as_deref())
        .map_err(usage)
}
