//! The registry's grouping of API devices into physical devices, and the targets it resolves.

use super::*;
use crate::testing::{TEST_API_A, TEST_API_B, TEST_API_C};

/// A driver of `api` that is never probed or opened: the tests build their probes.
const fn fake(api: Api) -> ApiProvider {
    ApiProvider {
        api,
        probe: || unreachable!("the test builds its probes"),
        open: |_, _| unreachable!("the test opens nothing"),
    }
}
static A: ApiProvider = fake(TEST_API_A);
static B: ApiProvider = fake(TEST_API_B);
static C: ApiProvider = fake(TEST_API_C);

fn gpu(api: Api, index: usize, uuid: u8, pci: Option<&str>) -> DeviceIdentity {
    DeviceIdentity {
        api,
        index,
        name: "NVIDIA H200".into(),
        vendor: "NVIDIA".into(),
        driver_version: "580".into(),
        api_version: String::new(),
        platform: String::new(),
        kind: DeviceKind::Gpu,
        uuid: Some([uuid; 16]),
        pci_bus_id: pci.map(Into::into),
    }
}

/// Two H200s of the same name; the second API lists them in the opposite order, the third
/// names them only by PCI address and has a CPU device first.
fn two_gpus() -> Registry {
    let cpu = DeviceIdentity {
        name: "pthread-cpu".into(),
        kind: DeviceKind::Cpu,
        uuid: None,
        ..gpu(TEST_API_C, 0, 0, None)
    };
    let mut c1 = gpu(TEST_API_C, 1, 0, Some("0000:19:00.0"));
    let mut c2 = gpu(TEST_API_C, 2, 0, Some("0000:3b:00.0"));
    (c1.uuid, c2.uuid) = (None, None);
    let mut a1 = gpu(TEST_API_A, 0, 1, Some("0000:19:00.0"));
    let a2 = gpu(TEST_API_A, 1, 2, Some("0000:3b:00.0"));
    a1.pci_bus_id = Some("0000:19:00.0".into());
    Registry::from_probes(vec![
        Probed {
            provider: &A,
            devices: Ok(vec![a1, a2]),
        },
        Probed {
            provider: &B,
            devices: Ok(vec![
                gpu(TEST_API_B, 0, 2, None),
                gpu(TEST_API_B, 1, 1, None),
            ]),
        },
        Probed {
            provider: &C,
            devices: Ok(vec![cpu, c1, c2]),
        },
    ])
}

#[test]
fn identical_gpus_in_swapped_order_are_never_crossed() {
    let reg = two_gpus();
    let each = reg.targets_each(&ApiChoice::Seeing, Some("all")).unwrap();
    assert_eq!(each.len(), 2, "two GPUs; the CPU is not a GPU");
    let view =
        |t: &Targets| -> Vec<(Api, usize)> { t.devices.iter().map(|d| (d.api, d.index)).collect() };
    // GPU with UUID 1: A#0, B#1 (matched by UUID), C#1 (by PCI address through A#0).
    assert_eq!(
        view(&each[0]),
        [(TEST_API_A, 0), (TEST_API_B, 1), (TEST_API_C, 1)]
    );
    assert_eq!(
        view(&each[1]),
        [(TEST_API_A, 1), (TEST_API_B, 0), (TEST_API_C, 2)]
    );
    assert!(each.iter().all(|t| t.one_physical_device));
    for t in &each {
        let uuids: Vec<_> = t.devices.iter().filter_map(|d| d.uuid).collect();
        assert!(uuids.windows(2).all(|w| w[0] == w[1]), "{:?}", t.devices);
    }
    // A list names devices the way --device does; duplicates collapse.
    let listed = reg
        .targets_each(&ApiChoice::Seeing, Some("1, 0,1"))
        .unwrap();
    assert_eq!(view(&listed[0]), view(&each[1]));
    assert_eq!(listed.len(), 2);
    // One API on every GPU.
    let only = reg
        .targets_each(&ApiChoice::Only(TEST_API_B), Some("all"))
        .unwrap();
    assert_eq!(
        only.iter().map(view).collect::<Vec<_>>(),
        [vec![(TEST_API_B, 1)], vec![(TEST_API_B, 0)]]
    );
    assert!(reg.targets_each(&ApiChoice::Seeing, Some("0,9")).is_err());
}
