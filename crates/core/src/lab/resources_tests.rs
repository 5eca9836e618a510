//! Tests of the resource probes made concrete on a device: the launch each asks for, and what the
//! device's and kernel's limits say about it.

use super::*;
use crate::limits::Named;

fn h200_cuda() -> (Limits, KernelFacts) {
    let limits = Limits {
        max_threads_per_block: Some(Named::new(
            1024,
            "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
        )),
        shared_mem_per_block: Some(Named::new(
            48 << 10,
            "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK",
        )),
        registers_per_block: Some(Named::new(
            65536,
            "CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK",
        )),
        ..Limits::default()
    };
    let kernel = KernelFacts {
        max_block: Some(Named::new(512, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")),
        registers: Some(Named::new(105, "CU_FUNC_ATTRIBUTE_NUM_REGS")),
        ..KernelFacts::default()
    };
    (limits, kernel)
}

#[test]
fn shared_probes_follow_the_device_limit() {
    let (limits, kernel) = h200_cuda();
    let r = |p| resolve(p, &limits, &kernel).unwrap();
    let a = r(RESOURCE_CHECKS[2].probe);
    assert_eq!(
        (a.shared_bytes, a.block.x, a.limits_say.clone()),
        (48 << 10, 256, None)
    );
    let over = r(RESOURCE_CHECKS[4].probe);
    assert_eq!(over.shared_bytes, 49 << 10);
    assert_eq!(
        over.limits_say.as_deref(),
        Some("49 KiB > CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 48 KiB")
    );
    assert_eq!(over.kernel, ProbeKernel::Shared);
    // A 32 KiB device (lavapipe) and a small one: the limit names itself, the block shrinks.
    let small = Limits {
        max_threads_per_block: Some(Named::new(128, "maxComputeWorkGroupInvocations")),
        shared_mem_per_block: Some(Named::new(32 << 10, "maxComputeSharedMemorySize")),
        ..Limits::default()
    };
    let k = resolve(RESOURCE_CHECKS[2].probe, &small, &kernel).unwrap();
    assert_eq!(k.block.x, 128);
    assert_eq!(
        k.limits_say.as_deref(),
        Some("48 KiB > maxComputeSharedMemorySize = 32 KiB")
    );
    assert!(resolve(RESOURCE_CHECKS[3].probe, &Limits::default(), &kernel).is_err());
}

#[test]
fn register_probes_name_the_register_file() {
    let (limits, kernel) = h200_cuda();
    let at_kernel = resolve(RESOURCE_CHECKS[5].probe, &limits, &kernel).unwrap();
    assert_eq!(
        (at_kernel.block.x, at_kernel.limits_say.clone()),
        (512, None)
    );
    assert_eq!(at_kernel.kernel, ProbeKernel::Registers);
    let at_device = resolve(RESOURCE_CHECKS[6].probe, &limits, &kernel).unwrap();
    assert_eq!(at_device.block.x, 1024);
    let say = at_device.limits_say.unwrap();
    assert!(
        say.contains("1024 threads > CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 512"),
        "{say}"
    );
    assert!(
        say.contains("105 registers x 1024 threads = 107520 > CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 65536"),
        "{say}"
    );
    // No kernel limit known (Vulkan): the device's.
    let vk = KernelFacts::default();
    assert_eq!(
        resolve(RESOURCE_CHECKS[5].probe, &limits, &vk)
            .unwrap()
            .block
            .x,
        1024
    );
}

#[test]
fn every_check_is_labelled_and_distinct() {
    // The guarantees are said of the APIs registered in the process: some must be, whatever
    // tests ran before this one.
    crate::testing::register_kernel_apis();
    let mut claims: Vec<_> = RESOURCE_CHECKS.iter().map(|c| c.claim).collect();
    claims.dedup();
    assert_eq!(claims.len(), RESOURCE_CHECKS.len());
    assert!(RESOURCE_CHECKS.iter().all(|c| !c.guarantee().is_empty()));
}
