//! Running the subgroup probe through the user-kernel seam: one buffer of [`WORDS`] u32 per
//! invocation, one dispatch of one block per size, poisoned before each so that an invocation
//! that wrote nothing shows.

use super::{derive, ApiSubgroups, Claims, Dispatch, Probed, UNWRITTEN, WORDS};
use crate::backend::{Backend, BackendError, ErrorKind, Launch, Stamps, Work};
use crate::blocks::BlockSize;
use crate::program::ProgramArg;
use crate::subgroup_probe::{ProbeBuild, SubgroupProbe};

/// Full and partial blocks: 48 and 100 leave a partial subgroup at any width of 32 or 64.
pub const PROBE_BLOCKS: [u32; 6] = [32, 48, 64, 100, 128, 256];

/// What `backend`'s provider declares about its subgroups, if anything.
fn declared(backend: &dyn Backend) -> Option<&'static dyn SubgroupProbe> {
    backend.api().info().subgroup_probe
}

/// The first declared build that builds, loaded as the current kernel, and what it asks.
fn load(
    backend: &mut dyn Backend,
    declared: &dyn SubgroupProbe,
    option: Option<String>,
) -> Result<ProbeBuild, String> {
    let list = declared.builds(backend.limits())?;
    let bytes = PROBE_BLOCKS.iter().max().copied().unwrap_or(1) as u64 * WORDS as u64 * 4;
    let args = [ProgramArg::buffer(bytes)];
    let mut failed = Vec::new();
    for mut build in list {
        build.source.options.extend(option.clone());
        match backend.load_program(&build.source, &args) {
            Ok(()) => return Ok(build),
            Err(e) if e.kind == ErrorKind::Build => failed.push(first_line(&e)),
            Err(e) => return Err(e.message),
        }
    }
    Err(declared.none_built(backend.limits(), &failed))
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
fn dispatch(backend: &mut dyn Backend, block: u32) -> Result<Probed, BackendError> {
    let words = PROBE_BLOCKS.iter().max().copied().unwrap_or(1) as usize * WORDS;
    let poison = UNWRITTEN.to_le_bytes().repeat(words);
    backend.write_buffer(0, &poison)?;
    let launch = Launch::linear(BlockSize::linear(block), 1);
    match backend.run_batch(Work::Kernel(launch), 1, Stamps::None) {
        Ok(_) => {}
        Err(e) if e.kind == ErrorKind::LaunchRejected => {
            return Ok(Probed::Refused { message: e.message })
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
        let ran = ran.unwrap_or_else(|e| Probed::Failed { message: e.message });
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
/// [`PROBE_BLOCKS`] at the default size, then at each size a kernel may require, with the
/// probe its provider declares. Never fails: what could not be measured says why. The probe
/// stays the current kernel.
pub fn probe(backend: &mut dyn Backend) -> ApiSubgroups {
    let declared = declared(backend);
    let limits = backend.limits();
    let mut r = ApiSubgroups {
        api: backend.api(),
        claims: declared.map_or_else(|| Claims::of(limits), |p| p.claims(limits)),
        probe: String::new(),
        dispatches: Vec::new(),
        unmeasured: None,
    };
    let Some(declared) = declared else {
        r.unmeasured = Some("blocksweep has no subgroup probe for this API".into());
        return r;
    };
    match load(backend, declared, None) {
        Ok(build) => r.probe = format!("{} ({})", build.asks, build.source.origin),
        Err(why) => {
            r.unmeasured = Some(why);
            return r;
        }
    }
    r.claims.per_kernel = declared.per_kernel(backend.kernel_facts());
    if !run_blocks(backend, None, &mut r.dispatches) {
        return r;
    }
    for size in r.claims.required.clone() {
        let Some(option) = declared.require(size) else {
            continue;
        };
        if let Err(message) = load(backend, declared, Some(option)) {
            r.dispatches.push(Dispatch {
                block: 0,
                required: Some(size),
                ran: Probed::Refused { message },
            });
            continue;
        }
        if !run_blocks(backend, Some(size), &mut r.dispatches) {
            break;
        }
    }
    r
}
