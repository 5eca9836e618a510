//! The sweep's read-back: through the host memory a backend stages, and through `read_buffer`
//! where it stages none; both verify the same rows and name a mismatch the same way.

use super::{execute, Plan, PlannedRow, Quiet, SweepConfig, SweepError};
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::limits::Limits;
use crate::testing::{HostBackend, TEST_API_A};
use crate::{Discipline, GridPolicy, Protocol, Reps};

/// The host backend, counting how the core read each row back.
struct Counted {
    inner: HostBackend,
    staged: u32,
    copied: u32,
    /// Stages one value too few (a broken backend).
    short: bool,
}

impl Counted {
    fn new(stages: bool) -> Self {
        let mut inner = HostBackend::new(TEST_API_A);
        inner.stages = stages;
        Counted {
            inner,
            staged: 0,
            copied: 0,
            short: false,
        }
    }
}

impl Backend for Counted {
    fn identity(&self) -> &DeviceIdentity {
        self.inner.identity()
    }
    fn limits(&self) -> &Limits {
        self.inner.limits()
    }
    fn kernel_facts(&self) -> &KernelFacts {
        self.inner.kernel_facts()
    }
    fn timer(&self) -> TimerInfo {
        self.inner.timer()
    }
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.inner.residency(block)
    }
    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.inner.run_batch(work, count, stamps)
    }
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        self.inner.builtin(kernel)
    }
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.inner.load_program(source, args)
    }
    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.inner.write_buffer(arg, bytes)
    }
    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.inner.fill_buffer(arg, fills)
    }
    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.copied += 1;
        self.inner.read_buffer(arg, offset, out)
    }
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let view = self.inner.read_buffer_staged(arg)?;
        self.staged += view.is_some() as u32;
        Ok(view.map(|v| if self.short { &v[4..] } else { v }))
    }
    fn copy_method(&self) -> String {
        self.inner.copy_method()
    }
}

/// 64 x 16 pixels: 16 blocks of 64 threads cover it.
fn frame() -> Frame {
    Frame::generate(64, 16, 5)
}

/// One row per grid of `kernel`, blocks of 64 threads, one timed dispatch.
fn sweep(
    b: &mut Counted,
    kernel: KernelVariant,
    grids: &[u64],
) -> (super::SweepResult, Option<SweepError>) {
    let f = frame();
    crate::builtin::load(b, kernel, &f).unwrap();
    let config = SweepConfig {
        blocks: vec![BlockSize::linear(64)],
        grid: GridPolicy::Fixed(1),
        protocol: Protocol {
            warmups: 0,
            reps: Reps::Fixed(1),
            discipline: Discipline::Batch,
        },
        strict_kernel_limit: false,
        copy: false,
        frame_on_device: true,
        pairs: Vec::new(),
    };
    let rows = grids.iter().map(|&grid| PlannedRow {
        block: BlockSize::linear(64),
        grid,
        residency: None,
        policy: None,
    });
    let plan = Plan {
        rows: rows.collect(),
        policy: config.grid,
        grid_source: "test".into(),
    };
    execute(
        b,
        &f,
        &f.reference(),
        &plan,
        &config,
        &mut Quiet,
        &mut |_| {},
    )
}

#[test]
fn every_row_verifies_through_the_staged_view_and_through_the_fallback() {
    for stages in [true, false] {
        let mut b = Counted::new(stages);
        let (r, err) = sweep(&mut b, KernelVariant::GridStride, &[1, 4, 16]);
        assert!(err.is_none(), "stages {stages}: {err:?}");
        assert!(r.rows.iter().all(|row| row.verified), "{:?}", r.rows);
        let expected = if stages { (3, 0) } else { (0, 3) };
        assert_eq!((b.staged, b.copied), expected, "stages {stages}");
    }
}

#[test]
fn a_mismatch_seen_through_the_staged_view_names_the_first_bad_index() {
    let mut messages = Vec::new();
    for stages in [true, false] {
        let mut b = Counted::new(stages);
        // 16 blocks cover the frame; 15 leave the last block's 64 pixels NaN.
        let (r, err) = sweep(&mut b, KernelVariant::OnePixelPerThread, &[16, 15]);
        match err {
            Some(SweepError::Mismatch {
                api,
                block,
                grid,
                index,
                got,
                bad_pixels,
                pixels,
                ..
            }) => {
                assert_eq!((api, block, grid), (TEST_API_A, BlockSize::linear(64), 15));
                assert_eq!((index, bad_pixels, pixels), (15 * 64, 64, 1024));
                assert!(got.is_nan(), "the poison shows: {got}");
            }
            other => panic!("stages {stages}: one block short was not caught: {other:?}"),
        }
        assert!(r.rows[0].verified && r.rows.len() == 1, "{:?}", r.rows);
        assert_eq!(b.staged + b.copied, 2, "stages {stages}");
        messages.push(r.error.expect("the error is recorded"));
    }
    assert!(messages[0].contains("index 960"), "{}", messages[0]);
    assert_eq!(messages[0], messages[1], "staged or not, the same failure");
}

#[test]
fn a_staged_view_of_the_wrong_length_is_the_backends_error() {
    let mut b = Counted::new(true);
    b.short = true;
    let (_, err) = sweep(&mut b, KernelVariant::GridStride, &[16]);
    match err {
        Some(SweepError::Backend(e)) => {
            assert_eq!(e.kind, ErrorKind::Driver, "{e}");
            assert!(e.message.contains("1023 values"), "{e}");
        }
        other => panic!("a short staged view must fail the row: {other:?}"),
    }
}

/// The planner of one physical device: the first API that answers residency itself, else the
/// first; the pipeline's shared plan and the lab's shared wave both ask it.
#[test]
fn the_planner_is_the_first_that_answers_residency_else_the_first() {
    use crate::testing::{TEST_API_B, TEST_API_C};
    let (a, b, c) = (TEST_API_A, TEST_API_B, TEST_API_C);
    let mut quiet = [HostBackend::new(a), HostBackend::new(b)];
    let block = Some(BlockSize::linear(256));
    assert_eq!(super::planner(quiet.iter_mut(), block).unwrap(), Some(0));
    let mut second = [
        HostBackend::new(a),
        HostBackend::new(b),
        HostBackend::new(c),
    ];
    second[1].residency = Some(8);
    second[2].residency = Some(8);
    assert_eq!(super::planner(second.iter_mut(), block).unwrap(), Some(1));
    assert_eq!(super::planner(second.iter_mut(), None).unwrap(), Some(0));
    let mut none: [HostBackend; 0] = [];
    assert_eq!(super::planner(none.iter_mut(), block).unwrap(), None);
}
