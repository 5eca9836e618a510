//! A buffer's fills (`Backend::fill_buffer`): the driver's clEnqueueFillBuffer, except for a
//! range past 4 GiB, which a kernel of ours writes. NVIDIA's clEnqueueFillBuffer failed with
//! its own -9999 on a 10 GB plane on the H200, as one command and in 1 GiB pieces alike
//! (2026-12-01). The kernel is built on first use, so buffers of ordinary size never pay.

use std::cell::OnceCell;

use blocksweep_core::{BlockSize, Fill, Launch};
use opencl3::types::{cl_mem, cl_uint, cl_ulong};

use crate::context::{wait, DeviceContext};
use crate::error::OpenClError;
use crate::handles::{Kernel, Mem, Program};

/// A range ending above this many bytes is filled by the kernel (4 GiB: where 32-bit offsets
/// end), if it is whole words.
pub(crate) const KERNEL_FILL_ABOVE: u64 = 1 << 32;

const SOURCE: &str = "__kernel void blocksweep_fill(__global uint* p, const ulong first,
                             const ulong n, const uint bits) {
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) p[first + i] = bits;
}
";

pub(crate) struct FillKernel {
    kernel: Kernel,
    _program: Program,
}

/// Sets each of `fills` (checked to lie in `mem`), the kernel (built into `kernel` when first
/// needed) taking those past 4 GiB; returns when all are done.
pub(crate) fn fill_ranges(
    ctx: &DeviceContext,
    kernel: &OnceCell<FillKernel>,
    mem: &Mem,
    fills: &[Fill],
) -> Result<(), OpenClError> {
    let by_kernel =
        |f: &Fill| f.offset + f.len > KERNEL_FILL_ABOVE && (f.offset | f.len).is_multiple_of(4);
    let (big, small): (Vec<Fill>, Vec<Fill>) = fills.iter().partition(|f| by_kernel(f));
    let ranges: Vec<(usize, usize, u8)> = small
        .iter()
        .map(|f| (f.offset as usize, f.len as usize, f.byte))
        .collect();
    crate::transfer::fill_bytes(&ctx.queue, mem, &ranges)?;
    for f in big {
        if kernel.get().is_none() {
            let _ = kernel.set(FillKernel::build(ctx)?);
        }
        if let Some(k) = kernel.get() {
            let bits = u32::from_ne_bytes([f.byte; 4]);
            k.run(ctx, mem, (f.offset / 4, f.len / 4), bits)?;
        }
    }
    Ok(())
}

impl FillKernel {
    fn build(ctx: &DeviceContext) -> Result<FillKernel, OpenClError> {
        let (program, _log) = crate::kernel::build(&ctx.context, ctx.device, SOURCE, "")?;
        let kernel = crate::kernel::kernel(&program, "blocksweep_fill")?;
        Ok(FillKernel {
            kernel,
            _program: program,
        })
    }

    /// Writes `bits` into the `words` 32-bit words of `mem` from word `first`, and waits.
    fn run(
        &self,
        ctx: &DeviceContext,
        mem: &Mem,
        (first, words): (u64, u64),
        bits: u32,
    ) -> Result<(), OpenClError> {
        let raw: cl_mem = mem.raw();
        crate::kernel::set_arg(&self.kernel, 0, &raw)?;
        crate::kernel::set_arg(&self.kernel, 1, &(first as cl_ulong))?;
        crate::kernel::set_arg(&self.kernel, 2, &(words as cl_ulong))?;
        crate::kernel::set_arg(&self.kernel, 3, &(bits as cl_uint))?;
        // 64 K work-groups of 256: every multiprocessor busy, a grid-stride loop for the rest.
        let launch = Launch::linear(BlockSize::linear(256), 1 << 16);
        let event = crate::timing::enqueue_kernel(&ctx.queue, &self.kernel, launch, true)?;
        match event {
            Some(e) => wait(&e, "fill kernel"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel writes its words and no other, from a word offset: what a fill past 4 GiB
    /// gets, tried small on the first OpenCL device here.
    #[test]
    fn the_kernel_fills_its_words_only() {
        let Some((ctx, mem)) = crate::memory::first_device_for_tests() else {
            return;
        };
        crate::transfer::fill_bytes(&ctx.queue, &mem, &[(0, 40, 7)]).unwrap();
        let k = FillKernel::build(&ctx).unwrap();
        k.run(&ctx, &mem, (2, 5), u32::from_ne_bytes([0xA5; 4]))
            .unwrap();
        let mut out = [0u8; 40];
        crate::transfer::read_range(&ctx.queue, &mem, 0, &mut out).unwrap();
        let want: Vec<u8> = (0..40)
            .map(|i| if (8..28).contains(&i) { 0xA5 } else { 7 })
            .collect();
        assert_eq!(out.to_vec(), want);
    }
}
