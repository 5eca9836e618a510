//! CUDA as the core sees it: its name and words, the limits every device since compute
//! capability 2.0 shares, and the [`DRIVER`] that probes and opens devices.

use blocksweep_core::{Api, ApiDriver, ApiInfo, Concept, DriverOption, OptionKind, Vocabulary};

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
    options: &[DriverOption {
        flag: COMPILER_FLAG,
        help: "How the CUDA kernel is compiled.",
        kind: OptionKind::Choice {
            value_name: "COMPILER",
            values: &[
                (
                    "auto",
                    "NVRTC when libnvrtc is present, else the embedded PTX.",
                ),
                ("nvrtc", "NVRTC only."),
                ("ptx", "The embedded PTX only."),
            ],
            default: "auto",
        },
    }],
};

/// `--cuda-compiler`: NVRTC, the embedded PTX, or the automatic choice ([`CudaCompiler`]).
const COMPILER_FLAG: &str = "cuda-compiler";

/// CUDA, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens CUDA devices for the core.
pub static DRIVER: ApiDriver = ApiDriver {
    api: API,
    probe: || Ok(crate::probe()?),
    open: |index, options| {
        let compiler = match options.choice(COMPILER_FLAG) {
            Some("nvrtc") => CudaCompiler::Nvrtc,
            Some("ptx") => CudaCompiler::Ptx,
            _ => CudaCompiler::Auto,
        };
        Ok(Box::new(crate::open(index, &CudaOptions { compiler })?))
    },
};
