//! `blocksweep sweep`'s arguments: what to sweep (the frame or `--kernel`), which sizes and
//! grids, how to time, where the results go; and the measurement they ask for.

use std::path::PathBuf;

use blocksweep_core::sweep::SweepConfig;
use blocksweep_core::{Caches, Discipline, GridPolicy, Protocol};
use clap::Args;

use super::parse::{parse_block_list, parse_discipline, parse_grid, parse_svg_path};
use super::{formats, parse_size, trim, Blocks, DeviceArgs, FormatChoice, Grids, Timed, TuneArgs};

#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Check every block of the sweep against other GPUs, profiles and APIs: a list of target names,
    /// families (webgpu, vulkan-core, vulkan-profiles, opencl, cuda-cc, devices, mobile, all) or
    /// target files (a path; `limits -o mygpu.toml` writes one). docs/targets.md lists them.
    #[arg(long, value_name = "LIST")]
    pub target: Option<String>,
    /// Your own kernel instead of the grayscale frame: a spec file (TOML) naming a source per API,
    /// its arguments and checks (docs/kernels.md; examples in examples/kernels/).
    #[arg(long, value_name = "SPEC.toml")]
    pub kernel: Option<PathBuf>,
    /// With --kernel, the expected contents of a written buffer from a file, raw little-endian or
    /// .npy (as the spec's `reference` key, which it replaces; docs/kernels.md). Repeatable.
    #[arg(long, value_name = "BUFFER=FILE", requires = "kernel")]
    pub reference: Vec<String>,
    #[arg(long, short, value_name = "SIZE", help = super::parse::sweep_size_help())]
    pub size: Option<String>,
    /// Block sizes (threads per block) to sweep: a list (64,128,256), ranges with a step (32..1024:32),
    /// or 3-D blocks (32x32x2). [default: 16,32,64,96,100,128,160,192,256,384,512,768,1024, the 13 sizes
    /// of the guide's tables]
    #[arg(long, value_name = "LIST", value_parser = parse_block_list)]
    pub blocks: Option<Blocks>,
    /// Grid (blocks launched) per row: wave (one full wave: resident blocks per SM x SMs), data (one thread
    /// per pixel: ceil(pixels / block)), or a fixed number of blocks, at most one per pixel. A list
    /// (0.5w,1w,2w,4w,data,4096: waves, one thread per item, fixed counts) tunes block x grid on every API.
    #[arg(long, short, default_value = "wave", value_parser = parse_grid)]
    pub grid: Grids,
    #[command(flatten)]
    pub tune: TuneArgs,
    /// Untimed dispatches before the timed ones, per row (one back-to-back batch).
    #[arg(long, default_value = "3", value_parser = trim(clap::value_parser!(u32).range(0..=1000)))]
    pub warmups: u32,
    #[command(flatten)]
    pub timed: Timed,
    /// How dispatches are timed: batch (back to back, one device interval around the batch; the default),
    /// each (back to back, an interval around each), synced (a host wait after each: reads low, for teaching).
    #[arg(long, default_value = "batch", value_parser = parse_discipline)]
    pub timing: Discipline,
    /// Flush the device's last-level cache before each timed dispatch (a write of twice its size,
    /// outside the dispatch's interval), so every row reads memory: cold. Each dispatch is then
    /// timed on its own (batch becomes each). Default: hot, dispatches back to back, a frame
    /// smaller than the cache read from it (docs/guide.md, section 2).
    #[arg(long)]
    pub cold: bool,
    /// Random seed for the frame's pixel values (the same seed gives the same frame).
    #[arg(long, default_value = "42", value_parser = trim(clap::value_parser!(u64)))]
    pub seed: u64,
    /// Warn once the rows measured so far say an API's sweep will take longer than this many seconds
    /// (0: never warn).
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = trim(clap::value_parser!(u64)))]
    pub max_time: u64,
    /// Skip blocks above the compiled kernel's own limit (CL_KERNEL_WORK_GROUP_SIZE, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    /// instead of launching them and reporting what the API does (the default). Device limits always apply.
    #[arg(long)]
    pub strict_kernel_limit: bool,
    /// Skip the device-to-device copy that gives each API's bandwidth ceiling.
    #[arg(long)]
    pub no_copy: bool,
    /// Close each API (destroy its context) while the next one is timed: a little faster, but a close can disturb
    /// the rows timed beside it (docs/guide.md, section 5). By default nothing runs beside a timed batch.
    #[arg(long)]
    pub overlap_close: bool,
    /// Output format for stdout, and for --output files whose extension names none. Default: table.
    #[arg(long, short, value_parser = formats())]
    pub format: Option<FormatChoice>,
    /// Also write the results to this file, in the format its extension names (.json, .csv, .md, .txt; else --format).
    /// Repeatable. Each file is rewritten atomically after every measured row.
    #[arg(long, short)]
    pub output: Vec<PathBuf>,
    /// Also draw GB/s (ms for a kernel that declares no bytes) against block size, one line per API
    /// with its spread, to this SVG file.
    #[arg(long, value_parser = parse_svg_path)]
    pub plot: Option<PathBuf>,
    /// No table on stdout when --output files or a --plot are given, and no progress on stderr
    /// (the environment variable BLOCKSWEEP_QUIET turns progress off too).
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Progress notes on stderr where it is not a terminal (a log, a pipe, CI): a line every
    /// 10 s or so once a run has lasted 10 s. On a terminal the progress line is always drawn.
    #[arg(long, conflicts_with = "quiet")]
    pub progress: bool,
    /// Everything on stdout: each API's own table beside the side-by-side one, and how each API
    /// was timed and built (--output files always hold it all).
    #[arg(long, short)]
    pub verbose: bool,
    /// Do not fit tables to the terminal width.
    #[arg(long)]
    pub wide: bool,
}

impl SweepArgs {
    /// The frame's size: `--size`, or the default frame's (4K).
    pub fn frame_size(&self) -> Result<(u32, u32), String> {
        match self.size.as_deref() {
            Some(size) => parse_size(size.trim()).map_err(|e| format!("--size: {e}")),
            None => Ok(blocksweep_core::frame::DEFAULT_SIZE),
        }
    }

    /// The measurement the arguments ask for.
    pub fn config(&self) -> SweepConfig {
        SweepConfig {
            blocks: self
                .blocks
                .clone()
                .map(|b| b.0)
                .unwrap_or_else(blocksweep_core::blocks::default_blocks),
            grid: self.grid.0[0],
            protocol: Protocol {
                warmups: self.warmups,
                reps: self.timed.reps(),
                discipline: self.timing,
                caches: Caches::Hot,
            }
            .with_caches(match self.cold {
                true => Caches::COLD,
                false => Caches::Hot,
            }),
            strict_kernel_limit: self.strict_kernel_limit,
            copy: !self.no_copy,
            frame_on_device: false,
            pairs: Vec::new(),
        }
    }
}

impl SweepArgs {
    /// Checks that need more than one argument, made before any device is opened; the message
    /// is bad input (exit code 2).
    ///
    /// A fixed grid with more blocks than the frame has pixels is refused: the blocks past the
    /// last pixel have nothing to do, and launching them can make one dispatch take hours
    /// (`--grid 2147483648` on a 4K frame is 259 blocks per pixel).
    pub fn check(&self) -> Result<(), String> {
        if self.kernel.is_some() {
            return Ok(());
        }
        let (w, h) = self.frame_size()?;
        let pixels = w as u64 * h as u64;
        for &g in &self.grid.0 {
            let GridPolicy::Fixed(n) = g else { continue };
            if n as u64 > pixels {
                return Err(format!(
                    "--grid {n} launches more blocks than the {w}x{h} frame has pixels ({pixels}): \
                     the blocks past the last pixel only add launch time (billions of them, hours \
                     per dispatch); use at most {pixels}, or --grid data or --grid wave"
                ));
            }
        }
        Ok(())
    }
}
