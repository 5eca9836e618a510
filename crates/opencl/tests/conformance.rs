//! The core's shared conformance checks, on every OpenCL device this machine has.

mod common;

use blocksweep_core::conformance;
use common::{devices, open_device};

#[test]
fn limits_are_consistent() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        conformance::check_limits(&open_device(d));
    }
}

#[test]
fn full_sweep_verifies_every_allowed_row() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        let mut b = open_device(d);
        let result = conformance::check_full_sweep(&mut b);
        // The seed's table, as this device ran it (visible with --nocapture).
        println!(
            "{} ({}): grid source {}",
            d.name, d.driver, result.grid_source
        );
        for r in &result.rows {
            println!(
                "  block {:>5} grid {:>6} mean {:>9.4} ms  of best {:.2}  {}",
                r.block.to_string(),
                r.grid,
                r.stats.map_or(f64::NAN, |s| s.mean),
                r.of_best.unwrap_or(f64::NAN),
                r.skipped.as_deref().unwrap_or("")
            );
        }
    }
}

#[test]
fn fault_is_caught() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        conformance::check_fault_is_caught(&mut open_device(d));
    }
}

#[test]
fn oversize_is_skipped() {
    let Some(devs) = devices() else { return };
    for d in &devs {
        conformance::check_oversize_is_skipped(&mut open_device(d));
    }
}
