//! Block sizes and the `--blocks` list syntax.
//!
//! `64,128,256` is a list; `32..1024:32` a range with a step (inclusive of both ends, step 32;
//! without `:step` the step is 1); `32x32x2` a 3-D block. Items may be mixed:
//! `16,32..256:32,32x32`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The thirteen default block sizes.
pub const DEFAULT_BLOCKS: [u32; 13] =
    [16, 32, 64, 96, 100, 128, 160, 192, 256, 384, 512, 768, 1024];

/// The most threads one block may have: every API counts them in 32 bits.
pub const MAX_THREADS: u64 = u32::MAX as u64;

/// A block's extents. The sweep varies x; y and z exist to test 3-D limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BlockSize {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl BlockSize {
    pub const fn linear(x: u32) -> Self {
        BlockSize { x, y: 1, z: 1 }
    }

    /// Threads per block, in 64 bits. Every block [`parse_blocks`] returns has at most
    /// [`MAX_THREADS`]; for one built by hand the product saturates at `u64::MAX` instead of
    /// wrapping (4294967295 cubed would wrap to 12884901887).
    pub fn threads(&self) -> u64 {
        (self.x as u64 * self.y as u64).saturating_mul(self.z as u64)
    }

    /// Threads per block when the product fits in 32 bits (every API counts the threads of
    /// a block in 32 bits), else `None`.
    pub fn checked_threads(&self) -> Option<u32> {
        self.x
            .checked_mul(self.y)
            .and_then(|xy| xy.checked_mul(self.z))
    }

    pub fn is_linear(&self) -> bool {
        self.y == 1 && self.z == 1
    }
}

impl fmt::Display for BlockSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_linear() {
            write!(f, "{}", self.x)
        } else {
            write!(f, "{}x{}x{}", self.x, self.y, self.z)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockListError {
    #[error("block list is empty")]
    Empty,
    #[error("'{0}' is not a block size (expected a whole number like 256, a range like 32..1024:32, or 3-D like 32x32x2)")]
    NotANumber(String),
    #[error("block size 0 in '{0}': a block needs at least one thread in every dimension")]
    Zero(String),
    #[error("range '{0}' is empty: its start is above its end")]
    EmptyRange(String),
    #[error("range '{0}' has step 0")]
    ZeroStep(String),
    #[error("'{0}' lists more than 4096 block sizes")]
    TooMany(String),
    #[error("block '{0}' has {1} threads, more than the 4294967295 (2^32 - 1) a block may have")]
    TooManyThreads(String, u128),
}

fn number(item: &str, text: &str) -> Result<u32, BlockListError> {
    let t = text.trim();
    let n: u32 = t
        .parse()
        .map_err(|_| BlockListError::NotANumber(item.to_string()))?;
    if n == 0 {
        return Err(BlockListError::Zero(item.to_string()));
    }
    Ok(n)
}

/// Parses a `--blocks` value into block sizes, in the order given, duplicates removed.
pub fn parse_blocks(list: &str) -> Result<Vec<BlockSize>, BlockListError> {
    let mut out: Vec<BlockSize> = Vec::new();
    for item in list.split(',').map(str::trim) {
        if item.is_empty() {
            if list.trim().is_empty() {
                return Err(BlockListError::Empty);
            }
            return Err(BlockListError::NotANumber(list.to_string()));
        }
        if let Some((start, rest)) = item.split_once("..") {
            let (end, step) = match rest.split_once(':') {
                Some((e, s)) => (e, s),
                None => (rest, "1"),
            };
            let start = number(item, start)?;
            let end = number(item, end)?;
            let step: u32 = step
                .trim()
                .parse()
                .map_err(|_| BlockListError::NotANumber(item.to_string()))?;
            if step == 0 {
                return Err(BlockListError::ZeroStep(item.to_string()));
            }
            if start > end {
                return Err(BlockListError::EmptyRange(item.to_string()));
            }
            if (end - start) / step >= 4096 {
                return Err(BlockListError::TooMany(item.to_string()));
            }
            let mut x = start;
            while x <= end {
                out.push(BlockSize::linear(x));
                match x.checked_add(step) {
                    Some(n) => x = n,
                    None => break,
                }
            }
        } else if item.contains(['x', 'X']) {
            let parts: Vec<&str> = item.split(['x', 'X']).collect();
            if parts.len() > 3 {
                return Err(BlockListError::NotANumber(item.to_string()));
            }
            let mut d = [1u32; 3];
            for (i, p) in parts.iter().enumerate() {
                d[i] = number(item, p)?;
            }
            let block = BlockSize {
                x: d[0],
                y: d[1],
                z: d[2],
            };
            if block.checked_threads().is_none() {
                // The exact count, in 128 bits: three u32 factors cannot overflow it.
                let n = d.iter().map(|&v| v as u128).product();
                return Err(BlockListError::TooManyThreads(item.to_string(), n));
            }
            out.push(block);
        } else {
            out.push(BlockSize::linear(number(item, item)?));
        }
    }
    if out.is_empty() {
        return Err(BlockListError::Empty);
    }
    if out.len() > 4096 {
        return Err(BlockListError::TooMany(list.to_string()));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|b| seen.insert(*b));
    Ok(out)
}

pub fn default_blocks() -> Vec<BlockSize> {
    DEFAULT_BLOCKS
        .iter()
        .map(|&x| BlockSize::linear(x))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_ranges_and_3d() {
        let b = parse_blocks("64, 128,32..96:32,32x32x2").unwrap();
        let s: Vec<String> = b.iter().map(|b| b.to_string()).collect();
        assert_eq!(s, ["64", "128", "32", "96", "32x32x2"]);
        assert_eq!(b[4].threads(), 2048);
        assert_eq!(parse_blocks("32..1024:32").unwrap().len(), 32);
        assert_eq!(parse_blocks("1..4").unwrap().len(), 4);
    }

    #[test]
    fn rejects_nonsense() {
        assert_eq!(parse_blocks("0"), Err(BlockListError::Zero("0".into())));
        assert!(matches!(
            parse_blocks("abc"),
            Err(BlockListError::NotANumber(_))
        ));
        assert!(matches!(
            parse_blocks("64..32"),
            Err(BlockListError::EmptyRange(_))
        ));
        assert!(matches!(
            parse_blocks("32..64:0"),
            Err(BlockListError::ZeroStep(_))
        ));
        assert!(matches!(parse_blocks("32x0"), Err(BlockListError::Zero(_))));
        assert!(matches!(
            parse_blocks("-5"),
            Err(BlockListError::NotANumber(_))
        ));
        assert!(matches!(parse_blocks(""), Err(BlockListError::Empty)));
        assert!(matches!(
            parse_blocks("64,,128"),
            Err(BlockListError::NotANumber(_))
        ));
        assert!(matches!(
            parse_blocks("1..100000"),
            Err(BlockListError::TooMany(_))
        ));
        assert!(matches!(
            parse_blocks("99999999999"),
            Err(BlockListError::NotANumber(_))
        ));
    }

    #[test]
    fn block_products_never_wrap() {
        // (2^32 - 1)^3 wrapped to 12884901887 threads in 64 bits.
        let e = parse_blocks("4294967295x4294967295x4294967295").unwrap_err();
        assert_eq!(
            e,
            BlockListError::TooManyThreads(
                "4294967295x4294967295x4294967295".into(),
                79228162458924105385300197375
            )
        );
        assert!(e.to_string().contains("more than the 4294967295"), "{e}");
        // One past 32 bits in two dimensions, and with a 3-D item in a list.
        assert!(matches!(
            parse_blocks("65536x65536"),
            Err(BlockListError::TooManyThreads(_, 4294967296))
        ));
        assert!(matches!(
            parse_blocks("64,2x2147483648"),
            Err(BlockListError::TooManyThreads(_, 4294967296))
        ));
        // The largest block that fits is accepted, in any shape.
        let b = parse_blocks("65535x65537,4294967295,1x1x4294967295").unwrap();
        assert!(b.iter().all(|b| b.threads() == MAX_THREADS));
        assert!(b.iter().all(|b| b.checked_threads() == Some(u32::MAX)));
        // A block built by hand saturates instead of wrapping.
        let huge = BlockSize {
            x: u32::MAX,
            y: u32::MAX,
            z: u32::MAX,
        };
        assert_eq!(huge.threads(), u64::MAX);
        assert_eq!(huge.checked_threads(), None);
    }

    #[test]
    fn default_list_is_the_seeds() {
        assert_eq!(default_blocks().len(), 13);
        assert_eq!(default_blocks()[4], BlockSize::linear(100));
    }
}
