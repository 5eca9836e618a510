//! Building a program's kernel and its facts: the source as SPIR-V words (GLSL through
//! libshaderc), its scalars as one std430 push-constant block ([`PushBlock`], which
//! `set_scalar` rewrites in place), and the facts the core reports for it. The Vulkan objects
//! they become are `pipeline.rs`'s and `objects.rs`'s; the program itself is `program.rs`.

use blocksweep_core::{BlockSize, KernelFacts, Named, ProgramArg, ProgramSource, ScalarType};

use crate::error::{VulkanError, VulkanResult};
pub(crate) use crate::objects::{bind_storage, DescriptorPool, PipelineCache, StorageLayouts};
pub(crate) use crate::pipeline::{
    compute_pipeline, shader_module, shader_module_of_words, statistics, statistics_flags,
    PipelineStatistics, Stage,
};
use crate::provider::{GLSL, SPIR_V};
use crate::reflect::PushLayout;
use crate::timing::DispatchLimits;

pub(crate) fn build(detail: String) -> VulkanError {
    VulkanError::Build {
        call: "load_program",
        detail,
    }
}

/// The source as SPIR-V words (GLSL compiled with `options`), and who made them.
pub(crate) fn words_of(
    source: &ProgramSource,
    options: &[String],
) -> VulkanResult<(Vec<u32>, String)> {
    match source.language {
        l if l == SPIR_V => {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(&source.code))
                .map_err(|e| build(format!("{} is not SPIR-V: {e}", source.origin)))?;
            Ok((words, format!("SPIR-V given ({})", source.origin)))
        }
        l if l == GLSL => {
            let text = std::str::from_utf8(&source.code)
                .map_err(|e| build(format!("{} is not UTF-8: {e}", source.origin)))?;
            let words = crate::glsl::compile(text, &source.origin, &source.entry, options)?;
            let by = crate::glsl::compiler_name()?;
            Ok((words, format!("{by} from {}", source.origin)))
        }
        other => Err(build(format!(
            "{} is {other}; the Vulkan backend builds GLSL or SPIR-V",
            source.origin
        ))),
    }
}

/// Where each scalar goes in the push-constant block: std430, every scalar aligned to its own
/// size, in argument order; the block's size rounded up to 4 bytes.
pub(crate) fn push_layout(args: &[ProgramArg]) -> PushLayout {
    let mut layout = PushLayout::default();
    let mut at = 0u32;
    for (i, a) in args.iter().enumerate() {
        if let ProgramArg::Scalar { ty, .. } = a {
            let size = ty.size() as u32;
            at = at.div_ceil(size) * size;
            layout
                .scalars
                .push((format!("argument {i}"), ty.to_string(), at, size));
            at += size;
        }
    }
    layout.bytes = at.div_ceil(4) * 4;
    layout
}

/// The push-constant block of a program's scalars, and where each argument's bytes are in it.
pub(crate) struct PushBlock {
    pub bytes: Vec<u8>,
    /// One per argument: a scalar's type and offset, `None` for the others.
    scalars: Vec<Option<(ScalarType, usize)>>,
}

impl PushBlock {
    /// Each scalar's bytes at its offset in `layout` (made by [`push_layout`] from `args`).
    pub fn new(args: &[ProgramArg], layout: &PushLayout) -> VulkanResult<PushBlock> {
        let mut offsets = layout.scalars.iter().map(|s| s.2 as usize);
        let scalars = args
            .iter()
            .map(|a| match a {
                ProgramArg::Scalar { ty, .. } => offsets.next().map(|at| (*ty, at)),
                _ => None,
            })
            .collect();
        let mut block = PushBlock {
            bytes: vec![0u8; layout.bytes as usize],
            scalars,
        };
        for (i, a) in args.iter().enumerate() {
            if let ProgramArg::Scalar { bytes, .. } = a {
                block.set(i, bytes)?;
            }
        }
        Ok(block)
    }

    /// Writes scalar argument `arg`'s little-endian `value` at its offset.
    pub fn set(&mut self, arg: usize, value: &[u8]) -> VulkanResult<()> {
        let Some(Some((ty, at))) = self.scalars.get(arg).copied() else {
            return Err(VulkanError::Usage(format!(
                "argument {arg} is not a scalar of the loaded program"
            )));
        };
        if value.len() != ty.size() {
            return Err(VulkanError::Usage(format!(
                "argument {arg}: a {ty} scalar is {} bytes, {} given",
                ty.size(),
                value.len()
            )));
        }
        self.bytes[at..at + value.len()].copy_from_slice(value);
        Ok(())
    }

    /// Scalar argument `arg`'s current value as an integer (its bits, zero-extended).
    pub fn value(&self, arg: usize) -> Option<u64> {
        let (ty, at) = (*self.scalars.get(arg)?)?;
        let mut le = [0u8; 8];
        le[..ty.size()].copy_from_slice(&self.bytes[at..at + ty.size()]);
        Some(u64::from_le_bytes(le))
    }
}

/// What [`facts`] reports beyond the driver's statistics.
pub(crate) struct FactsOf<'a> {
    pub limits: &'a DispatchLimits,
    /// The workgroup whose pipeline the statistics are of.
    pub probe: BlockSize,
    pub required: Option<u32>,
    pub made_by: String,
    pub origin: &'a str,
    pub driver: &'a str,
    pub max_loop_iterations: Option<u64>,
}

/// The facts of a program's kernel, from the statistics of its probe pipeline.
pub(crate) fn facts(of: FactsOf, stats: PipelineStatistics) -> KernelFacts {
    let probe = of.probe;
    let mut extra = vec![("shader".to_string(), of.origin.to_string())];
    if let Some(r) = of.required {
        extra.push(("requiredSubgroupSize".into(), r.to_string()));
    }
    if !stats.all.is_empty() {
        extra.push((
            "statistics of".into(),
            format!("the pipeline for workgroup {probe}"),
        ));
    }
    extra.extend(stats.all);
    if let Some(cap) = of.max_loop_iterations {
        extra.push((
            "loop iterations".into(),
            format!("llvmpipe ends a shader's loops after {cap} (LP_MAX_TGSI_LOOP_ITERATIONS)"),
        ));
    }
    KernelFacts {
        max_block: Some(Named::new(
            of.limits.max_invocations.into(),
            "maxComputeWorkGroupInvocations (no per-pipeline query in Vulkan)",
        )),
        // Vulkan compiles a pipeline per workgroup size, and a driver may allocate registers
        // differently for each: the count is the probe pipeline's, and says so.
        registers: stats.registers.map(|r| {
            Named::new(
                r.value,
                format!("{}, pipeline for workgroup {probe}", r.name),
            )
        }),
        compiled_by: format!(
            "{}; vkCreateComputePipelines (driver {})",
            of.made_by, of.driver
        ),
        extra,
        ..KernelFacts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_set_in_place_and_read_back() {
        let args =
            blocksweep_core::builtin::args(blocksweep_core::KernelVariant::SharedProbe, 3, 2);
        let mut block = PushBlock::new(&args, &push_layout(&args)).unwrap();
        // n (u64) at 0, words (u32) at 8; the Local argument has no place.
        assert_eq!(block.bytes.len(), 12);
        assert_eq!(block.value(4), Some(6));
        block.set(5, &7u32.to_le_bytes()).unwrap();
        assert_eq!(block.value(5), Some(7));
        assert_eq!(&block.bytes[8..], &7u32.to_le_bytes());
        let e = block.set(5, &7u64.to_le_bytes()).unwrap_err();
        assert!(
            e.to_string().contains("a u32 scalar is 4 bytes, 8 given"),
            "{e}"
        );
        for not_scalar in [0, 6, 9] {
            let e = block.set(not_scalar, &[0; 4]).unwrap_err();
            assert!(e.to_string().contains("is not a scalar"), "{e}");
        }
    }
}
