use super::*;
use crate::blocks::BlockSize;
use crate::measure::{measure, Discipline, Protocol, Reps};
use crate::testing::{HostBackend, ScriptedBackend, TEST_API_A, TEST_API_B};

const MIB: u64 = 1 << 20;

fn limits(l2: Option<u64>, memory: u64) -> Limits {
    Limits {
        l2_bytes: l2.map(|b| Named::new(b, "TEST_L2_CACHE_SIZE")),
        global_mem_bytes: Some(Named::new(memory, "TEST_MEMORY")),
        ..Limits::default()
    }
}

#[test]
fn the_flush_is_twice_the_cache_the_device_states_and_says_so() {
    let f = Flush::for_device(&limits(Some(32 * MIB), 64 << 30), None);
    assert_eq!((f.bytes, f.llc_bytes), (64 * MIB, 32 * MIB));
    assert_eq!(f.llc_source, "TEST_L2_CACHE_SIZE");
    // One device has one last-level cache: the larger of the two answers sizes it (an API
    // that states less names another cache, as NVIDIA's OpenCL does on an H100).
    let peer = (TEST_API_B, Named::new(50 * MIB, "PEER_L2"));
    let f = Flush::for_device(&limits(Some(32 * MIB), 64 << 30), Some(&peer));
    assert_eq!((f.bytes, f.llc_bytes), (100 * MIB, 50 * MIB));
    assert_eq!(f.llc_source, "Beta PEER_L2, the same device");
    let smaller = (TEST_API_B, Named::new(4 * MIB, "PEER_L2"));
    let f = Flush::for_device(&limits(Some(32 * MIB), 64 << 30), Some(&smaller));
    assert_eq!(
        (f.bytes, f.llc_source.as_str()),
        (64 * MIB, "TEST_L2_CACHE_SIZE")
    );
    // A small cache still gets the smallest flush, in whole pages.
    let f = Flush::for_device(&limits(Some(MIB), 64 << 30), None);
    assert_eq!(f.bytes, MIN_FLUSH_BYTES);
    let f = Flush::for_device(&limits(Some(5 * MIB + 7), 64 << 30), None);
    assert_eq!(f.bytes % 4096, 0);
    assert!(f.bytes <= 2 * (5 * MIB + 7) && f.bytes > 10 * MIB - 4096);
}

#[test]
fn without_its_own_query_the_same_devices_other_api_or_a_stated_assumption_sizes_it() {
    let peer = (TEST_API_B, Named::new(50 * MIB, "PEER_L2"));
    let f = Flush::for_device(&limits(None, 64 << 30), Some(&peer));
    assert_eq!((f.bytes, f.llc_bytes), (100 * MIB, 50 * MIB));
    assert_eq!(f.llc_source, "Beta PEER_L2, the same device");
    // A zero stated is no answer (a driver that fills in nothing).
    let f = Flush::for_device(&limits(Some(0), 64 << 30), None);
    assert_eq!(f.llc_bytes, ASSUMED_LLC_BYTES);
    assert_eq!(f.bytes, 2 * ASSUMED_LLC_BYTES);
    assert!(f.llc_source.starts_with("assumed"), "{}", f.llc_source);
    assert!(
        f.why().contains("128.0 MiB last-level cache, assumed"),
        "{}",
        f.why()
    );
    // At most an eighth of the device's memory, and one allocation.
    let f = Flush::for_device(&limits(None, 1 << 30), None);
    assert_eq!(f.bytes, 128 * MIB);
    let mut l = limits(Some(32 * MIB), 64 << 30);
    l.max_alloc_bytes = Some(Named::new(40 * MIB, "TEST_MAX_ALLOC"));
    assert_eq!(Flush::for_device(&l, None).bytes, 40 * MIB);
}

#[test]
fn cold_sizes_once_and_hot_has_no_flush() {
    let l = limits(Some(32 * MIB), 64 << 30);
    assert_eq!(Caches::Hot.flush_bytes(&l), None);
    assert_eq!(Caches::COLD.flush_bytes(&l), Some(64 * MIB));
    let sized = Caches::COLD.sized(&l, None);
    let Caches::Cold { flush: Some(f) } = &sized else {
        panic!("cold stays cold, sized: {sized:?}");
    };
    assert_eq!(f.bytes, 64 * MIB);
    // Sized once: another device's limits do not change it.
    assert_eq!(sized.sized(&limits(None, 1 << 30), None), sized);
    assert!(sized
        .describe()
        .starts_with("cold: LLC flushed (64.0 MiB) before each dispatch"));
    assert!(Caches::Hot.describe().starts_with("hot"));
    assert_eq!(Caches::Hot.brief(), None);
    let brief = sized.brief().unwrap();
    assert_eq!(brief, "cold: LLC flushed (64.0 MiB) before each dispatch");
    let assumed = Caches::COLD.sized(&limits(None, 64 << 30), None);
    let brief = assumed.brief().unwrap();
    assert!(brief.ends_with("(2 x an assumed 128.0 MiB LLC)"), "{brief}");
    let json = serde_json::to_value(&sized).unwrap();
    assert_eq!(json["mode"], "cold");
    assert_eq!(json["flush"]["bytes"], 64 * MIB);
    assert_eq!(serde_json::to_value(Caches::Hot).unwrap()["mode"], "hot");
}

fn cold(discipline: Discipline, reps: Reps) -> Protocol {
    Protocol {
        warmups: 3,
        reps,
        discipline,
        ..Protocol::default()
    }
    .with_caches(Caches::COLD)
}

#[test]
fn cold_batches_flush_before_every_dispatch_and_time_the_dispatch_alone() {
    let mut b = ScriptedBackend::new(TEST_API_A, 0.5, 0.01);
    b.host_wait_ms = 0.3;
    b.limits_mut().l2_bytes = Some(Named::new(4 * MIB, "TEST_L2"));
    let p = cold(Discipline::Batch, Reps::Fixed(20));
    assert_eq!(p.discipline, Discipline::Each, "cold times each dispatch");
    let t = measure(&mut b, Work::Copy { bytes: 64 }, &p).unwrap();
    // Nothing ran unflushed: every dispatch, warm-ups too, came after a flush of 8 MiB.
    assert!(b.batches.is_empty(), "unflushed batches: {:?}", b.batches);
    assert_eq!(b.flushed, vec![(1, 8 * MIB), (2, 8 * MIB), (20, 8 * MIB)]);
    // The mean is the dispatch's own interval: no host wait, no flush.
    assert_eq!(
        (t.discipline, t.reps, t.samples_ms.len()),
        (Discipline::Each, 20, 20)
    );
    assert!((t.stats.mean - 0.51).abs() < 1e-12, "{}", t.stats.mean);
    assert_eq!(t.batch_ms, None);
    assert_eq!(t.flush_bytes, Some(8 * MIB));
    assert_eq!(t.clock, None, "the host's clock ran through the flushes");
}

#[test]
fn cold_adaptive_counts_come_from_flushed_warm_ups_and_synced_flushes_each_alone() {
    let mut b = ScriptedBackend::new(TEST_API_A, 0.25, 0.0);
    let adaptive = Reps::Adaptive {
        min: 4,
        min_time_ms: 2.0,
        max: 1000,
        max_noise: None,
        noise_cap_ms: 10.0,
    };
    let t = measure(
        &mut b,
        Work::Copy { bytes: 64 },
        &cold(Discipline::Each, adaptive),
    )
    .unwrap();
    assert_eq!(t.reps, 8, "2 ms at 0.25 ms a dispatch");
    assert!(b.batches.is_empty());
    let mut b = ScriptedBackend::new(TEST_API_A, 0.25, 0.0);
    let t = measure(
        &mut b,
        Work::Copy { bytes: 64 },
        &cold(Discipline::Synced, Reps::Fixed(3)),
    );
    assert_eq!(t.unwrap().discipline, Discipline::Synced);
    assert_eq!(
        &b.flushed[2..],
        &[(1, 128 * MIB); 3],
        "the host's gibibyte / 8"
    );
}

#[test]
fn a_long_cold_batch_is_split_so_that_no_batch_writes_more_than_its_share() {
    let mut b = ScriptedBackend::new(TEST_API_A, 0.5, 0.0);
    b.limits_mut().l2_bytes = Some(Named::new(512 * MIB, "TEST_L2"));
    b.limits_mut().global_mem_bytes = Some(Named::new(64 << 30, "TEST_MEMORY"));
    let p = Protocol {
        warmups: 0,
        ..cold(Discipline::Each, Reps::Fixed(9))
    };
    let t = measure(&mut b, Work::Copy { bytes: 64 }, &p).unwrap();
    // 1 GiB a flush: at most 4 dispatches a batch, every one still timed alone.
    let counts: Vec<u32> = b.flushed.iter().map(|&(n, _)| n).collect();
    assert_eq!(counts, vec![4, 4, 1]);
    assert!(b.flushed.iter().all(|&(_, bytes)| bytes == 1 << 30));
    assert_eq!(t.samples_ms.len(), 9);
}

#[test]
fn hot_never_flushes() {
    let mut b = ScriptedBackend::new(TEST_API_A, 0.5, 0.01);
    let t = measure(&mut b, Work::Copy { bytes: 64 }, &Protocol::default()).unwrap();
    assert!(b.flushed.is_empty());
    assert_eq!((t.discipline, t.flush_bytes), (Discipline::Batch, None));
    assert!(t.clock.is_some());
    assert_eq!(Protocol::default().caches, Caches::Hot);
}

#[test]
fn a_backend_that_cannot_flush_says_so() {
    struct Plain(HostBackend);
    impl Backend for Plain {
        fn identity(&self) -> &crate::backend::DeviceIdentity {
            self.0.identity()
        }
        fn limits(&self) -> &Limits {
            self.0.limits()
        }
        fn kernel_facts(&self) -> &crate::backend::KernelFacts {
            self.0.kernel_facts()
        }
        fn timer(&self) -> crate::backend::TimerInfo {
            self.0.timer()
        }
        fn residency(
            &mut self,
            b: BlockSize,
        ) -> crate::backend::BackendResult<Option<crate::backend::Residency>> {
            self.0.residency(b)
        }
        fn run_batch(
            &mut self,
            work: Work,
            count: u32,
            stamps: Stamps,
        ) -> crate::backend::BackendResult<BatchTimes> {
            self.0.run_batch(work, count, stamps)
        }
        fn copy_method(&self) -> String {
            self.0.copy_method()
        }
    }
    let mut b = Plain(HostBackend::new(TEST_API_A));
    let e = measure(
        &mut b,
        Work::Copy { bytes: 64 },
        &cold(Discipline::Each, Reps::Fixed(2)),
    );
    let e = e.unwrap_err();
    assert_eq!(e.kind, crate::backend::ErrorKind::Unavailable);
    assert!(e.message.contains("--cold"), "{}", e.message);
}
