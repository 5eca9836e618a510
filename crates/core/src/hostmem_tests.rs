use super::*;
use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};
use std::fs;

/// A fake root with /proc files and a cgroup tree, removed on drop.
struct Root(PathBuf);

impl Root {
    fn new(name: &str) -> Root {
        let dir =
            std::env::temp_dir().join(format!("blocksweep-hostmem-{name}-{}", std::process::id()));
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

#[test]
fn a_real_ulimit_v_bounds_what_is_available() {
    // The child's part: this test again, under the limit the parent set.
    if std::env::var_os("BLOCKSWEEP_HOSTMEM_CHILD").is_some() {
        return under_ulimit_v();
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 3000000 && exec \"$0\" --exact hostmem::tests::a_real_ulimit_v_bounds_what_is_available --nocapture --test-threads=1")
        .arg(exe)
        .env("BLOCKSWEEP_HOSTMEM_CHILD", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("CHILD-OK"), "{text}");
}

/// What the child asserts under `ulimit -v 3000000`.
fn under_ulimit_v() {
    let a = available().unwrap();
    assert_eq!(a.bound, Bound::AddressSpace, "{a:?}");
    assert!(a.bytes < 3_000_000 * 1024, "{a:?}");
    println!("CHILD-OK {}", a.bytes);
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
fn a_kernel_counts_its_buffers_read_backs_references_and_cpu_copies() {
    let gib = 1u64 << 30;
    let buffers = [
        KernelBuffer {
            bytes: 4 * gib,
            written: false,
        },
        KernelBuffer {
            bytes: 4 * gib,
            written: true,
        },
    ];
    // Before the APIs are known: 8 of buffers, 2 x 4 + 4 of read-backs, 4 + 4 for one API.
    let (need, _) = kernel_bytes(&buffers, &[], false).unwrap();
    assert_eq!(need, 28 * gib + HEADROOM_BYTES);
    let cpu = [(TEST_API_A, DeviceKind::Cpu)];
    let (need_cpu, detail) = kernel_bytes(&buffers, &cpu, false).unwrap();
    assert_eq!(
        need_cpu,
        need + 8 * gib,
        "a CPU device holds every buffer again"
    );
    assert!(detail.contains("1 CPU device(s) x 8192 MiB"), "{detail}");
    // Once made, only what is to come: two read-backs, a reset image, one reference per API.
    let (later, _) = kernel_bytes(&buffers, &cpu, true).unwrap();
    assert_eq!(later, 16 * gib + HEADROOM_BYTES);
    let room = Available {
        bytes: 20 * gib,
        bound: Bound::MemAvailable,
    };
    let e = check_kernel_against("kernel 'k'", &buffers, (&[], false), Some(room)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("kernel 'k' needs about 28736 MiB"),
        "{e}"
    );
}
