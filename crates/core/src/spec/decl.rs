//! A spec file once read and checked: what it declares, before any size is chosen.

use std::collections::BTreeMap;
use std::fmt;

use super::expr::Expr;
use crate::blocks::BlockSize;
use crate::program::{ProgramSource, ScalarType};

/// Values of the size variables (`n`, `width`, `height`, ...), by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sizes(pub BTreeMap<String, u64>);

impl Sizes {
    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.get(name).copied()
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&parts.join(","))
    }
}

/// A number as written in TOML: integers stay exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// A buffer's initial contents.
#[derive(Debug, Clone, PartialEq)]
pub enum InitDecl {
    /// Uniform in `range` (lo inclusive, hi exclusive); the same seed gives the same bytes on
    /// every machine. Default range: [-1, 1) for floats, [0, 1000) for integers.
    Random {
        seed: u64,
        range: Option<(Number, Number)>,
    },
    Zeros,
    /// 0, 1, 2, ... in the element type (wrapping for the 32-bit integers).
    Ramp,
    Constant(Number),
}

/// How a written buffer is compared with the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompareMode {
    /// Element by element.
    #[default]
    Exact,
    /// Only the sum of the elements: for outputs that legitimately depend on the launch, such
    /// as one partial sum per block.
    Sum,
}

impl fmt::Display for CompareMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CompareMode::Exact => "exact",
            CompareMode::Sum => "sum",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BufferDecl {
    pub name: String,
    /// Position in the argument list (counting every kind).
    pub index: usize,
    pub ty: ScalarType,
    pub elements: Expr,
    pub init: InitDecl,
    /// The kernel writes it: it is read back and compared.
    pub written: bool,
    pub compare: CompareMode,
    /// `reference`: the file holding what the kernel must write here (raw little-endian
    /// elements, or a .npy array), its path relative to the spec's directory once loaded.
    pub reference: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Number(Number),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScalarDecl {
    pub name: String,
    pub ty: ScalarType,
    pub value: ScalarValue,
}

/// One argument, in the order the kernel takes them.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgDecl {
    Buffer(BufferDecl),
    Scalar(ScalarDecl),
    /// OpenCL's `__local` argument of the launch's dynamic shared bytes; the others skip it.
    Local {
        name: String,
    },
}

impl ArgDecl {
    pub fn name(&self) -> &str {
        match self {
            ArgDecl::Buffer(b) => &b.name,
            ArgDecl::Scalar(s) => &s.name,
            ArgDecl::Local { name } => name,
        }
    }
}

/// Whether the kernel is correct for any grid or needs one work item per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GridMode {
    /// Grid-stride loops: any grid covers the work, so the harness may choose.
    #[default]
    Stride,
    /// One work item per element (guarded): the grid must reach every work item in each
    /// dimension, ceil(width / block_x) x ceil(height / block_y).
    Data,
}

/// How close an output must be to the reference. For floats an element matches when it is
/// bit-equal, within `ulps` units in the last place, within `abs`, or within `rel` of the
/// expected value's magnitude; a NaN matches nothing. Integers are always exact.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tolerance {
    pub ulps: u64,
    pub abs: Option<f64>,
    pub rel: Option<f64>,
}

impl Tolerance {
    /// The relative tolerance of a `compare = "sum"` buffer: `rel` when given, else 1e-5 for
    /// f32 and 1e-12 for f64, of the sum of the expected elements' magnitudes.
    pub fn sum_rel(&self, ty: ScalarType) -> f64 {
        self.rel.unwrap_or(match ty {
            ScalarType::F64 => 1e-12,
            _ => 1e-5,
        })
    }
}

/// A checked spec file. [`KernelSpec::instantiate`](super::KernelSpec::instantiate) turns it
/// into an argument list and buffers for one choice of sizes.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    /// The file as named when loaded, for messages.
    pub file: String,
    pub name: String,
    pub description: Option<String>,
    /// The size variables that span the work: one (1-D) or two (width, height).
    pub work: Vec<String>,
    /// Default sizes; `--size` overrides them ([`KernelSpec::with_size`](super::KernelSpec::with_size)).
    pub sizes: Sizes,
    pub(crate) sources: Vec<(&'static str, ProgramSource)>,
    pub args: Vec<ArgDecl>,
    pub bytes_per_item: Option<f64>,
    pub tolerance: Tolerance,
    pub grid: GridMode,
    /// The most blocks a launch may have, x times y (a buffer of one slot per block is this
    /// long): the harness caps its grid at it.
    pub max_grid: Option<Expr>,
    /// Dynamic shared memory per block, in bytes, of the names `block`, `block_x`, ... .
    pub shared_bytes: Option<Expr>,
    /// The only blocks the kernel takes (a fixed tile), when it says so.
    pub blocks: Option<Vec<BlockSize>>,
    /// `[launch] subgroup_size`: the subgroup (warp, wavefront) size the kernel's correctness
    /// rests on, held against each target's (`--target`).
    pub subgroup_size: Option<u64>,
    /// `[check] nonfinite = "allowed"`: outputs may hold NaN and Inf (else each is an error).
    pub nonfinite_allowed: bool,
    /// `[check] timing_only = true`: no buffer is written, and no row claims a check.
    pub timing_only: bool,
    /// `[tune]`: the kernel's own parameters and their constraints.
    pub tune: Option<super::tune::TuneDecl>,
    /// The written buffers whose reference file came from the command line (`--reference`),
    /// so that a bad file's message names the flag, not the spec's key.
    pub references_given: Vec<String>,
    /// The parameters' values this spec builds with (`-DNAME=VALUE` to every compiler, and
    /// names in every expression): the first of each by default, one configuration of a tune
    /// by [`KernelSpec::at_params`].
    pub params: Sizes,
}

impl KernelSpec {
    /// This spec at one configuration of its parameters.
    pub fn at_params(&self, params: &Sizes) -> KernelSpec {
        KernelSpec {
            params: params.clone(),
            ..self.clone()
        }
    }

    /// `sizes` with the parameters' values added: what every expression is evaluated with.
    pub fn with_params(&self, sizes: &Sizes) -> Sizes {
        let mut s = sizes.clone();
        for (k, v) in &self.params.0 {
            s.0.insert(k.clone(), *v);
        }
        s
    }
}
