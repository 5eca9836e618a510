//! OpenCL as the core sees it: its name and words, what its specification guarantees, and the
//! [`DRIVER`] that probes and opens devices.

use blocksweep_core::{Api, ApiDriver, ApiInfo, Concept, DriverOption, OptionKind, Vocabulary};

use crate::OpenClOptions;

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
        (Concept::MaxThreadsPerBlock, "1"),
        (Concept::MaxBlockDims, "(1, 1, 1)"),
        (Concept::Multiprocessors, "1"),
        (Concept::SharedMemPerBlock, "32 KiB"),
        (Concept::MaxAlloc, "max(global/4, 128 MiB)"),
    ],
    install_hint: "apt-get install ocl-icd-libopencl1 pocl-opencl-icd (CPU driver) or a GPU vendor's OpenCL ICD",
    host_bytes_per_pixel: 0,
    options: &[DriverOption {
        flag: BUILD_OPTIONS_FLAG,
        help: "Added to the OpenCL C build options of blocksweep's own kernels (after -cl-std=CL1.2), e.g. \"-cl-mad-enable\".",
        kind: OptionKind::Text {
            value_name: "OPTIONS",
        },
    }],
};

/// `--cl-build-options`: [`OpenClOptions::extra_build_options`].
const BUILD_OPTIONS_FLAG: &str = "cl-build-options";

/// OpenCL, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens OpenCL devices for the core.
pub static DRIVER: ApiDriver = ApiDriver {
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
