//! CUDA as the core sees it: its name and words, the limits every device since compute
//! capability 2.0 shares, and the [`DRIVER`] that probes and opens devices.

use blocksweep_core::{Api, ApiDriver, ApiInfo, Concept, KernelSource, Vocabulary};

use crate::{CudaCompiler, CudaOptions};

/// CUDA publishes no minimums; its limits are fixed per compute capability (CUDA C++
/// Programming Guide, "Compute Capabilities", table "Technical Specifications per Compute
/// Capability"), and these have held on every device since 2.0.
static INFO: ApiInfo = ApiInfo {
    key: "cuda",
    aliases: &[],
    name: "CUDA",
    rank: 0,
    words: Vocabulary {
        thread: "thread",
        block: "thread block",
        grid: "grid",
        warp: "warp",
        multiprocessor: "SM",
        launch: "cuLaunchKernel",
    },
    guarantees: &[
        (Concept::MaxThreadsPerBlock, "1024 (cc ≥ 2.0)"),
        (Concept::MaxBlockDims, "(1024, 1024, 64)"),
        (Concept::MaxGridDims, "(2^31-1, 65535, 65535)"),
        (Concept::WarpSize, "32"),
        (Concept::SharedMemPerBlock, "48 KiB (no opt-in)"),
    ],
    install_hint: "install NVIDIA driver R525 or newer (CUDA 12.0; libcuda.so.1)",
    host_bytes_per_pixel: 0,
};

/// CUDA, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens CUDA devices for the core.
pub static DRIVER: ApiDriver = ApiDriver {
    api: API,
    probe: || Ok(crate::probe()?),
    // `kernel_source` picks NVRTC (Compiler), the embedded PTX (Embedded) or the automatic
    // choice.
    open: |index, options| {
        let compiler = match options.kernel_source {
            KernelSource::Auto => CudaCompiler::Auto,
            KernelSource::Compiler => CudaCompiler::Nvrtc,
            KernelSource::Embedded => CudaCompiler::Ptx,
        };
        Ok(Box::new(crate::open(index, &CudaOptions { compiler })?))
    },
};
