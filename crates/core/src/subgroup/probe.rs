//! Running the subgroup probe through the user-kernel seam: one buffer of [`WORDS`] u32 per
//! invocation, one dispatch of one block per size, poisoned before each so that an invocation
//! that wrote nothing shows.

use super::{derive, ApiSubgroups, Claims, Dispatch, Ran, UNWRITTEN, WORDS};
use crate::backend::{Backend, BackendError, ErrorKind, Launch, Stamps, Work};
use crate::blocks::BlockSize;
use crate::program::{Language, ProgramArg, ProgramSource};

/// Full and partial blocks: 48 and 100 leave a partial subgroup at any width of 32 or 64.
pub const PROBE_BLOCKS: [u32; 6] = [32, 48, 64, 100, 128, 256];

/// The option the Vulkan backend takes (and strips before compiling) to chain
/// VkPipelineShaderStageRequiredSubgroupSizeCreateInfo: `--required-subgroup-size=N`.
pub const REQUIRED_SIZE_OPTION: &str = "--required-subgroup-size=";

const CUDA: &str = include_str!("../../../../kernels/subgroup.cu");
const OPENCL: &str = include_str!("../../../../kernels/subgroup.cl");
const GLSL: &str = include_str!("../../../../shaders/subgroup.comp");

/// Why OpenCL could not build its probe on a device, in one line.
const NO_QUERY: &str = "no subgroup query in this API on this device";

fn source(language: Language, code: &str, origin: &str, entry: &str) -> ProgramSource {
    ProgramSource {
        language,
        code: code.as_bytes().to_vec(),
        entry: entry.into(),
        origin: origin.into(),
        options: Vec::new(),
    }
}

/// One way to build the probe: its source with options, and what it asks the API.
struct Attempt {
    source: ProgramSource,
    asks: &'static str,
}

/// The builds to try on this backend's API, in order; empty for an API with no probe.
fn attempts(backend: &dyn Backend) -> Vec<Attempt> {
    let with = |mut s: ProgramSource, options: &[&str], asks| {
        s.options = options.iter().map(|o| o.to_string()).collect();
        Attempt { source: s, asks }
    };
    match backend.api().key() {
        "cuda" => vec![with(
            source(
                Language::Cuda,
                CUDA,
                "kernels/subgroup.cu",
                "subgroup_probe",
            ),
            &[],
            "warpSize, linear thread index / warpSize, __popc(__activemask())",
        )],
        "opencl" => {
            let cl = source(
                Language::OpenCl,
                OPENCL,
                "kernels/subgroup.cl",
                "subgroup_probe",
            );
            let sub = "get_sub_group_size(), get_sub_group_id(), sub_group_reduce_add(1)";
            let mut list = vec![with(cl.clone(), &["-DBLOCKSWEEP_SUBGROUPS"], sub)];
            // OpenCL C 3.0 defines __opencl_c_subgroups only under -cl-std=CL3.0.
            if extra(backend, "CL_DEVICE_OPENCL_C_VERSION").is_some_and(|v| v.contains(" 3.")) {
                let opts = ["-DBLOCKSWEEP_SUBGROUPS", "-cl-std=CL3.0"];
                list.push(with(cl.clone(), &opts, sub));
            }
            if warp_name(backend).contains("CL_DEVICE_WARP_SIZE_NV") {
                let nv = "PTX WARP_SZ, local id / WARP_SZ, popcount(activemask.b32)";
                list.push(with(cl, &["-DBLOCKSWEEP_NV_PTX"], nv));
            }
            list
        }
        "vulkan" => vec![with(
            source(Language::Glsl, GLSL, "shaders/subgroup.comp", "main"),
            &[],
            "gl_SubgroupSize, gl_SubgroupID, subgroupBallotBitCount(subgroupBallot(true))",
        )],
        _ => Vec::new(),
    }
}

fn extra(backend: &dyn Backend, key: &str) -> Option<String> {
    let l = backend.limits();
    l.extra
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

fn warp_name(backend: &dyn Backend) -> String {
    let l = backend.limits();
    l.warp_size
        .as_ref()
        .map(|w| w.name.clone())
        .unwrap_or_default()
}

/// Why a device cannot run the Vulkan probe's ballot, where its limits say so.
fn no_ballot(backend: &dyn Backend) -> Option<String> {
    let ops = extra(backend, "subgroupSupportedOperations")?;
    let stages = extra(backend, "subgroupSupportedStages")?;
    (!ops.contains("BALLOT") || !stages.contains("COMPUTE")).then(|| {
        format!(
            "no subgroup ballot in compute shaders on this device (subgroupSupportedOperations \
             {ops}; subgroupSupportedStages {stages})"
        )
    })
}

/// The first attempt that builds, loaded as the current kernel, and what it asks.
fn load(backend: &mut dyn Backend, required: Option<u32>) -> Result<&'static str, String> {
    let list = attempts(backend);
    if list.is_empty() {
        return Err("blocksweep has no subgroup probe for this API".into());
    }
    let bytes = PROBE_BLOCKS.iter().max().copied().unwrap_or(1) as u64 * WORDS as u64 * 4;
    let args = [ProgramArg::buffer(bytes)];
    let mut failed = Vec::new();
    for mut a in list {
        a.source
            .options
            .extend(required.map(|r| format!("{REQUIRED_SIZE_OPTION}{r}")));
        match backend.load_program(&a.source, &args) {
            Ok(()) => return Ok(a.asks),
            Err(e) if e.kind == ErrorKind::Build => failed.push(first_line(&e)),
            Err(e) => return Err(e.message),
        }
    }
    Err(match backend.api().key() {
        "opencl" => format!(
            "{NO_QUERY} (neither cl_khr_subgroups nor __opencl_c_subgroups{}): {}",
            match warp_name(backend).contains("_NV") {
                true => "; the NVIDIA PTX probe did not build either",
                false => ", and no cl_nv_device_attribute_query",
            },
            failed.join(" | ")
        ),
        _ => failed.join(" | "),
    })
}

/// The error's first line that says "error", else its first line.
fn first_line(e: &BackendError) -> String {
    let m = &e.message;
    m.lines()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or_else(|| m.lines().next())
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// One dispatch of one block of `block` invocations, read back and derived. Only an error
/// that leaves the backend unusable stops the probe (`Err`).
fn dispatch(backend: &mut dyn Backend, block: u32) -> Result<Ran, BackendError> {
    let words = PROBE_BLOCKS.iter().max().copied().unwrap_or(1) as usize * WORDS;
    let poison = UNWRITTEN.to_le_bytes().repeat(words);
    backend.write_buffer(0, &poison)?;
    let launch = Launch::linear(BlockSize::linear(block), 1);
    match backend.run_batch(Work::Kernel(launch), 1, Stamps::None) {
        Ok(_) => {}
        Err(e) if e.kind == ErrorKind::LaunchRejected => {
            return Ok(Ran::Refused { message: e.message })
        }
        Err(e) => return Err(e),
    }
    let mut out = vec![0u8; words * 4];
    backend.read_buffer(0, 0, &mut out)?;
    let words: Vec<u32> = out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok(derive(block, &words))
}

/// Every block of [`PROBE_BLOCKS`] at the current program's subgroup size.
fn run_blocks(backend: &mut dyn Backend, required: Option<u32>, out: &mut Vec<Dispatch>) -> bool {
    for block in PROBE_BLOCKS {
        let ran = dispatch(backend, block);
        let stop = ran.is_err();
        let ran = ran.unwrap_or_else(|e| Ran::Failed { message: e.message });
        out.push(Dispatch {
            block,
            required,
            ran,
        });
        if stop {
            return false;
        }
    }
    true
}

/// What `backend`'s API claims about its subgroups and what its probe measures: every block of
/// [`PROBE_BLOCKS`] at the default size, then (Vulkan) at each size a pipeline may require.
/// Never fails: what could not be measured says why. The probe stays the current kernel.
pub fn probe(backend: &mut dyn Backend) -> ApiSubgroups {
    let mut r = ApiSubgroups {
        api: backend.api(),
        claims: Claims::of(backend.limits()),
        probe: String::new(),
        dispatches: Vec::new(),
        unmeasured: no_ballot(backend),
    };
    if r.unmeasured.is_some() {
        return r;
    }
    match load(backend, None) {
        Ok(asks) => {
            let origin = attempts(backend).first().map(|a| a.source.origin.clone());
            r.probe = format!("{asks} ({})", origin.unwrap_or_default());
        }
        Err(why) => {
            r.unmeasured = Some(why);
            return r;
        }
    }
    r.claims.per_kernel = per_kernel(backend);
    if !run_blocks(backend, None, &mut r.dispatches) {
        return r;
    }
    for size in r.claims.required.clone() {
        if let Err(message) = load(backend, Some(size)) {
            r.dispatches.push(Dispatch {
                block: 0,
                required: Some(size),
                ran: Ran::Refused { message },
            });
            continue;
        }
        if !run_blocks(backend, Some(size), &mut r.dispatches) {
            break;
        }
    }
    r
}

/// The built probe's per-kernel subgroup facts (OpenCL's clGetKernelSubGroupInfo answers).
fn per_kernel(backend: &dyn Backend) -> Vec<(String, String)> {
    backend
        .kernel_facts()
        .extra
        .iter()
        .filter(|(k, _)| k.contains("SUB_GROUP"))
        .cloned()
        .collect()
}
