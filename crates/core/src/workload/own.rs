//! What one row's output must satisfy on its own, before it is compared with anything: no
//! element of a poisoned output still holds the poison (the kernel did not reach it at this
//! launch), and no NaN or Inf in a float output unless the spec allows them. So a broken
//! first size can never become the reference the later sizes are judged by.

use rayon::prelude::*;

use crate::program::ScalarType;
use crate::spec::compare::{each_bits, float_masks};
use crate::spec::{BufferInstance, CompareMode, InitDecl};

/// What a poisoned output is filled with before a checked dispatch: every byte 0xFF (a NaN
/// with every payload bit set in floats, -1 in integers), and the second poison, for telling
/// an element never written from one written with the first poison's bits.
pub const POISON: u8 = 0xFF;
pub const SECOND_POISON: u8 = 0x5A;

/// Whether the harness poisons this written buffer before a checked dispatch: an element-wise
/// output the spec gives no contents. Any other written buffer is restored to its initial
/// contents (the kernel may read it).
pub fn poisoned(b: &BufferInstance) -> bool {
    b.decl.written && b.decl.init == InitDecl::Zeros && b.decl.compare == CompareMode::Exact
}

/// Elements of `data` (elements of `ty`) whose bytes are all `byte`: their count and first
/// index.
pub fn holding(ty: ScalarType, data: &[u8], byte: u8) -> Option<(u64, u64)> {
    let size = ty.size();
    let hit = |c: &[u8]| c.iter().all(|&x| x == byte);
    count_and_first(data, size, hit)
}

/// Elements that hold `byte` in both reads (the same dispatch from two poisons).
pub fn holding_both(
    ty: ScalarType,
    first: &[u8],
    second: &[u8],
    bytes: (u8, u8),
) -> Option<(u64, u64)> {
    let size = ty.size();
    let n = first.len() / size;
    let at = |i: usize| {
        let r = i * size..(i + 1) * size;
        first[r.clone()].iter().all(|&x| x == bytes.0) && second[r].iter().all(|&x| x == bytes.1)
    };
    let hits: Vec<u64> = (0..n)
        .into_par_iter()
        .filter(|&i| at(i))
        .map(|i| i as u64)
        .collect();
    hits.first().map(|&f| (hits.len() as u64, f))
}

/// NaN and Inf elements of a float output: (NaN count, first NaN, Inf count, first Inf);
/// elements that are all `skip` bytes (the poison, counted apart) are not counted. One pass
/// over the bits, on every core: it runs on every row's every float output.
pub fn nonfinite(ty: ScalarType, data: &[u8], skip: Option<u8>) -> Option<NonFinite> {
    let size = ty.size();
    let (exp, man) = float_masks(ty);
    let skip = skip.map(|s| u64::from_le_bytes([s; 8]) >> (64 - 8 * size));
    const CHUNK: usize = 1 << 16;
    type Found = (Option<(u64, u64)>, Option<(u64, u64)>);
    let add = |x: Option<(u64, u64)>, i: u64| Some(x.map_or((1, i), |(n, f)| (n + 1, f)));
    let merge = |a: Option<(u64, u64)>, b: Option<(u64, u64)>| match (a, b) {
        (Some((na, fa)), Some((nb, fb))) => Some((na + nb, fa.min(fb))),
        (a, b) => a.or(b),
    };
    let (nan, inf): Found = data
        .par_chunks(CHUNK * size)
        .enumerate()
        .map(|(k, chunk)| {
            let mut found: Found = (None, None);
            each_bits(ty, chunk, |i, bits| {
                if bits & exp != exp || Some(bits) == skip {
                    return;
                }
                let at = (k * CHUNK + i) as u64;
                match bits & man {
                    0 => found.1 = add(found.1, at),
                    _ => found.0 = add(found.0, at),
                }
            });
            found
        })
        .reduce(|| (None, None), |a, b| (merge(a.0, b.0), merge(a.1, b.1)));
    (nan.is_some() || inf.is_some()).then_some(NonFinite { nan, inf })
}

/// NaN and Inf found in one output: each as (count, first index).
#[derive(Debug, Clone, PartialEq)]
pub struct NonFinite {
    pub nan: Option<(u64, u64)>,
    pub inf: Option<(u64, u64)>,
}

impl NonFinite {
    /// "wrote NaN to 65536 of 65536 elements of 'y' (first at index 0)".
    pub fn describe(&self, buffer: &str, elements: u64) -> String {
        let one = |what: &str, (n, first): (u64, u64)| {
            format!("{what} to {n} of {elements} elements of '{buffer}' (first at index {first})")
        };
        let parts: Vec<String> = [("NaN", self.nan), ("Inf", self.inf)]
            .into_iter()
            .filter_map(|(w, x)| x.map(|x| one(w, x)))
            .collect();
        format!("wrote {}", parts.join(" and "))
    }
}

fn count_and_first(
    data: &[u8],
    size: usize,
    hit: impl Fn(&[u8]) -> bool + Sync,
) -> Option<(u64, u64)> {
    // Chunks of 64 Ki elements on every core; the first hit is the least index among them.
    const CHUNK: usize = 1 << 16;
    let found: Vec<(u64, u64)> = data
        .par_chunks(CHUNK * size)
        .enumerate()
        .filter_map(|(k, chunk)| {
            let mut count = 0u64;
            let mut first = None;
            for (i, c) in chunk.chunks(size).enumerate() {
                if hit(c) {
                    count += 1;
                    first.get_or_insert((k * CHUNK + i) as u64);
                }
            }
            first.map(|f| (count, f))
        })
        .collect();
    let first = found.iter().map(|x| x.1).min()?;
    Some((found.iter().map(|x| x.0).sum(), first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_still_holding_the_poison_are_counted_from_the_first() {
        let mut data = vec![POISON; 4 * 100];
        data[..4 * 32].fill(0);
        assert_eq!(holding(ScalarType::F32, &data, POISON), Some((68, 32)));
        assert_eq!(holding(ScalarType::F32, &[0u8; 8], POISON), None);
    }

    #[test]
    fn an_integer_minus_one_the_kernel_wrote_is_not_the_poison() {
        // Element 0 wrote -1 both times; element 1 was never written.
        let first = [[0xFF; 4], [0xFF; 4]].concat();
        let second = [[0xFF; 4], [SECOND_POISON; 4]].concat();
        let got = holding_both(ScalarType::I32, &first, &second, (POISON, SECOND_POISON));
        assert_eq!(got, Some((1, 1)));
    }

    #[test]
    fn nan_and_inf_are_found_but_the_poison_is_not_nan_here() {
        let mut v: Vec<u8> = [1.0f32, f32::NAN, f32::INFINITY, 2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        v.extend([POISON; 4]);
        let n = nonfinite(ScalarType::F32, &v, Some(POISON)).unwrap();
        assert_eq!(n.nan, Some((1, 1)));
        assert_eq!(n.inf, Some((1, 2)));
        assert_eq!(
            n.describe("y", 5),
            "wrote NaN to 1 of 5 elements of 'y' (first at index 1) and Inf to 1 of 5 \
             elements of 'y' (first at index 2)"
        );
        // f64, and the first of many past the first chunk a core scans.
        let mut w = vec![0.5f64; 70_000];
        w[66_000] = f64::NEG_INFINITY;
        w[69_000] = f64::NAN;
        w[69_001] = f64::NAN;
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let n = nonfinite(ScalarType::F64, &bytes, Some(POISON)).unwrap();
        assert_eq!((n.nan, n.inf), (Some((2, 69_000)), Some((1, 66_000))));
        let poisoned = [POISON; 16];
        assert_eq!(nonfinite(ScalarType::F64, &poisoned, Some(POISON)), None);
        assert!(nonfinite(ScalarType::F64, &poisoned, None).is_some());
        let clean: Vec<u8> = [1.0f64, -0.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(nonfinite(ScalarType::F64, &clean, None), None);
    }
}
