//! A device's launch limits under their CUDA names (`cuDeviceGetAttribute`), the residency
//! model's per-SM figures and the memory the device reports.

use blocksweep_core::limits::{Dims, MultiprocessorModel};
use blocksweep_core::{Limits, Named};
use cudarc::driver::sys::{CUdevice, CUdevice_attribute as A};

use crate::device::{attribute, attribute_name, named};
use crate::entry_points::cu;
use crate::error::{map_driver, CudaError, OrMap};

/// Peak DRAM bandwidth in GB/s from the memory clock (kHz) and bus width (bits), counting
/// two transfers per clock. `None` when the driver reports either as 0, as it may for
/// memory whose clock it does not expose.
pub fn theoretical_gbps(memory_clock_khz: i64, bus_width_bits: i64) -> Option<f64> {
    if memory_clock_khz <= 0 || bus_width_bits <= 0 {
        return None;
    }
    Some(2.0 * memory_clock_khz as f64 * 1e3 * (bus_width_bits as f64 / 8.0) / 1e9)
}

/// The per-SM limits the core's residency model needs, where the driver reports them all.
fn multiprocessor_model(dev: CUdevice) -> Result<Option<MultiprocessorModel>, CudaError> {
    let warp = attribute(dev, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?;
    let threads = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
    let blocks = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?;
    let regs = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?;
    Ok(
        (warp > 0 && threads > 0 && blocks > 0).then(|| MultiprocessorModel {
            warp_size: warp as u32,
            max_warps: (threads / warp) as u32,
            max_blocks: blocks as u32,
            registers: (regs > 0).then_some(regs as u32),
            register_granularity: 256,
            source: "cuDeviceGetAttribute".into(),
        }),
    )
}

/// Attributes shown beside the limits, under their native names.
fn extra_attributes(dev: CUdevice) -> Result<Vec<(String, String)>, CudaError> {
    [
        A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY,
        A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT,
        A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED,
        A::CU_DEVICE_ATTRIBUTE_INTEGRATED,
        A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE,
    ]
    .into_iter()
    .map(|attr| Ok((attribute_name(attr), attribute(dev, attr)?.to_string())))
    .collect()
}

/// The device's launch limits, each under its CU_DEVICE_ATTRIBUTE name.
pub(crate) fn limits(dev: CUdevice) -> Result<Limits, CudaError> {
    let dims = |[x, y, z]: [A; 3], name: &str| -> Result<Option<Named<Dims>>, CudaError> {
        let [x, y, z] = [attribute(dev, x)?, attribute(dev, y)?, attribute(dev, z)?];
        Ok(Some(Named::new(Dims([x as u64, y as u64, z as u64]), name)))
    };
    let major = attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let mp_model = multiprocessor_model(dev)?;
    let extra = extra_attributes(dev)?;
    Ok(Limits {
        max_threads_per_block: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?),
        max_block_dims: dims(
            [
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
            ],
            "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z}",
        )?,
        max_grid_dims: dims(
            [
                A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
            ],
            "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{X,Y,Z}",
        )?,
        warp_size: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?),
        multiprocessors: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?),
        max_threads_per_mp: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        )?),
        max_blocks_per_mp: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
        )?),
        timer_resolution_ns: Some(Named::new(
            crate::timing::EVENT_RESOLUTION_NS,
            crate::timing::EVENT_RESOLUTION_SOURCE,
        )),
        compute_capability: Some(Named::new(
            (major.max(0) as u32, minor.max(0) as u32),
            "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR",
        )),
        mp_model,
        extra,
        ..memory_limits(dev)?
    })
}

/// The device's memory, shared memory and registers, each under its native name; the other
/// limits unset.
fn memory_limits(dev: CUdevice) -> Result<Limits, CudaError> {
    let mut total = 0usize;
    // SAFETY: dev came from cuDeviceGet; one size_t out.
    unsafe { cu!(cuDeviceTotalMem_v2(&mut total, dev)) }.or_map(map_driver)?;
    let total = total as u64;
    let mem_clock = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?;
    let bus = attribute(dev, A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?;
    Ok(Limits {
        shared_mem_per_block: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        )?),
        shared_mem_per_block_optin: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?),
        registers_per_block: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?),
        registers_per_mp: Some(named(
            dev,
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        )?),
        max_alloc_bytes: Some(Named::new(
            total,
            "cuDeviceTotalMem (no separate allocation limit)",
        )),
        global_mem_bytes: Some(Named::new(total, "cuDeviceTotalMem")),
        l2_bytes: Some(named(dev, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?),
        theoretical_gbps: theoretical_gbps(mem_clock as i64, bus as i64).map(|g| {
            Named::new(
                g,
                "2 x MEMORY_CLOCK_RATE x GLOBAL_MEMORY_BUS_WIDTH / 8 (CU_DEVICE_ATTRIBUTE_*)",
            )
        }),
        // CUDA has no buffer-binding limit, and no CUDA driver ends a kernel's loops early.
        ..Limits::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_arithmetic() {
        // Tesla T4: 5001000 kHz GDDR6 on a 256-bit bus -> 320.064 GB/s (the datasheet's 320).
        let t4 = theoretical_gbps(5_001_000, 256).unwrap();
        assert!((t4 - 320.064).abs() < 1e-9, "{t4}");
        // H100 SXM as cuDeviceGetAttribute reports it: 2619000 kHz, 5120 bits.
        let h100 = theoretical_gbps(2_619_000, 5120).unwrap();
        assert!((h100 - 3352.32).abs() < 1e-6, "{h100}");
        // A driver that reports 0 leaves the field empty rather than claiming 0 GB/s.
        assert_eq!(theoretical_gbps(0, 5120), None);
        assert_eq!(theoretical_gbps(2_619_000, 0), None);
    }
}
