//! What the driver says about one built kernel: clGetKernelWorkGroupInfo's values, and on
//! NVIDIA the register count from ptxas's report in the build log.

use blocksweep_core::{KernelFacts, Named, ProgramSource};
use opencl3::kernel::{
    get_kernel_work_group_data, CL_KERNEL_LOCAL_MEM_SIZE,
    CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, CL_KERNEL_PRIVATE_MEM_SIZE,
    CL_KERNEL_WORK_GROUP_SIZE,
};
use opencl3::types::cl_kernel_work_group_info;

use crate::context::DeviceContext;
use crate::error::{map_query, OpenClError};
use crate::handles::{DeviceId, Kernel};
use crate::kernel::NV_VERBOSE_OPTION;

/// Where the register count comes from, as shown next to it.
const REGISTERS_SOURCE: &str = "ptxas (-cl-nv-verbose)";
/// Why an NVIDIA build can have no register count. Seen with driver 580 on an H200: the first
/// build of a source prints ptxas's report, every later one (served from ~/.nv/ComputeCache)
/// has an empty log.
const REGISTERS_FROM_CACHE: &str = "unknown: the build log has no ptxas report, as \
     when NVIDIA's driver takes the binary from its compute cache";

fn work_group_uint(
    kernel: &Kernel,
    device: DeviceId,
    param: cl_kernel_work_group_info,
    name: &'static str,
) -> Result<Named<u64>, OpenClError> {
    let b = get_kernel_work_group_data(kernel.raw(), device.0, param)
        .map_err(map_query("clGetKernelWorkGroupInfo", name))?;
    let v = match b.len() {
        4 => u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64,
        8 => u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        n => {
            return Err(OpenClError::Malformed {
                query: name.into(),
                detail: format!("{n} bytes where a 4- or 8-byte integer was expected"),
            })
        }
    };
    Ok(Named::new(v, name))
}

/// What the driver says about one compiled kernel on `device`.
///
/// CL_KERNEL_WORK_GROUP_SIZE is taken as the driver states it, although NVIDIA's (driver 580,
/// H200) is 256 for every kernel, even one of 10 registers, and it runs and verifies blocks
/// of up to CL_DEVICE_MAX_WORK_GROUP_SIZE (1024) all the same: the sweep then skips the rows
/// above 256 naming the query, which is what the specification asks.
pub(crate) fn facts(
    kernel: &Kernel,
    device: DeviceId,
    entry: &str,
    log: &str,
    compiled_by: String,
    options: &str,
) -> Result<KernelFacts, OpenClError> {
    macro_rules! wg {
        ($c:ident) => {
            work_group_uint(kernel, device, $c, stringify!($c))?
        };
    }
    let registers = ptxas_registers(log, entry).map(|r| Named::new(r, REGISTERS_SOURCE));
    let mut extra = vec![
        ("kernel".into(), entry.into()),
        ("build options".into(), options.into()),
    ];
    if registers.is_none() && options.contains(NV_VERBOSE_OPTION) {
        extra.push(("registers".into(), REGISTERS_FROM_CACHE.into()));
    }
    Ok(KernelFacts {
        max_block: Some(wg!(CL_KERNEL_WORK_GROUP_SIZE)),
        preferred_multiple: Some(wg!(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)),
        registers,
        private_bytes: Some(wg!(CL_KERNEL_PRIVATE_MEM_SIZE)),
        shared_bytes: Some(wg!(CL_KERNEL_LOCAL_MEM_SIZE)),
        compiled_by,
        extra,
    })
}

/// CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of `source`'s kernel, built for the context's
/// device and dropped: the open's stand-in for a warp size. `None` where the build or the
/// query fails (a load of that kernel then reports its own error).
pub(crate) fn preferred_multiple(
    ctx: &DeviceContext,
    source: &ProgramSource,
) -> Option<Named<u64>> {
    let options = source.options.join(" ");
    let text = source.text();
    let (program, _log) = crate::kernel::build(&ctx.context, ctx.device, &text, &options).ok()?;
    let kernel = crate::kernel::kernel(&program, &source.entry).ok()?;
    const NAME: &str = "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE";
    work_group_uint(
        &kernel,
        ctx.device,
        CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
        NAME,
    )
    .ok()
}

/// The register count ptxas reports for `entry` in a -cl-nv-verbose build log:
///
/// ```text
/// ptxas info    : Compiling entry function 'grayscale' for 'sm_90'
/// ptxas info    : Function properties for grayscale
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 12 registers, 392 bytes cmem[0]
/// ```
///
/// Each "Used N registers" belongs to the entry function named last before it.
pub(crate) fn ptxas_registers(log: &str, entry: &str) -> Option<u64> {
    let mut current: Option<&str> = None;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next();
        } else if let Some(rest) = line.split("Used ").nth(1) {
            if current == Some(entry) {
                let mut words = rest.split_whitespace();
                let n = words.next()?.parse::<u64>().ok()?;
                if words.next().is_some_and(|w| w.starts_with("register")) {
                    return Some(n);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const NV_LOG: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'grayscale' for 'sm_90'
ptxas info    : Function properties for grayscale
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, 392 bytes cmem[0]
ptxas info    : Compiling entry function 'grayscale_one_per_thread' for 'sm_90'
ptxas info    : Function properties for grayscale_one_per_thread
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 392 bytes cmem[0]";

    #[test]
    fn registers_are_read_per_entry_function() {
        assert_eq!(ptxas_registers(NV_LOG, "grayscale"), Some(12));
        assert_eq!(ptxas_registers(NV_LOG, "grayscale_one_per_thread"), Some(8));
        assert_eq!(ptxas_registers(NV_LOG, "other"), None);
        assert_eq!(ptxas_registers("", "grayscale"), None);
    }
}
