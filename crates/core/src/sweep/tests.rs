//! The sweep's read-back: through the host memory a backend stages, and through `read_buffer`
//! where it stages none; both verify the same rows and name a mismatch the same way.

use super::check_tests::{Event, Recorded};
use super::{execute, Plan, PlannedRow, Quiet, SweepConfig, SweepError};
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::testing::{HostBackend, TEST_API_A};
use crate::{Discipline, GridPolicy, Protocol, Reps};

/// The host backend, staging its output or not, logging how the core read each row back.
fn counted(stages: bool) -> Recorded<HostBackend> {
    let mut inner = HostBackend::new(TEST_API_A);
    inner.stages = stages;
    Recorded::new(inner)
}

/// How many reads went through the staged view, and how many were copied out.
fn reads(b: &Recorded<HostBackend>) -> (usize, usize) {
    let events = b.events();
    let count = |staged| {
        let read = Event::Read { staged };
        events.iter().filter(|e| **e == read).count()
    };
    (count(true), count(false))
}

/// 64 x 16 pixels: 16 blocks of 64 threads cover it.
fn frame() -> Frame {
    Frame::generate(64, 16, 5)
}

/// One row per grid of `kernel`, blocks of 64 threads, one timed dispatch.
fn sweep(
    b: &mut Recorded<HostBackend>,
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
            caches: crate::flush::Caches::Hot,
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
        let mut b = counted(stages);
        let (r, err) = sweep(&mut b, KernelVariant::GridStride, &[1, 4, 16]);
        assert!(err.is_none(), "stages {stages}: {err:?}");
        assert!(r.rows.iter().all(|row| row.verified), "{:?}", r.rows);
        let expected = if stages { (3, 0) } else { (0, 3) };
        assert_eq!(reads(&b), expected, "stages {stages}");
    }
}

#[test]
fn a_mismatch_seen_through_the_staged_view_names_the_first_bad_index() {
    let mut messages = Vec::new();
    for stages in [true, false] {
        let mut b = counted(stages);
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
        let (staged, copied) = reads(&b);
        assert_eq!(staged + copied, 2, "stages {stages}");
        messages.push(r.error.expect("the error is recorded"));
    }
    assert!(messages[0].contains("index 960"), "{}", messages[0]);
    assert_eq!(messages[0], messages[1], "staged or not, the same failure");
}

#[test]
fn a_staged_view_of_the_wrong_length_is_the_backends_error() {
    let mut b = counted(true);
    b.short_staged = true;
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

/// A GPU whose API states no compute units (WebGPU) plans the covering grid, clamped to its
/// largest, not one block per "unit" of one: call12 on the H100 ran WebGPU alone at grid 1.
#[test]
fn a_gpu_without_a_compute_unit_count_plans_the_covering_grid() {
    use crate::backend::DeviceKind;
    use crate::limits::{Dims, Named};
    let mut b = HostBackend::new(TEST_API_A);
    b.identity.kind = DeviceKind::Gpu;
    b.limits.multiprocessors = None;
    b.limits.max_grid_dims = Some(Named::new(Dims([65535, 65535, 65535]), "max grid"));
    let config = SweepConfig {
        blocks: crate::blocks::parse_blocks("16,256").unwrap(),
        ..Default::default()
    };
    let pixels = 3840 * 2160;
    let plan = super::plan(&mut b, pixels, &config).unwrap();
    let grids: Vec<u64> = plan.rows.iter().map(|r| r.grid).collect();
    assert_eq!(grids, [65535, pixels / 256], "{}", plan.grid_source);
    assert!(
        plan.grid_source.contains("no compute-unit count"),
        "{}",
        plan.grid_source
    );
    // A CPU device keeps its wave of one block per compute unit.
    b.identity.kind = DeviceKind::Cpu;
    b.limits.multiprocessors = Some(Named::new(2, "threads"));
    let cpu = super::plan(&mut b, pixels, &config).unwrap();
    assert!(cpu.rows.iter().all(|r| r.grid <= 2 * 64), "{:?}", cpu.rows);
}
