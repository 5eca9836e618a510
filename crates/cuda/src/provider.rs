//! CUDA as the core sees it: its name and words, the limits every device since compute
//! capability 2.0 shares, and the [`PROVIDER`] that probes and opens devices.

use blocksweep_core::subgroup::{ProbeBuild, SubgroupProbe};
use blocksweep_core::{
    Amount, Api, ApiInfo, ApiOption, ApiProvider, Concept, Conduct, Guarantee, Language, Limits,
    OptionKind, Vocabulary,
};

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
        Guarantee::fixed(
            Concept::MaxThreadsPerBlock,
            Amount::Count(1024),
            "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
        )
        .when("cc ≥ 2.0"),
        Guarantee::fixed(
            Concept::MaxBlockDims,
            Amount::Dims([1024, 1024, 64]),
            "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z",
        ),
        Guarantee::fixed(
            Concept::MaxGridDims,
            Amount::Dims([0x7fff_ffff, 65535, 65535]),
            "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X/Y/Z",
        ),
        // An attribute, not a promise: 32 on every NVIDIA GPU so far.
        Guarantee::at_least(
            Concept::WarpSize,
            Amount::Count(32),
            "CU_DEVICE_ATTRIBUTE_WARP_SIZE",
        ),
        Guarantee::fixed(
            Concept::SharedMemPerBlock,
            Amount::Bytes(48 << 10),
            "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK",
        )
        .when("no opt-in"),
    ],
    install_hint: "install NVIDIA driver R525 or newer (CUDA 12.0; libcuda.so.1)",
    host_bytes_per_pixel: 0,
    options: &[ApiOption {
        flag: COMPILER_FLAG,
        help: "How the built-in CUDA kernels are compiled.",
        kind: OptionKind::Choice {
            value_name: "COMPILER",
            values: &[
                (
                    "auto",
                    "NVRTC when libnvrtc is present, else the embedded PTX.",
                ),
                ("nvrtc", "kernels/grayscale.cu through NVRTC."),
                ("ptx", "The embedded PTX only."),
            ],
            default: "auto",
        },
    }],
    conduct: Conduct {
        undefined_beyond_limits: false,
        kernel_block_query: Some("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
        too_many_registers: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        subgroup_size: "one warpSize per device, an attribute (CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32 on every NVIDIA GPU so far",
        subgroup_layout: Some("consecutive threads, documented"),
        subgroup_request: None,
    },
    kernel_languages: &[("cu", CUDA_CPP), ("ptx", PTX)],
    default_entry: None,
    subgroup_probe: Some(&Probe),
    over: None,
};

/// CUDA C++, built with NVRTC.
pub const CUDA_CPP: Language = Language::new("cuda", "CUDA C++");
/// PTX text, JIT-compiled by the driver (`cuModuleLoadDataEx`): the embedded built-in kernels,
/// or a user's.
pub const PTX: Language = Language::new("ptx", "PTX");

/// The subgroup probe: a warp's size, index and active mask, in CUDA C++.
#[derive(Debug)]
struct Probe;

impl SubgroupProbe for Probe {
    fn builds(&self, _limits: &Limits) -> Result<Vec<ProbeBuild>, String> {
        Ok(vec![ProbeBuild::new(
            CUDA_CPP,
            include_str!("../../../kernels/subgroup.cu"),
            "kernels/subgroup.cu",
            "subgroup_probe",
            "warpSize, linear thread index / warpSize, __popc(__activemask())",
        )])
    }
}

/// `--cuda-compiler`: NVRTC, the embedded PTX, or the automatic choice ([`CudaCompiler`]).
const COMPILER_FLAG: &str = "cuda-compiler";

/// CUDA, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens CUDA devices for the core.
pub static PROVIDER: ApiProvider = ApiProvider {
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
