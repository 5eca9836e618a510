//! What a device and its API say about themselves: probe()'s identity, the limits, and
//! opening past the last device.

use blocksweep_core::builtin;
use blocksweep_core::{
    Backend, DeviceIdentity, ErrorKind, KernelVariant, Named, OpenOptions, Provider,
};

use super::positive;
use crate::trial::Target;

/// probe()'s entry for the device under test, and what open() says about it.
pub fn identity(t: &Target) {
    let d = t.device();
    assert_eq!(d.index, t.index, "index must be the position in probe()");
    assert_eq!(d.api, t.provider.api(), "{d:?}");
    for (what, v) in [
        ("name", &d.name),
        ("vendor", &d.vendor),
        ("driver", &d.driver_version),
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
pub fn limits(b: &mut dyn Backend) {
    let l = b.limits().clone();
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
    // The grid-stride built-in, built for its facts (none before a program is loaded).
    builtin::load_kernel(b, KernelVariant::GridStride, 1, 1).expect("the built-in kernel");
    let k = b.kernel_facts();
    assert!(!k.compiled_by.trim().is_empty(), "{k:?}");
    if let Some(m) = &k.max_block {
        assert!(m.value >= 1 && !m.name.trim().is_empty(), "{m:?}");
    }
    crate::show!("{} limits: {l:#?}\nkernel: {k:#?}", b.identity().name);
}

/// Opening the index after the last device (and one far past it) is an Unavailable error of
/// this API that names the index, never a panic or a device.
pub fn open_past_last_device(provider: &dyn Provider, devices: &[DeviceIdentity]) {
    let last = devices.last().expect("at least one device");
    for index in [devices.len(), devices.len() + 7] {
        let ghost = DeviceIdentity {
            index,
            ..last.clone()
        };
        match provider.open(&ghost, &OpenOptions::default()) {
            Ok(b) => panic!(
                "{} device {index} should not exist, but opened {}",
                provider.api(),
                b.identity().name
            ),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::Unavailable, "{e}");
                assert_eq!(e.api, provider.api());
                assert!(
                    e.message.contains(&index.to_string()),
                    "{e} should name {index}"
                );
            }
        }
    }
}
