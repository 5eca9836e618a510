//! `blocksweep completions SHELL`: the shell's completion script for every command and flag,
//! made by clap_complete from the same command line the binary parses.

use std::process::ExitCode;

use crate::args::CompletionsArgs;

pub fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    // The command line without its hidden roles (the worker): clap_complete would offer them.
    let full = crate::args::command();
    let mut shown = clap::Command::new("blocksweep")
        .version(crate::args::version())
        .args(full.get_arguments().cloned())
        .subcommands(full.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut shown, "blocksweep", &mut script);
    crate::output::stdio::print(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::SUCCESS)
}
