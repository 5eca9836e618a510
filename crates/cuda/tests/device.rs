//! The shared conformance checks, and CUDA-specific ones, on device 0. Skipped (or failed,
//! under BLOCKSWEEP_REQUIRE=cuda) where there is no CUDA device.

use blocksweep_core::conformance::BatchExt;
use blocksweep_core::conformance::{self, skip_unavailable};
use blocksweep_core::grid::model_blocks_per_mp;
use blocksweep_core::{Backend, BlockSize, ErrorKind, Frame, KernelVariant, Launch, Limits};
use blocksweep_cuda::{nvrtc_available, open, probe, CudaBackend, CudaCompiler, CudaOptions};

fn backend_with(compiler: CudaCompiler) -> Option<CudaBackend> {
    match probe() {
        Err(e) => {
            skip_unavailable(blocksweep_cuda::API, &e.to_string());
            None
        }
        Ok(_) => Some(open(0, &CudaOptions { compiler }).expect("open CUDA device 0")),
    }
}

fn backend() -> Option<CudaBackend> {
    backend_with(CudaCompiler::Auto)
}

#[test]
fn limits_are_consistent_and_native() {
    let Some(b) = backend() else { return };
    conformance::check_limits(&b);
    let l = b.limits();
    assert_eq!(
        l.max_threads_per_block.as_ref().unwrap().name,
        "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"
    );
    let m = l.mp_model.as_ref().expect("CUDA exposes the per-SM limits");
    assert_eq!(m.warp_size, 32);
    assert!(m.max_warps >= 32 && m.max_blocks >= 16, "{m:?}");
    assert!(l.compute_capability.is_some());
    assert!(Limits::value(&l.multiprocessors).unwrap() >= 1);
    assert!(Limits::value(&l.global_mem_bytes).unwrap() > 1 << 30);
    eprintln!("{} ({}): {:#?}", b.identity().name, b.identity().driver, l);
    eprintln!("kernel: {:#?}", b.kernel_facts());
}

#[test]
fn full_sweep_verifies_every_row() {
    let Some(mut b) = backend() else { return };
    let result = conformance::check_full_sweep(&mut b);
    assert!(result
        .grid_source
        .contains("cuOccupancyMaxActiveBlocksPerMultiprocessor"));
    let s = result
        .suggestion
        .as_ref()
        .expect("CUDA suggests a block size");
    assert!(s.block >= 32 && s.block <= 1024 && s.min_grid >= 1, "{s:?}");
    for r in &result.rows {
        eprintln!(
            "block {:>5} grid {:>6} blk/SM {:?} occ {:?} mean {:?} ms {:?} GB/s",
            r.block.to_string(),
            r.grid,
            r.blocks_per_mp,
            r.occupancy,
            r.mean_ms(),
            r.gbps
        );
    }
}

#[test]
fn embedded_ptx_sweep_verifies_every_row() {
    let Some(mut b) = backend_with(CudaCompiler::Ptx) else {
        return;
    };
    assert!(b.kernel_facts().compiled_by.contains("embedded PTX"));
    conformance::check_full_sweep(&mut b);
    conformance::check_fault_is_caught(&mut b);
}

#[test]
fn unwritten_pixels_are_caught() {
    let Some(mut b) = backend() else { return };
    conformance::check_fault_is_caught(&mut b);
}

#[test]
fn oversize_block_is_skipped() {
    let Some(mut b) = backend() else { return };
    conformance::check_oversize_is_skipped(&mut b);
}

#[test]
fn copy_is_timed_on_the_device() {
    let Some(mut b) = backend() else { return };
    let bytes = 64 << 20;
    let times = b.copy_each(bytes, 1, 5).unwrap();
    assert_eq!(times.len(), 5);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let gbps = 2.0 * bytes as f64 / (mean * 1e6);
    eprintln!("copy {bytes} bytes: {times:?} ms, {gbps:.0} GB/s");
    assert!(times.iter().all(|t| t.is_finite() && *t > 0.0), "{times:?}");
    // Between a slow PCIe-era card and anything that exists.
    assert!(gbps > 10.0 && gbps < 20_000.0, "{gbps} GB/s");
    // The buffers were freed: a second copy fits just as well.
    assert!(!b.copy_each(bytes, 0, 1).unwrap().is_empty());
}

#[test]
fn the_driver_refuses_blocks_over_its_limit() {
    let Some(mut b) = backend() else { return };
    let frame = Frame::generate(64, 16, 3);
    b.upload(&frame).unwrap();
    let max = Limits::value(&b.limits().max_threads_per_block).unwrap() as u32;
    for block in [BlockSize::linear(max + 1), BlockSize { x: 32, y: 32, z: 2 }] {
        let err = b
            .dispatch_each(Launch::linear(block, 1), 0, 1)
            .expect_err("driver must refuse");
        assert_eq!(err.kind, ErrorKind::LaunchRejected, "{err}");
        assert!(err.message.contains("CUDA_ERROR_INVALID_VALUE"), "{err}");
        eprintln!("refused: {err}");
    }
    // The refusal is not sticky: a legal launch still runs and verifies.
    b.poison_output().unwrap();
    let times = b
        .dispatch_each(Launch::linear(BlockSize::linear(256), 1), 0, 1)
        .unwrap();
    assert_eq!(times.len(), 1);
    let mut out = vec![0f32; frame.pixels() as usize];
    b.read_output(&mut out).unwrap();
    assert!(blocksweep_core::verify::verify(&out, &frame.reference()).is_ok());
}

#[test]
fn a_3d_block_within_limits_runs_and_verifies() {
    let Some(mut b) = backend() else { return };
    let frame = Frame::generate(128, 8, 4);
    b.upload(&frame).unwrap();
    b.poison_output().unwrap();
    let block = BlockSize { x: 16, y: 4, z: 2 };
    b.dispatch_each(Launch::linear(block, 3), 1, 2).unwrap();
    let mut out = vec![0f32; frame.pixels() as usize];
    b.read_output(&mut out).unwrap();
    assert!(blocksweep_core::verify::verify(&out, &frame.reference()).is_ok());
}

#[test]
fn a_frame_larger_than_free_memory_is_refused_before_allocating() {
    let Some(mut b) = backend() else { return };
    // 10^10 pixels (160 GB on the device); the host planes are empty, and upload must
    // refuse on the memory check before it looks at them.
    let frame = Frame {
        width: 100_000,
        height: 100_000,
        seed: 0,
        r: Vec::new(),
        g: Vec::new(),
        b: Vec::new(),
    };
    let err = b.upload(&frame).expect_err("too large");
    assert_eq!(err.kind, ErrorKind::OutOfMemory, "{err}");
    assert!(
        err.message.contains("frame needs 4 x 40000000000 bytes"),
        "{err}"
    );
    assert!(err.message.contains("cuMemGetInfo"), "{err}");
}

#[test]
fn occupancy_api_agrees_with_the_core_model() {
    let Some(mut b) = backend() else { return };
    let model = b.limits().mp_model.clone().unwrap();
    let regs = b.kernel_facts().registers.as_ref().unwrap().value;
    assert!(regs > 0 && regs <= 255, "{regs} registers");
    for t in blocksweep_core::blocks::DEFAULT_BLOCKS {
        let api = b.residency(BlockSize::linear(t)).unwrap().unwrap();
        assert_eq!(api.source, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        let modelled = model_blocks_per_mp(&model, t as u64, Some(regs));
        assert_eq!(api.blocks_per_mp, modelled, "block {t}: API vs model");
    }
}

#[test]
fn both_compilers_build_both_kernels() {
    let Some(mut ptx) = backend_with(CudaCompiler::Ptx) else {
        return;
    };
    let f = ptx.kernel_facts().clone();
    assert!(f.compiled_by.contains("embedded PTX"), "{}", f.compiled_by);
    assert!(f.registers.as_ref().unwrap().value > 0);
    assert_eq!(
        f.max_block.as_ref().unwrap().name,
        "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"
    );
    ptx.set_kernel(KernelVariant::OnePixelPerThread).unwrap();
    assert!(ptx
        .kernel_facts()
        .extra
        .iter()
        .any(|(_, v)| v == "grayscale_one_per_thread"));
    if nvrtc_available() {
        let nv = backend_with(CudaCompiler::Nvrtc).unwrap();
        assert!(
            nv.kernel_facts().compiled_by.starts_with("NVRTC"),
            "{}",
            nv.kernel_facts().compiled_by
        );
        assert!(nv
            .kernel_facts()
            .extra
            .iter()
            .any(|(k, _)| k == "nvrtcVersion"));
        eprintln!("NVRTC: {:?}", nv.kernel_facts());
    } else {
        let err = open(
            0,
            &CudaOptions {
                compiler: CudaCompiler::Nvrtc,
            },
        )
        .err()
        .unwrap();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        assert!(err.to_string().contains("libnvrtc"), "{err}");
    }
}

/// The seed's full sweep on a 4K frame (13 rows, 3 warm-ups, 10 timed runs), with the copy
/// ceiling. Ignored by default (it takes a few seconds); run with `--include-ignored`.
#[test]
#[ignore]
fn seed_sweep_on_a_4k_frame() {
    let Some(mut b) = backend() else { return };
    let (w, h) = blocksweep_core::frame::DEFAULT_SIZE;
    let frame = Frame::generate(w, h, 1);
    let reference = frame.reference();
    let config = blocksweep_core::SweepConfig::default();
    let (result, err) = blocksweep_core::sweep::run(
        &mut b,
        &frame,
        &reference,
        &config,
        None,
        &mut blocksweep_core::sweep::Quiet,
        &mut |_| {},
    );
    assert!(err.is_none(), "{err:?}");
    assert_eq!(result.rows_run(), 13);
    assert!(result.rows.iter().all(|r| r.verified));
    let copy = result.copy.as_ref().expect("copy ceiling");
    eprintln!("grid source: {}", result.grid_source);
    eprintln!("suggestion: {:?}", result.suggestion);
    eprintln!(
        "copy {} bytes: {:.4} ms mean, {:.1} GB/s",
        copy.bytes, copy.timing.stats.mean, copy.gbps
    );
    eprintln!(" thr/blk  blk/SM  occ    grid      mean_ms   min_ms    GB/s  of_best  of_copy");
    for r in &result.rows {
        let s = r.stats().unwrap();
        eprintln!(
            "{:>8} {:>7} {:>4.0}% {:>7} {:>10.4} {:>8.4} {:>7.1} {:>8.2} {:>8.2}",
            r.block.to_string(),
            r.blocks_per_mp.unwrap_or(0),
            100.0 * r.occupancy.unwrap_or(0.0),
            r.grid,
            s.mean,
            s.min,
            r.gbps.unwrap(),
            r.of_best.unwrap(),
            r.of_copy.unwrap_or(0.0)
        );
    }
    let best = result.best().unwrap();
    eprintln!(
        "fastest: {} threads per block at {:.4} ms; {} of 13 within 95%",
        best.block,
        best.mean_ms().unwrap(),
        result.rows_within(0.95)
    );
}
