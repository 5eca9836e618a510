//! Comparing a buffer read back from a device with the reference bytes.
//!
//! Element by element, floats match when bit-equal, within `tolerance_ulps` units in the last
//! place (+0 and -0 are 0 apart), within `tolerance_abs`, or within `tolerance_rel` of the
//! expected magnitude; a NaN matches nothing, not even a NaN, since a NaN in an output is a
//! bug to show. Integers match only when equal. A `compare = "sum"` buffer is compared by its
//! element sum alone (in f64 for floats, exactly for integers): the sums match when they
//! differ by at most `sum_rel` (tolerance_rel, default 1e-5 for f32) of the sum of the
//! expected elements' magnitudes, plus `tolerance_abs` when given; that scale does not
//! vanish when positive and negative partials cancel.

use std::fmt;

use super::decl::{BufferDecl, CompareMode, Tolerance};
use crate::program::ScalarType;

/// How a buffer differs from the reference. The harness adds the API, block, grid and buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The first differing element; None for a sum or a length mismatch.
    pub index: Option<u64>,
    /// Expected and got, formatted by type (floats also as hex bits).
    pub expected: String,
    pub got: String,
    /// Elements that differ (1 for a sum).
    pub differing: u64,
    pub elements: u64,
    pub mode: CompareMode,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(
                f,
                "element {i}: expected {}, got {} ({} of {} elements differ)",
                self.expected, self.got, self.differing, self.elements
            ),
            None => write!(
                f,
                "{}: expected {}, got {}",
                self.mode_word(),
                self.expected,
                self.got
            ),
        }
    }
}

impl Mismatch {
    fn mode_word(&self) -> &'static str {
        match self.mode {
            CompareMode::Sum => "sum",
            CompareMode::Exact => "size",
        }
    }
}

/// Compares `got` with `expected` for buffer `buffer` (its type and compare mode).
pub fn compare(
    buffer: &BufferDecl,
    expected: &[u8],
    got: &[u8],
    tol: &Tolerance,
) -> Result<(), Mismatch> {
    let size = buffer.ty.size();
    let elements = (expected.len() / size) as u64;
    if expected.len() != got.len() {
        return Err(Mismatch {
            index: None,
            expected: format!("{} bytes", expected.len()),
            got: format!("{} bytes", got.len()),
            differing: elements,
            elements,
            mode: CompareMode::Exact,
        });
    }
    let read = ReadBack {
        ty: buffer.ty,
        expected,
        got,
    };
    match buffer.compare {
        CompareMode::Exact => read.by_element(tol),
        CompareMode::Sum => read.by_sum(tol),
    }
}

/// A buffer read back beside its reference, of the same length, as elements of one type.
struct ReadBack<'a> {
    ty: ScalarType,
    expected: &'a [u8],
    got: &'a [u8],
}

/// Whether two buffers of one length hold the same bytes, compared on every core.
fn equal(a: &[u8], b: &[u8]) -> bool {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 20;
    a.len() == b.len()
        && a.par_chunks(CHUNK)
            .zip(b.par_chunks(CHUNK))
            .all(|(x, y)| x == y)
}

/// Whether a float buffer holds a NaN (exponent all ones, mantissa not zero).
fn has_nan(ty: ScalarType, bytes: &[u8]) -> bool {
    use rayon::prelude::*;
    let (exp, man) = float_masks(ty);
    bytes.par_chunks((1 << 16) * ty.size()).any(|chunk| {
        let mut found = false;
        each_bits(ty, chunk, |_, bits| {
            found |= bits & exp == exp && bits & man != 0
        });
        found
    })
}

/// A float type's (exponent, mantissa) masks, on its bits read as u64.
pub(crate) fn float_masks(ty: ScalarType) -> (u64, u64) {
    match ty {
        ScalarType::F32 => (0x7f80_0000, 0x007f_ffff),
        _ => (0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
    }
}

/// Calls `f` with each element's index and bits, for elements of 4 or 8 bytes: one loop per
/// width, which the compiler vectorises (a width read at run time made every scan of a row's
/// output several times slower).
pub(crate) fn each_bits(ty: ScalarType, bytes: &[u8], mut f: impl FnMut(usize, u64)) {
    match ty.size() {
        4 => {
            for (i, c) in bytes.chunks_exact(4).enumerate() {
                f(i, u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64);
            }
        }
        _ => {
            for (i, c) in bytes.chunks_exact(8).enumerate() {
                f(
                    i,
                    u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
                );
            }
        }
    }
}

/// Element `i` of a little-endian buffer as raw bits.
fn word(ty: ScalarType, bytes: &[u8], i: usize) -> u64 {
    let s = ty.size();
    let mut b = [0u8; 8];
    b[..s].copy_from_slice(&bytes[i * s..(i + 1) * s]);
    u64::from_le_bytes(b)
}

/// A value formatted as its type reads it; floats with their bits, so that -0 and NaN
/// payloads are visible.
pub fn format_value(ty: ScalarType, bits: u64) -> String {
    match ty {
        ScalarType::I32 => (bits as u32 as i32).to_string(),
        ScalarType::U32 => (bits as u32).to_string(),
        ScalarType::I64 => (bits as i64).to_string(),
        ScalarType::U64 => bits.to_string(),
        ScalarType::F32 => format!("{:e} (0x{:08x})", f32::from_bits(bits as u32), bits as u32),
        ScalarType::F64 => format!("{:e} (0x{:016x})", f64::from_bits(bits), bits),
    }
}

/// The value as f64 (exact for the floats and for integers up to 2^53).
fn as_f64(ty: ScalarType, bits: u64) -> f64 {
    match ty {
        ScalarType::F32 => f32::from_bits(bits as u32) as f64,
        ScalarType::F64 => f64::from_bits(bits),
        ScalarType::I32 => bits as u32 as i32 as f64,
        ScalarType::U32 => bits as u32 as f64,
        ScalarType::I64 => bits as i64 as f64,
        ScalarType::U64 => bits as f64,
    }
}

/// Distance in units in the last place between two non-NaN floats of the same width, with
/// the sign-magnitude bits mapped onto a line so that -0 and +0 are 0 apart.
fn ulps(ty: ScalarType, a: u64, b: u64) -> u64 {
    let line = |x: u64| -> i128 {
        let (sign, mag) = match ty {
            ScalarType::F32 => (x >> 31 & 1, x & 0x7fff_ffff),
            _ => (x >> 63, x & 0x7fff_ffff_ffff_ffff),
        };
        if sign == 1 {
            -(mag as i128)
        } else {
            mag as i128
        }
    };
    (line(a) - line(b)).unsigned_abs().min(u64::MAX as u128) as u64
}

/// Whether `got` matches `expected` for one element.
pub fn element_matches(ty: ScalarType, expected: u64, got: u64, tol: &Tolerance) -> bool {
    if !ty.is_float() {
        return expected == got;
    }
    let (e, g) = (as_f64(ty, expected), as_f64(ty, got));
    if e.is_nan() || g.is_nan() {
        return false;
    }
    if expected == got || ulps(ty, expected, got) <= tol.ulps {
        return true;
    }
    let diff = (e - g).abs();
    tol.abs.is_some_and(|a| diff <= a) || tol.rel.is_some_and(|r| diff <= r * e.abs())
}

impl ReadBack<'_> {
    /// Element by element: the first differing element, and how many differ.
    fn by_element(&self, tol: &Tolerance) -> Result<(), Mismatch> {
        let Self { ty, expected, got } = *self;
        let n = expected.len() / ty.size();
        // The fast path: most comparisons are of equal buffers (a row against its API's first
        // size), and equal bits match unless they are a NaN, which never does.
        if equal(expected, got) && !(ty.is_float() && has_nan(ty, got)) {
            return Ok(());
        }
        // On every core, in chunks that each report their first differing element and count
        // (a 64 MB output is 16 M elements, checked twice a row).
        use rayon::prelude::*;
        const CHUNK: usize = 1 << 16;
        let (first, differing) = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut first = None;
                let mut differing = 0u64;
                for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                    let (e, g) = (word(ty, expected, i), word(ty, got, i));
                    if !element_matches(ty, e, g, tol) {
                        differing += 1;
                        first.get_or_insert((i, e, g));
                    }
                }
                (first, differing)
            })
            .reduce(
                || (None, 0),
                |(fa, da), (fb, db)| {
                    let first = match (fa, fb) {
                        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
                        (a, b) => a.or(b),
                    };
                    (first, da + db)
                },
            );
        match first {
            None => Ok(()),
            Some((i, e, g)) => Err(Mismatch {
                index: Some(i as u64),
                expected: format_value(ty, e),
                got: format_value(ty, g),
                differing,
                elements: n as u64,
                mode: CompareMode::Exact,
            }),
        }
    }

    /// The element sums (in f64 for floats, exactly for integers), within the sum's tolerance.
    fn by_sum(&self, tol: &Tolerance) -> Result<(), Mismatch> {
        let Self { ty, expected, got } = *self;
        let n = expected.len() / ty.size();
        let mismatch = |e: String, g: String| Mismatch {
            index: None,
            expected: e,
            got: g,
            differing: 1,
            elements: n as u64,
            mode: CompareMode::Sum,
        };
        if !ty.is_float() {
            let sum = |b: &[u8]| -> i128 { (0..n).map(|i| as_int(ty, word(ty, b, i))).sum() };
            let (e, g) = (sum(expected), sum(got));
            return if e == g {
                Ok(())
            } else {
                Err(mismatch(e.to_string(), g.to_string()))
            };
        }
        let sum = |b: &[u8]| -> f64 { (0..n).map(|i| as_f64(ty, word(ty, b, i))).sum() };
        let (e, g) = (sum(expected), sum(got));
        let scale: f64 = (0..n)
            .map(|i| as_f64(ty, word(ty, expected, i)).abs())
            .sum();
        let allowed = tol.sum_rel(ty) * scale + tol.abs.unwrap_or(0.0);
        if (e - g).abs() <= allowed {
            return Ok(());
        }
        Err(mismatch(
            format!("{e:e}"),
            format!(
                "{g:e} (differs by {:e}, allowed {allowed:e})",
                (e - g).abs()
            ),
        ))
    }
}

fn as_int(ty: ScalarType, bits: u64) -> i128 {
    match ty {
        ScalarType::I32 => bits as u32 as i32 as i128,
        ScalarType::U32 => bits as u32 as i128,
        ScalarType::I64 => bits as i64 as i128,
        _ => bits as i128,
    }
}
