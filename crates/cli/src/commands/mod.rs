//! One module per subcommand, plus the device resolution they share.

mod compare;
mod devices;
mod kernel;
mod lab;
pub mod layout;
mod limits;
mod replay;
mod sweep;
mod validate;

use std::process::ExitCode;

use blocksweep_core::session::SessionError;
use blocksweep_core::{Registry, Targets};

use crate::args::{Command, DeviceArgs};
use crate::usage;

pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Devices(a) => devices::run(&a),
        Command::Limits(a) => limits::run(&a),
        Command::Sweep(a) => sweep::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Replay(a) => replay::run(&a),
        Command::Validate(a) => validate::run(&a),
        Command::Shapes(a) => lab::shapes(&a),
        Command::Tail(a) => lab::tail(&a),
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

/// Says each failure on stderr; true when there was any.
pub fn warn_failures(failures: &[blocksweep_core::report::Failure]) -> bool {
    for f in failures {
        warn!("{}: {}", f.api, f.message);
    }
    !failures.is_empty()
}

/// A session error as the CLI reports it: bad input exits 2, the rest 1.
pub fn session_error(e: SessionError) -> anyhow::Error {
    match e {
        SessionError::Input(m) => usage(m),
        SessionError::NothingOpened(m) | SessionError::Failed(m) => anyhow::anyhow!(m),
    }
}
