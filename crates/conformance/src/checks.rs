//! The scenarios' bodies, each written once over `dyn Backend`. They panic (assert) on a
//! failure; each is also callable on its own, e.g. on a backend opened with options the kit
//! does not use (Vulkan's validation layers).

use blocksweep_core::blocks::{default_blocks, BlockSize};
use blocksweep_core::grid::blocks_to_cover;
use blocksweep_core::sweep::{
    self, Plan, PlannedRow, Quiet, SweepConfig, SweepError, SweepResult, SweepRun,
};
use blocksweep_core::verify::verify;
use blocksweep_core::{
    Backend, DeviceIdentity, Discipline, Driver, ErrorKind, Frame, GridPolicy, KernelVariant,
    Launch, Named, OpenOptions, Protocol, Reps, Stamps, Work,
};
use libtest_mimic::Completion;

use crate::scenarios::Target;

/// The small frame the sweeps use: 640 x 360, the seed's aspect ratio.
pub const SMALL: (u32, u32) = (640, 360);

/// Warm-ups and an exact count of timed dispatches, under the default (batch) discipline.
fn fixed(warmups: u32, reps: u32) -> Protocol {
    Protocol {
        warmups,
        reps: Reps::Fixed(reps),
        discipline: Discipline::Batch,
    }
}

fn positive(t: f64) -> bool {
    t > 0.0 && t.is_finite()
}

/// A frame that only claims its size ([`Frame::sized`]): at least `pixels` pixels, 65536 wide.
pub fn claimed_frame(pixels: u64) -> Frame {
    let width = 65536u32;
    let height = u32::try_from(pixels.div_ceil(width as u64)).expect("claimed frame height");
    Frame::sized(width, height)
}

/// Uploads `frame`, poisons the output, runs `launch` `count` times back to back, reads the
/// output back and verifies every pixel.
fn run_and_verify(b: &mut dyn Backend, frame: &Frame, launch: Launch, count: u32) {
    b.upload(frame).expect("upload");
    b.poison_output().expect("poison");
    b.run_batch(Work::Kernel(launch), count, Stamps::None)
        .unwrap_or_else(|e| panic!("{launch}: {e}"));
    let mut out = vec![0f32; frame.pixels() as usize];
    b.read_output(&mut out).expect("read back");
    if let Err(m) = verify(&out, &frame.reference()) {
        panic!("{} {launch} after upload: {m:?}", b.api());
    }
}

/// Runs a whole sweep (plan, rows, copy ceiling as `config` says) of `frame`; a sweep that
/// stops on an error fails the trial, naming the API and the error.
pub fn sweep(b: &mut dyn Backend, frame: &Frame, config: &SweepConfig) -> SweepResult {
    let reference = frame.reference();
    let how = SweepRun {
        config,
        shared: None,
        observer: &mut Quiet,
        on_row: &mut |_| {},
    };
    let (result, err) = sweep::run(b, frame, &reference, how);
    if let Some(e) = err {
        panic!(
            "{} sweep of {}x{} failed: {e}",
            b.api(),
            frame.width,
            frame.height
        );
    }
    result
}

/// probe()'s entry for the device under test, and what open() says about it.
pub fn identity(t: &Target) {
    let d = t.device();
    assert_eq!(d.index, t.index, "index must be the position in probe()");
    assert_eq!(d.api, t.driver.api(), "{d:?}");
    for (what, v) in [
        ("name", &d.name),
        ("vendor", &d.vendor),
        ("driver", &d.driver),
        ("api_version", &d.api_version),
    ] {
        assert!(!v.trim().is_empty(), "{what} is empty: {d:?}");
    }
    if let Some(pci) = &d.pci_bus_id {
        let parts: Vec<&str> = pci.split([':', '.']).collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [4, 2, 2, 1],
            "PCI bus id {pci} is not dddd:bb:dd.f"
        );
        assert!(
            parts
                .iter()
                .all(|p| p.chars().all(|c| c.is_ascii_hexdigit())),
            "{pci}"
        );
    }
    let b = t.open();
    assert_eq!(
        b.identity(),
        d,
        "open() must describe the device probe() listed"
    );
}

/// Limits are internally consistent and each names its native query; the timer and the
/// compiled kernel are described.
pub fn limits(b: &dyn Backend) {
    let l = b.limits();
    let bad = l.inconsistencies();
    assert!(
        bad.is_empty(),
        "{} limits are inconsistent: {bad:?}",
        b.api()
    );
    let t = l
        .max_threads_per_block
        .as_ref()
        .expect("max threads per block must be queried");
    assert!(t.value >= 1, "{t:?}");
    let dims = l
        .max_block_dims
        .as_ref()
        .expect("max block dims must be queried");
    assert!(
        !dims.name.trim().is_empty() && dims.value.0.iter().all(|&d| d >= 1),
        "{dims:?}"
    );
    assert!(
        l.global_mem_bytes.is_some(),
        "device memory must be queried: the frame check needs it"
    );
    let named: [(&str, &Option<Named<u64>>); 8] = [
        ("max_threads_per_block", &l.max_threads_per_block),
        ("warp_size", &l.warp_size),
        ("multiprocessors", &l.multiprocessors),
        ("max_alloc_bytes", &l.max_alloc_bytes),
        ("max_buffer_binding_bytes", &l.max_buffer_binding_bytes),
        ("global_mem_bytes", &l.global_mem_bytes),
        ("shared_mem_per_block", &l.shared_mem_per_block),
        ("max_threads_per_mp", &l.max_threads_per_mp),
    ];
    for (field, v) in named {
        if let Some(n) = v {
            assert!(
                !n.name.trim().is_empty(),
                "{field} = {} has no name",
                n.value
            );
        }
    }
    let timer = b.timer();
    assert!(
        positive(timer.resolution_ns) && !timer.method.trim().is_empty(),
        "{timer:?}"
    );
    let k = b.kernel_facts();
    assert!(!k.compiled_by.trim().is_empty(), "{k:?}");
    if let Some(m) = &k.max_block {
        assert!(m.value >= 1 && !m.name.trim().is_empty(), "{m:?}");
    }
    crate::show!("{} limits: {l:#?}\nkernel: {k:#?}", b.identity().name);
}

/// The seed's thirteen sizes on a small frame: every row that the device allows runs, is
/// verified and carries its timing (the batch interval and the per-dispatch samples); those
/// it does not allow are skipped with a reason.
pub fn full_sweep(b: &mut dyn Backend) -> SweepResult {
    let config = SweepConfig {
        blocks: default_blocks(),
        grid: GridPolicy::Wave,
        protocol: fixed(1, 3),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
    };
    let result = sweep(b, &Frame::generate(SMALL.0, SMALL.1, 42), &config);
    assert_eq!(result.rows.len(), 13);
    let max = result
        .limits
        .max_threads_per_block
        .as_ref()
        .map_or(u64::MAX, |m| m.value);
    let kmax = result
        .kernel
        .max_block
        .as_ref()
        .map_or(u64::MAX, |m| m.value);
    for row in &result.rows {
        if row.threads <= max.min(kmax) {
            assert!(
                row.verified && row.ran(),
                "{} row {} did not run: {:?}",
                result.api,
                row.block,
                row.skipped
            );
            let t = row.timing.as_ref().expect("a row that ran has its timing");
            assert_eq!(t.discipline, Discipline::Batch);
            assert_eq!((t.reps, t.samples_ms.len()), (3, 3), "{t:?}");
            let batch = t.batch_ms.expect("a batch interval");
            assert!(
                t.samples_ms.iter().all(|&s| positive(s)) && positive(batch),
                "{t:?}"
            );
            assert!(
                (t.stats.mean - batch / 3.0).abs() <= 1e-9 * batch.max(1.0),
                "the mean is the batch interval over the count: {t:?}"
            );
            assert!(row.gbps.is_some_and(positive), "{row:?}");
        } else {
            assert!(
                row.skipped.is_some() && !row.verified,
                "row {} is above the limit but was not skipped",
                row.block
            );
        }
    }
    let best = result.best().expect("a fastest row");
    assert_eq!(best.of_best, Some(1.0));
    result
}

/// Prints a sweep's rows under `--nocapture`: the seed's table as the device ran it.
pub fn show_rows(result: &SweepResult) {
    crate::show!(
        "{} ({}): grid source {}",
        result.device.name,
        result.device.driver,
        result.grid_source
    );
    for r in &result.rows {
        crate::show!(
            "  block {:>5} grid {:>6} mean {:>9.4} ms  of best {:.2}  {}",
            r.block.to_string(),
            r.grid,
            r.mean_ms().unwrap_or(f64::NAN),
            r.of_best.unwrap_or(f64::NAN),
            r.skipped.as_deref().unwrap_or("")
        );
    }
}

/// A launch that leaves pixels unwritten fails verification, naming block, grid and the
/// first bad index, which holds the NaN poison; a correct row just before it must not let it
/// pass on stale output; the grid-stride kernel at the same short grid is correct.
pub fn one_block_short(b: &mut dyn Backend) {
    let frame = Frame::generate(SMALL.0, SMALL.1, 7);
    let reference = frame.reference();
    let block = BlockSize::linear(64);
    let full = blocks_to_cover(frame.pixels(), 64);
    let config = SweepConfig {
        blocks: vec![block],
        grid: GridPolicy::Fixed(full as u32 - 1),
        protocol: fixed(0, 1),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
    };
    let plan = |grid| Plan {
        rows: vec![PlannedRow {
            block,
            grid,
            residency: None,
        }],
        policy: config.grid,
        grid_source: "conformance".into(),
    };
    let execute = |b: &mut dyn Backend, grid| {
        sweep::execute(
            b,
            &frame,
            &reference,
            &plan(grid),
            &config,
            &mut Quiet,
            &mut |_| {},
        )
    };

    // 1. The one-pixel-per-thread kernel with a full grid passes...
    b.set_kernel(KernelVariant::OnePixelPerThread)
        .expect("the backend carries the one-pixel-per-thread kernel");
    let (_, err) = execute(b, full);
    assert!(err.is_none(), "a full grid must verify: {err:?}");
    // 2. ...and the same kernel one block short, right after it, fails: the poison shows.
    let (result, err) = execute(b, full - 1);
    b.set_kernel(KernelVariant::GridStride).unwrap();
    match err {
        Some(SweepError::Mismatch {
            api,
            block: bad_block,
            grid,
            index,
            got,
            bad_pixels,
            ..
        }) => {
            assert_eq!(api, b.api());
            assert_eq!(bad_block, block);
            assert_eq!(grid, full - 1);
            assert_eq!(
                index,
                (full - 1) * 64,
                "the first unwritten pixel is the first of the missing block"
            );
            assert_eq!(bad_pixels, frame.pixels() - index, "the tail is unwritten");
            assert!(
                got.is_nan(),
                "the unwritten pixel must hold the NaN poison, got {got}"
            );
            let msg = result.error.expect("the error is recorded in the result");
            // The API is named by whoever prints it (the failure line is "<API>: <message>").
            for part in [
                "block 64".to_string(),
                format!("grid {}", full - 1),
                format!("index {index}"),
            ] {
                assert!(msg.contains(&part), "message {msg:?} lacks {part:?}");
            }
        }
        other => panic!("a launch one block short was not caught: {other:?}"),
    }
    // 3. The grid-stride kernel at that same short grid is correct again.
    let (_, err) = execute(b, full - 1);
    assert!(
        err.is_none(),
        "the grid-stride kernel must cover any grid: {err:?}"
    );
}

/// A block above the device's limit is a skipped row naming the limit, never a driver error,
/// and the row after it still runs.
pub fn oversize_block(b: &mut dyn Backend) {
    let max = b
        .limits()
        .max_threads_per_block
        .clone()
        .expect("max threads per block");
    let too_big = BlockSize::linear((max.value + 1).min(u32::MAX as u64) as u32);
    let config = SweepConfig {
        blocks: vec![too_big, BlockSize::linear(1)],
        grid: GridPolicy::Wave,
        protocol: fixed(0, 1),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
    };
    let result = sweep(b, &Frame::generate(64, 16, 1), &config);
    let reason = result.rows[0]
        .skipped
        .as_deref()
        .expect("the oversize block is skipped");
    assert!(
        reason.contains(&max.name),
        "reason {reason:?} should name {}",
        max.name
    );
    assert!(!result.rows[0].verified && result.rows[0].timing.is_none());
    assert!(result.rows[1].verified && result.rows[1].ran());
}

/// A 3-D block and a 2-D block within the device's limits run and verify (the 1-D kernels
/// index with x only; the extra threads repeat x's work), on frames of changing sizes: the
/// planes are reallocated and re-bound each time the size changes.
pub fn block_3d(b: &mut dyn Backend) -> Completion {
    let l = b.limits();
    let dims = l.max_block_dims.as_ref().expect("max block dims").value.0;
    let max = l.max_threads_per_block.as_ref().expect("max threads").value;
    let kmax = b
        .kernel_facts()
        .max_block
        .as_ref()
        .map_or(u64::MAX, |m| m.value);
    let cube = BlockSize {
        x: dims[0].min(8) as u32,
        y: dims[1].min(4) as u32,
        z: dims[2].min(2) as u32,
    };
    if cube.y < 2 || cube.z < 2 || cube.threads() > max.min(kmax) {
        return crate::skip(format!(
            "no 3-D block fits: max block dims {:?}, {max} threads, kernel {kmax}",
            dims
        ));
    }
    let flat = BlockSize {
        x: dims[0].min(32) as u32,
        y: 2,
        z: 1,
    };
    let config = SweepConfig {
        blocks: vec![cube, flat, BlockSize::linear(100.min(max.min(kmax)) as u32)],
        grid: GridPolicy::Data,
        protocol: fixed(0, 2),
        strict_kernel_limit: true,
        copy: false,
        frame_on_device: false,
    };
    // Two frame sizes in turn, then the first again.
    for (w, h, seed) in [(160, 90, 5), (33, 7, 6), (160, 90, 7)] {
        let result = sweep(b, &Frame::generate(w, h, seed), &config);
        assert_eq!(result.rows.len(), 3);
        assert!(
            result.rows.iter().all(|r| r.verified && r.ran()),
            "{w}x{h}: {:?}",
            result.rows
        );
    }
    // And once through run_batch directly, with a grid that covers the frame in strides.
    run_and_verify(b, &Frame::generate(128, 8, 4), Launch::linear(cube, 3), 2);
    Completion::Completed
}

/// The smallest frame (in pixels) the device's limits refuse, and the limit that refuses it.
fn smallest_refused_frame(b: &dyn Backend) -> (u64, String) {
    let l = b.limits();
    // Per plane (4 bytes a pixel) against the allocation and binding limits; four planes
    // (16 bytes a pixel) against the device's memory.
    [
        (&l.max_alloc_bytes, 4),
        (&l.max_buffer_binding_bytes, 4),
        (&l.global_mem_bytes, 16),
    ]
    .into_iter()
    .filter_map(|(limit, per_pixel)| {
        limit
            .as_ref()
            .map(|n| (n.value / per_pixel + 1, n.name.clone()))
    })
    .min_by_key(|(pixels, _)| *pixels)
    .expect("the device states at least its memory")
}

/// A frame too large for the device is refused by the core from the backend's limits before
/// anything is allocated (the boundary is exact), and by the backend if it is handed one; a
/// frame whose planes do not match its size and a copy larger than the device's memory are
/// refused; after all that, the backend still runs and verifies a frame.
pub fn frame_too_large(b: &mut dyn Backend) {
    let (pixels, limit) = smallest_refused_frame(b);
    let why = b.limits().frame_fits(pixels).unwrap_err();
    assert!(why.contains(&limit), "{why:?} should name {limit}");
    assert_eq!(
        b.limits().frame_fits(pixels - 1),
        Ok(()),
        "one pixel fewer fits"
    );
    let claimed = claimed_frame(pixels);
    assert!(b.limits().frame_fits(claimed.pixels()).is_err());
    // Handed it anyway (its planes are empty), the backend refuses it without allocating.
    let e = b.upload(&claimed).expect_err("a frame above the limits");
    assert!(
        matches!(e.kind, ErrorKind::OutOfMemory | ErrorKind::Driver),
        "{e}"
    );
    assert_eq!(e.api, b.api());
    // Nothing was uploaded: later calls are refused, not undefined.
    let e = b.poison_output().expect_err("poison with no frame");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    let e = b
        .run_batch(
            Work::Kernel(Launch::linear(BlockSize::linear(64), 1)),
            1,
            Stamps::None,
        )
        .expect_err("a dispatch with no frame");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    let e = b
        .read_output(&mut [0f32; 1])
        .expect_err("read-back with no frame");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");

    // Planes that do not hold the frame's pixel count.
    let mut short = Frame::generate(8, 8, 1);
    short.g.pop();
    let e = b.upload(&short).expect_err("a plane one value short");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    assert!(
        e.message.contains("63"),
        "{e} should give the plane's length"
    );

    // Two copy buffers, each as large as the device's memory.
    let global = b.limits().global_mem_bytes.clone().unwrap();
    assert!(b.limits().copy_fits(global.value, 0).is_err());
    let e = b
        .run_batch(
            Work::Copy {
                bytes: global.value,
            },
            1,
            Stamps::None,
        )
        .expect_err("a copy larger than the device");
    assert_eq!(e.kind, ErrorKind::OutOfMemory, "{e}");

    run_and_verify(
        b,
        &Frame::generate(64, 16, 3),
        Launch::linear(BlockSize::linear(64), 4),
        1,
    );
}

/// Device-to-device copies: per-dispatch and batch intervals, positive and finite, at a
/// plausible rate; the buffers serve a second batch, and another size.
pub fn copy_timing(b: &mut dyn Backend) {
    let bytes: u64 = 16 << 20;
    assert!(!b.copy_method().trim().is_empty());
    let copy = Work::Copy { bytes };
    let warm = b.run_batch(copy, 1, Stamps::None).expect("warm-up copy");
    assert_eq!(warm, Default::default(), "Stamps::None takes no stamps");
    let each = b
        .run_batch(copy, 4, Stamps::Each)
        .expect("timed copies")
        .each_ms;
    assert_eq!(each.len(), 4, "{each:?}");
    assert!(each.iter().all(|&t| positive(t)), "{each:?}");
    let mean = each.iter().sum::<f64>() / each.len() as f64;
    let gbps = 2.0 * bytes as f64 / (mean * 1e6);
    // Bytes read + written per second: above a floppy disk, below any memory system built.
    assert!(gbps > 0.01 && gbps < 100_000.0, "{gbps} GB/s");
    crate::show!(
        "{}: copy of {bytes} bytes by {}: {each:?} ms = {gbps:.1} GB/s",
        b.identity().name,
        b.copy_method()
    );
    // The same buffers serve a second batch.
    let batch = b.run_batch(copy, 2, Stamps::Batch).expect("a second batch");
    assert!(batch.batch_ms.is_some_and(positive), "{batch:?}");
    assert!(batch.each_ms.is_empty(), "{batch:?}");
    // Another size gets buffers of its own.
    let other = b
        .run_batch(Work::Copy { bytes: 1 << 20 }, 1, Stamps::Each)
        .expect("a copy of another size")
        .each_ms;
    assert!(other.len() == 1 && positive(other[0]), "{other:?}");
}

/// The batch protocol: Stamps::Batch gives one interval, Stamps::Each one per dispatch,
/// Stamps::None nothing; dispatches enqueued back to back verify; the poison after a batch
/// lands after it (the read-back sees NaN only), and the read-back after a batch sees it
/// finished; a read-back into a slice of the wrong size is refused.
pub fn batch_protocol(b: &mut dyn Backend) {
    let frame = Frame::generate(320, 90, 13);
    let reference = frame.reference();
    b.upload(&frame).expect("upload");
    // A quarter of the covering grid: each thread strides over four pixels.
    let launch = Launch::linear(
        BlockSize::linear(64),
        blocks_to_cover(frame.pixels(), 64).div_ceil(4) as u32,
    );
    let work = Work::Kernel(launch);
    let mut out = vec![0f32; frame.pixels() as usize];

    b.poison_output().unwrap();
    let t = b.run_batch(work, 5, Stamps::Batch).unwrap();
    assert!(
        t.batch_ms.is_some_and(positive) && t.each_ms.is_empty(),
        "{t:?}"
    );
    let t = b.run_batch(work, 5, Stamps::Each).unwrap();
    assert!(t.batch_ms.is_none(), "{t:?}");
    assert_eq!(t.each_ms.len(), 5, "{t:?}");
    assert!(t.each_ms.iter().all(|&x| positive(x)), "{t:?}");
    let t = b.run_batch(work, 3, Stamps::None).unwrap();
    assert!(t.batch_ms.is_none() && t.each_ms.is_empty(), "{t:?}");
    b.read_output(&mut out).unwrap();
    verify(&out, &reference).unwrap_or_else(|m| panic!("after three batches: {m:?}"));

    // Poison after a batch: ordered after it, so nothing the batch wrote survives.
    b.run_batch(work, 8, Stamps::None).unwrap();
    b.poison_output().unwrap();
    b.read_output(&mut out).unwrap();
    let written = out.iter().filter(|v| !v.is_nan()).count();
    assert_eq!(
        written, 0,
        "{written} pixels escaped the poison after a batch"
    );
    // A back-to-back batch straight after the poison, read back at once.
    b.run_batch(work, 8, Stamps::None).unwrap();
    b.read_output(&mut out).unwrap();
    verify(&out, &reference).unwrap_or_else(|m| panic!("after 8 back-to-back: {m:?}"));

    // The one-pixel-per-thread kernel, with a covering grid, in one batch.
    b.set_kernel(KernelVariant::OnePixelPerThread).unwrap();
    b.poison_output().unwrap();
    let full = Launch::linear(
        BlockSize::linear(64),
        blocks_to_cover(frame.pixels(), 64) as u32,
    );
    b.run_batch(Work::Kernel(full), 4, Stamps::Each).unwrap();
    b.read_output(&mut out).unwrap();
    b.set_kernel(KernelVariant::GridStride).unwrap();
    verify(&out, &reference).unwrap_or_else(|m| panic!("one pixel per thread: {m:?}"));

    // A read-back into a slice of the wrong size is refused, not truncated.
    let e = b
        .read_output(&mut out[1..])
        .expect_err("a read-back one pixel short");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
}

/// A launch above every block limit the backend reports is rejected (by the backend before
/// the driver, or by the driver) as LaunchRejected naming the block's size; the refusal is
/// not sticky: a legal launch after it runs and verifies.
pub fn rejected_launch(b: &mut dyn Backend) {
    let frame = Frame::generate(64, 16, 3);
    b.upload(&frame).expect("upload");
    let device_max = b.limits().max_threads_per_block.as_ref().unwrap().value;
    // NVIDIA's OpenCL runs blocks above its kernel limit: only above both is a refusal sure.
    let kernel_max = b.kernel_facts().max_block.as_ref().map_or(0, |m| m.value);
    let threads = (device_max.max(kernel_max) + 1).min(u32::MAX as u64);
    let launch = Launch::linear(BlockSize::linear(threads as u32), 1);
    let e = b
        .run_batch(Work::Kernel(launch), 1, Stamps::Each)
        .expect_err("a block above the limits must be refused");
    assert_eq!(e.kind, ErrorKind::LaunchRejected, "{e}");
    assert_eq!(e.api, b.api());
    assert!(
        e.message.contains(&threads.to_string()),
        "{e} should name the block ({threads} threads)"
    );
    crate::show!("refused: {e}");
    b.poison_output().unwrap();
    let ok = Launch::linear(BlockSize::linear(64), 4);
    let t = b.run_batch(Work::Kernel(ok), 2, Stamps::Each).unwrap();
    assert_eq!(t.each_ms.len(), 2);
    let mut out = vec![0f32; frame.pixels() as usize];
    b.read_output(&mut out).unwrap();
    verify(&out, &frame.reference()).unwrap_or_else(|m| panic!("after a refusal: {m:?}"));
}

/// Opening the index after the last device (and one far past it) is an Unavailable error of
/// this API that names the index, never a panic or a device.
pub fn open_past_last_device(driver: &dyn Driver, devices: &[DeviceIdentity]) {
    let last = devices.last().expect("at least one device");
    for index in [devices.len(), devices.len() + 7] {
        let ghost = DeviceIdentity {
            index,
            ..last.clone()
        };
        match driver.open(&ghost, &OpenOptions::default()) {
            Ok(b) => panic!(
                "{} device {index} should not exist, but opened {}",
                driver.api(),
                b.identity().name
            ),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::Unavailable, "{e}");
                assert_eq!(e.api, driver.api());
                assert!(
                    e.message.contains(&index.to_string()),
                    "{e} should name {index}"
                );
            }
        }
    }
}
