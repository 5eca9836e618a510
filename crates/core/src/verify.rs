//! Pixel-by-pixel comparison of a device's output with the CPU reference.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Absolute tolerance. Inputs are in [0, 1) and the weights sum to 1, so results are below 1
/// and one f32 ulp there is at most 2^-24 ~ 6e-8. GPU compilers may contract
/// `wr*r + wg*g + wb*b` into fused multiply-adds (CUDA and OpenCL do by default; SPIR-V
/// drivers may), which skips up to two intermediate roundings relative to the CPU's separate
/// multiply and add: a few ulp at most. 1e-6 (~16 ulp) admits that and nothing else; a wrong
/// weight, a skipped pixel (NaN poison) or a stale value from another frame is far outside it.
pub const TOLERANCE: f32 = 1e-6;

/// The poison every backend fills the output plane with before each row: a quiet NaN, as the
/// 32-bit pattern a device memset writes. A pixel the launch never wrote stays NaN and fails.
pub const POISON_BITS: u32 = 0x7FC0_0000;

/// The first pixel that disagrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    pub index: u64,
    pub got: f32,
    pub expected: f32,
    /// How many pixels disagree in all.
    pub bad_pixels: u64,
}

/// Compares every pixel; NaN never passes (the poison must be overwritten).
pub fn verify(output: &[f32], reference: &[f32]) -> Result<(), Mismatch> {
    verify_counted(output, reference, &|_| {})
}

/// [`verify`], calling `checked` with the number of pixels of each chunk as it is checked
/// (from every worker thread), for a progress line.
pub fn verify_counted(
    output: &[f32],
    reference: &[f32],
    checked: &(dyn Fn(u64) + Sync),
) -> Result<(), Mismatch> {
    if output.len() != reference.len() {
        return Err(Mismatch {
            index: output.len().min(reference.len()) as u64,
            got: f32::NAN,
            expected: f32::NAN,
            bad_pixels: output.len().abs_diff(reference.len()) as u64,
        });
    }
    // Every core checks a chunk: its first bad index and its count; the first chunk with a
    // bad pixel names the first bad index overall.
    let per_chunk: Vec<ChunkCheck> = output
        .par_chunks(CHUNK)
        .zip(reference.par_chunks(CHUNK))
        .enumerate()
        .map(|(c, (out, want))| {
            let check = check_chunk(c * CHUNK, out, want);
            checked(out.len() as u64);
            check
        })
        .collect();
    let bad: u64 = per_chunk.iter().map(|(_, n)| n).sum();
    match per_chunk.iter().find_map(|(first, _)| *first) {
        None => Ok(()),
        Some((i, got, expected)) => Err(Mismatch {
            index: i as u64,
            got,
            expected,
            bad_pixels: bad,
        }),
    }
}

const CHUNK: usize = 1 << 16;

/// One chunk's first bad pixel (index, got, expected), if any, and its count of bad pixels.
type ChunkCheck = (Option<(usize, f32, f32)>, u64);

fn check_chunk(offset: usize, output: &[f32], reference: &[f32]) -> ChunkCheck {
    let mut first = None;
    let mut bad = 0u64;
    for (i, (&got, &want)) in output.iter().zip(reference).enumerate() {
        // Written so that NaN (the poison) fails: NaN compares false with everything.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !((got - want).abs() <= TOLERANCE) {
            bad += 1;
            if first.is_none() {
                first = Some((offset + i, got, want));
            }
        }
    }
    (first, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poison_is_a_nan() {
        assert!(f32::from_bits(POISON_BITS).is_nan());
    }

    #[test]
    fn nan_and_offsets_fail() {
        let r = vec![0.5f32; 10];
        assert!(verify(&r, &r).is_ok());
        let mut o = r.clone();
        o[7] = f32::NAN;
        o[9] = f32::NAN;
        let m = verify(&o, &r).unwrap_err();
        assert_eq!((m.index, m.bad_pixels), (7, 2));
        let mut o = r.clone();
        o[3] += 2.0 * TOLERANCE;
        assert_eq!(verify(&o, &r).unwrap_err().index, 3);
        let mut o = r.clone();
        o[3] += TOLERANCE / 4.0;
        assert!(verify(&o, &r).is_ok());
        assert!(verify(&r[..9], &r).is_err());
        // Across chunk boundaries: the first bad index overall and every bad pixel counted.
        let big = vec![0.25f32; 3 * CHUNK + 17];
        let mut o = big.clone();
        o[2 * CHUNK + 5] = f32::NAN;
        o[CHUNK + 1] = 9.0;
        o[3 * CHUNK + 16] = f32::NAN;
        let m = verify(&o, &big).unwrap_err();
        assert_eq!((m.index, m.bad_pixels, m.got), ((CHUNK + 1) as u64, 3, 9.0));
    }

    #[test]
    fn fma_contraction_is_within_tolerance() {
        let f = crate::Frame::generate(256, 256, 3);
        let reference = f.reference();
        let [wr, wg, wb] = crate::WEIGHTS;
        let fused: Vec<f32> = (0..reference.len())
            .map(|i| wr.mul_add(f.r[i], wg.mul_add(f.g[i], wb * f.b[i])))
            .collect();
        assert!(verify(&fused, &reference).is_ok());
    }
}
