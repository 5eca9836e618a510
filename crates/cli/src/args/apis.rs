//! Arguments of `apis`: the provider list's keys alone, or with each API's status.

use clap::builder::EnumValueParser;
use clap::{Args, ValueEnum};

use super::trim;

#[derive(Args, Debug)]
pub struct ApisArgs {
    /// Output format.
    #[arg(long, short, default_value = "keys", value_parser = trim(EnumValueParser::<ApisFormat>::new()))]
    pub format: ApisFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApisFormat {
    /// One key per line (what --backend takes)
    Keys,
    /// key,name,available,unavailable (the reason it has no device here, else empty)
    Csv,
    /// The envelope, then `apis`: each API's key, name, available and unavailable (or null)
    Json,
}
