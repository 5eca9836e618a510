//! A spec at one choice of sizes: the argument list a backend binds, each buffer's initial
//! bytes, and what the harness needs to plan grids, compare outputs and report GB/s.

use super::decl::*;
use super::error::SpecError;
use super::init::{bits_of, generate};
use crate::blocks::BlockSize;
use crate::program::{ProgramArg, ProgramSource, ScalarType};

/// One buffer argument, sized and filled.
#[derive(Clone)]
pub struct BufferInstance {
    pub decl: BufferDecl,
    pub elements: u64,
    /// Its contents before a dispatch. A buffer the kernel both reads and writes must be
    /// written back from these before every checked dispatch (the harness does it).
    pub initial: Vec<u8>,
    /// What the kernel must write here, from the spec's `reference` file, when it names one.
    pub reference: Option<Vec<u8>>,
}

/// The contents are summarised: a test failure should not print a 64 MB buffer.
impl std::fmt::Debug for BufferInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferInstance")
            .field("decl", &self.decl)
            .field("elements", &self.elements)
            .field("initial", &format_args!("[{} bytes]", self.initial.len()))
            .field("reference", &self.reference.as_ref().map(Vec::len))
            .finish()
    }
}

/// Everything one run of the kernel at `sizes` needs.
#[derive(Debug, Clone)]
pub struct Instance {
    pub sizes: Sizes,
    /// The arguments in order, as [`Backend::load_program`](crate::Backend::load_program)
    /// takes them.
    pub args: Vec<ProgramArg>,
    /// The buffer arguments, in argument order.
    pub buffers: Vec<BufferInstance>,
    /// The work's extent: (count, 1) for 1-D, (width, height) for 2-D.
    pub work: (u64, u64),
    /// Bytes moved by one dispatch (`bytes_per_item` x work items), when the spec says.
    pub bytes_moved: Option<f64>,
    pub tolerance: Tolerance,
    pub grid: GridMode,
    /// The most blocks a launch may have (product of x and y), when the spec caps it.
    pub max_grid: Option<u64>,
    /// The only blocks the kernel takes, when the spec says.
    pub blocks: Option<Vec<BlockSize>>,
    /// The subgroup size the kernel's correctness rests on, when the spec says.
    pub subgroup_size: Option<u64>,
    /// Outputs may hold NaN and Inf (`[check] nonfinite = "allowed"`).
    pub nonfinite_allowed: bool,
    /// Nothing is written, so nothing is checked (`[check] timing_only = true`).
    pub timing_only: bool,
    shared: Option<super::expr::Expr>,
    file: String,
}

impl Instance {
    /// Work items: the product of the work's extents.
    pub fn work_items(&self) -> u64 {
        self.work.0.saturating_mul(self.work.1)
    }

    /// The written buffers, which the harness reads back and compares.
    pub fn written(&self) -> impl Iterator<Item = &BufferInstance> {
        self.buffers.iter().filter(|b| b.decl.written)
    }

    /// Dynamic shared memory per block for `block`, in bytes (0 when the spec names none).
    pub fn shared_bytes(&self, block: BlockSize) -> Result<u32, SpecError> {
        let Some(e) = &self.shared else { return Ok(0) };
        let key = "launch.shared_bytes";
        let v = e
            .eval(&|n| match n {
                "block" => Some(block.threads()),
                "block_x" => Some(block.x as u64),
                "block_y" => Some(block.y as u64),
                "block_z" => Some(block.z as u64),
                _ => self.sizes.get(n),
            })
            .map_err(|m| SpecError::new(&self.file, key, m))?;
        u32::try_from(v).map_err(|_| {
            SpecError::new(
                &self.file,
                key,
                format!("'{e}' is {v} bytes at block {block}, more than 32 bits hold"),
            )
        })
    }
}

impl KernelSpec {
    /// Why an API (`name`, `key`) is not run with this spec: "k.toml has no source for Vulkan
    /// (its [sources] has no 'vulkan')".
    pub fn no_source(&self, name: &str, key: &str) -> String {
        format!(
            "{} has no source for {name} (its [sources] has no '{key}')",
            self.file
        )
    }

    /// The source for an API key ("cuda", "opencl", "vulkan"), if the spec has one.
    pub fn sources_for(&self, api_key: &str) -> Option<ProgramSource> {
        let mut src = self
            .sources
            .iter()
            .find(|(k, _)| *k == api_key)
            .map(|(_, s)| s.clone())?;
        // A tune's parameters: a define each, in the form every compiler takes.
        for (k, v) in &self.params.0 {
            src.options.push(format!("-D{k}={v}"));
        }
        Some(src)
    }

    /// The API keys the spec has a source for, in key order.
    pub fn apis(&self) -> Vec<&'static str> {
        self.sources.iter().map(|(k, _)| *k).collect()
    }

    /// Each buffer's bytes and whether it is written, at `sizes`, without making any: what
    /// the host-memory check needs before the buffers are generated.
    pub fn buffer_sizes(&self, sizes: &Sizes) -> Result<Vec<(u64, bool)>, SpecError> {
        let sizes = &self.with_params(sizes);
        let lookup = |n: &str| sizes.get(n);
        let mut out = Vec::new();
        for (i, a) in self.args.iter().enumerate() {
            if let ArgDecl::Buffer(b) = a {
                let key = format!("args[{i}].elements");
                let n = b
                    .elements
                    .eval(&lookup)
                    .map_err(|m| SpecError::new(&self.file, &key, m))?;
                // One allocation holds at most isize::MAX bytes on any host.
                let bytes = (n.checked_mul(b.ty.size() as u64))
                    .filter(|&bytes| bytes <= isize::MAX as u64)
                    .ok_or_else(|| SpecError::new(&self.file, &key, too_large(b, n)))?;
                out.push((bytes, b.written));
            }
        }
        Ok(out)
    }

    /// Sizes the arguments and generates the buffers' initial contents.
    pub fn instantiate(&self, sizes: &Sizes) -> Result<Instance, SpecError> {
        let sizes = &self.with_params(sizes);
        let lookup = |n: &str| sizes.get(n);
        let eval = |key: String, e: &super::expr::Expr| {
            e.eval(&lookup)
                .map_err(|m| SpecError::new(&self.file, key, m))
        };
        let mut args = Vec::new();
        let mut buffers = Vec::new();
        for (i, a) in self.args.iter().enumerate() {
            match a {
                ArgDecl::Buffer(b) => {
                    let buf =
                        self.buffer(i, b, eval(format!("args[{i}].elements"), &b.elements)?)?;
                    args.push(ProgramArg::buffer(buf.initial.len() as u64));
                    buffers.push(buf);
                }
                ArgDecl::Scalar(s) => {
                    let key = format!("args[{i}].value");
                    let bytes = match &s.value {
                        ScalarValue::Number(n) => scalar_bytes(s.ty, bits_of(s.ty, *n)),
                        ScalarValue::Expr(e) => {
                            let v = eval(key.clone(), e)?;
                            expr_scalar(s.ty, v).ok_or_else(|| {
                                SpecError::new(
                                    &self.file,
                                    &key,
                                    format!("'{e}' is {v} at {sizes}, which does not fit {}", s.ty),
                                )
                            })?
                        }
                    };
                    args.push(ProgramArg::Scalar { ty: s.ty, bytes });
                }
                ArgDecl::Local { .. } => args.push(ProgramArg::Local),
            }
        }
        let work = self.work_extent(sizes)?;
        let max_grid = match &self.max_grid {
            Some(e) => Some(eval("launch.max_grid".into(), e)?),
            None => None,
        };
        Ok(Instance {
            sizes: sizes.clone(),
            args,
            buffers,
            work,
            bytes_moved: self
                .bytes_per_item
                .map(|b| b * (work.0 as f64) * (work.1 as f64)),
            tolerance: self.tolerance,
            grid: self.grid,
            max_grid,
            blocks: self.blocks.clone(),
            subgroup_size: self.subgroup_size,
            nonfinite_allowed: self.nonfinite_allowed,
            timing_only: self.timing_only,
            shared: self.shared_bytes.clone(),
            file: self.file.clone(),
        })
    }

    fn work_extent(&self, sizes: &Sizes) -> Result<(u64, u64), SpecError> {
        let get = |n: &String| {
            sizes.get(n).ok_or_else(|| {
                SpecError::new(&self.file, "work", format!("size '{n}' has no value"))
            })
        };
        let w = get(&self.work[0])?;
        let h = match self.work.get(1) {
            Some(n) => get(n)?,
            None => 1,
        };
        Ok((w, h))
    }

    fn buffer(&self, i: usize, b: &BufferDecl, elements: u64) -> Result<BufferInstance, SpecError> {
        let key = format!("args[{i}].elements");
        if elements == 0 {
            return Err(SpecError::new(
                &self.file,
                key,
                format!("'{}' is 0: a buffer needs at least one element", b.elements),
            ));
        }
        let initial = generate(b.ty, &b.init, elements)
            .ok_or_else(|| SpecError::new(&self.file, key, too_large(b, elements)))?;
        let reference = match &b.reference {
            Some(path) => Some(super::reference::read(path, b.ty, elements).map_err(|m| {
                let at = match self.references_given.contains(&b.name) {
                    true => "--reference".to_string(),
                    false => format!("args[{i}].reference"),
                };
                SpecError::new(&self.file, at, format!("{path}: {m}"))
            })?),
            None => None,
        };
        Ok(BufferInstance {
            decl: b.clone(),
            elements,
            initial,
            reference,
        })
    }
}

/// "'n' is 4000000000000000000 elements (16000000000000000000 bytes), more than this host can
/// allocate": the buffer's size expression, its value and its bytes.
fn too_large(b: &BufferDecl, elements: u64) -> String {
    let bytes = elements as u128 * b.ty.size() as u128;
    format!(
        "'{}' is {elements} elements ({bytes} bytes), more than this host can allocate",
        b.elements
    )
}

fn scalar_bytes(ty: ScalarType, bits: u64) -> Vec<u8> {
    bits.to_le_bytes()[..ty.size()].to_vec()
}

/// A size expression's value as a scalar of `ty`, when it fits (floats take any value).
fn expr_scalar(ty: ScalarType, v: u64) -> Option<Vec<u8>> {
    let bits = match ty {
        ScalarType::I32 => i32::try_from(v).ok()? as u64,
        ScalarType::U32 => u32::try_from(v).ok()? as u64,
        ScalarType::I64 => i64::try_from(v).ok()? as u64,
        ScalarType::U64 => v,
        ScalarType::F32 => (v as f32).to_bits() as u64,
        ScalarType::F64 => (v as f64).to_bits(),
    };
    Some(scalar_bytes(ty, bits))
}

/// A kernel's arguments at some sizes, their contents not generated: what a launch needs of a
/// device (buffer bytes, scalar sizes, dynamic shared memory at a block) before the buffers
/// are made.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Buffers with their bytes (no guard bands), scalars with zero bytes of their size.
    pub args: Vec<ProgramArg>,
    pub work: (u64, u64),
    pub grid: GridMode,
    pub subgroup_size: Option<u64>,
    shared: Option<super::expr::Expr>,
    sizes: Sizes,
}

impl Shape {
    /// Dynamic shared memory at `block`, as [`Instance::shared_bytes`] gives it (0 when its
    /// expression cannot be evaluated: the instance's own evaluation reports that).
    pub fn shared_bytes(&self, block: BlockSize) -> u64 {
        let Some(e) = &self.shared else { return 0 };
        e.eval(&|n| match n {
            "block" => Some(block.threads()),
            "block_x" => Some(block.x as u64),
            "block_y" => Some(block.y as u64),
            "block_z" => Some(block.z as u64),
            _ => self.sizes.get(n),
        })
        .unwrap_or(0)
    }
}

impl KernelSpec {
    /// The kernel's [`Shape`] at `sizes`, without generating any buffer.
    pub fn shape(&self, sizes: &Sizes) -> Result<Shape, SpecError> {
        let sizes = self.with_params(sizes);
        let mut bytes = self.buffer_sizes(&sizes)?.into_iter();
        let args = self
            .args
            .iter()
            .map(|a| match a {
                ArgDecl::Buffer(_) => ProgramArg::buffer(bytes.next().map_or(0, |(b, _)| b)),
                ArgDecl::Scalar(s) => ProgramArg::Scalar {
                    ty: s.ty,
                    bytes: vec![0; s.ty.size()],
                },
                ArgDecl::Local { .. } => ProgramArg::Local,
            })
            .collect();
        Ok(Shape {
            args,
            work: self.work_extent(&sizes)?,
            grid: self.grid,
            subgroup_size: self.subgroup_size,
            shared: self.shared_bytes.clone(),
            sizes,
        })
    }
}
