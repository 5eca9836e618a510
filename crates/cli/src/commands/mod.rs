//! One module per subcommand, each arguments → core → render → write ([`crate::session`]
//! reaches the core), plus the report lines and exit codes they share.

pub mod apis;
mod compare;
pub mod completions;
mod devices;
mod lab;
mod launch_cost;
mod limits;
mod replay;
mod sweep;
mod tune;
mod validate;
mod worker;

use std::process::ExitCode;

use crate::args::Command;

pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Devices(a) => devices::run(&a),
        Command::Limits(a) => limits::run(&a),
        Command::LaunchCost(a) => launch_cost::run(&a),
        Command::Sweep(a) => sweep::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::Replay(a) => replay::run(&a),
        Command::Validate(a) => validate::run(&a),
        Command::Shapes(a) => lab::shapes(&a),
        Command::Tail(a) => lab::tail(&a),
        Command::Apis(a) => apis::run(&a),
        Command::Completions(a) => completions::run(&a),
        Command::Worker => Ok(worker::run()),
    }
}

/// Exit code 1 when anything failed, else 0.
pub fn exit(failed: bool) -> ExitCode {
    match failed {
        true => ExitCode::from(1),
        false => ExitCode::SUCCESS,
    }
}
