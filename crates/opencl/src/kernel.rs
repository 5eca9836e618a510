//! Building the kernels and their facts: build options, clBuildProgram with its log, the
//! kernels of the one program (the seed's two and the lab's three), their arguments, and what
//! the driver says about them (clGetKernelWorkGroupInfo, plus ptxas's register count on
//! NVIDIA).

use std::ffi::{c_void, CString};
use std::ptr;

use blocksweep_core::{KernelFacts, KernelVariant, Named};
use opencl3::kernel::{
    create_kernel, get_kernel_work_group_data, set_kernel_arg, CL_KERNEL_LOCAL_MEM_SIZE,
    CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, CL_KERNEL_PRIVATE_MEM_SIZE,
    CL_KERNEL_WORK_GROUP_SIZE,
};
use opencl3::program::{
    build_program, create_program_with_source, get_program_build_data, CL_PROGRAM_BUILD_LOG,
};
use opencl3::types::{cl_kernel_work_group_info, cl_mem, cl_uint, cl_ulong};

use crate::context::DeviceContext;
use crate::error::{map_build, map_create, map_query, OpenClError};
use crate::handles::{Context, DeviceId, Kernel, Program};
use crate::memory::Planes;

/// kernels/grayscale.cl, compiled into the binary.
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/grayscale.cl");

/// The OpenCL C standard the source is written to.
const STD_OPTION: &str = "-cl-std=CL1.2";
/// Makes NVIDIA's compiler append ptxas's resource report (registers per thread) to the log.
const NV_VERBOSE_OPTION: &str = "-cl-nv-verbose";
/// Where the register count comes from, as shown next to it.
const REGISTERS_SOURCE: &str = "ptxas (-cl-nv-verbose)";
/// Why an NVIDIA build can have no register count. Seen with driver 580 on an H200: the first
/// build of a source prints ptxas's report, every later one (served from ~/.nv/ComputeCache)
/// has an empty log.
const REGISTERS_FROM_CACHE: &str = "unknown: the build log has no ptxas report, as \
     when NVIDIA's driver takes the binary from its compute cache";

/// Every variant, in the order [`Kernels`] keeps them.
const VARIANTS: [KernelVariant; 5] = KernelVariant::ALL;

fn variant_index(v: KernelVariant) -> usize {
    VARIANTS.iter().position(|x| *x == v).unwrap_or(0)
}

/// The grayscale program built for one device, its two kernels and their facts.
pub(crate) struct Kernels {
    // Declaration order is drop order: the kernels go before their program.
    /// Indexed by `variant_index`.
    kernels: Vec<Kernel>,
    _program: Program,
    facts: Vec<KernelFacts>,
    /// The device's CL_PROGRAM_BUILD_LOG (ptxas's report on NVIDIA).
    pub build_log: String,
}

impl Kernels {
    /// Builds kernels/grayscale.cl for the context's device. `nvidia` (the device answers
    /// cl_nv_device_attribute_query) adds NVIDIA's verbose flag; `extra` is the user's options.
    pub fn build(
        ctx: &DeviceContext,
        platform: &str,
        nvidia: bool,
        extra: &str,
    ) -> Result<Kernels, OpenClError> {
        let options = build_options(nvidia, extra);
        let source = match nvidia {
            true => format!("{KERNEL_SOURCE}\n{}", cache_miss_kernel()),
            false => KERNEL_SOURCE.to_string(),
        };
        let (program, build_log) = blocksweep_core::trace::time("opencl", "open: build", || {
            build(&ctx.context, ctx.device, &source, &options)
        })?;
        let _facts = blocksweep_core::trace::span("opencl", "open: kernel facts");
        let kernels = VARIANTS
            .iter()
            .map(|v| kernel(&program, entry_point(*v)))
            .collect::<Result<Vec<_>, _>>()?;
        let compiled_by = format!("clBuildProgram ({platform})");
        let facts_of = |i: usize| {
            let entry = entry_point(VARIANTS[i]);
            facts(
                &kernels[i],
                ctx.device,
                entry,
                &build_log,
                compiled_by.clone(),
                &options,
            )
        };
        let facts = (0..VARIANTS.len())
            .map(facts_of)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Kernels {
            kernels,
            _program: program,
            facts,
            build_log,
        })
    }

    pub fn get(&self, variant: KernelVariant) -> &Kernel {
        &self.kernels[variant_index(variant)]
    }

    pub fn facts(&self, variant: KernelVariant) -> &KernelFacts {
        &self.facts[variant_index(variant)]
    }

    /// Sets every kernel's arguments that stay for the frame: the planes (r, g, b, out) and
    /// the pixel count, or the 2-D kernel's width and height; the register-heavy kernel's salt
    /// (0). The shared-memory kernel's size arguments are set per launch ([`Kernels::size_shared`]).
    pub fn bind(&self, planes: &Planes, width: u32, height: u32) -> Result<(), OpenClError> {
        let n: cl_ulong = planes.pixels;
        for (v, k) in VARIANTS.iter().zip(&self.kernels) {
            for (i, m) in [&planes.r, &planes.g, &planes.b, &planes.out]
                .into_iter()
                .enumerate()
            {
                let raw: cl_mem = m.raw();
                set_arg(k, i as cl_uint, &raw)?;
            }
            match v {
                KernelVariant::GridStride2D => {
                    set_arg(k, ARG_PIXELS, &(width as cl_uint))?;
                    set_arg(k, ARG_PIXELS + 1, &(height as cl_uint))?;
                }
                KernelVariant::RegisterHeavy => {
                    set_arg(k, ARG_PIXELS, &n)?;
                    set_arg(k, ARG_PIXELS + 1, &(0 as cl_uint))?;
                }
                _ => set_arg(k, ARG_PIXELS, &n)?,
            }
        }
        Ok(())
    }

    /// Gives the shared-memory kernel `bytes` of local memory per work-group: its `words`
    /// argument and its `__local` argument (clSetKernelArg with a size and no value). A size
    /// the driver refuses here is its answer to the launch.
    pub fn size_shared(&self, bytes: u32) -> Result<(), OpenClError> {
        let k = self.get(KernelVariant::SharedProbe);
        set_arg(k, ARG_PIXELS + 1, &((bytes / 4) as cl_uint))?;
        // SAFETY: a `__local` argument takes a size and a null value (OpenCL clSetKernelArg).
        unsafe { set_kernel_arg(k.raw(), ARG_PIXELS + 2, bytes as usize, ptr::null()) }.map_err(
            |code| OpenClError::LaunchRejected {
                call: "clSetKernelArg",
                launch: format!("__local argument of {bytes} bytes"),
                name: crate::error::cl_error_name(code),
                code,
            },
        )
    }
}

fn set_arg<T>(kernel: &Kernel, index: cl_uint, value: &T) -> Result<(), OpenClError> {
    // SAFETY: `value` is a live T for the call and the driver copies its bytes; the
    // kernel's argument `index` has size_of::<T>() bytes (cl_mem or cl_ulong, see the source).
    unsafe {
        set_kernel_arg(
            kernel.raw(),
            index,
            std::mem::size_of::<T>(),
            (value as *const T).cast::<c_void>(),
        )
    }
    .map_err(map_create("clSetKernelArg"))
}

/// The entry point of each kernel variant in kernels/grayscale.cl (the CUDA names).
fn entry_point(variant: KernelVariant) -> &'static str {
    variant.entry()
}

/// An empty kernel with a name no earlier build used. NVIDIA's driver prints ptxas's report
/// (the register count) only when it really compiles, and serves a source it has seen from
/// its compute cache (~/.nv/ComputeCache) with an empty log. Turning the cache off instead
/// (CUDA_CACHE_DISABLE=1) also makes every context recompile the driver's own kernels: on an
/// H200 (driver 580.159.04) clCreateContext then took 1.8-2.1 s instead of a fraction.
fn cache_miss_kernel() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "__kernel void blocksweep_unique_{}_{nanos}(void) {{}}\n",
        std::process::id()
    )
}

/// clBuildProgram options: the standard, NVIDIA's verbose flag where the compiler is
/// NVIDIA's, and the user's own.
pub(crate) fn build_options(nvidia: bool, extra: &str) -> String {
    let mut o = vec![STD_OPTION];
    if nvidia {
        o.push(NV_VERBOSE_OPTION);
    }
    if !extra.trim().is_empty() {
        o.push(extra.trim());
    }
    o.join(" ")
}

/// Builds `source` for `device` and returns the program and its build log. A failed build
/// is [`OpenClError::Build`] carrying the log.
pub(crate) fn build(
    context: &Context,
    device: DeviceId,
    source: &str,
    options: &str,
) -> Result<(Program, String), OpenClError> {
    let raw = create_program_with_source(context.raw(), &[source])
        .map_err(map_create("clCreateProgramWithSource"))?;
    let program = Program::from_raw(raw);
    let c_options = CString::new(options).map_err(|_| {
        OpenClError::Usage(format!("build options contain a NUL byte: {options:?}"))
    })?;
    let status = build_program(
        program.raw(),
        &[device.0],
        &c_options,
        None,
        ptr::null_mut(),
    );
    // The log is read either way: on success it holds ptxas's report, on failure the errors.
    let log = get_program_build_data(program.raw(), device.0, CL_PROGRAM_BUILD_LOG)
        .map(|b| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).trim().to_string()
        })
        .unwrap_or_else(|c| {
            format!(
                "(CL_PROGRAM_BUILD_LOG unavailable: {})",
                crate::error::cl_error_name(c)
            )
        });
    status.map_err(map_build("clBuildProgram", options, log.clone()))?;
    Ok((program, log))
}

/// The kernel named `name` in `program`.
fn kernel(program: &Program, name: &str) -> Result<Kernel, OpenClError> {
    let c_name = CString::new(name)
        .map_err(|_| OpenClError::Usage(format!("kernel name contains a NUL byte: {name:?}")))?;
    let raw = create_kernel(program.raw(), &c_name).map_err(map_create("clCreateKernel"))?;
    Ok(Kernel::from_raw(raw))
}

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
fn facts(
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

/// Argument index of the pixel count `n` (after r, g, b and out).
const ARG_PIXELS: cl_uint = 4;

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

    #[test]
    fn options_add_nv_verbose_only_for_nvidia() {
        assert_eq!(build_options(false, ""), "-cl-std=CL1.2");
        assert_eq!(
            build_options(true, " -cl-fast-relaxed-math "),
            "-cl-std=CL1.2 -cl-nv-verbose -cl-fast-relaxed-math"
        );
    }

    #[test]
    fn source_carries_every_kernel_and_the_weights() {
        for v in KernelVariant::ALL {
            assert!(KERNEL_SOURCE.contains(&format!("__kernel void {}(", entry_point(v))));
        }
        let [r, g, b] = blocksweep_core::WEIGHTS;
        let expr = format!("out[i] = {r}f * r[i] + {g}f * g[i] + {b}f * b[i];");
        assert_eq!(KERNEL_SOURCE.matches(&expr).count(), 2, "{expr}");
    }
}
