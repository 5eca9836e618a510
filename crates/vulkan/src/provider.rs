//! Vulkan as the core sees it: its name and words, what its specification guarantees, and the
//! [`PROVIDER`] that probes and opens devices.

use blocksweep_core::{
    Amount, Api, ApiInfo, ApiOption, ApiProvider, Concept, Conduct, Guarantee, Language,
    OptionKind, Vocabulary,
};

use crate::VulkanOptions;

mod subgroup_probe;
pub use subgroup_probe::REQUIRED_SIZE_OPTION;

/// Minimums from the Vulkan 1.3 specification, "Limit Requirements" (the Required Limits
/// table), and maxMemoryAllocationSize from the Maintenance3 properties (docs/limits.md).
static INFO: ApiInfo = ApiInfo {
    key: "vulkan",
    aliases: &["vk"],
    name: "Vulkan",
    rank: 1,
    words: Vocabulary {
        thread: "invocation",
        block: "workgroup",
        grid: "workgroup count",
        warp: "subgroup",
        multiprocessor: "SM",
        launch: "vkCmdDispatch",
    },
    guarantees: &[
        Guarantee::at_least(
            Concept::MaxThreadsPerBlock,
            Amount::Count(128),
            "maxComputeWorkGroupInvocations",
        ),
        Guarantee::at_least(
            Concept::MaxBlockDims,
            Amount::Dims([128, 128, 64]),
            "maxComputeWorkGroupSize",
        ),
        Guarantee::at_least(
            Concept::MaxGridDims,
            Amount::Dims([65535, 65535, 65535]),
            "maxComputeWorkGroupCount",
        ),
        Guarantee::at_least(Concept::WarpSize, Amount::Count(1), "subgroupSize"),
        Guarantee::at_least(
            Concept::SharedMemPerBlock,
            Amount::Bytes(16 << 10),
            "maxComputeSharedMemorySize",
        ),
        Guarantee::at_least(
            Concept::MaxAlloc,
            Amount::Bytes(1 << 30),
            "maxMemoryAllocationSize",
        ),
        Guarantee::at_least(
            Concept::MaxBufferBinding,
            Amount::Bytes(128 << 20),
            "maxStorageBufferRange",
        ),
    ],
    install_hint: "apt-get install libvulkan1 mesa-vulkan-drivers (CPU driver) or a GPU vendor's Vulkan driver",
    // The one host-visible staging buffer, a plane's size, that feeds and drains a program's
    // buffers and is lent for the staged read-back: on an H200
    // (driver 580.159.04) Vulkan alone peaked at 24.0 host bytes per pixel against CUDA's 19.9.
    host_bytes_per_pixel: 4,
    options: &[ApiOption {
        flag: VALIDATION_FLAG,
        help: "Enable the Khronos validation layer (Vulkan) and fail on any message.",
        kind: OptionKind::Switch,
    }],
    conduct: Conduct {
        undefined_beyond_limits: true,
        kernel_block_query: None,
        too_many_registers: "no such error: a driver must run any workgroup up to maxComputeWorkGroupInvocations",
        subgroup_size: "the device's subgroupSize, fixed only where minSubgroupSize = maxSubgroupSize (a pipeline may vary or require a size, VK_EXT_subgroup_size_control)",
        subgroup_layout: None,
        subgroup_request: Some("VkPipelineShaderStageRequiredSubgroupSizeCreateInfo where the compute stage is in requiredSubgroupSizeStages (Vulkan 1.3, VK_EXT_subgroup_size_control)"),
    },
    kernel_languages: &[("comp", GLSL), ("glsl", GLSL), ("spv", SPIR_V)],
    default_entry: Some("main"),
    subgroup_probe: Some(&subgroup_probe::Probe),
    over: None,
};

/// A GLSL compute shader, compiled to SPIR-V at run time (glsl.rs).
pub const GLSL: Language = Language::new("glsl", "GLSL");
/// A SPIR-V binary (little-endian words), built as given.
pub const SPIR_V: Language = Language::new("spirv", "SPIR-V").without_defines();

/// `--vk-validation`: the Khronos validation layer on (as BLOCKSWEEP_VK_VALIDATION=1 turns it
/// on); its messages come back as diagnostics.
const VALIDATION_FLAG: &str = "vk-validation";

/// Vulkan, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens Vulkan devices for the core.
pub static PROVIDER: ApiProvider = ApiProvider {
    api: API,
    probe: || Ok(crate::probe()?),
    open: |index, options| {
        let validation = options.switch(VALIDATION_FLAG) || VulkanOptions::default().validation;
        Ok(Box::new(crate::open(index, &VulkanOptions { validation })?))
    },
};
