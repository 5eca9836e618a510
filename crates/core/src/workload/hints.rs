//! What a failed row's message adds where the failure alone would mislead: the spec's argument
//! order where an output was never written and an input changed (two buffers swapped in the
//! spec), and a driver's cap on loop iterations (llvmpipe's 65535) where a loop of the kernel
//! could reach it, and only there.

use super::guard;
use super::program::ProgramWorkload;
use crate::backend::{Backend, CheckedRun, Launch, Span};
use crate::limits::Named;
use crate::program::{ProgramArg, ScalarType};
use crate::spec::GridMode;
use crate::sweep::SweepError;

impl ProgramWorkload {
    /// A failed check on a driver that ends loops early (llvmpipe stops a shader's loops
    /// after 65535 iterations in all): says so, with this launch's grid-stride count where it
    /// is past it, or as a note where a loop of the kernel could reach the cap
    /// ([`Self::loop_may_reach`]); nothing where none could.
    pub(super) fn loop_cap_hint(
        &self,
        backend: &dyn Backend,
        launch: Launch,
        e: SweepError,
    ) -> SweepError {
        let Some(cap) = backend.limits().max_loop_iterations.as_ref() else {
            return e;
        };
        let passes = self.passes(launch);
        let driver = &backend.identity().name;
        let why = match self.instance.grid == GridMode::Stride && passes > cap.value {
            true => format!(
                "; this launch's grid-stride loop makes {passes} passes and {driver} ends a \
                 shader's loops after {} ({}): a larger grid (--grid with a number) or fewer \
                 work items keeps it under",
                cap.value, cap.name
            ),
            false if self.loop_may_reach(backend.api().key(), cap) => format!(
                "; note that {driver} ends a shader's loops after {} iterations ({}): a loop \
                 of this kernel that runs longer is cut short there, and on no other driver",
                cap.value, cap.name
            ),
            false => return e,
        };
        with_detail(e, &why)
    }

    /// Grid-stride passes of one thread at `launch`: work items over the launch's threads.
    fn passes(&self, launch: Launch) -> u64 {
        let threads = (launch.grid.blocks())
            .saturating_mul(launch.block.threads())
            .max(1);
        self.instance.work_items().div_ceil(threads)
    }

    /// Whether a loop of the kernel could run `cap` times, as far as the spec and the source
    /// say: a whole number of at least `cap` written in the source or its defines (a loop
    /// bound such as `k < 100000u`), or a scalar argument of at least `cap` that is not the
    /// work's count (whose loop is the grid-stride one, counted by the caller). A source that
    /// is not text (SPIR-V) cannot be read, so it could. Bounds the kernel computes (`n * n`,
    /// `1 << 20`) and nested loops whose product passes the cap are not seen.
    pub(super) fn loop_may_reach(&self, api_key: &str, cap: &Named<u64>) -> bool {
        let Some(source) = self.spec.sources_for(api_key) else {
            return true;
        };
        let Ok(text) = std::str::from_utf8(&source.code) else {
            return true;
        };
        let defines = (source.options.iter()).filter_map(|o| o.split_once('=').map(|(_, v)| v));
        let written = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'));
        if written
            .chain(defines)
            .filter_map(whole_number)
            .any(|v| v >= cap.value)
        {
            return true;
        }
        let i = &self.instance;
        let work = [i.work.0, i.work.1, i.work_items()];
        (i.args.iter())
            .filter_map(|a| match a {
                ProgramArg::Scalar { ty, bytes } => integer(*ty, bytes),
                _ => None,
            })
            .any(|v| v >= cap.value && !work.contains(&v))
    }

    /// Where a written buffer was left wholly unwritten: the first buffer the spec declares
    /// read-only whose contents changed after `launch` (read back now), named with both
    /// buffers' places in the spec, since the kernel most likely takes them in another order.
    pub(super) fn argument_order_hint(
        &self,
        backend: &mut dyn Backend,
        unwritten: &str,
    ) -> Option<String> {
        let inputs: Vec<_> = (self.instance.buffers.iter())
            .filter(|b| !b.decl.written)
            .collect();
        let reads = (inputs.iter())
            .map(|b| Span {
                arg: b.decl.index,
                offset: guard::GUARD,
                len: b.initial.len() as u64,
            })
            .collect();
        let run = CheckedRun {
            resets: Vec::new(),
            launch: None,
            reads,
        };
        let mut out: Vec<Vec<u8>> = (inputs.iter())
            .map(|b| vec![0u8; b.initial.len()])
            .collect();
        backend.run_checked(&run, &mut out).ok()?.ok()?;
        let (changed, _) = (inputs.iter().zip(&out)).find(|(b, now)| b.initial != **now)?;
        let written = (self.instance.written()).find(|b| b.decl.name == unwritten)?;
        Some(format!(
            ", and '{}', which the spec declares read-only, changed: the spec's [[args]] order \
             may not be the kernel's parameters' ('{}' is args[{}], '{}' args[{}]: check them \
             against the kernel's parameter list)",
            changed.decl.name,
            written.decl.name,
            written.decl.index,
            changed.decl.name,
            changed.decl.index
        ))
    }
}

/// A token of source text read as a whole number: decimal digits with an optional integer
/// suffix (`100000u`, `65536UL`); hex masks, floats and names are not loop counts.
fn whole_number(token: &str) -> Option<u64> {
    let digits = token.trim_end_matches(['u', 'U', 'l', 'L']);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// An integer scalar's value (a negative one is no loop count).
fn integer(ty: ScalarType, bytes: &[u8]) -> Option<u64> {
    let mut b = [0u8; 8];
    b[..ty.size().min(8)].copy_from_slice(bytes.get(..ty.size())?);
    let bits = u64::from_le_bytes(b);
    match ty {
        ScalarType::U32 | ScalarType::U64 => Some(bits),
        ScalarType::I32 => u64::try_from(bits as u32 as i32).ok(),
        ScalarType::I64 => u64::try_from(bits as i64).ok(),
        ScalarType::F32 | ScalarType::F64 => None,
    }
}

/// `e` with `why` added to its detail, where it has one.
fn with_detail(e: SweepError, why: &str) -> SweepError {
    match e {
        SweepError::Row {
            api,
            block,
            grid,
            fault,
            detail,
        } => SweepError::Row {
            api,
            block,
            grid,
            fault,
            detail: detail + why,
        },
        SweepError::Output {
            api,
            block,
            grid,
            buffer,
            against,
            detail,
        } => SweepError::Output {
            api,
            block,
            grid,
            buffer,
            against,
            detail: detail + why,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::whole_number;
    use crate::limits::Named;
    use crate::testing::metal_like::workload_of;

    /// Whether the note on llvmpipe's cap would be added for `source` with `extra` arguments.
    fn may_reach(source: &str, n: u64, extra: &str) -> bool {
        let work = workload_of(source, n, extra);
        work.loop_may_reach("metal-like", &Named::new(65535, "the cap"))
    }

    #[test]
    fn a_loop_could_reach_the_cap_only_where_the_spec_or_source_says_one_could() {
        let plain = "kernel void scale() { for (uint k = 0; k < 256u; k++) {} } // 0xffffffffu";
        assert!(!may_reach(plain, 4096, ""), "a bound of 256, a hex mask");
        // The work's count is the grid-stride loop's bound, counted by its passes.
        assert!(!may_reach(plain, 1 << 20, ""));
        let inner = "kernel void scale() { for (uint k = 0; k < 100000u; k++) {} }";
        assert!(
            may_reach(inner, 4096, ""),
            "a bound of 100000 in the source"
        );
        let iters = "[[args]]\nscalar = \"u32\"\nname = \"iters\"\nvalue = 70000\n";
        assert!(
            may_reach(plain, 4096, iters),
            "a scalar of 70000 that is not the work"
        );
    }

    #[test]
    fn only_decimal_whole_numbers_count_as_loop_bounds() {
        assert_eq!(whole_number("100000u"), Some(100000));
        assert_eq!(whole_number("65536UL"), Some(65536));
        assert_eq!(whole_number("256"), Some(256));
        for not in ["0xffffffffu", "1.5", "1e6", "n", "x2", ""] {
            assert_eq!(whole_number(not), None, "{not}");
        }
        assert_eq!(whole_number("99999999999999999999999"), Some(u64::MAX));
    }
}
