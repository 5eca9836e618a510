//! `blocksweep`: a thin binary over the library crates. `main` returns an exit code; every
//! error is printed as one line (no backtraces): 2 for bad input, 1 for a failed run.

#![warn(clippy::undocumented_unsafe_blocks)]

// First: its `warn!` macro is used by the modules after it.
#[macro_use]
mod output;

mod args;
mod clocks;
mod commands;
mod input;
mod lab;
mod plot;
mod progress;
mod results;
mod runs;
mod session;
mod targets;
mod work;

use std::process::ExitCode;

use clap::FromArgMatches;

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
    // Reports read back name their APIs by key; every API in the list must resolve.
    for d in blocksweep_apis::every() {
        blocksweep_core::Api::register(d.api());
    }
    // BLOCKSWEEP_APIS that names no API of this build would leave nothing to run.
    if blocksweep_apis::all().is_empty() {
        let keys: Vec<&str> = blocksweep_apis::every()
            .iter()
            .map(|d| d.api().key())
            .collect();
        let given = std::env::var(blocksweep_apis::APIS_ENV).unwrap_or_default();
        warn!(
            "error: {}={given:?} names no API of this blocksweep ({})",
            blocksweep_apis::APIS_ENV,
            keys.join(", ")
        );
        return ExitCode::from(2);
    }
    // Before any thread starts: a tool that injects itself into the drivers gets them one at a
    // time (blocksweep_apis::under_injection_tool).
    if blocksweep_apis::under_injection_tool() && std::env::var_os("BLOCKSWEEP_PROBE").is_none() {
        std::env::set_var("BLOCKSWEEP_PROBE", "serial");
    }
    // Before any driver loads: a driver's own SIGINT handler (LLVM's, in PoCL) installed
    // first would be chained to by ours and end the process before it says what it kept.
    output::watch_signals();
    let parsed = args::command().try_get_matches();
    let cli = match parsed.and_then(|m| args::Cli::from_arg_matches(&m)) {
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
            warn!("error: {}", clap_error_line(&e));
            return ExitCode::from(2);
        }
    };
    if let args::Command::Sweep(a) = &cli.command {
        if let Err(why) = a.check() {
            warn!("error: {why}");
            return ExitCode::from(2);
        }
        progress::configure(progress::Settings {
            quiet: a.quiet || std::env::var_os("BLOCKSWEEP_QUIET").is_some_and(|v| !v.is_empty()),
            notes: a.progress,
            max_time: (a.max_time > 0).then(|| std::time::Duration::from_secs(a.max_time)),
            saves_rows: !a.output.is_empty(),
        });
    }
    // The lab's commands draw the sweep's progress line: --quiet hides it there too.
    if let args::Command::Shapes(args::lab::ShapesArgs { run, .. })
    | args::Command::Tail(args::lab::TailArgs { run, .. }) = &cli.command
    {
        progress::configure(progress::Settings {
            quiet: run.quiet || std::env::var_os("BLOCKSWEEP_QUIET").is_some_and(|v| !v.is_empty()),
            saves_rows: !run.output.is_empty(),
            ..progress::Settings::default()
        });
    }
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

/// clap's error as one line: its first line without the usage block, then what clap knows that
/// helps fix it: the valid values, "did you mean", or the list of subcommands.
/// `--backend metal` gives "invalid value 'metal' for `'--backend <BACKEND>'`; possible values:
/// cuda, vulkan, opencl, all (see --help)".
fn clap_error_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = e.render().to_string();
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments");
    let mut line = first.trim_start_matches("error: ").to_string();
    if e.kind() == ErrorKind::MissingRequiredArgument {
        // clap lists the missing arguments on the lines below: "<FILE>".
        if let Some(ContextValue::Strings(v)) = e.get(ContextKind::InvalidArg) {
            line = format!("{} {}", line.trim_end(), v.join(", "));
        }
    }
    let strings = |kind| match e.get(kind) {
        Some(ContextValue::Strings(v)) if !v.is_empty() => Some(v.clone()),
        Some(ContextValue::String(v)) => Some(vec![v.clone()]),
        _ => None,
    };
    let quoted = |v: Vec<String>| {
        v.iter()
            .map(|s| format!("'{s}'"))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    let suggestion = strings(ContextKind::SuggestedValue)
        .or_else(|| strings(ContextKind::SuggestedSubcommand))
        .or_else(|| strings(ContextKind::SuggestedArg));
    if let Some(s) = suggestion {
        line.push_str(&format!("; did you mean {}?", quoted(s)));
    }
    let mut hint = String::new();
    if let Some(values) = strings(ContextKind::ValidValue) {
        hint = format!("possible values: {}; ", values.join(", "));
    } else if e.kind() == ErrorKind::InvalidSubcommand && suggestion_missing(&line) {
        let names: Vec<String> = args::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        hint = format!("subcommands: {}; ", names.join(", "));
    } else if let Some(arg) = strings(ContextKind::InvalidArg) {
        if let Some((_, long)) = RETIRED_SHORTS.iter().find(|(s, _)| arg[0] == *s) {
            hint = format!("{} has no short flag any more: use {long}; ", arg[0]);
        }
    }
    format!("{line} ({hint}see --help)")
}

fn suggestion_missing(line: &str) -> bool {
    !line.contains("did you mean")
}

/// Short flags that were removed, and the long flag to use instead: `-B` (`--blocks`) differed
/// from `-b` (`--backend`) only by case.
const RETIRED_SHORTS: &[(&str, &str)] = &[("-B", "--blocks")];
