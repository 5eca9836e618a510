//! The options the API providers declare ([`blocksweep_core::ApiOption`]), offered on every
//! command that opens a device: clap's builder makes one argument per declared option, so the
//! CLI carries no API's option of its own.

use blocksweep_core::{ApiOption, OpenOptions, OptionKind};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use super::trim;

/// What the providers' options were given on the command line.
#[derive(Debug, Clone, Default)]
pub struct ApiOptionArgs(pub OpenOptions);

/// Every option of every driver in the list, in the list's order.
fn declared() -> impl Iterator<Item = &'static ApiOption> {
    blocksweep_apis::all()
        .iter()
        .flat_map(|d| d.api().info().options.iter())
}

fn arg(option: &'static ApiOption) -> Arg {
    let arg = Arg::new(option.flag).long(option.flag).help(option.help);
    match &option.kind {
        OptionKind::Switch => arg.action(ArgAction::SetTrue),
        OptionKind::Text { value_name } => arg
            .value_name(*value_name)
            .action(ArgAction::Set)
            .allow_hyphen_values(true),
        OptionKind::Choice {
            value_name,
            values,
            default,
        } => {
            let values = values
                .iter()
                .map(|(value, help)| PossibleValue::new(*value).help(*help));
            arg.value_name(*value_name)
                .default_value(*default)
                .value_parser(trim(PossibleValuesParser::new(values)))
        }
    }
}

impl Args for ApiOptionArgs {
    fn augment_args(cmd: Command) -> Command {
        declared().fold(cmd, |cmd, option| cmd.arg(arg(option)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for ApiOptionArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut options = OpenOptions::default();
        for option in declared() {
            match option.kind {
                OptionKind::Switch if matches.get_flag(option.flag) => {
                    options = options.with(option.flag, "true");
                }
                OptionKind::Switch => {}
                OptionKind::Choice { .. } | OptionKind::Text { .. } => {
                    if let Some(value) = matches.get_one::<String>(option.flag) {
                        options = options.with(option.flag, value);
                    }
                }
            }
        }
        Ok(ApiOptionArgs(options))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
