//! WebGPU as the core sees it: its name and words, what its specification guarantees, and the
//! [`PROVIDER`] that probes and opens devices.

use blocksweep_core::{
    Amount, Api, ApiInfo, ApiOption, ApiProvider, Concept, Conduct, Guarantee, Language,
    OptionKind, Vocabulary,
};

use crate::{LimitsChoice, WebGpuOptions};

/// The WebGPU specification's default limits (W3C WebGPU, "Limits", the Default column):
/// every adapter supports at least these, and a device asked for nothing more gets exactly
/// these, so they are what a WebGPU port may assume everywhere (docs/limits.md).
static INFO: ApiInfo = ApiInfo {
    key: "webgpu",
    aliases: &["wgpu"],
    name: "WebGPU",
    rank: 3,
    words: Vocabulary {
        thread: "invocation",
        block: "workgroup",
        grid: "workgroup count",
        warp: "subgroup",
        multiprocessor: "compute unit",
        launch: "dispatchWorkgroups",
    },
    guarantees: &[
        Guarantee::at_least(
            Concept::MaxThreadsPerBlock,
            Amount::Count(256),
            "maxComputeInvocationsPerWorkgroup",
        ),
        Guarantee::at_least(
            Concept::MaxBlockDims,
            Amount::Dims([256, 256, 64]),
            "maxComputeWorkgroupSize{X,Y,Z}",
        ),
        Guarantee::at_least(
            Concept::MaxGridDims,
            Amount::Dims([65535, 65535, 65535]),
            "maxComputeWorkgroupsPerDimension",
        ),
        Guarantee::at_least(
            Concept::SharedMemPerBlock,
            Amount::Bytes(16 << 10),
            "maxComputeWorkgroupStorageSize",
        ),
        Guarantee::at_least(Concept::MaxAlloc, Amount::Bytes(256 << 20), "maxBufferSize"),
        Guarantee::at_least(
            Concept::MaxBufferBinding,
            Amount::Bytes(128 << 20),
            "maxStorageBufferBindingSize",
        ),
    ],
    install_hint: "apt-get install libvulkan1 mesa-vulkan-drivers (CPU driver) or a GPU vendor's Vulkan driver: wgpu runs WebGPU on Vulkan here",
    // The read-back buffer (mappable, a plane's size) and wgpu's own staging copy of each
    // write (queue.write_buffer), a plane's size while it is in flight.
    host_bytes_per_pixel: 8,
    options: &[ApiOption {
        flag: LIMITS_FLAG,
        help: "Which limits the WebGPU device is asked for: the adapter's own (what this GPU can do) or the specification's defaults (what every WebGPU device gives).",
        kind: OptionKind::Choice {
            value_name: "LIMITS",
            values: &[
                ("adapter", "the adapter's own limits (required_limits = adapter.limits())"),
                ("default", "the WebGPU specification's defaults: 256 invocations, 16 KiB of workgroup storage"),
            ],
            default: "adapter",
        },
    }],
    conduct: Conduct {
        undefined_beyond_limits: false,
        kernel_block_query: None,
        too_many_registers: "no such error: any workgroup up to maxComputeInvocationsPerWorkgroup must run",
        subgroup_size: "the adapter's, between subgroupMinSize and subgroupMaxSize (the subgroups feature); a pipeline cannot ask for one",
        subgroup_layout: None,
        subgroup_request: None,
    },
    kernel_languages: &[("wgsl", WGSL)],
    default_entry: Some("main"),
    subgroup_probe: None,
    over: Some(OVER),
};

/// A WGSL compute shader, built at run time by wgpu (naga). WGSL has no preprocessor: a tune's
/// parameters are prepended as `const` declarations (`kernel.rs`).
pub const WGSL: Language = Language::new("wgsl", "WGSL");

/// The API wgpu runs WebGPU over in this build: Vulkan unless a feature adds another backend.
const OVER: &str = "vulkan";

/// `--webgpu-limits`: [`WebGpuOptions::limits`].
const LIMITS_FLAG: &str = "webgpu-limits";

/// WebGPU, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens WebGPU adapters for the core.
pub static PROVIDER: ApiProvider = ApiProvider {
    api: API,
    probe: || Ok(crate::probe()?),
    open: |index, options| {
        let limits = match options.choice(LIMITS_FLAG) {
            Some("default") => LimitsChoice::Default,
            _ => LimitsChoice::Adapter,
        };
        Ok(Box::new(crate::open(index, &WebGpuOptions { limits })?))
    },
};
