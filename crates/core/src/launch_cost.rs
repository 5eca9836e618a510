//! What a launch costs on each API (`blocksweep launch-cost`): the built-in kernel over one
//! pixel, as near an empty kernel as a checked one gets, dispatched back to back on the
//! device clock, and one dispatch at a time on the host clock.
//!
//! Three figures per API, each per dispatch:
//! - **device**: one device interval around `dispatches` back-to-back dispatches, divided by
//!   them: what a dispatch occupies the device for when the queue never runs dry (the gap
//!   between kernels, where the launch cost shows on the device);
//! - **enqueue**: the host clock around that same batch (enqueued, then one wait), divided
//!   the same way: how fast the host can issue dispatches;
//! - **round trip**: the host clock around one dispatch and its wait, `round_trips` times
//!   (median, minimum, 90th percentile): what a program that waits for every kernel pays.
//!
//! The host figures include blocksweep's own work around the API (a Vulkan command buffer
//! recorded per batch, events or queries per batch); `benches/` times the same with nothing
//! but each API, and docs/launch-cost.md sets the two side by side.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::backend::DeviceIdentity;
use crate::backend::{Backend, BackendError, ErrorKind, Launch, Stamps, TimerInfo, Work};
use crate::blocks::BlockSize;
use crate::frame::Frame;

/// How many dispatches each figure takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CostConfig {
    /// Back-to-back dispatches in the timed batch (device and enqueue).
    pub dispatches: u32,
    /// Dispatches timed one at a time (round trip).
    pub round_trips: u32,
    /// Untimed dispatches before each of the two, as in a sweep's row.
    pub warmups: u32,
    /// Threads in the one block every dispatch launches.
    pub block: u32,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig {
            dispatches: 2000,
            round_trips: 200,
            warmups: 20,
            block: 32,
        }
    }
}

/// A host-clock distribution over single dispatches, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median_us: f64,
    pub min_us: f64,
    pub p90_us: f64,
}

impl Spread {
    /// The distribution of `us`; `None` when empty.
    pub fn of(us: &[f64]) -> Option<Spread> {
        let mut s: Vec<f64> = us.iter().copied().filter(|v| v.is_finite()).collect();
        if s.is_empty() {
            return None;
        }
        s.sort_by(f64::total_cmp);
        let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        Some(Spread {
            median_us: at(0.5),
            min_us: s[0],
            p90_us: at(0.9),
        })
    }
}

/// One API's launch cost on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchCost {
    pub device: DeviceIdentity,
    /// The one launch every dispatch makes (one block over one pixel).
    pub launch: Launch,
    pub config: CostConfig,
    /// Device clock per back-to-back dispatch, microseconds.
    pub device_us: f64,
    /// Host clock per back-to-back dispatch (the batch enqueued and waited for once).
    pub enqueue_us: f64,
    /// Host clock of one dispatch and its wait.
    pub round_trip: Spread,
    /// The device timer the device figure was taken with.
    pub timer: TimerInfo,
}

/// Every API's launch cost, per physical device.
#[derive(Debug, Clone, Serialize)]
pub struct CostGroup {
    /// "physical device 0 (...)" where a call covers several devices.
    pub heading: Option<String>,
    pub costs: Vec<LaunchCost>,
}

/// What `launch-cost` prints.
#[derive(Debug, Clone, Serialize)]
pub struct CostReport {
    pub groups: Vec<CostGroup>,
}

impl CostReport {
    pub fn costs(&self) -> impl Iterator<Item = &LaunchCost> {
        self.groups.iter().flat_map(|g| &g.costs)
    }
}

/// Measures one API's launch cost: loads the built-in kernel over a one-pixel frame, times it
/// as the module says, then checks the pixel (poisoned first) against the CPU's.
pub fn measure(backend: &mut dyn Backend, config: &CostConfig) -> Result<LaunchCost, BackendError> {
    // Every count at least 1 (the CLI's ranges say so to a user).
    let config = &CostConfig {
        dispatches: config.dispatches.max(1),
        round_trips: config.round_trips.max(1),
        warmups: config.warmups.max(1),
        block: config.block.max(1),
    };
    let frame = Frame::generate(1, 1, 7);
    crate::builtin::load(backend, crate::backend::KernelVariant::GridStride, &frame)?;
    let launch = Launch::linear(BlockSize::linear(config.block), 1);
    backend.prepare(&[launch.block]);
    let work = Work::Kernel(launch);

    backend.run_batch(work, config.warmups, Stamps::None)?;
    let start = Instant::now();
    let batch = backend.run_batch(work, config.dispatches, Stamps::Batch)?;
    let enqueue_us = micros(start) / config.dispatches as f64;
    let api = backend.api();
    let device_ms = batch.batch_ms.ok_or_else(|| {
        BackendError::new(
            api,
            ErrorKind::Driver,
            "the batch came back without its interval",
        )
    })?;

    backend.run_batch(work, config.warmups, Stamps::None)?;
    let mut trips = Vec::with_capacity(config.round_trips as usize);
    for _ in 0..config.round_trips {
        let start = Instant::now();
        backend.run_batch(work, 1, Stamps::None)?;
        trips.push(micros(start));
    }
    check(backend, &frame, launch)?;
    Ok(LaunchCost {
        device: backend.identity().clone(),
        launch,
        config: *config,
        device_us: device_ms * 1e3 / config.dispatches as f64,
        enqueue_us,
        round_trip: Spread::of(&trips)
            .ok_or_else(|| BackendError::new(api, ErrorKind::Driver, "no round trip was timed"))?,
        timer: backend.timer(),
    })
}

fn micros(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

/// One more dispatch over a poisoned output, its pixel against the CPU reference.
fn check(backend: &mut dyn Backend, frame: &Frame, launch: Launch) -> Result<(), BackendError> {
    crate::builtin::poison(backend, frame.pixels())?;
    backend.run_batch(Work::Kernel(launch), 1, Stamps::None)?;
    let mut out = vec![0f32; frame.pixels() as usize];
    crate::builtin::read(backend, &mut out)?;
    match crate::verify::verify(&out, &frame.reference()) {
        Ok(()) => Ok(()),
        Err(m) => Err(BackendError::new(
            backend.api(),
            ErrorKind::Driver,
            format!(
                "launch cost: block {} grid 1 wrote {} at pixel {} of buffer 'out', the CPU {}",
                launch.block, m.got, m.index, m.expected
            ),
        )),
    }
}

#[cfg(test)]
#[path = "launch_cost_tests.rs"]
mod tests;
