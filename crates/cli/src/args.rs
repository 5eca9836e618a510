//! Command-line arguments (clap derive). Values that need checking beyond their type are
//! parsed by `value_parser` functions, so every bad input is a clap error: one line, exit 2.
//! Every value a user types as a word or a number is trimmed first ([`trim`]): `--reps " 7"`
//! means 7, as `--size " 640x360"` means 640x360. Paths are taken as given.
//!
//! Short flags: `-b` is `--backend`; `--blocks` has none, so no two flags differ only by case
//! (`-b` and `-B` did: one slip of the shift key swept the default sizes on one API instead of
//! the chosen sizes on every API, without an error).

use std::path::PathBuf;

use blocksweep_core::measure::{DEFAULT_MIN_TIME_MS, DEFAULT_NOISE_CAP_MS};
use blocksweep_core::Reps;
use blocksweep_core::{Api, ApiChoice, OpenOptions};
use clap::builder::{EnumValueParser, PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

pub mod apis;
mod completions;
mod cost;
mod files;
pub mod lab;
mod options;
mod parse;
mod sweep;
mod tune;
pub use completions::CompletionsArgs;
pub use cost::LaunchCostArgs;
pub use files::{FileArgs, Where};
pub use options::ApiOptionArgs;
pub use parse::{default_size, parse_size, trim, Blocks, Grids};
pub(crate) use parse::{parse_fraction, parse_min_time, parse_noise, parse_svg_path};
pub use sweep::SweepArgs;
pub use tune::TuneArgs;

/// Where every column of every table is explained.
const GUIDE: &str =
    "Every column of the tables is explained in docs/guide.md (section 3, \"Reading the output\"); your own kernel in docs/kernels.md.";

/// The command line, its help naming the APIs of the provider list ("CUDA, Vulkan and OpenCL").
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let apis: Vec<Api> = blocksweep_apis::all().iter().map(|d| d.api()).collect();
    let apis = blocksweep_core::api::named_in_words(&apis);
    Cli::command()
        .version(version())
        .about(format!(
            "Which block size and grid size should I launch? Measured, across {apis} on the same GPU."
        ))
        .long_about(format!(
            "blocksweep runs the same memory-bound grayscale kernel (three planar float planes in, one out, \
grid-stride loop) over a sweep of block / work-group sizes through {apis}, checks every output \
pixel against a CPU reference at every size, times it on each API's own device clock, and prints a table \
per API: thr/blk, warps, idle lanes, blocks/SM, occupancy, grid, ms, GB/s, of best. \
With --kernel it does the same for your own kernel, declared once for all of them in a spec file.\n\n\
Exit codes: 0 success; 1 a sweep failed (verification mismatch, driver error) — results measured before the \
failure are still written; 2 bad input (arguments, unknown device, a frame too large for the device)."
        ))
}

/// "0.1.0 (commit 576e494; features: none; APIs: cuda, vulkan, opencl)": the version, the
/// commit and features it was built with (build.rs), and the APIs of its provider list.
pub(crate) fn version() -> &'static str {
    let keys: Vec<&str> = blocksweep_apis::all()
        .iter()
        .map(|d| d.api().key())
        .collect();
    let v = format!(
        "{} (commit {}; features: {}; APIs: {})",
        env!("CARGO_PKG_VERSION"),
        env!("BLOCKSWEEP_COMMIT"),
        env!("BLOCKSWEEP_FEATURES"),
        keys.join(", ")
    );
    // Made once per process, for clap, which holds its version as a static string.
    Box::leak(v.into_boxed_str())
}

/// The arguments; parse them with [`command`], whose help names the APIs.
#[derive(Parser, Debug)]
#[command(name = "blocksweep", version, after_help = GUIDE)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every device of every API, grouped into physical devices, and the APIs that are unavailable.
    #[command(after_help = "Example:\n  blocksweep devices")]
    Devices(DevicesArgs),
    /// Show launch limits under each API's own names, with what each specification guarantees.
    #[command(
        after_help = "Examples:\n  # all APIs side by side for the default device\n  blocksweep limits\n  # every OpenCL limit of that device\n  blocksweep limits --backend opencl\n  blocksweep limits --device 1 --format json"
    )]
    Limits(LimitsArgs),
    /// Sweep block sizes on one device through one or more APIs; verify and time every row.
    #[command(
        after_help = "Examples:\n  # the 13 default sizes (16 ... 1024), 4K frame\n  blocksweep sweep\n  blocksweep sweep --backend opencl --size 640x360\n  blocksweep sweep --blocks 32..1024:32 --grid data\n  # the table on stdout too; --quiet for the files only\n  blocksweep sweep -o results.json --plot results.svg\n  # your own kernel (docs/kernels.md)\n  blocksweep sweep --kernel examples/kernels/saxpy/kernel.toml\n\n\
Every column of the table is explained in docs/guide.md\n(section 3, \"Reading the output\")."
    )]
    Sweep(SweepArgs),
    /// Launch the sizing assumptions people port between APIs (1024 threads, 32x32x2, z = 65, a 65536-block grid, ...) and show what each API does.
    #[command(
        after_help = "Examples:\n  # every API that sees the first GPU\n  blocksweep validate\n  blocksweep validate --backend all --format markdown\n  # with your own kernel\n  blocksweep validate --kernel examples/kernels/saxpy/kernel.toml"
    )]
    Validate(ValidateArgs),
    /// Every power-of-two block shape of one thread count (256: 256x1 ... 1x256) of a 2-D kernel on every API: GB/s, and what each shape does to a warp's memory access.
    #[command(
        after_help = "Examples:\n  # 256 threads: 256x1, 128x2, ..., 1x256, 4K frame\n  blocksweep shapes\n  blocksweep shapes --threads 256,1024 -o shapes.json -o shapes.md\n\nThe lab is explained in docs/lab.md."
    )]
    Shapes(lab::ShapesArgs),
    /// The tail effect: one block, grids from a fraction of a wave to several waves, on the grid-stride kernel and on one pixel per thread.
    #[command(
        after_help = "Examples:\n  # block 256, 0.5 to 4 waves in tenths\n  blocksweep tail\n  blocksweep tail --block 1024 --waves 0.5..3:0.05 --plot tail.svg\n\nThe lab is explained in docs/lab.md."
    )]
    Tail(lab::TailArgs),
    /// What one dispatch costs on each API: back to back on the device clock, and one at a time on the host clock.
    #[command(
        after_help = "Examples:\n  # every API that sees the first GPU\n  blocksweep launch-cost\n  blocksweep launch-cost --backend all -o cost.json\n\nThe figures are explained in docs/launch-cost.md."
    )]
    LaunchCost(LaunchCostArgs),
    /// Put sweeps from different GPUs or machines side by side: each run's of-best per block size.
    #[command(
        after_help = "Example:\n  # on one machine, then on another\n  blocksweep sweep -o t4.json\n  blocksweep sweep -o h200.json\n  blocksweep compare t4.json h200.json"
    )]
    Compare(CompareArgs),
    /// Show a saved sweep (-o run.json) as if it were run here, with every column its device had; nothing is measured.
    #[command(
        after_help = "Example:\n  # on any machine\n  blocksweep replay \\\n      docs/results/h200-2026-12-01/call3/core/h200-2026-12-01.json"
    )]
    Replay(ReplayArgs),
    /// The APIs this blocksweep drives, one key per line for scripts; csv and json add which have a device here.
    #[command(
        after_help = "Examples:\n  # one key per line: what --backend takes\n  blocksweep apis\n  # with each API's name and whether it has a device here\n  blocksweep apis --format json"
    )]
    Apis(apis::ApisArgs),
    /// Print the completion script of a shell (bash, zsh, fish, elvish, powershell) for every command and flag.
    #[command(
        after_help = "Examples:\n  blocksweep completions bash \\\n      > ~/.local/share/bash-completion/completions/blocksweep\n  # into a folder on your $fpath\n  blocksweep completions zsh > ~/.zfunc/_blocksweep\n  blocksweep completions fish \\\n      > ~/.config/fish/completions/blocksweep.fish"
    )]
    Completions(CompletionsArgs),
    /// One API's worker process: blocksweep starts itself in this role for a user's kernel,
    /// and drives it over its stdin and stdout. Not for people.
    #[command(hide = true)]
    Worker,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatChoice {
    Table,
    Markdown,
    Csv,
    Json,
}

#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    /// API to use, or `all` (every API: on the selected device where it sees it, else on its own default device).
    /// Default: every API that sees the selected device.
    #[arg(long, short, value_parser = trim(backend_names()))]
    pub backend: Option<String>,
    /// Device: index from `blocksweep devices`, UUID prefix, or name substring; `all` for every GPU (one report per GPU),
    /// or a comma-separated list. Default: the first GPU, else the first device.
    #[arg(long, short)]
    pub device: Option<String>,
    /// The options each API's provider declares (`--cuda-compiler`, `--vk-validation`).
    #[command(flatten)]
    pub api_options: ApiOptionArgs,
    /// Run a user's kernel (--kernel) in this process instead of in one worker process per
    /// API: a little faster to start, but a kernel that crashes its driver then ends
    /// blocksweep, and a hung one holds the device for the APIs after it.
    #[arg(long, conflicts_with = "workers")]
    pub in_process: bool,
    /// Run every API in a worker process of its own, the built-in kernel too (the default for
    /// --kernel only): for measuring what the workers cost.
    #[arg(long)]
    pub workers: bool,
}

impl DeviceArgs {
    /// Which APIs `--backend` selects (its value was checked against the provider list).
    pub fn choice(&self) -> ApiChoice {
        match self.backend.as_deref() {
            None => ApiChoice::Seeing,
            Some("all") => ApiChoice::All,
            Some(key) => Api::from_key(key).map_or(ApiChoice::All, ApiChoice::Only),
        }
    }

    /// The options each API's provider declares, as given; where the APIs open (here or in
    /// workers) is `session::open_options`'s to decide.
    pub fn api_options(&self) -> OpenOptions {
        self.api_options.0.clone()
    }
}

/// `--backend` accepts every API in the provider list (and its aliases) and `all`; clap lists
/// them in `--help` and suggests the nearest on a typo.
fn backend_names() -> PossibleValuesParser {
    let mut values: Vec<PossibleValue> = Vec::new();
    for d in blocksweep_apis::all() {
        let info = d.api().info();
        values.push(PossibleValue::new(info.key).aliases(info.aliases.iter().copied()));
    }
    values.push(PossibleValue::new("all"));
    PossibleValuesParser::new(values)
}

/// `--format` (and the enum-valued options): clap's list of values in `--help`, its "did you
/// mean" on a typo, and the value trimmed.
fn formats() -> impl TypedValueParser<Value = FormatChoice> {
    trim(EnumValueParser::<FormatChoice>::new())
}

#[derive(Args, Debug)]
pub struct DevicesArgs {
    /// Output format: table, markdown, csv or json.
    #[arg(long, short, default_value = "table", value_parser = formats())]
    pub format: FormatChoice,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub out: FileArgs,
}

#[derive(Args, Debug)]
pub struct LimitsArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// The limits of other GPUs, profiles and APIs beside the devices' own: a list of target names,
    /// families (webgpu, vulkan-core, vulkan-profiles, opencl, cuda-cc, devices, mobile, all) or
    /// target files (a path; `limits -o mygpu.toml` writes one). docs/targets.md lists them.
    #[arg(long, value_name = "LIST")]
    pub target: Option<String>,
    /// Output format.
    #[arg(long, short, default_value = "table", value_parser = formats())]
    pub format: FormatChoice,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub out: FileArgs,
}

/// `--reps` and `--min-time`: how many dispatches each row times, for the sweep and the lab.
#[derive(Args, Debug, Clone)]
pub struct Timed {
    /// Timed dispatches per row, exactly. Default: adaptive, at least 10 and enough for --min-time.
    #[arg(long, short, value_parser = trim(clap::value_parser!(u32).range(1..=100000)))]
    pub reps: Option<u32>,
    /// Device time one timed batch should last, in milliseconds, when --reps is not given.
    #[arg(long, default_value_t = DEFAULT_MIN_TIME_MS, value_parser = parse_min_time)]
    pub min_time: f64,
    /// Time more batches until each row's mean has at most this relative standard error, as a
    /// percentage ("0.5%" or 0.5; nvbench's stdrel); each row says whether it got there.
    #[arg(long, value_name = "PERCENT", value_parser = parse_noise, conflicts_with = "reps")]
    pub max_noise: Option<f64>,
    /// The device time, in milliseconds, a row may spend reaching --max-noise.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_NOISE_CAP_MS, value_parser = parse_min_time, requires = "max_noise")]
    pub max_noise_time: f64,
}

impl Timed {
    /// The timed dispatches per row these flags ask for.
    pub fn reps(&self) -> Reps {
        match self.reps {
            Some(n) => Reps::Fixed(n),
            None => Reps::Adaptive {
                min: 10,
                min_time_ms: self.min_time,
                max: 100_000,
                max_noise: self.max_noise,
                noise_cap_ms: self.max_noise_time,
            },
        }
    }
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Check every launch against other GPUs, profiles and APIs: a list of target names,
    /// families (webgpu, vulkan-core, vulkan-profiles, opencl, cuda-cc, devices, mobile, all) or
    /// target files (a path; `limits -o mygpu.toml` writes one). docs/targets.md lists them.
    #[arg(long, value_name = "LIST")]
    pub target: Option<String>,
    /// Launch the assumptions with your own kernel: a spec file (docs/kernels.md).
    #[arg(long, value_name = "SPEC.toml")]
    pub kernel: Option<PathBuf>,
    /// With --kernel, the kernel's sizes: N, WxH, or name=value,... [default: the spec's sizes, each work
    /// dimension at most 4096: validate launches, it does not time].
    #[arg(long, short, value_name = "SIZE")]
    pub size: Option<String>,
    /// Output format: table, markdown, csv or json.
    #[arg(long, short, default_value = "table", value_parser = formats())]
    pub format: FormatChoice,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub out: FileArgs,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// JSON files written by `blocksweep sweep` (-o run.json), sweeps or tunes: two or more, or
    /// one holding several devices (`sweep --device all`). Runs of different GPUs are answered
    /// across them; runs of one GPU merge.
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Also draw the answer across GPUs as SVG heat maps: one per GPU (block × grid, each cell
    /// its fraction of that GPU's best, worst over the APIs) and the portable map.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Exit 1 when a configuration, or an API's best, runs slower than this fraction of the first
    /// file's (the baseline), or was measured there and not in a later file (an API lost, a run
    /// stopped early): 0.95 or 95%; each is named on stderr (for CI).
    #[arg(long, value_name = "F", value_parser = parse_fraction)]
    pub fail_below: Option<f64>,
    /// Output format.
    #[arg(long, short, default_value = "table", value_parser = formats())]
    pub format: FormatChoice,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub out: FileArgs,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A JSON file written by `blocksweep sweep` (-o run.json), of one device or several.
    pub file: PathBuf,
    /// What `blocksweep sweep` prints by default: the answer and the side-by-side table, without
    /// each API's own table and protocol (which a replay shows by default, as --verbose does).
    #[arg(long)]
    pub brief: bool,
    /// Only these APIs of the run (keys, comma-separated: cuda,opencl); the answer is made again
    /// over them.
    #[arg(long, short, value_delimiter = ',')]
    pub backend: Vec<String>,
    /// Also draw the run as an SVG plot, as `sweep --plot` does (the first device's run).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Output format: table, markdown, csv or json.
    #[arg(long, short, default_value = "table", value_parser = formats())]
    pub format: FormatChoice,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub out: FileArgs,
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
