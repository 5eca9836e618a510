//! A device's launch limits under their OpenCL names (clGetDeviceInfo), with NVIDIA's
//! cl_nv_device_attribute_query figures and the residency model they give.

use blocksweep_core::grid::nvidia_model;
use blocksweep_core::limits::Dims;
use blocksweep_core::{Limits, Named};
use opencl3::device::{
    CL_DEVICE_ADDRESS_BITS, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
    CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_DEVICE_LOCAL_MEM_SIZE,
    CL_DEVICE_MAX_CLOCK_FREQUENCY, CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
    CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
    CL_DEVICE_MAX_WORK_ITEM_SIZES, CL_DEVICE_OPENCL_C_VERSION,
    CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, CL_DEVICE_PROFILING_TIMER_RESOLUTION,
};
use opencl3::types::cl_device_id;

use crate::device::{
    bytes, decode_uint, info, string, uint, Extensions, Info,
    CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV,
    CL_DEVICE_GPU_OVERLAP_NV, CL_DEVICE_INTEGRATED_MEMORY_NV, CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV,
    CL_DEVICE_REGISTERS_PER_BLOCK_NV, CL_DEVICE_WARP_SIZE_NV,
};
use crate::error::OpenClError;

/// The device's launch limits under their OpenCL names. `warp_size` is left for the backend
/// to fill from the built kernel on devices without cl_nv_device_attribute_query.
pub(crate) fn limits(d: cl_device_id) -> Result<Limits, OpenClError> {
    let ext = Extensions::query(d)?;
    let named =
        |q: Info| -> Result<Named<u64>, OpenClError> { Ok(Named::new(uint(d, q)?, q.name)) };
    let dims_q = info!(CL_DEVICE_MAX_WORK_ITEM_SIZES);
    let sizes: Vec<u64> = bytes(d, dims_q)?
        .chunks(std::mem::size_of::<usize>())
        .map(|c| decode_uint(dims_q.name, c))
        .collect::<Result<_, _>>()?;
    // Fewer than three dimensions means y and z cannot exceed 1.
    let dim = |i: usize| sizes.get(i).copied().unwrap_or(1);
    let mut limits = Limits {
        max_threads_per_block: Some(named(info!(CL_DEVICE_MAX_WORK_GROUP_SIZE))?),
        max_block_dims: Some(Named::new(Dims([dim(0), dim(1), dim(2)]), dims_q.name)),
        // OpenCL bounds the global size only by size_t.
        max_grid_dims: None,
        multiprocessors: Some(named(info!(CL_DEVICE_MAX_COMPUTE_UNITS))?),
        shared_mem_per_block: Some(named(info!(CL_DEVICE_LOCAL_MEM_SIZE))?),
        max_alloc_bytes: Some(named(info!(CL_DEVICE_MAX_MEM_ALLOC_SIZE))?),
        global_mem_bytes: Some(named(info!(CL_DEVICE_GLOBAL_MEM_SIZE))?),
        l2_bytes: Some(named(info!(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE))?).filter(|n| n.value > 0),
        timer_resolution_ns: {
            let q = info!(CL_DEVICE_PROFILING_TIMER_RESOLUTION);
            Some(Named::new(uint(d, q)? as f64, q.name))
        },
        ..Limits::default()
    };
    if ext.has("cl_nv_device_attribute_query") {
        add_nvidia(d, &mut limits)?;
    }
    for q in [
        info!(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS),
        info!(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE),
        info!(CL_DEVICE_MAX_CLOCK_FREQUENCY),
        info!(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE),
        info!(CL_DEVICE_ADDRESS_BITS),
        info!(CL_DEVICE_HOST_UNIFIED_MEMORY),
        info!(CL_DEVICE_GPU_OVERLAP_NV),
        info!(CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV),
        info!(CL_DEVICE_INTEGRATED_MEMORY_NV),
    ] {
        // Facts for the reader, not inputs: a device that does not answer one (a 1.2 device
        // has no CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE) simply does not list it.
        if q.name.ends_with("_NV") && !ext.has("cl_nv_device_attribute_query") {
            continue;
        }
        if let Ok(v) = uint(d, q) {
            limits.extra.push((q.name.to_string(), v.to_string()));
        }
    }
    if let Ok(v) = string(d, info!(CL_DEVICE_OPENCL_C_VERSION)) {
        limits.extra.push(("CL_DEVICE_OPENCL_C_VERSION".into(), v));
    }
    Ok(limits)
}

/// NVIDIA's cl_nv_device_attribute_query: warp size, registers, compute capability, and from
/// the capability the per-SM model the core's residency calculation needs.
fn add_nvidia(d: cl_device_id, limits: &mut Limits) -> Result<(), OpenClError> {
    let warp = uint(d, info!(CL_DEVICE_WARP_SIZE_NV))?;
    limits.warp_size = Some(Named::new(warp, "CL_DEVICE_WARP_SIZE_NV"));
    let regs = uint(d, info!(CL_DEVICE_REGISTERS_PER_BLOCK_NV))?;
    limits.registers_per_block = Some(Named::new(regs, "CL_DEVICE_REGISTERS_PER_BLOCK_NV"));
    let major = uint(d, info!(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV))? as u32;
    let minor = uint(d, info!(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV))? as u32;
    limits.compute_capability = Some(Named::new(
        (major, minor),
        "CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV/MINOR_NV",
    ));
    limits.mp_model = nvidia_model(major, minor, "cl_nv_device_attribute_query");
    if let Some(m) = &limits.mp_model {
        let origin = format!("model (sm_{major}{minor})");
        limits.max_threads_per_mp = Some(Named::new(
            m.max_warps as u64 * m.warp_size as u64,
            origin.clone(),
        ));
        limits.max_blocks_per_mp = Some(Named::new(m.max_blocks as u64, origin.clone()));
        if let Some(r) = m.registers {
            limits.registers_per_mp = Some(Named::new(r as u64, origin));
        }
    }
    Ok(())
}
