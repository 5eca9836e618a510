//! The `value_parser` functions: each turns one typed word into a value or a one-line error
//! (clap prints it and exits 2).

use std::ffi::OsStr;
use std::path::PathBuf;

use blocksweep_core::blocks::{parse_blocks, BlockSize};
use blocksweep_core::{Discipline, GridPolicy};
use clap::builder::{PossibleValue, TypedValueParser};

/// Trims a value before `parser` sees it, keeping the parser's possible values (for `--help`
/// and clap's "did you mean") and its error messages.
pub fn trim<P: TypedValueParser>(parser: P) -> Trimmed<P> {
    Trimmed(parser)
}

#[derive(Clone)]
pub struct Trimmed<P>(P);

impl<P: TypedValueParser> TypedValueParser for Trimmed<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        match value.to_str() {
            Some(s) => self.0.parse_ref(cmd, arg, OsStr::new(s.trim())),
            None => self.0.parse_ref(cmd, arg, value),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

pub(super) fn parse_discipline(s: &str) -> Result<Discipline, String> {
    s.parse()
}

pub(crate) fn parse_min_time(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=60_000.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a time in milliseconds between 0 and 60000"
        )),
    }
}

/// "0.5%" or "0.5": a relative standard error of 0.005; above 0 and at most 50 %.
pub(crate) fn parse_noise(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 50.0 => Ok(v / 100.0),
        _ => Err(format!(
            "'{s}' is not a percentage above 0 and at most 50 (for example 0.5%)"
        )),
    }
}

/// "0.95" or "95%": a fraction above 0 and at most 1.
pub(crate) fn parse_fraction(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a fraction above 0 and at most 1 (0.95 or 95%)"
        )),
    }
}

pub(crate) fn parse_svg_path(s: &str) -> Result<PathBuf, String> {
    if s.to_ascii_lowercase().ends_with(".svg") {
        Ok(PathBuf::from(s))
    } else {
        Err(format!("'{s}' must be a .svg file"))
    }
}

/// A parsed `--blocks` list (a newtype so clap does not treat it as a repeated argument).
#[derive(Debug, Clone)]
pub struct Blocks(pub Vec<BlockSize>);

pub(super) fn parse_block_list(s: &str) -> Result<Blocks, String> {
    parse_blocks(s).map(Blocks).map_err(|e| e.to_string())
}

/// A parsed `--grid`: one policy, or a list (a tune's grid axis).
#[derive(Debug, Clone, PartialEq)]
pub struct Grids(pub Vec<GridPolicy>);

pub(super) fn parse_grid(s: &str) -> Result<Grids, String> {
    blocksweep_core::grid::parse_grid_list(s).map(Grids)
}

pub use blocksweep_core::tune::Budget;

pub(super) fn parse_budget(s: &str) -> Result<Budget, String> {
    let t = s.trim();
    let bad =
        || format!("'{t}' is not a budget: a count of configurations (20) or a time (30s, 5m, 1h)");
    if let Ok(n) = t.parse::<usize>() {
        return match n {
            0 => Err("--budget 0 measures nothing: give at least 1".into()),
            n => Ok(Budget::Count(n)),
        };
    }
    let (num, unit) = t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).ok_or_else(bad)?);
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Budget::Seconds(v * scale)),
        _ => Err(bad()),
    }
}

/// The default frame's size as `--size` spells it ("3840x2160"), for clap's defaults and help.
pub fn default_size() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let (w, h) = blocksweep_core::frame::DEFAULT_SIZE;
        format!("{w}x{h}")
    })
}

/// `sweep --size`'s help, its defaults from the core's frame sizes.
pub fn sweep_size_help() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let (w, h) = blocksweep_core::frame::CPU_DEFAULT_SIZE;
        format!(
            "Frame size in pixels, WIDTHxHEIGHT [default: {} on a GPU, {w}x{h} when every device \
             is a CPU]. With --kernel, the kernel's sizes: N (1-D work), WxH (2-D), or \
             name=value,... [default: the spec's sizes]",
            default_size()
        )
    })
}

/// `WIDTHxHEIGHT`, both at least 1, with a pixel count that fits the 32-bit grid arithmetic
/// every API shares (checked in 64 bits).
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || {
        let e = default_size();
        format!("'{s}' is not a size: expected WIDTHxHEIGHT in pixels, e.g. {e}")
    };
    let (w, h) = s.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if w == 0 || h == 0 {
        return Err(format!(
            "size {w}x{h} has no pixels: width and height must be at least 1"
        ));
    }
    let pixels = w as u64 * h as u64;
    if pixels > u32::MAX as u64 {
        return Err(format!(
            "size {w}x{h} is {pixels} pixels, more than the 2^32 - 1 one frame may have"
        ));
    }
    Ok((w, h))
}
