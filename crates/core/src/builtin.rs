//! The built-in kernels as programs: blocksweep's grayscale frame runs through the same seam as
//! a user's kernel ([`Backend::load_program`], buffers, scalars, a launch), so a backend knows
//! programs only. Each backend supplies its own source of each kernel ([`Backend::builtin`]),
//! written to the program contract ([`crate::program`]) with these arguments, in order:
//!
//! | kernel | arguments |
//! |---|---|
//! | `grayscale`, `grayscale_one_per_thread`, `grayscale_registers` | `r`, `g`, `b`, `out` (f32 buffers of n), `n` (u64); the register-heavy one also `salt` (u32, 0) |
//! | `grayscale_2d` | `r`, `g`, `b`, `out`, `width` (u32), `height` (u32) |
//! | `grayscale_shared` | `r`, `g`, `b`, `out`, `n` (u64), `words` (u32: the launch's shared bytes / 4), `scratch` (OpenCL's `__local` argument) |
//!
//! The frame's planes are buffers 0 to 3 with no guard bands (the built-in kernels are the
//! project's own; a user's kernel gets bands, `workload::guard`).

use crate::backend::{
    Backend, BackendError, BackendResult, ErrorKind, Fill, KernelVariant, Launch, ProgramArg,
};
use crate::frame::Frame;
use crate::program::ScalarType;

/// The output plane's argument.
pub const OUTPUT: usize = 3;
/// The shared-memory kernel's `words` argument, set before each launch.
const WORDS: usize = 5;
/// What a poisoned output holds: every byte 0xFF, a NaN in every f32.
const POISON: u8 = 0xFF;

fn scalar(ty: ScalarType, value: u64) -> ProgramArg {
    ProgramArg::Scalar {
        ty,
        bytes: value.to_le_bytes()[..ty.size()].to_vec(),
    }
}

/// The arguments of `kernel` over a `width` x `height` frame.
pub fn args(kernel: KernelVariant, width: u32, height: u32) -> Vec<ProgramArg> {
    let pixels = Frame::pixel_count(width, height);
    let mut args = vec![ProgramArg::buffer(pixels.saturating_mul(4)); 4];
    match kernel {
        KernelVariant::GridStride | KernelVariant::OnePixelPerThread => {
            args.push(scalar(ScalarType::U64, pixels));
        }
        KernelVariant::GridStride2D => {
            args.push(scalar(ScalarType::U32, width.into()));
            args.push(scalar(ScalarType::U32, height.into()));
        }
        KernelVariant::SharedProbe => {
            args.push(scalar(ScalarType::U64, pixels));
            args.push(scalar(ScalarType::U32, 0));
            args.push(ProgramArg::Local);
        }
        KernelVariant::RegisterHeavy => {
            args.push(scalar(ScalarType::U64, pixels));
            args.push(scalar(ScalarType::U32, 0));
        }
    }
    args
}

/// Builds `kernel` on `backend` for `frame` and uploads the frame's three input planes; the
/// output's contents are undefined until [`poison`]. Replaces whatever program was current.
pub fn load(backend: &mut dyn Backend, kernel: KernelVariant, frame: &Frame) -> BackendResult<()> {
    load_kernel(backend, kernel, frame.width, frame.height)?;
    for (arg, plane) in [&frame.r, &frame.g, &frame.b].into_iter().enumerate() {
        backend.write_buffer(arg, as_bytes(plane))?;
    }
    Ok(())
}

/// Which built-in kernel is loaded on one frame, for a run of checks that switch between
/// kernels on that frame (validate's): each is loaded, and its planes uploaded, only when the
/// one before was another.
#[derive(Debug, Default)]
pub struct Loaded(Option<KernelVariant>);

impl Loaded {
    /// Makes `kernel` the current program on `frame`, loading it unless it is already.
    pub fn ensure(
        &mut self,
        backend: &mut dyn Backend,
        kernel: KernelVariant,
        frame: &Frame,
    ) -> BackendResult<()> {
        if self.0 != Some(kernel) {
            self.0 = None;
            load(backend, kernel, frame)?;
            self.0 = Some(kernel);
        }
        Ok(())
    }
}

/// Builds `kernel` for a `width` x `height` frame, buffers allocated but not written: what
/// asking the kernel's facts and residency needs.
pub fn load_kernel(
    backend: &mut dyn Backend,
    kernel: KernelVariant,
    width: u32,
    height: u32,
) -> BackendResult<()> {
    let source = backend.builtin(kernel).ok_or_else(|| {
        BackendError::new(
            backend.api(),
            ErrorKind::Unavailable,
            format!(
                "this backend has no source of the built-in {}",
                kernel.entry()
            ),
        )
    })?;
    backend.load_program(&source, &args(kernel, width, height))
}

/// Sets what `launch` needs of the current built-in `kernel` before it runs: the shared-memory
/// kernel's word count. Nothing for the others.
pub fn prepare_launch(
    backend: &mut dyn Backend,
    kernel: KernelVariant,
    launch: Launch,
) -> BackendResult<()> {
    if kernel != KernelVariant::SharedProbe {
        return Ok(());
    }
    let words = launch.shared_bytes / 4;
    backend.set_scalar(WORDS, &words.to_le_bytes())
}

/// Fills the output plane of `pixels` with NaN on the device (or, where the backend cannot
/// fill, by a write) and waits for it.
pub fn poison(backend: &mut dyn Backend, pixels: u64) -> BackendResult<()> {
    let len = pixels.saturating_mul(4);
    let fill = Fill {
        offset: 0,
        len,
        byte: POISON,
    };
    if backend.fill_buffer(OUTPUT, &[fill])? {
        return Ok(());
    }
    backend.write_buffer(OUTPUT, &vec![POISON; len as usize])
}

/// Copies the whole output plane into `out` (one value per pixel) and waits for it.
pub fn read(backend: &mut dyn Backend, out: &mut [f32]) -> BackendResult<()> {
    backend.read_buffer(OUTPUT, 0, as_bytes_mut(out))
}

/// The whole output plane in host memory the backend owns ([`Backend::read_buffer_staged`]),
/// as values; `None` where there is none, or it is not aligned for f32 (then [`read`]).
pub fn read_staged(backend: &mut dyn Backend) -> BackendResult<Option<&[f32]>> {
    Ok(backend.read_buffer_staged(OUTPUT)?.and_then(as_floats))
}

fn as_bytes(values: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and every bit pattern is a valid u8; the length is exact.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

fn as_bytes_mut(values: &mut [f32]) -> &mut [u8] {
    let len = std::mem::size_of_val(values);
    // SAFETY: as in `as_bytes`; every byte pattern is a valid f32 bit pattern.
    unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), len) }
}

fn as_floats(bytes: &[u8]) -> Option<&[f32]> {
    // SAFETY: every bit pattern is a valid f32; align_to keeps alignment and bounds exact.
    let (head, floats, tail) = unsafe { bytes.align_to::<f32>() };
    (head.is_empty() && tail.is_empty()).then_some(floats)
}

/// Why a launch of the grid-stride built-in `kernel` must not run where a driver ends a
/// shader's loops after `limit` iterations (llvmpipe, under Vulkan and WebGPU alike): its busiest
/// invocation would loop more often, and pixels would stay unwritten. Reads n, or the 2-D
/// kernel's width and height, from the program's scalars (`scalar(arg)`: arguments 4 and 5 in
/// the table above). One pixel per thread does not loop; no limit, nothing to refuse.
pub fn loop_cap(
    kernel: KernelVariant,
    launch: Launch,
    scalar: impl Fn(usize) -> Option<u64>,
    limit: Option<u64>,
) -> Result<(), String> {
    let Some(limit) = limit.filter(|_| kernel.grid_stride()) else {
        return Ok(());
    };
    let arg = |i: usize| {
        scalar(i)
            .ok_or_else(|| format!("the built-in {} has no scalar argument {i}", kernel.entry()))
    };
    let axes = match kernel {
        KernelVariant::GridStride2D => vec![
            ("x", arg(4)?, launch.grid.x, launch.block.x),
            ("y", arg(5)?, launch.grid.y, launch.block.y),
        ],
        _ => vec![("x", arg(4)?, launch.grid.x, launch.block.x)],
    };
    for (axis, extent, count, size) in axes {
        let step = (u64::from(count) * u64::from(size)).max(1);
        let iterations = extent.div_ceil(step);
        if iterations > limit {
            return Err(format!(
                "grid {count} x block {size} = {step} threads in {axis} need {iterations} loop \
                 iterations each for {extent} pixels; llvmpipe ends a shader's loops after \
                 {limit} (gallivm LP_MAX_TGSI_LOOP_ITERATIONS) and would leave pixels unwritten"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_grid_stride_loops_are_checked() {
        use crate::blocks::BlockSize;
        let launch = Launch::linear(BlockSize::linear(1), 1);
        let n = |v: u64| move |i: usize| (i == 4 || i == 5).then_some(v);
        let cap = Some(65535);
        assert!(loop_cap(KernelVariant::GridStride, launch, n(65535), cap).is_ok());
        let e = loop_cap(KernelVariant::RegisterHeavy, launch, n(65536), cap).unwrap_err();
        assert!(e.contains("65536 loop iterations"), "{e}");
        let e = loop_cap(KernelVariant::GridStride2D, launch, n(65536), cap).unwrap_err();
        assert!(e.contains("in x"), "{e}");
        assert!(loop_cap(KernelVariant::OnePixelPerThread, launch, n(1 << 20), cap).is_ok());
        assert!(loop_cap(KernelVariant::SharedProbe, launch, n(1 << 20), None).is_ok());
        let e = loop_cap(KernelVariant::SharedProbe, launch, |_| None, cap).unwrap_err();
        assert!(e.contains("no scalar argument 4"), "{e}");
    }

    #[test]
    fn the_arguments_follow_the_table() {
        let a = args(KernelVariant::GridStride2D, 3, 2);
        assert_eq!(a.len(), 6);
        assert!(a[..4].iter().all(|b| *b == ProgramArg::buffer(24)));
        assert_eq!(a[4], scalar(ScalarType::U32, 3));
        let s = args(KernelVariant::SharedProbe, 3, 2);
        assert_eq!(s[4], scalar(ScalarType::U64, 6));
        assert_eq!(s[WORDS], scalar(ScalarType::U32, 0));
        assert_eq!(s[6], ProgramArg::Local);
        assert_eq!(args(KernelVariant::RegisterHeavy, 1, 1).len(), 6);
    }

    /// A kernel is loaded (its planes uploaded) once for a run of checks that keep to it, and
    /// again when another is asked for.
    #[test]
    fn loaded_loads_only_another_kernel() {
        let mut b = crate::testing::HostBackend::new(crate::testing::TEST_API_A);
        let uploads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        b.uploads = Some(uploads.clone());
        let frame = Frame::generate(8, 4, 1);
        let mut loaded = Loaded::default();
        for kernel in [
            KernelVariant::GridStride,
            KernelVariant::GridStride,
            KernelVariant::GridStride2D,
            KernelVariant::GridStride2D,
            KernelVariant::GridStride,
        ] {
            loaded.ensure(&mut b, kernel, &frame).unwrap();
        }
        assert_eq!(uploads.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[test]
    fn floats_cross_as_bytes_and_back() {
        let v = [1.0f32, f32::NAN, -2.5];
        let floats = as_floats(as_bytes(&v)).unwrap();
        assert_eq!(floats[0], 1.0);
        assert!(floats[1].is_nan());
        assert!(as_floats(&as_bytes(&v)[1..5]).is_none());
    }
}
