//! `blocksweep`: a thin binary over the library crates. `main` returns an exit code; every
//! error is printed as one line (no backtraces): 2 for bad input, 1 for a failed run.

// First: its `warn!` macro is used by the modules after it.
#[macro_use]
mod output;

mod args;
mod commands;
mod plot;
mod progress;

use std::process::ExitCode;

use clap::Parser;

/// Bad input: printed as one line, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

fn main() -> ExitCode {
    // NVIDIA's OpenCL prints ptxas's register count only when it really compiles; a kernel
    // served from its cache (~/.nv/ComputeCache) has an empty build log and the residency
    // model loses the count. Set before any thread starts; a user's own setting wins.
    if std::env::var_os("CUDA_CACHE_DISABLE").is_none() {
        std::env::set_var("CUDA_CACHE_DISABLE", "1");
    }
    // Reports read back name their APIs by key; every API in the list must resolve.
    for d in blocksweep_drivers::all() {
        blocksweep_core::Api::register(d.api());
    }
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind::*;
            if matches!(
                e.kind(),
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                // Help on a closed pipe is fine; on a full disk it is a failure.
                if let Err(err) = e.print() {
                    if err.kind() != std::io::ErrorKind::BrokenPipe {
                        warn!("error: writing to stdout: {}", output::describe(&err));
                        return ExitCode::from(1);
                    }
                }
                return if e.kind() == DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // clap's message without its usage block: one line naming the problem.
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            let first = first.trim_start_matches("error: ");
            warn!("error: {first} (see --help)");
            return ExitCode::from(2);
        }
    };
    match commands::run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` prints the context chain on one line.
            warn!("error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
