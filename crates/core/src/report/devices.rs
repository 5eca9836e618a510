//! `blocksweep devices` as data: the physical devices (each API's view of one device grouped
//! by UUID, then PCI bus id, then name), and each API's devices or why it has none.

use serde::Serialize;

use crate::backend::{Api, DeviceIdentity};
use crate::physical::PhysicalDevice;
use crate::provider::Registry;

/// An API without a device, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unavailable {
    pub api: Api,
    pub reason: String,
}

/// One API's devices, or why it has none.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiDevices {
    pub api: Api,
    pub devices: Vec<DeviceIdentity>,
    pub unavailable: Option<String>,
}

/// What `devices` prints. JSON: `{"physical_devices": [...], "unavailable": [{"api",
/// "reason"}]}` (scripts and tests read it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DevicesReport {
    pub physical_devices: Vec<PhysicalDevice>,
    pub unavailable: Vec<Unavailable>,
    /// Every API in the provider list, in order (the same facts as above, per API).
    #[serde(skip)]
    pub apis: Vec<ApiDevices>,
}

impl DevicesReport {
    pub fn of(reg: &Registry) -> DevicesReport {
        let apis: Vec<ApiDevices> = reg
            .apis()
            .map(|api| ApiDevices {
                api,
                devices: reg.devices(api).to_vec(),
                unavailable: reg.unavailable(api).map(str::to_string),
            })
            .collect();
        DevicesReport {
            physical_devices: reg.physical.clone(),
            unavailable: apis
                .iter()
                .filter_map(|a| {
                    a.unavailable.as_ref().map(|why| Unavailable {
                        api: a.api,
                        reason: why.clone(),
                    })
                })
                .collect(),
            apis,
        }
    }

    /// The physical device `d` is part of.
    pub fn physical_of(&self, d: &DeviceIdentity) -> Option<&PhysicalDevice> {
        self.physical_devices.iter().find(|p| {
            p.members
                .iter()
                .any(|m| m.api == d.api && m.index == d.index)
        })
    }
}
