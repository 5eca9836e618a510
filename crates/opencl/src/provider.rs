//! OpenCL as the core sees it: its name and words, what its specification guarantees, and the
//! [`PROVIDER`] that probes and opens devices.

use blocksweep_core::{
    Amount, Api, ApiInfo, ApiOption, ApiProvider, Concept, Conduct, Guarantee, Language,
    OptionKind, Vocabulary,
};

use crate::OpenClOptions;

mod subgroup_probe;

/// Minimums from the OpenCL 3.0 specification's clGetDeviceInfo table, for full-profile
/// devices that are not CL_DEVICE_TYPE_CUSTOM (docs/limits.md quotes them): no work-group
/// size above 1 is promised, so a portable program that assumes 1024 relies on a value the
/// standard does not give.
static INFO: ApiInfo = ApiInfo {
    key: "opencl",
    aliases: &["cl"],
    name: "OpenCL",
    rank: 2,
    words: Vocabulary {
        thread: "work-item",
        block: "work-group",
        grid: "number of work-groups",
        warp: "sub-group",
        multiprocessor: "compute unit",
        launch: "clEnqueueNDRangeKernel",
    },
    guarantees: &[
        Guarantee::at_least(
            Concept::MaxThreadsPerBlock,
            Amount::Count(1),
            "CL_DEVICE_MAX_WORK_GROUP_SIZE",
        ),
        Guarantee::at_least(
            Concept::MaxBlockDims,
            Amount::Dims([1, 1, 1]),
            "CL_DEVICE_MAX_WORK_ITEM_SIZES",
        ),
        Guarantee::at_least(
            Concept::Multiprocessors,
            Amount::Count(1),
            "CL_DEVICE_MAX_COMPUTE_UNITS",
        ),
        Guarantee::at_least(
            Concept::SharedMemPerBlock,
            Amount::Bytes(32 << 10),
            "CL_DEVICE_LOCAL_MEM_SIZE",
        ),
        Guarantee::at_least(
            Concept::MaxAlloc,
            Amount::ShareOfGlobal {
                divisor: 4,
                floor: 128 << 20,
            },
            "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
        ),
    ],
    install_hint: "apt-get install ocl-icd-libopencl1 pocl-opencl-icd (CPU driver) or a GPU vendor's OpenCL ICD",
    host_bytes_per_pixel: 0,
    options: &[ApiOption {
        flag: BUILD_OPTIONS_FLAG,
        help: "Added to the OpenCL C build options of blocksweep's own kernels (after -cl-std=CL1.2), e.g. \"-cl-mad-enable\".",
        kind: OptionKind::Text {
            value_name: "OPTIONS",
        },
    }],
    conduct: Conduct {
        undefined_beyond_limits: false,
        kernel_block_query: Some("CL_KERNEL_WORK_GROUP_SIZE"),
        too_many_registers: "CL_INVALID_WORK_GROUP_SIZE (above CL_KERNEL_WORK_GROUP_SIZE) or CL_OUT_OF_RESOURCES",
        subgroup_size: "the device's, answered per kernel and launch (clGetKernelSubGroupInfo)",
        subgroup_layout: None,
        subgroup_request: None,
    },
    kernel_languages: &[("cl", OPENCL_C)],
    default_entry: None,
    subgroup_probe: Some(&subgroup_probe::Probe),
    over: None,
};

/// OpenCL C, built with clBuildProgram: the one language of a user's kernel for OpenCL.
pub const OPENCL_C: Language = Language::new("opencl", "OpenCL C");

/// `--cl-build-options`: [`OpenClOptions::extra_build_options`].
const BUILD_OPTIONS_FLAG: &str = "cl-build-options";

/// OpenCL, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens OpenCL devices for the core.
pub static PROVIDER: ApiProvider = ApiProvider {
    api: API,
    probe: || Ok(crate::probe()?),
    open: |index, options| {
        let extra_build_options = options.choice(BUILD_OPTIONS_FLAG).unwrap_or("").to_string();
        let options = OpenClOptions {
            extra_build_options,
        };
        Ok(Box::new(crate::open(index, &options)?))
    },
};
