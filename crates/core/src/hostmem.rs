//! Host memory: how much this process may really still allocate, how much a sweep of a frame
//! will take, and fallible allocation for the big host buffers.
//!
//! MemAvailable alone is not what a process may use: `ulimit -v` (RLIMIT_AS), `ulimit -d`
//! (RLIMIT_DATA) and the memory cgroup (containers, Slurm `--mem`, systemd `MemoryMax=`) bound
//! it too, and a frame that passes a MemAvailable check under a 1.5 GB `ulimit -v` dies in the
//! allocator ("memory allocation of 400000000 bytes failed", an abort). [`available`] takes the
//! smallest of all of them and says which one bound it; [`check_frame`] compares it with the
//! measured model of [`estimate_bytes`]; [`try_alloc_f32`] turns an allocation the system
//! refuses anyway into an error instead of an abort.
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
    #[error(
        "could not allocate {bytes} bytes ({} MiB) of host memory: the system or a limit \
         (ulimit -v, the memory cgroup) refused it",
        bytes >> 20
    )]
    Alloc { bytes: u64 },
    #[error("the host memory for {0} elements does not fit in 64 bits")]
    Overflow(u64),
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

/// An empty vector with room for exactly `len` f32 values, or an error where the allocator
/// (a `ulimit -v`, an exhausted machine) refuses: never the abort of an infallible
/// allocation. Fill it with `extend`/`push`; it does not reallocate up to `len`.
pub fn try_alloc_f32(len: usize) -> Result<Vec<f32>, HostMemError> {
    let bytes = (len as u64)
        .checked_mul(4)
        .ok_or(HostMemError::Overflow(len as u64))?;
    let mut v: Vec<f32> = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| HostMemError::Alloc { bytes })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};
    use std::fs;

    /// A fake root with /proc files and a cgroup tree, removed on drop.
    struct Root(PathBuf);

    impl Root {
        fn new(name: &str) -> Root {
            let dir = std::env::temp_dir()
                .join(format!("blocksweep-hostmem-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(dir.join("proc/self")).unwrap();
            Root(dir)
        }
        fn put(&self, rel: &str, text: &str) -> &Self {
            let p = self.0.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
            self
        }
        fn read(&self) -> Option<Available> {
            available_under(&self.0)
        }
    }

    impl Drop for Root {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    const GIB: u64 = 1 << 30;
    const MEMINFO_8G: &str =
        "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8388608 kB\n";
    const STATUS: &str = "Name:\tblocksweep\nVmPeak:\t  600000 kB\nVmSize:\t  512000 kB\nVmHWM:\t  90000 kB\nVmData:\t  204800 kB\n";
    const NO_LIMITS: &str = "Limit                     Soft Limit           Hard Limit           Units     \nMax data size             unlimited            unlimited            bytes     \nMax address space         unlimited            unlimited            bytes     \n";

    fn limits(as_bytes: &str, data: &str) -> String {
        format!(
            "Limit                     Soft Limit           Hard Limit           Units     \n\
             Max data size             {data:<20} unlimited            bytes     \n\
             Max address space         {as_bytes:<20} unlimited            bytes     \n"
        )
    }

    #[test]
    fn mem_available_alone() {
        let r = Root::new("meminfo");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/status", STATUS)
            .put("proc/self/limits", NO_LIMITS);
        assert_eq!(
            r.read(),
            Some(Available {
                bytes: 8 * GIB,
                bound: Bound::MemAvailable
            })
        );
    }

    #[test]
    fn ulimit_v_less_the_current_size() {
        // ulimit -v 1500000 (KiB), the process already at 512000 KiB.
        let r = Root::new("rlimit-as");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/status", STATUS)
            .put("proc/self/limits", &limits("1536000000", "unlimited"));
        let a = r.read().unwrap();
        assert_eq!(a.bound, Bound::AddressSpace);
        assert_eq!(a.bytes, 1_536_000_000 - 512_000 * 1024);
        assert!(a.bound.to_string().contains("ulimit -v"));
    }

    #[test]
    fn ulimit_d_less_the_current_data() {
        let r = Root::new("rlimit-data");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/status", STATUS)
            .put("proc/self/limits", &limits("unlimited", "419430400"));
        let a = r.read().unwrap();
        assert_eq!(a.bound, Bound::DataSegment);
        assert_eq!(a.bytes, 419_430_400 - 204_800 * 1024);
    }

    #[test]
    fn cgroup_v2_memory_max_less_current_and_a_tighter_parent() {
        let r = Root::new("cg2");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/status", STATUS)
            .put("proc/self/limits", NO_LIMITS)
            .put("proc/self/cgroup", "0::/slurm/job42/step0\n")
            .put(
                "proc/self/mountinfo",
                "22 1 0:21 / /proc rw - proc proc rw\n\
                 30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
            )
            // The step: 4 GiB max, 1 GiB used of which 256 MiB is reclaimable page cache.
            .put("sys/fs/cgroup/slurm/job42/step0/memory.max", "4294967296\n")
            .put(
                "sys/fs/cgroup/slurm/job42/step0/memory.current",
                "1073741824\n",
            )
            .put(
                "sys/fs/cgroup/slurm/job42/step0/memory.stat",
                "anon 805306368\nfile 268435456\ninactive_file 268435456\n",
            )
            .put("sys/fs/cgroup/slurm/job42/memory.max", "max\n")
            .put("sys/fs/cgroup/slurm/job42/memory.current", "1073741824\n");
        let a = r.read().unwrap();
        assert_eq!(a.bytes, 4 * GIB - (GIB - 256 * (1 << 20)));
        assert_eq!(
            a.bound,
            Bound::CgroupV2(PathBuf::from("/sys/fs/cgroup/slurm/job42/step0"))
        );
        // A parent (the job, `--mem=2G`) binds tighter than the step's own limit.
        r.put("sys/fs/cgroup/slurm/job42/memory.max", "2147483648\n");
        let a = r.read().unwrap();
        assert_eq!(a.bytes, GIB);
        assert_eq!(
            a.bound,
            Bound::CgroupV2(PathBuf::from("/sys/fs/cgroup/slurm/job42"))
        );
        assert!(a.bound.to_string().contains("memory.max"), "{}", a.bound);
    }

    #[test]
    fn cgroup_v2_container_root_mount() {
        // Inside a container the cgroup namespace shows "0::/" and the mount is its root.
        let r = Root::new("cg2-ns");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/cgroup", "0::/\n")
            .put(
                "proc/self/mountinfo",
                "30 22 0:26 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
            )
            .put("sys/fs/cgroup/memory.max", "1073741824\n")
            .put("sys/fs/cgroup/memory.current", "536870912\n");
        let a = r.read().unwrap();
        assert_eq!(a.bytes, GIB / 2);
        assert_eq!(a.bound, Bound::CgroupV2(PathBuf::from("/sys/fs/cgroup")));
    }

    #[test]
    fn cgroup_v1_limit_in_bytes() {
        // This machine's layout: cgroup v1 memory controller at /sys/fs/cgroup/memory.
        let r = Root::new("cg1");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/status", STATUS)
            .put("proc/self/limits", NO_LIMITS)
            .put(
                "proc/self/cgroup",
                "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n",
            )
            .put(
                "proc/self/mountinfo",
                "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                 35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                 41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
            )
            .put(
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            )
            .put(
                "sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
                "3221225472\n",
            )
            .put(
                "sys/fs/cgroup/memory/process_api/abc/memory.usage_in_bytes",
                "1073741824\n",
            )
            .put(
                "sys/fs/cgroup/memory/process_api/abc/memory.stat",
                "cache 0\ntotal_inactive_file 0\n",
            );
        let a = r.read().unwrap();
        assert_eq!(a.bytes, 2 * GIB);
        assert_eq!(
            a.bound,
            Bound::CgroupV1(PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
        );
        assert!(a.bound.to_string().contains("limit_in_bytes"));
    }

    #[test]
    fn unlimited_everything_and_nothing_readable() {
        let r = Root::new("unlimited");
        r.put("proc/meminfo", MEMINFO_8G)
            .put("proc/self/limits", NO_LIMITS)
            .put("proc/self/cgroup", "4:memory:/\n")
            .put(
                "proc/self/mountinfo",
                "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            )
            .put(
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            );
        assert_eq!(r.read().unwrap().bound, Bound::MemAvailable);
        let empty = Root::new("empty");
        assert_eq!(empty.read(), None);
    }

    #[test]
    fn this_process_reads_something() {
        // Every Linux machine has /proc/meminfo; the answer is at most MemAvailable.
        let a = available().expect("/proc is readable");
        assert!(a.bytes > 0);
    }

    /// Run as a child under a real `ulimit -v` by the test below.
    #[test]
    fn child_under_ulimit_v() {
        if std::env::var_os("BLOCKSWEEP_HOSTMEM_CHILD").is_none() {
            return;
        }
        let a = available().unwrap();
        assert_eq!(a.bound, Bound::AddressSpace, "{a:?}");
        assert!(a.bytes < 3_000_000 * 1024, "{a:?}");
        // 1e9 floats (4 GB) under a 3 GB address space: an error, not an abort.
        let e = try_alloc_f32(1_000_000_000).unwrap_err();
        assert_eq!(
            e,
            HostMemError::Alloc {
                bytes: 4_000_000_000
            }
        );
        println!("CHILD-OK {}", a.bytes);
    }

    #[test]
    fn a_real_ulimit_v_bounds_and_refuses() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 3000000 && exec \"$0\" --exact hostmem::tests::child_under_ulimit_v --nocapture --test-threads=1")
            .arg(exe)
            .env("BLOCKSWEEP_HOSTMEM_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("CHILD-OK"), "{text}");
    }

    #[test]
    fn the_model_matches_the_measurements() {
        let px = 2000 * 2000;
        let gpu = |a| (a, DeviceKind::Gpu);
        let cpu = |a| (a, DeviceKind::Cpu);
        // H200: CUDA 19.9, OpenCL 20.0 bytes per pixel; each API's own read-back plane
        // (lent, or Vulkan's staging) is held until the end of the run: 16 + 4 per API.
        assert_eq!(
            estimate_bytes(px, &[gpu(TEST_API_A)]),
            Some(px * 20 + HEADROOM_BYTES)
        );
        assert_eq!(
            estimate_bytes(px, &[gpu(TEST_API_A), gpu(TEST_API_C)]),
            Some(px * 24 + HEADROOM_BYTES)
        );
        assert_eq!(
            estimate_bytes(px, &[gpu(TEST_API_A), gpu(TEST_API_B), gpu(TEST_API_C)]),
            Some(px * 28 + HEADROOM_BYTES)
        );
        assert_eq!(estimate_bytes(px, &[]), Some(px * 20 + HEADROOM_BYTES));
        // CPU drivers: PoCL 36.0, lavapipe 36.0, both in one run 56.0.
        assert_eq!(
            estimate_bytes(px, &[cpu(TEST_API_C)]),
            Some(px * 36 + HEADROOM_BYTES)
        );
        assert_eq!(
            estimate_bytes(px, &[cpu(TEST_API_B)]),
            Some(px * 36 + HEADROOM_BYTES)
        );
        assert_eq!(
            estimate_bytes(px, &[cpu(TEST_API_B), cpu(TEST_API_C)]),
            Some(px * 56 + HEADROOM_BYTES)
        );
        assert_eq!(estimate_bytes(u64::MAX / 2, &[cpu(TEST_API_C)]), None);
    }

    #[test]
    fn check_frame_names_the_bound() {
        let apis = [(TEST_API_C, DeviceKind::Cpu)];
        let small = Available {
            bytes: 1_500_000 * 1024 - 512_000 * 1024,
            bound: Bound::AddressSpace,
        };
        let e = check_frame_against(10000, 10000, &apis, Some(small.clone())).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("frame 10000x10000 needs about 3497 MiB"),
            "{msg}"
        );
        assert!(msg.contains("only 964 MiB is available"), "{msg}");
        assert!(msg.contains("ulimit -v"), "{msg}");
        assert!(!msg.contains('\n'));
        assert_eq!(check_frame_against(640, 360, &apis, Some(small)), Ok(()));
        assert_eq!(check_frame_against(10000, 10000, &apis, None), Ok(()));
    }

    #[test]
    fn allocation_failure_is_an_error() {
        let v = try_alloc_f32(1000).unwrap();
        assert!(v.is_empty() && v.capacity() >= 1000);
        // More than any address space: the allocator refuses, and it is an error, not an abort.
        let e = try_alloc_f32(usize::MAX / 8).unwrap_err();
        assert!(matches!(e, HostMemError::Alloc { .. }), "{e:?}");
        assert!(e.to_string().starts_with("could not allocate"), "{e}");
    }
}
