//! The built-in grayscale kernels as programs ([`blocksweep_core::builtin`] lists their
//! arguments): the embedded PTX of kernels/grayscale.ptx, JIT-compiled by the driver, or
//! kernels/grayscale.cu through NVRTC, as [`CudaCompiler`] says.

use blocksweep_core::{KernelVariant, ProgramSource};

use crate::plan::ptx_jit_enabled;
use crate::provider::{CUDA_CPP, PTX};
use crate::CudaCompiler;

/// kernels/grayscale.cu, the one CUDA source of the built-in kernels.
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/grayscale.cu");
/// kernels/grayscale.ptx: NVRTC 12.0's PTX (ISA 8.0) of the same source for compute_50, which
/// every driver since CUDA 12.0 (R525) JIT-compiles for every GPU it supports (see
/// kernels/README.md and tools/ci/regen-ptx.sh).
pub const KERNEL_PTX: &str = include_str!("../../../kernels/grayscale.ptx");

/// The embedded PTX in words, for the kernel facts.
pub(crate) const EMBEDDED_DESC: &str = "embedded PTX (NVRTC 12.0, compute_50)";

/// The source of `kernel` under `compiler`: grayscale.cu through NVRTC where asked for, or
/// under `auto` where a libnvrtc loads (compiled for this device's architecture, as a user's
/// kernel is) or CUDA_DISABLE_PTX_JIT=1 leaves the driver no JIT (NVRTC then builds a cubin,
/// [`crate::plan`]); else the embedded PTX.
pub(crate) fn source(kernel: KernelVariant, compiler: CudaCompiler) -> ProgramSource {
    let nvrtc = match compiler {
        CudaCompiler::Nvrtc => true,
        CudaCompiler::Auto => !ptx_jit_enabled() || nvrtc_loads(),
        CudaCompiler::Ptx => false,
    };
    let (language, code, origin) = match nvrtc {
        true => (CUDA_CPP, KERNEL_SOURCE, "kernels/grayscale.cu"),
        false => (PTX, KERNEL_PTX, "kernels/grayscale.ptx"),
    };
    ProgramSource {
        language,
        code: code.as_bytes().to_vec(),
        entry: kernel.entry().into(),
        origin: origin.into(),
        options: Vec::new(),
    }
}

/// Whether a libnvrtc loads, asked once per process.
fn nvrtc_loads() -> bool {
    static LOADS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOADS.get_or_init(crate::nvrtc::nvrtc_available)
}

/// Whether `source` is the embedded PTX itself (its facts say so).
pub(crate) fn is_embedded_ptx(source: &ProgramSource) -> bool {
    source.language == PTX && source.code == KERNEL_PTX.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_a_source_with_its_entry() {
        for kernel in KernelVariant::ALL {
            let ptx = source(kernel, CudaCompiler::Ptx);
            assert_eq!(ptx.entry, kernel.entry());
            assert_eq!(ptx.language, PTX);
            assert_eq!(ptx.origin, "kernels/grayscale.ptx");
            assert!(is_embedded_ptx(&ptx));
            let entry = format!(".visible .entry {}(", kernel.entry());
            assert!(KERNEL_PTX.contains(&entry), "the PTX lacks {entry}");
            let cu = source(kernel, CudaCompiler::Nvrtc);
            assert_eq!(
                (cu.language, &*cu.origin),
                (CUDA_CPP, "kernels/grayscale.cu")
            );
            assert_eq!(cu.entry, kernel.entry());
            let decl = format!("extern \"C\" __global__ void {}(", kernel.entry());
            assert!(KERNEL_SOURCE.contains(&decl), "grayscale.cu lacks {decl}");
            assert!(!is_embedded_ptx(&cu));
        }
    }

    #[test]
    fn auto_is_nvrtc_where_it_loads_else_the_embedded_ptx_while_the_jit_is_allowed() {
        let auto = source(KernelVariant::GridStride, CudaCompiler::Auto);
        let want = if ptx_jit_enabled() && !nvrtc_loads() {
            PTX
        } else {
            CUDA_CPP
        };
        assert_eq!(auto.language, want);
    }

    #[test]
    fn kernel_uses_the_core_weights() {
        for w in ["0.299f", "0.587f", "0.114f"] {
            assert!(KERNEL_SOURCE.contains(w), "grayscale.cu lacks {w}");
        }
        assert_eq!(blocksweep_core::WEIGHTS, [0.299, 0.587, 0.114]);
    }

    #[test]
    fn the_embedded_ptx_is_for_every_driver_since_cuda_12_0() {
        assert!(KERNEL_PTX.contains("\n.version 8.0\n"), "PTX ISA above 8.0");
        assert!(KERNEL_PTX.contains("\n.target sm_50\n"));
        assert!(!KERNEL_PTX.contains('\0'));
    }
}
