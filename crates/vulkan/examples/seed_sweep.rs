//! The seed's sweep (thirteen workgroup sizes, 3 warm-ups, mean of 10, every row verified)
//! on one Vulkan device, printed as the seed's table. For trying the backend alone:
//!
//! ```text
//! cargo run --release -p blocksweep-vulkan --example seed_sweep -- [device] [width] [height] [grid]
//! ```
//!
//! The device defaults to the first GPU (else device 0), the frame to 3840 x 2160, the grid
//! policy to `wave` (also `data` or a number of workgroups).

use blocksweep_core::sweep::{self, Quiet, SweepConfig};
use blocksweep_core::{Backend, DeviceKind, Frame, GridPolicy};
use blocksweep_vulkan::{open, probe, VulkanOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<u64> = raw.iter().take(3).map(|a| a.parse().unwrap_or(0)).collect();
    let grid: GridPolicy = match raw.get(3).map(|g| g.parse()).transpose() {
        Ok(g) => g.unwrap_or_default(),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let devices = match probe() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Vulkan unavailable: {e}");
            return ExitCode::FAILURE;
        }
    };
    for d in &devices {
        println!(
            "device {}: {} ({}, {}, driver {})",
            d.index, d.name, d.kind, d.vendor, d.driver
        );
    }
    let index = args.first().map(|&i| i as usize).unwrap_or_else(|| {
        devices
            .iter()
            .position(|d| d.kind == DeviceKind::Gpu)
            .unwrap_or(0)
    });
    let (w, h) = (
        args.get(1).copied().unwrap_or(3840) as u32,
        args.get(2).copied().unwrap_or(2160) as u32,
    );
    let mut b = match open(index, &VulkanOptions::default()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("open({index}) failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let frame = Frame::generate(w, h, 1);
    let config = SweepConfig {
        grid,
        ..SweepConfig::default()
    };
    let copy_bytes = frame.pixels() * 8;
    let (result, err) = sweep::run(
        &mut b,
        &frame,
        &frame.reference(),
        &config,
        None,
        Some(copy_bytes),
        &mut Quiet,
    );
    println!(
        "{} on {}: {}x{}, {}",
        result.api, result.device.name, w, h, result.timer.method
    );
    println!("grid: {}", result.grid_source);
    println!(" thr/blk  warps  idle  blk/SM    occ    grid        ms     GB/s  of best  of copy");
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in &result.rows {
        match (&r.skipped, r.stats) {
            (None, Some(s)) => println!(
                "{:>8} {:>6} {:>5} {:>7} {:>6} {:>7} {:>9.4} {:>8.1} {:>8.2} {:>8.2}",
                r.block.to_string(),
                opt(r.warps),
                opt(r.idle_lanes),
                opt(r.blocks_per_mp.map(u64::from)),
                r.occupancy
                    .map_or("-".into(), |o| format!("{:.0}%", o * 100.0)),
                r.grid,
                s.mean,
                r.gbps.unwrap_or(f64::NAN),
                r.of_best.unwrap_or(f64::NAN),
                r.of_copy.unwrap_or(f64::NAN),
            ),
            (reason, _) => println!(
                "{:>8} skipped: {}",
                r.block.to_string(),
                reason.as_deref().unwrap_or("?")
            ),
        }
    }
    if let Some(c) = &result.copy {
        println!(
            "copy ceiling: {} bytes in {:.4} ms = {:.1} GB/s",
            c.bytes, c.stats.mean, c.gbps
        );
    }
    if let Some(best) = result.best() {
        println!(
            "fastest: {} at {:.4} ms; {} of {} rows within 95%",
            best.block,
            best.stats.map_or(f64::NAN, |s| s.mean),
            result.rows_within(0.95),
            result.rows_run()
        );
    }
    println!("registers: {:?}", b.kernel_facts().registers);
    match err {
        Some(e) => {
            eprintln!("sweep failed: {e}");
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    }
}
