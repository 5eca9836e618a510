//! The built-in grayscale kernels as this backend's programs (`blocksweep_core::builtin` lists
//! their arguments): each shader's SPIR-V, compiled ahead of time and embedded, which built-in
//! a loaded source is, and the launch check only a built-in needs: on llvmpipe a grid-stride
//! loop must not run past the driver's loop cap, which would leave pixels unwritten.

use blocksweep_core::{KernelVariant, Launch, ProgramSource};

use crate::error::{VulkanError, VulkanResult};
use crate::provider::SPIR_V;

/// shaders/grayscale.spv, compiled from shaders/grayscale.comp with
/// `glslangValidator -V --target-env vulkan1.1 -o shaders/grayscale.spv shaders/grayscale.comp`;
/// each of the others the same way from its `.comp`.
pub const SPIRV: &[u8] = include_bytes!("../../../shaders/grayscale.spv");
pub const SPIRV_ONE_PER_THREAD: &[u8] =
    include_bytes!("../../../shaders/grayscale_one_per_thread.spv");
pub const SPIRV_2D: &[u8] = include_bytes!("../../../shaders/grayscale_2d.spv");
pub const SPIRV_SHARED: &[u8] = include_bytes!("../../../shaders/grayscale_shared.spv");
pub const SPIRV_REGISTERS: &[u8] = include_bytes!("../../../shaders/grayscale_registers.spv");
/// shaders/grayscale_split*.spv, compiled for Vulkan 1.2 as their headers say.
pub const SPIRV_SPLIT: &[u8] = include_bytes!("../../../shaders/grayscale_split.spv");
pub const SPIRV_SPLIT_ONE_PER_THREAD: &[u8] =
    include_bytes!("../../../shaders/grayscale_split_one_per_thread.spv");

/// Each built-in's SPIR-V and where it is checked in.
fn shader(kernel: KernelVariant) -> (&'static [u8], &'static str) {
    match kernel {
        KernelVariant::GridStride => (SPIRV, "shaders/grayscale.spv"),
        KernelVariant::OnePixelPerThread => {
            (SPIRV_ONE_PER_THREAD, "shaders/grayscale_one_per_thread.spv")
        }
        KernelVariant::GridStride2D => (SPIRV_2D, "shaders/grayscale_2d.spv"),
        KernelVariant::SharedProbe => (SPIRV_SHARED, "shaders/grayscale_shared.spv"),
        KernelVariant::RegisterHeavy => (SPIRV_REGISTERS, "shaders/grayscale_registers.spv"),
    }
}

/// Embedded SPIR-V from `origin` as a program source, entry `main`.
fn spirv((code, origin): (&[u8], &str)) -> ProgramSource {
    ProgramSource {
        language: SPIR_V,
        code: code.to_vec(),
        entry: "main".into(),
        origin: origin.into(),
        options: Vec::new(),
    }
}

/// The built-in `kernel` as a program source: its SPIR-V, entry `main`.
pub fn source(kernel: KernelVariant) -> ProgramSource {
    spirv(shader(kernel))
}

/// The split shader of built-in `kernel`, where it has one (its planes in pieces reached by
/// address, `crate::pieces`), and where it is checked in.
pub(crate) fn split_shader(kernel: KernelVariant) -> Option<(&'static [u8], &'static str)> {
    match kernel {
        KernelVariant::GridStride => Some((SPIRV_SPLIT, "shaders/grayscale_split.spv")),
        KernelVariant::OnePixelPerThread => Some((
            SPIRV_SPLIT_ONE_PER_THREAD,
            "shaders/grayscale_split_one_per_thread.spv",
        )),
        _ => None,
    }
}

/// The split shader of built-in `kernel` as a program source, where it has one.
pub(crate) fn split_source(kernel: KernelVariant) -> Option<ProgramSource> {
    split_shader(kernel).map(spirv)
}

/// Which built-in `source` is, where it is one of this backend's own (origin and code the
/// same; options such as a required subgroup size do not change what its loops do).
pub(crate) fn identify(source: &ProgramSource) -> Option<KernelVariant> {
    KernelVariant::ALL.into_iter().find(|&k| {
        let (code, origin) = shader(k);
        source.language == SPIR_V
            && source.origin == origin
            && source.code == code
            && source.entry == "main"
    })
}

/// Refuses a launch of the grid-stride built-in `kernel` whose busiest invocation would loop
/// more often than `limit` (llvmpipe's cap): the core's rule ([`blocksweep_core::builtin::loop_cap`]).
pub(crate) fn check_loops(
    kernel: KernelVariant,
    launch: Launch,
    scalar: impl Fn(usize) -> Option<u64>,
    limit: Option<u64>,
) -> VulkanResult<()> {
    blocksweep_core::builtin::loop_cap(kernel, launch, scalar, limit)
        .map_err(VulkanError::LaunchRejected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::{BlockSize, ErrorKind};

    #[test]
    fn spirv_is_embedded_word_aligned_and_identified() {
        for k in KernelVariant::ALL {
            let s = source(k);
            let words = ash::util::read_spv(&mut std::io::Cursor::new(&s.code)).unwrap();
            assert_eq!(words[0], 0x0723_0203);
            assert_eq!(identify(&s), Some(k));
        }
        let mut other = source(KernelVariant::GridStride);
        other.origin = "examples/kernels/grayscale/grayscale.spv".into();
        assert_eq!(identify(&other), None);
    }

    /// The core's rule (`blocksweep_core::builtin::loop_cap`, tested there), refused as this
    /// backend's launch rejection, in the core's words.
    #[test]
    fn a_loop_past_the_cap_is_a_rejected_launch() {
        let launch = Launch::linear(BlockSize::linear(1), 1);
        let n = |v: u64| move |i: usize| (i == 4 || i == 5).then_some(v);
        let cap = Some(65535);
        assert!(check_loops(KernelVariant::GridStride, launch, n(65535), cap).is_ok());
        let e = check_loops(KernelVariant::RegisterHeavy, launch, n(65536), cap).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LaunchRejected);
        assert!(e.to_string().contains("65536 loop iterations"), "{e}");
    }
}
