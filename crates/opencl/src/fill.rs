//! The poison written by a kernel where a plane is too large to trust the driver's fill:
//! NVIDIA's clEnqueueFillBuffer failed with its own -9999 on a 10 GB plane on the H200, as one
//! command and in 1 GiB pieces alike (2026-12-01). Built on first use, so frames of ordinary
//! size never pay for its build.

use opencl3::types::{cl_mem, cl_uint, cl_ulong};

use crate::context::{wait, DeviceContext};
use crate::error::OpenClError;
use crate::handles::{Kernel, Mem, Program};
use blocksweep_core::{BlockSize, Launch};

/// Planes above this many bytes are poisoned by the kernel (4 GiB: where 32-bit offsets end).
pub(crate) const KERNEL_FILL_ABOVE: u64 = 1 << 32;

const SOURCE: &str =
    "__kernel void blocksweep_fill(__global uint* p, const ulong n, const uint bits) {
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = bits;
}
";

pub(crate) struct FillKernel {
    kernel: Kernel,
    _program: Program,
}

impl FillKernel {
    pub fn build(ctx: &DeviceContext) -> Result<FillKernel, OpenClError> {
        let (program, _log) = crate::kernel::build(&ctx.context, ctx.device, SOURCE, "")?;
        let kernel = crate::kernel::kernel(&program, "blocksweep_fill")?;
        Ok(FillKernel {
            kernel,
            _program: program,
        })
    }

    /// Writes `bits` into the first `words` 32-bit words of `mem`, and waits.
    pub fn run(
        &self,
        ctx: &DeviceContext,
        mem: &Mem,
        words: u64,
        bits: u32,
    ) -> Result<(), OpenClError> {
        let raw: cl_mem = mem.raw();
        crate::kernel::set_arg(&self.kernel, 0, &raw)?;
        crate::kernel::set_arg(&self.kernel, 1, &(words as cl_ulong))?;
        crate::kernel::set_arg(&self.kernel, 2, &(bits as cl_uint))?;
        // 64 K work-groups of 256: every multiprocessor busy, a grid-stride loop for the rest.
        let launch = Launch::linear(BlockSize::linear(256), 1 << 16);
        let event = crate::timing::enqueue_kernel(&ctx.queue, &self.kernel, launch, true)?;
        match event {
            Some(e) => wait(&e, "fill kernel"),
            None => Ok(()),
        }
    }
}
