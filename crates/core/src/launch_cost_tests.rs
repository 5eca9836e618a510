use super::*;
use crate::backend::{
    BatchTimes, Fill, KernelFacts, KernelVariant, ProgramArg, ProgramSource, Residency,
};
use crate::limits::Limits;
use crate::testing::{HostBackend, ScriptedBackend, TEST_API_A, TEST_API_B, TEST_API_C};

/// The host backend's dispatches (so the pixel is really written) with scripted device
/// intervals: `kernel_ms` per dispatch of a timed batch. Records every batch.
struct Timed {
    host: HostBackend,
    kernel_ms: f64,
    batches: Vec<(u32, Stamps)>,
}

impl Backend for Timed {
    fn identity(&self) -> &DeviceIdentity {
        self.host.identity()
    }
    fn limits(&self) -> &Limits {
        self.host.limits()
    }
    fn kernel_facts(&self) -> &KernelFacts {
        self.host.kernel_facts()
    }
    fn timer(&self) -> TimerInfo {
        self.host.timer()
    }
    fn residency(&mut self, block: BlockSize) -> crate::backend::BackendResult<Option<Residency>> {
        self.host.residency(block)
    }
    fn run_batch(
        &mut self,
        work: Work,
        count: u32,
        stamps: Stamps,
    ) -> crate::backend::BackendResult<BatchTimes> {
        self.batches.push((count, stamps));
        self.host.run_batch(work, count, stamps)?;
        Ok(BatchTimes {
            batch_ms: (stamps == Stamps::Batch).then_some(count as f64 * self.kernel_ms),
            each_ms: Vec::new(),
        })
    }
    fn copy_method(&self) -> String {
        self.host.copy_method()
    }
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        self.host.builtin(kernel)
    }
    fn load_program(
        &mut self,
        source: &ProgramSource,
        args: &[ProgramArg],
    ) -> crate::backend::BackendResult<()> {
        self.host.load_program(source, args)
    }
    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> crate::backend::BackendResult<()> {
        self.host.write_buffer(arg, bytes)
    }
    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> crate::backend::BackendResult<bool> {
        self.host.fill_buffer(arg, fills)
    }
    fn read_buffer(
        &mut self,
        arg: usize,
        offset: u64,
        out: &mut [u8],
    ) -> crate::backend::BackendResult<()> {
        self.host.read_buffer(arg, offset, out)
    }
}

fn small() -> CostConfig {
    CostConfig {
        dispatches: 50,
        round_trips: 9,
        warmups: 2,
        block: 32,
    }
}

#[test]
fn the_device_figure_is_the_batch_interval_over_its_dispatches() {
    let mut b = Timed {
        host: HostBackend::new(TEST_API_A),
        kernel_ms: 0.004,
        batches: Vec::new(),
    };
    let cost = measure(&mut b, &small()).unwrap();
    assert!((cost.device_us - 4.0).abs() < 1e-9, "{}", cost.device_us);
    assert_eq!(cost.launch, Launch::linear(BlockSize::linear(32), 1));
    // Warm-ups, the timed batch, warm-ups, nine single dispatches, the checked one.
    let timed: Vec<_> = b.batches.iter().filter(|b| b.1 == Stamps::Batch).collect();
    assert_eq!(timed, [&(50, Stamps::Batch)]);
    let singles = b
        .batches
        .iter()
        .filter(|&&b| b == (1, Stamps::None))
        .count();
    assert_eq!(singles, 9 + 1);
    assert_eq!(b.batches.len(), 2 + 1 + 9 + 1);
    let r = cost.round_trip;
    assert!(r.min_us > 0.0 && r.min_us <= r.median_us && r.median_us <= r.p90_us);
    assert!(cost.enqueue_us > 0.0);
}

#[test]
fn a_pixel_the_dispatch_did_not_write_is_named() {
    // The scripted backend runs nothing: the pixel reads back as 0, not the reference.
    let mut b = ScriptedBackend::new(TEST_API_B, 0.001, 0.0);
    let e = measure(&mut b, &small()).unwrap_err();
    assert!(
        e.message.contains("pixel 0 of buffer 'out'"),
        "{}",
        e.message
    );
    assert!(e.message.contains("block 32 grid 1"), "{}", e.message);
}

#[test]
fn the_api_refusing_the_block_is_its_own_error() {
    let mut b = HostBackend::new(TEST_API_C);
    let config = CostConfig {
        block: 2048,
        ..small()
    };
    let e = measure(&mut b, &config).unwrap_err();
    assert_eq!(e.kind, ErrorKind::LaunchRejected);
    assert!(
        e.message.contains("HOST_INVALID_CONFIGURATION"),
        "{}",
        e.message
    );
}

#[test]
fn counts_of_zero_still_time_one_dispatch() {
    let mut b = HostBackend::new(TEST_API_C);
    let config = CostConfig {
        dispatches: 0,
        round_trips: 0,
        warmups: 0,
        block: 32,
    };
    let cost = measure(&mut b, &config).unwrap();
    assert_eq!((cost.config.dispatches, cost.config.round_trips), (1, 1));
}

#[test]
fn the_spread_takes_median_minimum_and_ninetieth_percentile() {
    let us: Vec<f64> = (1..=11).rev().map(f64::from).collect();
    let s = Spread::of(&us).unwrap();
    assert_eq!((s.min_us, s.median_us, s.p90_us), (1.0, 6.0, 10.0));
    assert_eq!(Spread::of(&[]), None);
    assert_eq!(Spread::of(&[f64::NAN]), None);
}
