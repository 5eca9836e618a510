//! The limits report as data: each API's view of a device (its limits, kernel facts and
//! timer), grouped per physical device. blocksweep-render draws it with each specification's
//! guarantees beside the values.
//!
//! The guarantees shown are each API's own ([`crate::ApiInfo::guarantees`], quoted with their
//! sections in the backend crates and docs/limits.md).

use serde::Serialize;

use crate::backend::{DeviceIdentity, KernelFacts, TimerInfo};
use crate::limits::Limits;
use crate::sweep::SweepResult;

/// One API's view, as the limits tables need it.
#[derive(Debug, Clone, Serialize)]
pub struct ApiLimits {
    pub device: DeviceIdentity,
    pub limits: Limits,
    pub kernel: KernelFacts,
    pub timer: TimerInfo,
}

/// A saved sweep's view of its API: its limits as `limits` showed them when it ran.
impl From<&SweepResult> for ApiLimits {
    fn from(r: &SweepResult) -> ApiLimits {
        ApiLimits {
            device: r.device.clone(),
            limits: r.limits.clone(),
            kernel: r.kernel.clone(),
            timer: r.timer.clone(),
        }
    }
}

/// The limits of one physical device (or of the devices one `limits` call named), one view
/// per API.
#[derive(Debug, Clone, Serialize)]
pub struct LimitsGroup {
    /// "physical device 0 (NVIDIA H200, matched by UUID)"; shown above the group when a call
    /// covers several devices.
    pub heading: Option<String>,
    /// Every view is one API's view of the same physical device: only then does a difference
    /// between them mean the APIs disagree (≠).
    pub one_physical_device: bool,
    pub views: Vec<ApiLimits>,
}

/// What `limits` prints. JSON: every API view as one flat array (its first shape; each view
/// names its device).
#[derive(Debug, Clone, Serialize)]
pub struct LimitsReport {
    pub groups: Vec<LimitsGroup>,
}

impl LimitsReport {
    pub fn views(&self) -> impl Iterator<Item = &ApiLimits> {
        self.groups.iter().flat_map(|g| &g.views)
    }
}
