//! The built-in grayscale kernels as programs (`Backend::builtin`): kernels/grayscale.cl, each
//! kernel built alone by the defines that select it, through the same path as a user's kernel.

use blocksweep_core::{KernelVariant, ProgramSource};

use crate::provider::OPENCL_C;

/// kernels/grayscale.cl, compiled into the binary.
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/grayscale.cl");

/// Where the source came from, for messages.
const ORIGIN: &str = "kernels/grayscale.cl";
/// The OpenCL C standard the source is written to.
const STD_OPTION: &str = "-cl-std=CL1.2";
/// With [`ONE_KERNEL_PREFIX`]`<entry>`, makes kernels/grayscale.cl hold that kernel alone
/// (each kernel there sits in an `#if` on these two macros): a driver that generates code at
/// clBuildProgram (NVIDIA's) takes longer the more kernels a program holds.
const ONE_KERNEL_OPTION: &str = "-D BLOCKSWEEP_ONE_KERNEL";
const ONE_KERNEL_PREFIX: &str = "-D BLOCKSWEEP_KERNEL_";

/// The source of `kernel`, built with the user's `extra` options (`--cl-build-options`) after
/// the standard and the kernel's defines. NVIDIA's verbose flag is the program path's to add.
pub(crate) fn source(kernel: KernelVariant, extra: &str) -> ProgramSource {
    ProgramSource {
        language: OPENCL_C,
        code: KERNEL_SOURCE.as_bytes().to_vec(),
        entry: kernel.entry().into(),
        origin: ORIGIN.into(),
        options: options(kernel.entry(), extra),
    }
}

/// clBuildProgram options: the standard, the defines that keep only kernel `entry` of the
/// source, and the user's own.
fn options(entry: &str, extra: &str) -> Vec<String> {
    let mut o = vec![
        STD_OPTION.to_string(),
        ONE_KERNEL_OPTION.to_string(),
        format!("{ONE_KERNEL_PREFIX}{entry}"),
    ];
    if !extra.trim().is_empty() {
        o.push(extra.trim().into());
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_a_source_that_names_it_alone() {
        for v in KernelVariant::ALL {
            let s = source(v, " -cl-fast-relaxed-math ");
            assert_eq!((s.entry.as_str(), s.language), (v.entry(), OPENCL_C));
            assert_eq!(s.origin, "kernels/grayscale.cl");
            let want = format!(
                "-cl-std=CL1.2 -D BLOCKSWEEP_ONE_KERNEL -D BLOCKSWEEP_KERNEL_{} \
                 -cl-fast-relaxed-math",
                v.entry()
            );
            assert_eq!(s.options.join(" "), want);
        }
        assert_eq!(source(KernelVariant::GridStride, "").options.len(), 3);
    }

    /// Each kernel sits in the `#if` that the options' defines select, and ends at its
    /// `#endif`: so a one-kernel build holds that kernel and no other.
    #[test]
    fn each_kernel_is_guarded_by_its_own_define() {
        for v in KernelVariant::ALL {
            let entry = v.entry();
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
    fn source_carries_the_weights() {
        let [r, g, b] = blocksweep_core::WEIGHTS;
        let expr = format!("out[i] = {r}f * r[i] + {g}f * g[i] + {b}f * b[i];");
        assert_eq!(KERNEL_SOURCE.matches(&expr).count(), 2, "{expr}");
    }
}
