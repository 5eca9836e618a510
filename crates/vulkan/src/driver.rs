//! Vulkan as the core sees it: its name and words, what its specification guarantees, and the
//! [`DRIVER`] that probes and opens devices.

use blocksweep_core::{Api, ApiDriver, ApiInfo, Concept, DriverOption, OptionKind, Vocabulary};

use crate::VulkanOptions;

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
        (Concept::MaxThreadsPerBlock, "128"),
        (Concept::MaxBlockDims, "(128, 128, 64)"),
        (Concept::MaxGridDims, "(65535, 65535, 65535)"),
        (Concept::WarpSize, "1"),
        (Concept::SharedMemPerBlock, "16 KiB"),
        (Concept::MaxAlloc, "1 GiB"),
        (Concept::MaxBufferBinding, "128 MiB"),
    ],
    install_hint: "apt-get install libvulkan1 mesa-vulkan-drivers (CPU driver) or a GPU vendor's Vulkan driver",
    // The host-visible staging plane that feeds and drains the device planes: on an H200
    // (driver 580.159.04) Vulkan alone peaked at 24.0 host bytes per pixel against CUDA's 19.9.
    host_bytes_per_pixel: 4,
    options: &[DriverOption {
        flag: VALIDATION_FLAG,
        help: "Enable the Khronos validation layer (Vulkan) and fail on any message.",
        kind: OptionKind::Switch,
    }],
};

/// `--vk-validation`: the Khronos validation layer on (as BLOCKSWEEP_VK_VALIDATION=1 turns it
/// on); its messages come back as diagnostics.
const VALIDATION_FLAG: &str = "vk-validation";

/// Vulkan, for the core.
pub const API: Api = Api::new(&INFO);

/// Probes and opens Vulkan devices for the core.
pub static DRIVER: ApiDriver = ApiDriver {
    api: API,
    probe: || Ok(crate::probe()?),
    open: |index, options| {
        let validation = options.switch(VALIDATION_FLAG) || VulkanOptions::default().validation;
        Ok(Box::new(crate::open(index, &VulkanOptions { validation })?))
    },
};
