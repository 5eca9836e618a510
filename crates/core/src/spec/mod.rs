//! The kernel spec file: a user's kernel declared once, in TOML, for every API.
//!
//! ```toml
//! name = "saxpy"
//! work = "n"                      # one work item per element; "width x height" for 2-D
//! sizes = { n = 16777216 }        # defaults; --size overrides them
//!
//! [sources]                       # paths relative to this file; any API may be absent
//! cuda   = { file = "saxpy.cu", entry = "saxpy" }
//! opencl = { file = "saxpy.cl", entry = "saxpy" }
//! vulkan = { file = "saxpy.comp" } # .comp/.glsl: GLSL; .spv: SPIR-V; entry defaults to main
//!
//! [[args]]                        # the arguments, in the kernel's order
//! buffer = "f32"
//! name = "x"
//! elements = "n"
//! init = "random"
//!
//! [[args]]
//! buffer = "f32"
//! name = "y"
//! elements = "n"
//! init = "random"
//! seed = 2
//! written = true
//!
//! [[args]]
//! scalar = "f32"
//! name = "a"
//! value = 2.5
//!
//! [[args]]
//! scalar = "u64"
//! name = "n"
//! value = "n"
//!
//! [check]
//! bytes_per_item = 12             # for GB/s; without it rows show time only
//! tolerance_ulps = 0
//! ```
//!
//! Every table is read with unknown keys refused, so a misspelt key is an error, never a
//! silently ignored setting. The keys:
//!
//! - `name`, optional `description`; `work`: the size names that span the work (`"n"`, or
//!   `"width x height"` / `["width", "height"]`); `sizes`: their defaults (and any other size
//!   variable), whole numbers. [`KernelSpec::with_size`] reads `--size` ("N", "WxH" or
//!   "name=value,name=value").
//! - `[sources]`: one per API key (`cuda`, `opencl`, `vulkan`: every registered API whose
//!   provider declares `kernel_languages`), each `{ file, entry, options = [..] }`; `entry` is
//!   required unless the driver names a default (Vulkan: `main`). At least one. The language
//!   is the driver's one, or the one the file's extension names. Files are read at load, so
//!   the providers must be registered first ([`crate::Api::register`]).
//! - `[[args]]`, one table per argument (or `args = [{ ... }, ...]`), exactly one of:
//!   - `buffer = "<type>"` (i32, u32, i64, u64, f32, f64), `name`, `elements` (an expression
//!     of the sizes), `init` (`"random"` with optional `seed` (default 1) and `range = [lo,
//!     hi]` (default [-1, 1) for floats, [0, 1000) for integers; hi excluded), `"zeros"` (the
//!     default), `"ramp"` (0, 1, 2, ...), `{ constant = 3.5 }`), `written = true` when the
//!     kernel writes it, `compare = "exact" | "sum"` (written buffers; `sum` compares only the
//!     element sum, for outputs that depend on the launch, such as partial sums per block),
//!     `reference = "<file>"` (written buffers: what the kernel must write, raw little-endian
//!     or .npy, relative to the spec; see `reference`);
//!   - `scalar = "<type>"`, `name`, `value` (a number, or a string expression of the sizes);
//!   - `local = true`, `name`: OpenCL's `__local` argument, sized by `launch.shared_bytes`;
//!     CUDA and Vulkan skip it (they get the size as `sharedMemBytes` / constant 3).
//! - `[check]`: `bytes_per_item` (bytes moved per work item), `tolerance_ulps` (default 0),
//!   `tolerance_abs`, `tolerance_rel` (see [`compare`] for how they combine, and for sums).
//! - `[launch]`: `grid = "stride"` (default: grid-stride loops, any grid is correct) or
//!   `"data"` (one work item per element: the grid must cover the work); `max_grid` (an
//!   expression: the most blocks a launch may have, for a buffer with one slot per block);
//!   `shared_bytes` (dynamic shared memory per block, an expression that may use `block` (its
//!   threads), `block_x`, `block_y`, `block_z`); `blocks` (the only block sizes the kernel
//!   takes, in `--blocks` syntax, e.g. "16x16" for a fixed tile).
//!
//! Expressions ([`Expr`]): integers, size names, `+ - * / %`, parentheses, `ceil_div(a, b)`,
//! `min`, `max`, evaluated in u64 with overflow an error that names the key.
//!
//! The cross-API argument contract is [`crate::program`]'s. In GLSL a `u64` scalar can be read
//! without the int64 extension as a `uvec2` (low word first): both take 8 bytes at an offset
//! aligned to 8, as std430 lays them out; the examples in `examples/kernels/` do that.

mod args;
pub(crate) mod compare;
mod decl;
mod error;
mod expr;
mod init;
mod instance;
mod load;
mod raw;
mod reference;
#[cfg(test)]
mod tests;
pub mod tune;

pub use compare::{compare, element_matches, format_value, Mismatch};
pub use decl::{
    ArgDecl, BufferDecl, CompareMode, GridMode, InitDecl, KernelSpec, Number, ScalarDecl,
    ScalarValue, Sizes, Tolerance,
};
pub use error::SpecError;
pub use expr::Expr;
pub use init::{generate, random_word};
pub use instance::{BufferInstance, Instance, Shape};
pub use tune::{Constraint, TuneDecl};

use std::path::Path;

use sha2::{Digest, Sha256};

/// SHA-256 of `parts`, in hex: what a spec (its text, its sources, its sizes, the protocol)
/// hashes to.
pub fn hash(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl KernelSpec {
    /// Reads and checks a spec file and the sources it names.
    pub fn load(path: impl AsRef<Path>) -> Result<KernelSpec, SpecError> {
        load::load(path.as_ref())
    }

    /// Parses spec text as if it were the file `file`, with sources relative to `dir`.
    pub fn parse(file: &str, text: &str, dir: impl AsRef<Path>) -> Result<KernelSpec, SpecError> {
        load::parse(file, text, dir.as_ref())
    }

    /// The default sizes overridden by `--size`: "N" (a 1-D work's count), "WxH" (a 2-D
    /// work's width and height) or "name=value,name=value" (any size variables).
    pub fn with_size(&self, size: &str) -> Result<Sizes, SpecError> {
        let err = |m: String| SpecError::new(&self.file, "--size", m);
        let number = |s: &str| -> Result<u64, SpecError> {
            s.trim()
                .replace('_', "")
                .parse::<u64>()
                .map_err(|_| err(format!("'{}' is not a whole number", s.trim())))
        };
        let mut sizes = self.sizes.clone();
        let s = size.trim();
        if s.contains('=') {
            for part in s.split(',') {
                let (k, v) = part
                    .split_once('=')
                    .ok_or_else(|| err(format!("'{part}' is not name=value")))?;
                let k = k.trim();
                match sizes.0.get_mut(k) {
                    Some(slot) => *slot = number(v)?,
                    None => {
                        return Err(err(format!(
                            "'{k}' is not a size of this kernel ({})",
                            self.sizes
                        )))
                    }
                }
            }
            return Ok(sizes);
        }
        let parts: Vec<&str> = s.split(['x', 'X', '×']).collect();
        if parts.len() != self.work.len() {
            let want = match self.work.len() {
                1 => format!("one number for {}", self.work[0]),
                _ => format!("WxH for {} x {}", self.work[0], self.work[1]),
            };
            return Err(err(format!(
                "'{s}' does not fit this kernel's {}-D work: give {want}, or name=value",
                self.work.len()
            )));
        }
        for (name, p) in self.work.iter().zip(parts) {
            sizes.0.insert(name.clone(), number(p)?);
        }
        Ok(sizes)
    }

    /// A written buffer's reference file given outside the spec (`--reference BUFFER=FILE`,
    /// the path as given): the spec's own `reference` for that buffer is replaced.
    pub fn with_reference(&mut self, given: &str) -> Result<(), SpecError> {
        let err = |m: String| SpecError::new(&self.file, "--reference", m);
        let Some((name, path)) = given
            .split_once('=')
            .filter(|(n, p)| !n.trim().is_empty() && !p.trim().is_empty())
        else {
            return Err(err(format!("'{given}' is not BUFFER=FILE")));
        };
        let written: Vec<String> = (self.args.iter())
            .filter_map(|a| match a {
                ArgDecl::Buffer(b) if b.written => Some(b.name.clone()),
                _ => None,
            })
            .collect();
        let found = self.args.iter_mut().find_map(|a| match a {
            ArgDecl::Buffer(b) if b.written && b.name == name.trim() => Some(b),
            _ => None,
        });
        match found {
            Some(b) => {
                b.reference = Some(path.trim().to_string());
                self.references_given.push(b.name.clone());
                Ok(())
            }
            None => Err(SpecError::new(
                &self.file,
                "--reference",
                format!(
                    "'{}' is not a written buffer of this kernel ({})",
                    name.trim(),
                    written.join(", ")
                ),
            )),
        }
    }

    /// Drops every written buffer's reference file, returning the buffers that had one: a run
    /// at sizes blocksweep chose (a CPU's, validate's) has other buffers than the files hold.
    pub fn without_references(&mut self) -> Vec<String> {
        self.references_given.clear();
        (self.args.iter_mut())
            .filter_map(|a| match a {
                ArgDecl::Buffer(b) => b.reference.take().map(|_| b.name.clone()),
                _ => None,
            })
            .collect()
    }

    /// "kernel 'saxpy' at n=1024": this kernel at `sizes`, as every message and report names it.
    pub fn at(&self, sizes: &Sizes) -> String {
        format!("kernel '{}' at {sizes}", self.name)
    }

    /// The default sizes with each work dimension capped at `per_dim` (`validate` launches
    /// without timing: a small work keeps its launches quick, and a launch that repeats the
    /// work, a 1-D kernel in a grid of 65536 blocks in y, cheap).
    pub fn capped_sizes(&self, per_dim: u64) -> Sizes {
        let mut sizes = self.sizes.clone();
        for name in &self.work {
            if let Some(v) = sizes.0.get_mut(name) {
                *v = (*v).min(per_dim);
            }
        }
        sizes
    }

    /// [`instantiate`](KernelSpec::instantiate) at the default sizes (for tests: `test-support`).
    #[cfg(any(test, feature = "test-support"))]
    pub fn instantiate_default(&self) -> Result<Instance, SpecError> {
        self.instantiate(&self.sizes)
    }
}
