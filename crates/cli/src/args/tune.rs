//! A tune's flags: how much of the space to cover, in what order, and its cache.

use std::path::PathBuf;

use clap::Args;

use super::parse::{parse_budget, Budget};
use super::trim;

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// With a grid list or a spec's tune table: stop after this many configurations (20) or
    /// this much time (30s, 5m), in an order sampled from --sample-seed. Default: every
    /// configuration.
    #[arg(long, value_name = "COUNT|TIME", value_parser = parse_budget)]
    pub budget: Option<Budget>,
    /// The seed of --budget's sampled order: the same seed, the same configurations.
    #[arg(long, default_value = "1", value_parser = trim(clap::value_parser!(u64)))]
    pub sample_seed: u64,
    /// A tune's cache of measured configurations (keyed by device, driver, API, spec and
    /// configuration): an interrupted tune resumes, a rerun measures only what is new.
    /// [default: $XDG_CACHE_HOME/blocksweep/tune.json, else ~/.cache/blocksweep/tune.json]
    #[arg(long, value_name = "FILE", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Measure every configuration of a tune again, and keep no cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Only share K of N of a tune's space (1/4 .. 4/4): its parameter sets dealt round-robin, or
    /// its configurations where there is one set. One per GPU (the Slurm tune array); `compare`
    /// merges the shares' JSON files into one answer.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not a share: K/N with 1 <= K <= N, e.g. 2/4");
    let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    match (1..=n).contains(&k) {
        true => Ok((k, n)),
        false => Err(bad()),
    }
}

impl TuneArgs {
    /// The cache file, where there is one: `--cache`, else the user's cache folder.
    pub fn cache_path(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        if let Some(p) = &self.cache {
            return Some(p.clone());
        }
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("blocksweep").join("tune.json"))
    }
}
