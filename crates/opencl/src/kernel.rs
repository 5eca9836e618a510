//! Building the kernels: build options, clBuildProgram with its log, one program per kernel
//! (the sweep's two and the lab's three), each built when first used, and their arguments.
//! What the driver says about each built kernel is `facts`.

use std::ffi::{c_void, CString};
use std::ptr;

use blocksweep_core::{KernelFacts, KernelVariant};
use opencl3::kernel::{create_kernel, set_kernel_arg};
use opencl3::program::{
    build_program, create_program_with_source, get_program_build_data, CL_PROGRAM_BUILD_LOG,
};
use opencl3::types::{cl_mem, cl_uint, cl_ulong};

use crate::context::DeviceContext;
use crate::error::{map_build, map_create, OpenClError};
use crate::handles::{Context, DeviceId, Kernel, Program};
use crate::memory::Planes;

pub(crate) use crate::facts::facts;

/// kernels/grayscale.cl, compiled into the binary.
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/grayscale.cl");

/// The OpenCL C standard the source is written to.
const STD_OPTION: &str = "-cl-std=CL1.2";
/// Makes NVIDIA's compiler append ptxas's resource report (registers per thread) to the log.
pub(crate) const NV_VERBOSE_OPTION: &str = "-cl-nv-verbose";
/// With [`ONE_KERNEL_PREFIX`]`<entry>`, makes kernels/grayscale.cl hold that kernel alone
/// (each kernel there sits in an `#if` on these two macros).
const ONE_KERNEL_OPTION: &str = "-D BLOCKSWEEP_ONE_KERNEL";
const ONE_KERNEL_PREFIX: &str = "-D BLOCKSWEEP_KERNEL_";

/// One kernel variant, built as a program of its own.
struct Built {
    // Declaration order is drop order: the kernel goes before its program.
    kernel: Kernel,
    _program: Program,
    facts: KernelFacts,
    /// The device's CL_PROGRAM_BUILD_LOG (ptxas's report on NVIDIA).
    log: String,
}

/// The grayscale kernels built so far for one device, and what building another needs.
///
/// Each variant is its own program: a driver that generates code at clBuildProgram (NVIDIA's)
/// takes longer the more kernels a program holds, and a sweep only ever runs the grid-stride
/// kernel, so opening the backend builds that one and [`Kernels::ensure`] builds each of the
/// others the first time it is selected. (PoCL generates code at the first launch, so its
/// build costs about the same for one kernel or five, and each later variant adds a build.)
pub(crate) struct Kernels {
    /// Built at open, and the fallback of [`Kernels::facts`].
    grid_stride: Built,
    /// The other variants, in the order they were first selected.
    others: Vec<(KernelVariant, Built)>,
    setup: Setup,
}

/// What every variant's build shares.
struct Setup {
    /// The device answers cl_nv_device_attribute_query: NVIDIA's compiler.
    nvidia: bool,
    /// The user's build options.
    extra: String,
    /// KernelFacts::compiled_by.
    compiled_by: String,
}

impl Kernels {
    /// Builds the grid-stride kernel of kernels/grayscale.cl for the context's device. `nvidia`
    /// (the device answers cl_nv_device_attribute_query) adds NVIDIA's verbose flag; `extra`
    /// is the user's options, given to every variant's build.
    pub fn build(
        ctx: &DeviceContext,
        platform: &str,
        nvidia: bool,
        extra: &str,
    ) -> Result<Kernels, OpenClError> {
        let setup = Setup {
            nvidia,
            extra: extra.to_string(),
            compiled_by: format!("clBuildProgram ({platform})"),
        };
        Ok(Kernels {
            grid_stride: build_variant(ctx, &setup, KernelVariant::GridStride, "open")?,
            others: Vec::new(),
            setup,
        })
    }

    /// Builds `variant`'s program unless it is built already.
    pub fn ensure(
        &mut self,
        ctx: &DeviceContext,
        variant: KernelVariant,
    ) -> Result<(), OpenClError> {
        if self.find(variant).is_none() {
            let phase = format!("set_kernel {}", variant.entry());
            let built = build_variant(ctx, &self.setup, variant, &phase)?;
            self.others.push((variant, built));
        }
        Ok(())
    }

    fn find(&self, variant: KernelVariant) -> Option<&Built> {
        match variant {
            KernelVariant::GridStride => Some(&self.grid_stride),
            _ => self
                .others
                .iter()
                .find(|(v, _)| *v == variant)
                .map(|(_, b)| b),
        }
    }

    fn built(&self, variant: KernelVariant) -> Result<&Built, OpenClError> {
        self.find(variant).ok_or_else(|| {
            OpenClError::Usage(format!(
                "kernel {} not built: set_kernel builds it",
                variant.entry()
            ))
        })
    }

    pub fn get(&self, variant: KernelVariant) -> Result<&Kernel, OpenClError> {
        Ok(&self.built(variant)?.kernel)
    }

    /// `variant`'s facts. The backend selects a variant only once [`Kernels::ensure`] built
    /// it, so the grid-stride kernel's stand in only for one never selected.
    pub fn facts(&self, variant: KernelVariant) -> &KernelFacts {
        &self.find(variant).unwrap_or(&self.grid_stride).facts
    }

    /// Whether the device's compiler is NVIDIA's (which takes -cl-nv-verbose).
    pub fn nvidia(&self) -> bool {
        self.setup.nvidia
    }

    /// How the kernels are compiled, as KernelFacts::compiled_by says it.
    pub fn compiled_by(&self) -> &str {
        &self.setup.compiled_by
    }

    /// The grid-stride kernel's CL_PROGRAM_BUILD_LOG (ptxas's report on NVIDIA).
    pub fn build_log(&self) -> &str {
        &self.grid_stride.log
    }

    /// Sets the arguments that stay for the frame on every kernel built so far.
    pub fn bind(&self, planes: &Planes) -> Result<(), OpenClError> {
        let first = (KernelVariant::GridStride, &self.grid_stride);
        let others = self.others.iter().map(|(v, b)| (*v, b));
        for (v, b) in std::iter::once(first).chain(others) {
            bind(v, &b.kernel, planes)?;
        }
        Ok(())
    }

    /// [`Kernels::bind`] for one kernel, as when it is selected while a frame is up.
    pub fn bind_one(&self, variant: KernelVariant, planes: &Planes) -> Result<(), OpenClError> {
        bind(variant, self.get(variant)?, planes)
    }

    /// Gives the shared-memory kernel `bytes` of local memory per work-group: its `words`
    /// argument and its `__local` argument (clSetKernelArg with a size and no value). A size
    /// the driver refuses here is its answer to the launch.
    pub fn size_shared(&self, bytes: u32) -> Result<(), OpenClError> {
        let k = self.get(KernelVariant::SharedProbe)?;
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

/// Builds kernels/grayscale.cl holding only `variant`'s kernel, and reads its facts; traced
/// as `phase`'s build and kernel facts.
fn build_variant(
    ctx: &DeviceContext,
    setup: &Setup,
    variant: KernelVariant,
    phase: &str,
) -> Result<Built, OpenClError> {
    let entry = entry_point(variant);
    let options = build_options(setup.nvidia, entry, &setup.extra);
    // Every NVIDIA program gets a kernel of a new name, so that each variant's build compiles
    // and its log carries ptxas's report (see cache_miss_kernel).
    let source = match setup.nvidia {
        true => format!("{KERNEL_SOURCE}\n{}", cache_miss_kernel(entry)),
        false => KERNEL_SOURCE.to_string(),
    };
    let (program, log) = blocksweep_core::trace::time("opencl", format!("{phase}: build"), || {
        build(&ctx.context, ctx.device, &source, &options)
    })?;
    let _facts = blocksweep_core::trace::span("opencl", format!("{phase}: kernel facts"));
    let kernel = kernel(&program, entry)?;
    let facts = facts(
        &kernel,
        ctx.device,
        entry,
        &log,
        setup.compiled_by.clone(),
        &options,
    )?;
    Ok(Built {
        kernel,
        _program: program,
        facts,
        log,
    })
}

/// Sets `kernel`'s arguments that stay for the frame: the planes (r, g, b, out) and the pixel
/// count, or the 2-D kernel's width and height; the register-heavy kernel's salt (0). The
/// shared-memory kernel's size arguments are set per launch ([`Kernels::size_shared`]).
fn bind(variant: KernelVariant, kernel: &Kernel, planes: &Planes) -> Result<(), OpenClError> {
    for (i, m) in [&planes.r, &planes.g, &planes.b, &planes.out]
        .into_iter()
        .enumerate()
    {
        let raw: cl_mem = m.raw();
        set_arg(kernel, i as cl_uint, &raw)?;
    }
    let n: cl_ulong = planes.pixels;
    match variant {
        KernelVariant::GridStride2D => {
            set_arg(kernel, ARG_PIXELS, &planes.width)?;
            set_arg(kernel, ARG_PIXELS + 1, &planes.height)
        }
        KernelVariant::RegisterHeavy => {
            set_arg(kernel, ARG_PIXELS, &n)?;
            set_arg(kernel, ARG_PIXELS + 1, &(0 as cl_uint))
        }
        _ => set_arg(kernel, ARG_PIXELS, &n),
    }
}

pub(crate) fn set_arg<T>(kernel: &Kernel, index: cl_uint, value: &T) -> Result<(), OpenClError> {
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

/// An empty kernel with a name no earlier build used (`entry` in it keeps the variants' apart
/// even where the clock is coarse). NVIDIA's driver prints ptxas's report (the register count)
/// only when it really compiles, and serves a source it has seen from its compute cache
/// (~/.nv/ComputeCache) with an empty log. Turning the cache off instead
/// (CUDA_CACHE_DISABLE=1) also makes every context recompile the driver's own kernels: on an
/// H200 (driver 580.159.04) clCreateContext then took 1.8-2.1 s instead of a fraction.
pub(crate) fn cache_miss_kernel(entry: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "__kernel void blocksweep_unique_{entry}_{}_{nanos}(void) {{}}\n",
        std::process::id()
    )
}

/// clBuildProgram options: the standard, NVIDIA's verbose flag where the compiler is
/// NVIDIA's, the defines that keep only kernel `entry` of the source, and the user's own.
pub(crate) fn build_options(nvidia: bool, entry: &str, extra: &str) -> String {
    let mut o = vec![STD_OPTION.to_string()];
    if nvidia {
        o.push(NV_VERBOSE_OPTION.into());
    }
    o.push(ONE_KERNEL_OPTION.into());
    o.push(format!("{ONE_KERNEL_PREFIX}{entry}"));
    if !extra.trim().is_empty() {
        o.push(extra.trim().into());
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
    let status = crate::stderr::quieted(|| {
        build_program(
            program.raw(),
            &[device.0],
            &c_options,
            None,
            ptr::null_mut(),
        )
    });
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
pub(crate) fn kernel(program: &Program, name: &str) -> Result<Kernel, OpenClError> {
    let c_name = CString::new(name)
        .map_err(|_| OpenClError::Usage(format!("kernel name contains a NUL byte: {name:?}")))?;
    let raw = create_kernel(program.raw(), &c_name).map_err(map_create("clCreateKernel"))?;
    Ok(Kernel::from_raw(raw))
}

/// Argument index of the pixel count `n` (after r, g, b and out).
const ARG_PIXELS: cl_uint = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_add_nv_verbose_only_for_nvidia_and_name_one_kernel() {
        assert_eq!(
            build_options(false, "grayscale", ""),
            "-cl-std=CL1.2 -D BLOCKSWEEP_ONE_KERNEL -D BLOCKSWEEP_KERNEL_grayscale"
        );
        assert_eq!(
            build_options(true, "grayscale_2d", " -cl-fast-relaxed-math "),
            "-cl-std=CL1.2 -cl-nv-verbose -D BLOCKSWEEP_ONE_KERNEL \
             -D BLOCKSWEEP_KERNEL_grayscale_2d -cl-fast-relaxed-math"
        );
    }

    /// Each kernel sits in the `#if` that build_options' defines select, and ends at its
    /// `#endif`: so a one-kernel build holds that kernel and no other.
    #[test]
    fn each_kernel_is_guarded_by_its_own_define() {
        for v in KernelVariant::ALL {
            let entry = entry_point(v);
            let guard = format!(
                "#if !defined(BLOCKSWEEP_ONE_KERNEL) || defined(BLOCKSWEEP_KERNEL_{entry})\n\
                 __kernel void {entry}("
            );
            assert_eq!(KERNEL_SOURCE.matches(&guard).count(), 1, "{guard}");
        }
        let kernels = KERNEL_SOURCE.matches("\n__kernel void ").count();
        assert_eq!(kernels, KernelVariant::ALL.len(), "a kernel with no guard");
        let opened = KERNEL_SOURCE.matches("\n#if ").count();
        assert_eq!(opened, KERNEL_SOURCE.matches("\n#endif").count());
        assert_eq!(opened, kernels, "one #if per kernel");
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
