//! What one row's output must satisfy on its own, before it is compared with anything: no
//! element of a poisoned output still holds the poison (the kernel did not reach it at this
//! launch), and no NaN or Inf in a float output unless the spec allows them. So a broken
//! first size can never become the reference the later sizes are judged by.

use rayon::prelude::*;

use crate::program::ScalarType;
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
/// elements that are all `skip` bytes (the poison, counted apart) are not counted.
pub fn nonfinite(ty: ScalarType, data: &[u8], skip: Option<u8>) -> Option<NonFinite> {
    let size = ty.size();
    let value = |c: &[u8]| -> f64 {
        match ty {
            ScalarType::F32 => f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
            _ => f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        }
    };
    let skipped = |c: &[u8]| skip.is_some_and(|s| c.iter().all(|&x| x == s));
    let nan = count_and_first(data, size, |c| !skipped(c) && value(c).is_nan());
    let inf = count_and_first(data, size, |c| value(c).is_infinite());
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
        let clean: Vec<u8> = [1.0f64, -0.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(nonfinite(ScalarType::F64, &clean, None), None);
    }
}
