//! Initial buffer contents, generated on the host.
//!
//! Random contents come from splitmix64 used as a counter-based generator: element `i` is the
//! `i`-th output of the splitmix64 stream whose state starts at `mix(seed)`. Each element
//! depends only on (seed, i), so the bytes are the same on every machine and for any split of
//! the work: large buffers are filled in parallel chunks (rayon) at memory speed.

use rayon::prelude::*;

use super::decl::{InitDecl, Number};
use crate::program::ScalarType;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
/// Elements per parallel chunk: large enough that scheduling costs nothing next to the
/// writes, small enough that every core gets work on a few-megabyte buffer.
const CHUNK: usize = 1 << 16;

/// splitmix64's output function.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `i`-th random word of the stream for `seed`.
pub fn random_word(seed: u64, i: u64) -> u64 {
    mix(mix(seed).wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN)))
}

/// Default random ranges: floats in [-1, 1), integers in [0, 1000).
fn default_range(ty: ScalarType) -> (Number, Number) {
    match ty.is_float() {
        true => (Number::Float(-1.0), Number::Float(1.0)),
        false => (Number::Int(0), Number::Int(1000)),
    }
}

/// Element `i`'s bits (little-endian, low `ty.size()` bytes used).
#[derive(Clone, Copy)]
enum Gen {
    Fixed(u64),
    Ramp,
    RandomFloat { seed: u64, lo: f64, hi: f64 },
    RandomInt { seed: u64, lo: i128, span: u128 },
}

/// The bits of one value of type `ty` (integers wrap to the type's width, as `as` does).
pub fn bits_of(ty: ScalarType, v: Number) -> u64 {
    match (ty, v) {
        (ScalarType::F32, n) => (n.as_f64() as f32).to_bits() as u64,
        (ScalarType::F64, n) => n.as_f64().to_bits(),
        (_, Number::Int(i)) => i as u64,
        (_, Number::Float(f)) => f as i64 as u64,
    }
}

impl Gen {
    fn new(ty: ScalarType, init: &InitDecl) -> Gen {
        match *init {
            InitDecl::Zeros => Gen::Fixed(0),
            InitDecl::Constant(n) => Gen::Fixed(bits_of(ty, n)),
            InitDecl::Ramp => Gen::Ramp,
            InitDecl::Random { seed, range } => {
                let (lo, hi) = range.unwrap_or_else(|| default_range(ty));
                match ty.is_float() {
                    true => Gen::RandomFloat {
                        seed,
                        lo: lo.as_f64(),
                        hi: hi.as_f64(),
                    },
                    false => {
                        let (lo, hi) = (int_of(lo), int_of(hi));
                        Gen::RandomInt {
                            seed,
                            lo,
                            span: (hi - lo).max(1) as u128,
                        }
                    }
                }
            }
        }
    }

    fn bits(self, ty: ScalarType, i: u64) -> u64 {
        match self {
            Gen::Fixed(b) => b,
            Gen::Ramp => match ty {
                ScalarType::F32 => (i as f32).to_bits() as u64,
                ScalarType::F64 => (i as f64).to_bits(),
                _ => i,
            },
            Gen::RandomFloat { seed, lo, hi } => {
                let w = random_word(seed, i);
                let v = match ty {
                    ScalarType::F32 => {
                        let u = (w >> 40) as f64 / (1u64 << 24) as f64;
                        let v = (lo + (hi - lo) * u) as f32;
                        return (if (v as f64) < hi { v } else { lo as f32 }).to_bits() as u64;
                    }
                    _ => lo + (hi - lo) * ((w >> 11) as f64 / (1u64 << 53) as f64),
                };
                (if v < hi { v } else { lo }).to_bits()
            }
            Gen::RandomInt { seed, lo, span } => {
                let w = random_word(seed, i) as u128;
                (lo + ((w * span) >> 64) as i128) as u64
            }
        }
    }
}

fn int_of(n: Number) -> i128 {
    match n {
        Number::Int(i) => i as i128,
        Number::Float(f) => f as i128,
    }
}

/// The initial bytes of a buffer of `elements` values of `ty`; None when they cannot be
/// allocated (the count is too large for this host).
pub fn generate(ty: ScalarType, init: &InitDecl, elements: u64) -> Option<Vec<u8>> {
    let size = ty.size();
    let bytes = usize::try_from(elements).ok()?.checked_mul(size)?;
    let mut out = Vec::new();
    out.try_reserve_exact(bytes).ok()?;
    out.resize(bytes, 0u8);
    let generator = Gen::new(ty, init);
    if matches!(generator, Gen::Fixed(0)) {
        return Some(out);
    }
    out.par_chunks_mut(CHUNK * size)
        .enumerate()
        .for_each(|(c, chunk)| {
            let first = (c * CHUNK) as u64;
            for (j, e) in chunk.chunks_exact_mut(size).enumerate() {
                let b = generator.bits(ty, first + j as u64).to_le_bytes();
                e.copy_from_slice(&b[..size]);
            }
        });
    Some(out)
}
