//! Grouping each API's devices into physical devices.
//!
//! The same GPU shows up once per API. They are matched, in order of trust, by the 16-byte
//! device UUID (CUDA cuDeviceGetUuid, Vulkan VkPhysicalDeviceIDProperties::deviceUUID, OpenCL
//! CL_DEVICE_UUID_KHR), then by PCI bus address (for vendors whose UUIDs differ between
//! APIs), then by name where the name is unique within each API. Two devices of the same API
//! are never merged: two identical cards are two physical devices.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::backend::{format_uuid, Api, DeviceIdentity, DeviceKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchRule {
    /// Only one API sees this device.
    Single,
    Uuid,
    PciBusId,
    Name,
}

impl fmt::Display for MatchRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatchRule::Single => "one API only",
            MatchRule::Uuid => "matched by UUID",
            MatchRule::PciBusId => "matched by PCI bus id",
            MatchRule::Name => "matched by name",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhysicalDevice {
    pub index: usize,
    pub name: String,
    pub kind: DeviceKind,
    #[serde(with = "crate::uuid::uuid_text")]
    pub uuid: Option<[u8; 16]>,
    /// Each API's view of it, at most one per API.
    pub members: Vec<DeviceIdentity>,
    /// The weakest rule that joined two members.
    pub rule: MatchRule,
}

impl PhysicalDevice {
    pub fn member(&self, api: Api) -> Option<&DeviceIdentity> {
        self.members.iter().find(|m| m.api == api)
    }

    pub fn apis(&self) -> Vec<Api> {
        self.members.iter().map(|m| m.api).collect()
    }
}

fn norm(name: &str) -> String {
    name.to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Which rule, if any, says `a` and `b` are the same physical device.
fn same(a: &DeviceIdentity, b: &DeviceIdentity, all: &[DeviceIdentity]) -> Option<MatchRule> {
    if a.api == b.api {
        return None;
    }
    if let (Some(x), Some(y)) = (a.uuid, b.uuid) {
        if x == y {
            return Some(MatchRule::Uuid);
        }
    }
    if let (Some(x), Some(y)) = (&a.pci_bus_id, &b.pci_bus_id) {
        // A PCI address is authoritative both ways: same slot, same device; different, not.
        return (x.eq_ignore_ascii_case(y)).then_some(MatchRule::PciBusId);
    }
    let unique = |d: &DeviceIdentity| {
        all.iter()
            .filter(|o| o.api == d.api && norm(&o.name) == norm(&d.name))
            .count()
            == 1
    };
    // Equal UUIDs were handled; unequal ones only fall through to the name when no PCI
    // address is known, which is where vendors with per-API UUIDs leave us.
    (a.kind == b.kind && norm(&a.name) == norm(&b.name) && unique(a) && unique(b))
        .then_some(MatchRule::Name)
}

fn strength(r: MatchRule) -> u8 {
    match r {
        MatchRule::Uuid => 3,
        MatchRule::PciBusId => 2,
        MatchRule::Name => 1,
        MatchRule::Single => 4,
    }
}

/// Groups devices from every API into physical devices: GPUs first, then in API order.
pub fn group(devices: &[DeviceIdentity]) -> Vec<PhysicalDevice> {
    let mut groups: Vec<(Vec<usize>, MatchRule)> = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        let mut joined = false;
        for (members, rule) in groups.iter_mut() {
            if members.iter().any(|&m| devices[m].api == d.api) {
                continue;
            }
            if let Some(r) = members.iter().find_map(|&m| same(&devices[m], d, devices)) {
                members.push(i);
                if strength(r) < strength(*rule) {
                    *rule = r;
                }
                joined = true;
                break;
            }
        }
        if !joined {
            groups.push((vec![i], MatchRule::Single));
        }
    }
    let mut out: Vec<PhysicalDevice> = groups
        .into_iter()
        .map(|(m, rule)| {
            let first = &devices[m[0]];
            PhysicalDevice {
                index: 0,
                name: first.name.clone(),
                kind: first.kind,
                uuid: m.iter().find_map(|&i| devices[i].uuid),
                members: m.iter().map(|&i| devices[i].clone()).collect(),
                rule,
            }
        })
        .collect();
    out.sort_by_key(|p| p.kind != DeviceKind::Gpu);
    for (i, p) in out.iter_mut().enumerate() {
        p.index = i;
    }
    out
}

/// Finds the physical device `selector` names: its index in [`group`]'s order, a UUID prefix
/// (dashes optional, at least 4 hex digits), or a case-insensitive name substring. Errors
/// list the devices there are.
pub fn select<'a>(
    devices: &'a [PhysicalDevice],
    selector: &str,
) -> Result<&'a PhysicalDevice, String> {
    let list = || {
        devices
            .iter()
            .map(|d| format!("{}: {}", d.index, d.name))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if devices.is_empty() {
        return Err(format!(
            "no device matches '{selector}': no API found any device"
        ));
    }
    let wanted = selector.trim();
    let as_index = wanted.parse::<usize>().ok();
    if let Some(d) = as_index.and_then(|i| devices.get(i)) {
        return Ok(d);
    }
    let hex: String = wanted
        .chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_ascii_lowercase();
    if hex.len() >= 4 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        let hits: Vec<_> = devices
            .iter()
            .filter(|d| {
                d.members
                    .iter()
                    .filter_map(|m| m.uuid)
                    .any(|u| format_uuid(&u).replace('-', "").starts_with(&hex))
            })
            .collect();
        if hits.len() == 1 {
            return Ok(hits[0]);
        }
    }
    if let Some(i) = as_index {
        return Err(format!("no device with index {i} (devices: {})", list()));
    }
    let lower = wanted.to_ascii_lowercase();
    let hits: Vec<_> = devices
        .iter()
        .filter(|d| {
            d.members
                .iter()
                .any(|m| m.name.to_ascii_lowercase().contains(&lower))
        })
        .collect();
    match hits.len() {
        1 => Ok(hits[0]),
        0 => Err(format!(
            "no device matches '{selector}' (devices: {})",
            list()
        )),
        _ => Err(format!(
            "'{selector}' matches {} devices ({}); use the index",
            hits.len(),
            hits.iter()
                .map(|d| format!("{}: {}", d.index, d.name))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

/// The default device: the first GPU, else the first device.
pub fn default_device(devices: &[PhysicalDevice]) -> Option<&PhysicalDevice> {
    devices
        .iter()
        .find(|d| d.kind == DeviceKind::Gpu)
        .or(devices.first())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};

    fn dev(
        api: Api,
        index: usize,
        name: &str,
        kind: DeviceKind,
        uuid: Option<u8>,
        pci: Option<&str>,
    ) -> DeviceIdentity {
        DeviceIdentity {
            api,
            index,
            name: name.into(),
            vendor: String::new(),
            driver_version: String::new(),
            api_version: String::new(),
            platform: String::new(),
            kind,
            uuid: uuid.map(|u| [u; 16]),
            pci_bus_id: pci.map(Into::into),
        }
    }

    #[test]
    fn uuid_then_pci_then_name() {
        use DeviceKind::*;
        let d = vec![
            dev(
                TEST_API_A,
                0,
                "NVIDIA H200",
                Gpu,
                Some(1),
                Some("0000:19:00.0"),
            ),
            dev(TEST_API_B, 0, "NVIDIA H200", Gpu, Some(1), None),
            // A vendor whose OpenCL UUID differs: joined by PCI address.
            dev(
                TEST_API_C,
                0,
                "NVIDIA H200",
                Gpu,
                Some(9),
                Some("0000:19:00.0"),
            ),
            dev(TEST_API_C, 1, "pthread-cpu", Cpu, None, None),
            dev(TEST_API_B, 1, "llvmpipe", Cpu, Some(5), None),
        ];
        let g = group(&d);
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].apis(), [TEST_API_A, TEST_API_B, TEST_API_C]);
        assert_eq!(g[0].rule, MatchRule::PciBusId);
        assert_eq!(g[1].rule, MatchRule::Single);
        assert_eq!(select(&g, "0101").unwrap().index, 0);
        assert_eq!(select(&g, "llvm").unwrap().name, "llvmpipe");
        assert_eq!(select(&g, "2").unwrap().index, 2);
        assert!(select(&g, "9")
            .unwrap_err()
            .contains("no device with index 9"));
        assert!(select(&g, "quadro")
            .unwrap_err()
            .contains("no device matches"));
        assert_eq!(default_device(&g).unwrap().name, "NVIDIA H200");
    }

    #[test]
    fn identical_cards_stay_apart_and_names_need_uniqueness() {
        use DeviceKind::*;
        let d = vec![
            dev(TEST_API_A, 0, "T4", Gpu, None, None),
            dev(TEST_API_A, 1, "T4", Gpu, None, None),
            dev(TEST_API_C, 0, "T4", Gpu, None, None),
        ];
        let g = group(&d);
        assert_eq!(
            g.len(),
            3,
            "two T4s: the name cannot say which OpenCL device is which"
        );
        let d = vec![
            dev(TEST_API_A, 0, "Tesla T4", Gpu, Some(1), None),
            dev(TEST_API_C, 0, "tesla  t4", Gpu, Some(2), None),
        ];
        let g = group(&d);
        assert_eq!((g.len(), g[0].rule), (1, MatchRule::Name));
    }
}
