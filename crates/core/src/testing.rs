//! Backends that run on the host, so the driver and reports can be tested without any GPU
//! API (wgpu-hal's `empty` backend plays the same role).
//!
//! [`HostBackend`] writes the pixels each launch's threads cover, computed from its geometry,
//! so a coverage bug in a launch shows up as it would on a device; it refuses launches above
//! its limits and frames above its memory as an API would. Its "device clock" is the host
//! clock, never used for real measurements. [`ScriptedBackend`] runs nothing and reports
//! scripted times, so the measurement protocol's arithmetic can be checked exactly.

use std::time::Instant;

use crate::api::{Api, ApiInfo, Conduct, Vocabulary};
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::guarantee::{Amount, Guarantee};
use crate::limits::{Concept, Limits, Named};
use crate::program::Language;

const WORDS: Vocabulary = Vocabulary {
    thread: "thread",
    block: "block",
    grid: "grid",
    warp: "warp",
    multiprocessor: "MP",
    launch: "launch",
};

/// The languages the providers of [`KERNEL_APIS`] declare, as they declare them.
pub const CUDA_CPP: Language = Language::new("cuda", "CUDA C++");
pub const PTX: Language = Language::new("ptx", "PTX");
pub const OPENCL_C: Language = Language::new("opencl", "OpenCL C");
pub const GLSL: Language = Language::new("glsl", "GLSL");
pub const SPIR_V: Language = Language::new("spirv", "SPIR-V").without_defines();
pub const WGSL: Language = Language::new("wgsl", "WGSL");

/// APIs under the keys a spec file's `[sources]` uses, each with its languages as its driver
/// declares them, for the spec's tests (the core knows no real API).
static KERNEL_APIS: [ApiInfo; 4] = [
    kernel_api("cuda", "CUDA", &[("cu", CUDA_CPP), ("ptx", PTX)], None),
    kernel_api("opencl", "OpenCL", &[("cl", OPENCL_C)], None),
    kernel_api(
        "vulkan",
        "Vulkan",
        &[("comp", GLSL), ("glsl", GLSL), ("spv", SPIR_V)],
        Some("main"),
    ),
    kernel_api("webgpu", "WebGPU", &[("wgsl", WGSL)], Some("main")),
];

const fn kernel_api(
    key: &'static str,
    name: &'static str,
    kernel_languages: &'static [(&'static str, Language)],
    default_entry: Option<&'static str>,
) -> ApiInfo {
    ApiInfo {
        kernel_languages,
        default_entry,
        ..bare_api(key, name, 10, &[])
    }
}

/// An API's facts with nothing but a key, a name, a rank and its guarantees.
pub const fn bare_api(
    key: &'static str,
    name: &'static str,
    rank: u16,
    guarantees: &'static [Guarantee],
) -> ApiInfo {
    ApiInfo {
        key,
        aliases: &[],
        name,
        rank,
        words: WORDS,
        guarantees,
        install_hint: "",
        host_bytes_per_pixel: 0,
        options: &[],
        conduct: Conduct::UNSTATED,
        kernel_languages: &[],
        default_entry: None,
        subgroup_probe: None,
        over: None,
    }
}

/// Registers the APIs a spec's `[sources]` names (cuda, opencl, vulkan, webgpu).
pub fn register_kernel_apis() {
    for info in &KERNEL_APIS {
        Api::register(Api::new(info));
    }
}

static ALPHA: ApiInfo = ApiInfo {
    key: "alpha",
    aliases: &[],
    name: "Alpha",
    rank: 0,
    words: WORDS,
    guarantees: &[],
    install_hint: "install alpha",
    host_bytes_per_pixel: 0,
    options: &[],
    conduct: Conduct::UNSTATED,
    kernel_languages: &[],
    default_entry: None,
    subgroup_probe: None,
    over: None,
};

static BETA: ApiInfo = ApiInfo {
    key: "beta",
    aliases: &["b"],
    name: "Beta",
    rank: 1,
    words: Vocabulary {
        block: "workgroup",
        ..WORDS
    },
    guarantees: &[Guarantee::at_least(
        Concept::MaxThreadsPerBlock,
        Amount::Count(128),
        "maxThreads",
    )],
    install_hint: "install beta",
    host_bytes_per_pixel: 4,
    options: &[],
    conduct: Conduct::UNSTATED,
    kernel_languages: &[],
    default_entry: None,
    subgroup_probe: None,
    over: None,
};

static GAMMA: ApiInfo = ApiInfo {
    key: "gamma",
    aliases: &[],
    name: "Gamma",
    rank: 2,
    words: WORDS,
    guarantees: &[Guarantee::at_least(
        Concept::MaxThreadsPerBlock,
        Amount::Count(1),
        "MAX_THREADS",
    )],
    install_hint: "install gamma",
    host_bytes_per_pixel: 0,
    options: &[],
    conduct: Conduct::UNSTATED,
    kernel_languages: &[],
    default_entry: None,
    subgroup_probe: None,
    // A layer over Beta, as WebGPU is over Vulkan: the merged table compares it with both.
    over: Some("beta"),
};

/// Three made-up APIs for the core's own tests.
mod scripted;
pub use scripted::ScriptedBackend;
/// A fourth, with its own kernel language and subgroup probe, run through the whole core.
pub mod metal_like;

pub const TEST_API_A: Api = Api::new(&ALPHA);
pub const TEST_API_B: Api = Api::new(&BETA);
pub const TEST_API_C: Api = Api::new(&GAMMA);

mod host;
mod host_backend;
pub use host::{
    DeviceMemory, DropLog, HostBackend, HOST, HOST_HEAVY_REGISTERS, HOST_MEMORY,
    HOST_REGISTER_FILE, HOST_SHARED,
};

/// A result of `api` on the host test device with no rows, for report tests.
pub fn empty_result(api: Api) -> crate::sweep::SweepResult {
    let host = HostBackend::new(api);
    crate::sweep::SweepResult {
        api,
        device: host.identity.clone(),
        limits: host.limits.clone(),
        kernel: host.kernel.clone(),
        timer: host.timer(),
        frame: Frame::generate(4, 4, 1).info(),
        policy: crate::grid::GridPolicy::Wave,
        grid_source: String::new(),
        protocol: crate::measure::Protocol::default(),
        rows: Vec::new(),
        suggestion: None,
        copy: None,
        error: None,
        program: None,
        clocks: None,
        clocks_moved: None,
    }
}

/// A row of `block` that has not run yet.
pub fn empty_row(block: BlockSize) -> crate::sweep::SweepRow {
    crate::sweep::SweepRow::new(block)
}

/// Ten identical per-dispatch times of `mean_ms`.
pub fn timing(mean_ms: f64) -> crate::measure::Timing {
    let samples = vec![mean_ms; 10];
    crate::measure::Timing {
        discipline: crate::measure::Discipline::Batch,
        reps: 10,
        batch_ms: Some(mean_ms * 10.0),
        stats: crate::measure::TimeStats::of(&samples, None).expect("ten samples"),
        samples_ms: samples,
        noise: None,
        clock: None,
        flush_bytes: None,
    }
}

#[cfg(test)]
#[path = "testing_tests.rs"]
mod tests;
