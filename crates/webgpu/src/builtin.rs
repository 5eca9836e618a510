//! The built-in grayscale kernels as this backend's programs (`blocksweep_core::builtin` lists
//! their arguments): each one's WGSL, embedded, which built-in a loaded source is, and the
//! launch check only a built-in needs: on llvmpipe a grid-stride loop must not run past the
//! driver's loop cap, which would leave pixels unwritten.

use blocksweep_core::{KernelVariant, Launch, ProgramSource};

use crate::error::{WebGpuError, WebGpuResult};

/// shaders/wgsl/<kernel>.wgsl, built at run time by wgpu.
fn shader(kernel: KernelVariant) -> (&'static str, &'static str) {
    match kernel {
        KernelVariant::GridStride => (
            include_str!("../../../shaders/wgsl/grayscale.wgsl"),
            "shaders/wgsl/grayscale.wgsl",
        ),
        KernelVariant::OnePixelPerThread => (
            include_str!("../../../shaders/wgsl/grayscale_one_per_thread.wgsl"),
            "shaders/wgsl/grayscale_one_per_thread.wgsl",
        ),
        KernelVariant::GridStride2D => (
            include_str!("../../../shaders/wgsl/grayscale_2d.wgsl"),
            "shaders/wgsl/grayscale_2d.wgsl",
        ),
        KernelVariant::SharedProbe => (
            include_str!("../../../shaders/wgsl/grayscale_shared.wgsl"),
            "shaders/wgsl/grayscale_shared.wgsl",
        ),
        KernelVariant::RegisterHeavy => (
            include_str!("../../../shaders/wgsl/grayscale_registers.wgsl"),
            "shaders/wgsl/grayscale_registers.wgsl",
        ),
    }
}

/// The copy ceiling's shader: shaders/wgsl/copy.wgsl.
pub(crate) const COPY_WGSL: &str = include_str!("../../../shaders/wgsl/copy.wgsl");

/// The built-in `kernel` as a program source: its WGSL, entry `main`.
pub fn source(kernel: KernelVariant) -> ProgramSource {
    let (code, origin) = shader(kernel);
    ProgramSource {
        language: crate::WGSL,
        code: code.as_bytes().to_vec(),
        entry: "main".into(),
        origin: origin.into(),
        options: Vec::new(),
    }
}

/// Which built-in `source` is, where it is one of this backend's own.
pub(crate) fn identify(source: &ProgramSource) -> Option<KernelVariant> {
    KernelVariant::ALL.into_iter().find(|&k| {
        let (code, origin) = shader(k);
        source.language == crate::WGSL && source.origin == origin && source.code == code.as_bytes()
    })
}

/// Refuses a launch of the grid-stride built-in `kernel` whose busiest invocation would loop
/// more often than `limit` (llvmpipe's cap): the core's rule ([`blocksweep_core::builtin::loop_cap`]).
pub(crate) fn check_loops(
    kernel: KernelVariant,
    launch: Launch,
    scalar: impl Fn(usize) -> Option<u64>,
    limit: Option<u64>,
) -> WebGpuResult<()> {
    blocksweep_core::builtin::loop_cap(kernel, launch, scalar, limit)
        .map_err(WebGpuError::LaunchRejected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::{BlockSize, ErrorKind};

    #[test]
    fn every_builtin_reads_as_the_contract_says_and_is_identified() {
        for k in KernelVariant::ALL {
            let s = source(k);
            let text = crate::kernel::text(&s).unwrap();
            let r = crate::kernel::reflect(&text, "main", &s.origin).unwrap();
            let args = blocksweep_core::builtin::args(k, 64, 4);
            crate::kernel::check_args(&r, &args, &s.origin).unwrap();
            assert!(r.overrides.starts_with(&crate::kernel::BLOCK_IDS), "{k:?}");
            assert_eq!(identify(&s), Some(k));
        }
        let mut other = source(KernelVariant::GridStride);
        other.origin = "examples/kernels/grayscale/grayscale.wgsl".into();
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
