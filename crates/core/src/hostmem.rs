//! Host memory: how much this process may really still allocate, how much a sweep of a frame
//! will take.
//!
//! MemAvailable alone is not what a process may use: `ulimit -v` (RLIMIT_AS), `ulimit -d`
//! (RLIMIT_DATA) and the memory cgroup (containers, Slurm `--mem`, systemd `MemoryMax=`) bound
//! it too, and a frame that passes a MemAvailable check under a 1.5 GB `ulimit -v` dies in the
//! allocator ("memory allocation of 400000000 bytes failed", an abort). [`available`] takes the
//! smallest of all of them and says which one bound it; [`check_frame`] compares it with the
//! measured model of [`estimate_bytes`].
//!
//! Every reader takes a root directory (`/` in [`available`]) so that tests can point it at a
//! fake `/proc` and cgroup tree.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::backend::{Api, DeviceKind};

/// Which limit bounds the memory this process may still take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// `MemAvailable` in /proc/meminfo: the whole machine's estimate.
    MemAvailable,
    /// RLIMIT_AS (`ulimit -v`) less the process's current `VmSize`.
    AddressSpace,
    /// RLIMIT_DATA (`ulimit -d`) less the process's current `VmData`.
    DataSegment,
    /// A cgroup v2 directory's `memory.max` less its `memory.current` (less reclaimable
    /// `inactive_file` page cache). The directory is the one whose room is smallest: the
    /// process's own cgroup or an ancestor.
    CgroupV2(PathBuf),
    /// A cgroup v1 directory's `memory.limit_in_bytes` less `memory.usage_in_bytes` (less
    /// reclaimable `total_inactive_file`).
    CgroupV1(PathBuf),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::MemAvailable => f.write_str("MemAvailable in /proc/meminfo"),
            Bound::AddressSpace => {
                f.write_str("the address-space limit (ulimit -v) less this process's size")
            }
            Bound::DataSegment => {
                f.write_str("the data-segment limit (ulimit -d) less this process's data")
            }
            Bound::CgroupV2(dir) => write!(
                f,
                "the memory cgroup's memory.max less memory.current in {}",
                dir.display()
            ),
            Bound::CgroupV1(dir) => write!(
                f,
                "the memory cgroup's memory.limit_in_bytes less memory.usage_in_bytes in {}",
                dir.display()
            ),
        }
    }
}

/// The memory this process may still allocate, and the limit that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Available {
    pub bytes: u64,
    pub bound: Bound,
}

/// What can go wrong with host memory; every variant is one line naming the cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostMemError {
    #[error(
        "frame {width}x{height} needs about {} MiB of host memory, but only {} MiB is available \
         (bound by {})",
        need >> 20,
        available.bytes >> 20,
        available.bound
    )]
    TooLarge {
        width: u32,
        height: u32,
        need: u64,
        available: Available,
    },
    #[error("the host memory for {0} pixels does not fit in 64 bits")]
    Overflow(u64),
    #[error("{0} needs more host memory than 64 bits can count, more than this host can allocate")]
    KernelOverflow(String),
    #[error(
        "{what} needs about {} MiB of host memory ({detail}), but only {} MiB is available \
         (bound by {})",
        need >> 20,
        available.bytes >> 20,
        available.bound
    )]
    KernelTooLarge {
        what: String,
        need: u64,
        detail: String,
        available: Available,
    },
}

/// The largest value a limit file may hold and still mean a limit: cgroup v1 writes
/// 9223372036854771712 (2^63 rounded down to a page) for "none", and /proc/self/limits writes
/// "unlimited".
const UNLIMITED: u64 = 1 << 62;

/// The memory this process may still allocate: the smallest of MemAvailable, RLIMIT_AS less
/// VmSize, RLIMIT_DATA less VmData, and every memory cgroup (v2 and v1) from the process's own
/// up to the root. `None` where none of them can be read (no /proc).
pub fn available() -> Option<Available> {
    available_under(Path::new("/"))
}

/// [`available`], with every file read below `root` (`/proc/self/...`, and the cgroup mount
/// points /proc/self/mountinfo names, prefixed with `root`).
pub fn available_under(root: &Path) -> Option<Available> {
    let mut all: Vec<Available> = Vec::new();
    let proc = root.join("proc");
    if let Some(kib) = read(&proc.join("meminfo")).and_then(|t| field_kib(&t, "MemAvailable:")) {
        all.push(Available {
            bytes: kib.saturating_mul(1024),
            bound: Bound::MemAvailable,
        });
    }
    let status = read(&proc.join("self/status")).unwrap_or_default();
    if let Some(limits) = read(&proc.join("self/limits")) {
        for (name, used, bound) in [
            ("Max address space", "VmSize:", Bound::AddressSpace),
            ("Max data size", "VmData:", Bound::DataSegment),
        ] {
            if let Some(limit) = soft_limit(&limits, name) {
                let used = field_kib(&status, used).unwrap_or(0).saturating_mul(1024);
                all.push(Available {
                    bytes: limit.saturating_sub(used),
                    bound,
                });
            }
        }
    }
    all.extend(cgroups(root));
    all.into_iter().min_by_key(|a| a.bytes)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A "Name:   123 kB" line of /proc/meminfo or /proc/self/status, in KiB.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft limit of a /proc/self/limits row, in bytes; `None` when unlimited.
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with(name))?;
    let soft = line[name.len()..].split_whitespace().next()?;
    soft.parse().ok().filter(|&v: &u64| v < UNLIMITED)
}

/// A cgroup file holding one number ("max" and huge values mean no limit).
fn read_number(path: &Path) -> Option<u64> {
    read(path)?.trim().parse().ok()
}

/// One key of a cgroup memory.stat file.
fn stat_value(dir: &Path, key: &str) -> u64 {
    read(&dir.join("memory.stat"))
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The room left in every memory cgroup this process belongs to, v2 and v1, at every level
/// from its own cgroup up to the mount's root (a parent's limit binds its children too).
fn cgroups(root: &Path) -> Vec<Available> {
    let mut out = Vec::new();
    let (Some(membership), Some(mounts)) = (
        read(&root.join("proc/self/cgroup")),
        read(&root.join("proc/self/mountinfo")),
    ) else {
        return out;
    };
    for line in membership.lines() {
        // "hierarchy-id:controllers:path"; v2 is "0::/path".
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let v2 = id == "0" && controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "memory") {
            continue;
        }
        let Some((mount_root, mount_point)) = find_mount(&mounts, v2) else {
            continue;
        };
        let top = root.join(mount_point.trim_start_matches('/'));
        // The path is relative to the hierarchy's root; the mount may show only a subtree of
        // it (a container sees its own cgroup as the root).
        let rel = match Path::new(path).strip_prefix(&mount_root) {
            Ok(r) => r.to_path_buf(),
            Err(_) => PathBuf::from(path.trim_start_matches('/')),
        };
        let mut dir = top.join(&rel);
        if !dir.is_dir() {
            dir = top.clone();
        }
        loop {
            let room = if v2 {
                read(&dir.join("memory.max"))
                    .and_then(|t| t.trim().parse::<u64>().ok())
                    .filter(|&m| m < UNLIMITED)
                    .map(|max| {
                        let used = read_number(&dir.join("memory.current")).unwrap_or(0);
                        let cache = stat_value(&dir, "inactive_file");
                        (max, used.saturating_sub(cache))
                    })
            } else {
                read_number(&dir.join("memory.limit_in_bytes"))
                    .filter(|&m| m < UNLIMITED)
                    .map(|max| {
                        let used = read_number(&dir.join("memory.usage_in_bytes")).unwrap_or(0);
                        let cache = stat_value(&dir, "total_inactive_file");
                        (max, used.saturating_sub(cache))
                    })
            };
            if let Some((max, used)) = room {
                let shown = Path::new("/").join(dir.strip_prefix(root).unwrap_or(&dir));
                out.push(Available {
                    bytes: max.saturating_sub(used),
                    bound: if v2 {
                        Bound::CgroupV2(shown)
                    } else {
                        Bound::CgroupV1(shown)
                    },
                });
            }
            if dir == top || !dir.pop() || !dir.starts_with(&top) {
                break;
            }
        }
    }
    out
}

/// The (root within the hierarchy, mount point) of the cgroup2 mount, or of the cgroup v1
/// mount that carries the memory controller, from /proc/self/mountinfo.
fn find_mount(mountinfo: &str, v2: bool) -> Option<(String, String)> {
    mountinfo.lines().find_map(|line| {
        // "36 25 0:32 / /sys/fs/cgroup/memory rw,... shared:15 - cgroup cgroup rw,memory"
        let (left, right) = line.split_once(" - ")?;
        let left: Vec<&str> = left.split_whitespace().collect();
        let right: Vec<&str> = right.split_whitespace().collect();
        let fstype = *right.first()?;
        let ok = if v2 {
            fstype == "cgroup2"
        } else {
            fstype == "cgroup" && right.get(2)?.split(',').any(|o| o == "memory")
        };
        if !ok {
            return None;
        }
        Some((left.get(3)?.to_string(), left.get(4)?.to_string()))
    })
}

/// Host bytes per pixel the process itself holds whatever the API: the three input planes and
/// the CPU reference (4 x 4 bytes).
pub const FRAME_BYTES_PER_PIXEL: u64 = 16;

/// Host bytes per pixel each open API adds for its read-back: the host copy it lends (CUDA's
/// page-locked plane, OpenCL's mapped one, which also stages its upload; Vulkan's staging
/// plane, its `host_bytes_per_pixel`), held until the API closes, which is at the end of the
/// run; a backend that lends none reads into the core's own plane of the same size instead.
/// The measured peak RSS it was fitted to: docs/results/README.md, "The host-memory model".
pub const READBACK_BYTES_PER_PIXEL: u64 = 4;

/// Host bytes per pixel for each API whose device is not a discrete GPU (a CPU driver such as
/// PoCL or lavapipe, or an integrated GPU: its buffers are host memory): the device's four
/// planes (16 + 4 + 16 = 36 bytes per pixel for one such API, as measured: docs/results/README.md,
/// "The host-memory model").
pub const HOST_DEVICE_BYTES_PER_PIXEL: u64 = 16;

/// Headroom for what does not scale with the frame but grows after the check: one compiled
/// pipeline or kernel per block size (about 0.5 MiB each on PoCL and lavapipe: 13 sizes
/// against 32 sizes at 16x16 pixels), the copy-ceiling buffers' bookkeeping, the report.
/// The default 13 sizes against one size, all three APIs on the H200 at 4000x4000: 26 MB.
/// The drivers' own start-up memory (about 85 MiB for PoCL and lavapipe, 170 to 280 MiB per
/// API on the H200: the peak RSS at 16x16 pixels) is not in it: the check runs once the APIs
/// are open, so [`available`] has already counted it.
pub const HEADROOM_BYTES: u64 = 64 << 20;

/// Host bytes a sweep of `pixels` adds once its APIs are open, for the APIs given with the kind
/// of device each runs on; `None` if the product overflows 64 bits. The model and the runs it
/// comes from are on the constants above.
pub fn estimate_bytes(pixels: u64, apis: &[(Api, DeviceKind)]) -> Option<u64> {
    let mut per_pixel = FRAME_BYTES_PER_PIXEL;
    // Before any API is known (the CLI's first check), one read-back plane.
    if apis.is_empty() {
        per_pixel += READBACK_BYTES_PER_PIXEL;
    }
    for (api, kind) in apis {
        per_pixel += READBACK_BYTES_PER_PIXEL.max(api.info().host_bytes_per_pixel);
        if *kind != DeviceKind::Gpu {
            per_pixel += HOST_DEVICE_BYTES_PER_PIXEL;
        }
    }
    pixels.checked_mul(per_pixel)?.checked_add(HEADROOM_BYTES)
}

/// Refuses a `width` x `height` frame whose [`estimate_bytes`] exceeds what [`available`]
/// finds; Ok when it fits, or when nothing could be read. Call it once the APIs are open and
/// before the frame is generated.
pub fn check_frame(
    width: u32,
    height: u32,
    apis: &[(Api, DeviceKind)],
) -> Result<(), HostMemError> {
    check_frame_against(width, height, apis, available())
}

/// [`check_frame`] against a given reading.
pub fn check_frame_against(
    width: u32,
    height: u32,
    apis: &[(Api, DeviceKind)],
    available: Option<Available>,
) -> Result<(), HostMemError> {
    let pixels = width as u64 * height as u64;
    let need = estimate_bytes(pixels, apis).ok_or(HostMemError::Overflow(pixels))?;
    match available {
        Some(available) if need > available.bytes => Err(HostMemError::TooLarge {
            width,
            height,
            need,
            available,
        }),
        _ => Ok(()),
    }
}

/// One buffer of a user's kernel, for the host-memory model: its bytes (guard bands
/// included) and whether the kernel writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelBuffer {
    pub bytes: u64,
    pub written: bool,
}

/// Host bytes a sweep of a user's kernel takes, with the words that say where they go: the
/// buffers' initial contents; two read-backs of the written buffers (a checked dispatch can
/// read twice) and one reset image of the largest; per API its reference outputs and the
/// region it shares with its worker (as large as the largest buffer); per API on a device
/// that is not a discrete GPU, every buffer again (there device memory is host memory).
/// Before the APIs are known (`apis` empty), one API on a GPU is assumed. With `made` (the
/// buffers generated, the APIs open and holding theirs), only what is still to come counts:
/// the read-backs and each API's references.
pub fn kernel_bytes(
    buffers: &[KernelBuffer],
    apis: &[(Api, DeviceKind)],
    made: bool,
) -> Option<(u64, String)> {
    let all: u64 = buffers
        .iter()
        .try_fold(0u64, |a, b| a.checked_add(b.bytes))?;
    let written: u64 = buffers
        .iter()
        .filter(|b| b.written)
        .try_fold(0u64, |a, b| a.checked_add(b.bytes))?;
    let largest = buffers.iter().map(|b| b.bytes).max().unwrap_or(0);
    let (n, cpus) = match apis.is_empty() {
        true => (1, 0),
        false => (
            apis.len() as u64,
            apis.iter().filter(|(_, k)| *k != DeviceKind::Gpu).count() as u64,
        ),
    };
    let (all, per_api, cpus) = match made {
        true => (0, written, 0),
        false => (all, written.checked_add(largest)?, cpus),
    };
    let need = all
        .checked_add(written.checked_mul(2)?)?
        .checked_add(largest)?
        .checked_add(per_api.checked_mul(n)?)?
        .checked_add(all.checked_mul(cpus)?)?
        .checked_add(HEADROOM_BYTES)?;
    let mib = |b: u64| b >> 20;
    let detail = format!(
        "buffers {} MiB, read-backs {} MiB, {n} API(s) x {} MiB of references and shared \
         memory{}",
        mib(all),
        mib(2 * written + largest),
        mib(per_api),
        match cpus {
            0 => String::new(),
            c => format!(", {c} CPU device(s) x {} MiB of buffers", mib(all)),
        }
    );
    Some((need, detail))
}

/// Refuses a user's kernel whose [`kernel_bytes`] exceed what [`available`] finds (`what`
/// names it in the message); Ok when it fits or nothing could be read.
pub fn check_kernel(
    what: &str,
    buffers: &[KernelBuffer],
    apis: &[(Api, DeviceKind)],
    made: bool,
) -> Result<(), HostMemError> {
    check_kernel_against(what, buffers, (apis, made), available())
}

/// [`check_kernel`] against a given reading.
pub fn check_kernel_against(
    what: &str,
    buffers: &[KernelBuffer],
    (apis, made): (&[(Api, DeviceKind)], bool),
    available: Option<Available>,
) -> Result<(), HostMemError> {
    let (need, detail) = kernel_bytes(buffers, apis, made)
        .ok_or_else(|| HostMemError::KernelOverflow(what.to_string()))?;
    match available {
        Some(available) if need > available.bytes => Err(HostMemError::KernelTooLarge {
            what: what.to_string(),
            need,
            detail,
            available,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "hostmem_tests.rs"]
mod tests;
