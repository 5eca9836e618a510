//! One module per subcommand, each arguments → core → render → write, plus the device
//! resolution and exit codes they share.

mod compare;
mod devices;
mod lab;
mod limits;
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

/// "blocksweep 0.x.y": the tool line of every report.
pub fn tool() -> String {
    format!("blocksweep {}", env!("CARGO_PKG_VERSION"))
}

/// Now, as every report dates its run (RFC 3339, seconds).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Exit code 1 when anything failed, else 0.
pub fn exit(failed: bool) -> ExitCode {
    match failed {
        true => ExitCode::from(1),
        false => ExitCode::SUCCESS,
    }
}

/// A session error as the CLI reports it: bad input exits 2, the rest 1.
pub fn session_error(e: SessionError) -> anyhow::Error {
    match e {
        SessionError::Input(m) => usage(m),
        SessionError::NothingOpened(m) | SessionError::Failed(m) => anyhow::anyhow!(m),
    }
}
