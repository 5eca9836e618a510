//! Arguments of the lab's commands (docs/lab.md): `shapes` (block shapes of the 2-D kernel)
//! and `tail` (grids from a fraction of a wave to several waves). Validate's resource rows
//! need no arguments.

use std::path::PathBuf;

use blocksweep_core::lab::shapes::parse_threads;
use blocksweep_core::lab::waves::WaveSpec;
use blocksweep_core::Protocol;
use clap::Args;

use super::{
    default_size, parse_size, parse_svg_path, trim, DeviceArgs, FormatChoice, Timed, Where,
};

/// Flags every lab command shares: the measurement protocol and where results go.
#[derive(Args, Debug, Clone)]
pub struct LabRun {
    /// Frame size in pixels, WIDTHxHEIGHT.
    #[arg(long, short, default_value = default_size(), value_parser = parse_size)]
    pub size: (u32, u32),
    /// Untimed dispatches before the timed ones, per row.
    #[arg(long, default_value = "3", value_parser = trim(clap::value_parser!(u32).range(0..=1000)))]
    pub warmups: u32,
    #[command(flatten)]
    pub timed: Timed,
    /// Random seed for the frame's pixel values.
    #[arg(long, default_value = "42", value_parser = trim(clap::value_parser!(u64)))]
    pub seed: u64,
    /// Output format for stdout, and for --output files whose extension names none. Default: table.
    #[arg(long, short, value_parser = trim(clap::builder::EnumValueParser::<FormatChoice>::new()))]
    pub format: Option<FormatChoice>,
    /// Also write the results to this file, in the format its extension names (.json, .csv, .md, .txt;
    /// else --format). Repeatable.
    #[arg(long, short)]
    pub output: Vec<PathBuf>,
    /// No results on stdout when --output files (or a --plot) are given.
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
}

impl LabRun {
    /// Where the results go.
    pub fn outputs(&self) -> Where<'_> {
        Where {
            output: &self.output,
            format: self.format,
            quiet: self.quiet,
            wide: self.wide,
            plotted: false,
        }
    }

    pub fn protocol(&self) -> Protocol {
        Protocol {
            warmups: self.warmups,
            reps: self.timed.reps(),
            ..Protocol::default()
        }
    }
}

/// A `--threads` list: powers of two, comma-separated.
#[derive(Debug, Clone)]
pub struct ThreadCounts(pub Vec<u32>);

fn parse_thread_counts(s: &str) -> Result<ThreadCounts, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let t = parse_threads(item)?;
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(ThreadCounts(out))
}

#[derive(Args, Debug)]
pub struct ShapesArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Threads per block: a power of two, or a comma-separated list of them (256,1024). Every
    /// x by y split of each (256: 256x1, 128x2, ..., 1x256) runs on every API.
    #[arg(long, short, default_value = "256", value_parser = parse_thread_counts)]
    pub threads: ThreadCounts,
    #[command(flatten)]
    pub run: LabRun,
}

fn parse_waves(s: &str) -> Result<WaveSpec, String> {
    s.parse()
}

fn parse_block(s: &str) -> Result<u32, String> {
    let t = s.trim();
    match t.parse::<u32>() {
        Ok(0) => Err("block 0: a block needs at least one thread".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "'{t}' is not a block size (expected threads per block, e.g. 256)"
        )),
    }
}

#[derive(Args, Debug)]
pub struct TailArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Threads per block (1-D), fixed for the whole sweep.
    #[arg(long, default_value = "256", value_parser = parse_block)]
    pub block: u32,
    /// Grids to run, in waves (one wave: resident blocks per SM x SMs): FROM..TO:STEP, inclusive
    /// (STEP defaults to 0.1), or one number; `waves:` in front is accepted.
    #[arg(long, short, default_value = "0.5..4:0.1", value_parser = parse_waves)]
    pub waves: WaveSpec,
    /// Also draw GB/s against waves, one line per API and kernel, to this SVG file.
    #[arg(long, value_parser = parse_svg_path)]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub run: LabRun,
}
