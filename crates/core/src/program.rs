//! A user's own kernel, as a backend receives it: its source for this API, its arguments in
//! order, and the buffers' bytes. The spec file that declares it is read by the core
//! (`crate::spec`); a backend only builds, binds, dispatches and copies.
//!
//! Contract (the same on every API, so one spec file runs through all of them):
//! - arguments are passed in the order declared: buffers as device pointers (CUDA), `__global`
//!   buffer arguments (OpenCL), storage buffers at bindings 0, 1, ... of descriptor set 0 in
//!   argument order, counting buffers only (Vulkan);
//! - scalars by value (CUDA, OpenCL); in Vulkan all scalars are one push-constant block, laid
//!   out in argument order with std430 rules (each scalar aligned to its own size);
//! - the block (work-group) size is the launch's: CUDA's `blockDim`, OpenCL's local size, and in
//!   Vulkan the specialisation constants 0, 1 and 2 (`local_size_x_id = 0`, `local_size_y_id = 1`,
//!   `local_size_z_id = 2`);
//! - dynamic shared memory ([`Launch::shared_bytes`](crate::Launch)): CUDA's `sharedMemBytes`
//!   (an `extern __shared__` array), OpenCL an argument declared `local` of that many bytes,
//!   Vulkan the specialisation constant 3 (the byte count; the shader sizes its array from it).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

pub use crate::language::Language;

/// While a program is the current kernel, a batch (or a copy) that has not finished this long
/// after it was enqueued is an error ("did not finish within 20 s"), never a hang: a user's
/// kernel may loop for ever. The backend is unusable after it (its device may still be busy),
/// and the core stops that API only.
pub const PROGRAM_DEADLINE: Duration = Duration::from_secs(20);

/// The deadline in force: `BLOCKSWEEP_DEADLINE_S` (seconds, fractional allowed; what the CLI's
/// `--deadline` sets, and what tests shorten) or [`PROGRAM_DEADLINE`].
pub fn deadline() -> Duration {
    std::env::var("BLOCKSWEEP_DEADLINE_S")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(PROGRAM_DEADLINE)
}

/// One API's source of a user's kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramSource {
    pub language: Language,
    /// Source text (UTF-8) or, for SPIR-V, the binary.
    pub code: Vec<u8>,
    /// The kernel's entry point (`main` is the usual one for GLSL).
    pub entry: String,
    /// Where the source came from, for messages ("examples/kernels/saxpy/saxpy.cl").
    pub origin: String,
    /// Extra compiler options (NVRTC options, clBuildProgram options, glslang defines).
    pub options: Vec<String>,
}

impl ProgramSource {
    /// The source as text (lossy for a binary).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.code).into_owned()
    }
}

/// A scalar argument's type; its value travels as little-endian bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl ScalarType {
    pub const ALL: [ScalarType; 6] = [
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::F32,
        ScalarType::F64,
    ];

    pub fn size(self) -> usize {
        match self {
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    pub fn parse(s: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.key() == s)
    }

    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// One kernel argument as the backend binds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ProgramArg {
    /// A device buffer the kernel sees as `bytes` bytes, allocated with `guard` more bytes
    /// before and after it (guard bands: a write there is found, not lost in someone else's
    /// memory). The kernel's pointer (binding, sub-buffer) starts `guard` bytes in; whole-
    /// buffer copies ([`Backend::write_buffer`](crate::Backend::write_buffer)) cover all
    /// `bytes + 2 * guard` bytes, bands included.
    Buffer { bytes: u64, guard: u64 },
    /// A scalar passed by value: `bytes` are its little-endian representation.
    Scalar { ty: ScalarType, bytes: Vec<u8> },
    /// OpenCL only: a `__local` argument of the launch's
    /// [`shared_bytes`](crate::Launch::shared_bytes). The other APIs skip it.
    Local,
}

impl ProgramArg {
    pub fn is_buffer(&self) -> bool {
        matches!(self, ProgramArg::Buffer { .. })
    }

    /// A buffer of `bytes` with no guard bands.
    pub fn buffer(bytes: u64) -> ProgramArg {
        ProgramArg::Buffer { bytes, guard: 0 }
    }

    /// The bytes a buffer argument allocates, its guard bands included (0 for the others).
    pub fn allocation(&self) -> u64 {
        match *self {
            ProgramArg::Buffer { bytes, guard } => bytes.saturating_add(guard.saturating_mul(2)),
            _ => 0,
        }
    }
}
