//! The lab: the three questions the seed's block-size sweep leaves open, asked of every API on
//! the same device (docs/lab.md).
//!
//! - [`shapes`]: for one thread count, every power-of-two block shape (256x1 ... 1x256) of the
//!   2-D kernel, with what each shape does to a warp's memory access and which per-dimension
//!   limits and specification guarantees it passes;
//! - [`waves`]: for one block, grids from a fraction of a wave to several waves, so the tail
//!   effect (a grid of 1.1 waves spends its last tenth running on almost nothing) shows;
//! - [`resources`]: launches within the thread limits that ask for more shared memory or more
//!   registers than a block may have, and what each API answers.
//!
//! Everything here is planning and report data, the same for every API; the backends only
//! run the launches.

pub mod report;
pub mod resources;
mod row;
pub mod run;
pub mod shapes;
pub mod waves;

use crate::api::Api;
use crate::limits::Concept;

/// The three extents of a guarantee written "(128, 128, 64)".
pub fn parse_dims(text: &str) -> Option<[u64; 3]> {
    let inner = text.trim().strip_prefix('(')?.split(')').next()?;
    let parts: Vec<u64> = inner
        .split(',')
        .map(|p| p.trim().parse::<u64>().ok())
        .collect::<Option<Vec<_>>>()?;
    <[u64; 3]>::try_from(parts).ok()
}

/// The leading whole number of a guarantee such as "1024 (cc ≥ 2.0)" or "128".
pub fn parse_leading_count(text: &str) -> Option<u64> {
    let digits: String = text
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// Bytes of a guarantee such as "48 KiB (no opt-in)", "16 KiB", "1 GiB" or "4096".
pub fn parse_bytes(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        None => 1,
        Some(w) if w.starts_with('(') => 1,
        Some("B") | Some("bytes") => 1,
        Some("KiB") => 1 << 10,
        Some("MiB") => 1 << 20,
        Some("GiB") => 1 << 30,
        Some(_) => return None,
    };
    n.checked_mul(unit)
}

/// What `api`'s specification promises for the block's extents, where it promises them.
pub fn guaranteed_block_dims(api: Api) -> Option<[u64; 3]> {
    api.guarantee(Concept::MaxBlockDims).and_then(parse_dims)
}

/// What `api`'s specification promises for threads per block, where it promises a number.
pub fn guaranteed_threads(api: Api) -> Option<u64> {
    api.guarantee(Concept::MaxThreadsPerBlock)
        .and_then(parse_leading_count)
}

/// What `api`'s specification promises for shared (local) memory per block, in bytes.
pub fn guaranteed_shared_bytes(api: Api) -> Option<u64> {
    api.guarantee(Concept::SharedMemPerBlock)
        .and_then(parse_bytes)
}

/// "48 KiB", "513 KiB", "1000 B": bytes as a reader counts them.
pub fn show_bytes(bytes: u64) -> String {
    if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_guarantees_as_the_drivers_write_them() {
        assert_eq!(parse_dims("(128, 128, 64)"), Some([128, 128, 64]));
        assert_eq!(parse_dims("(1024, 1024, 64)"), Some([1024, 1024, 64]));
        assert_eq!(parse_dims("(1, 1, 1)"), Some([1, 1, 1]));
        assert_eq!(parse_dims("(2^31-1, 65535, 65535)"), None);
        assert_eq!(parse_dims("128"), None);
        assert_eq!(parse_dims("(1, 2)"), None);
        assert_eq!(parse_leading_count("1024 (cc ≥ 2.0)"), Some(1024));
        assert_eq!(parse_leading_count("128"), Some(128));
        assert_eq!(parse_leading_count("max(global/4, 128 MiB)"), None);
        assert_eq!(parse_bytes("48 KiB (no opt-in)"), Some(48 << 10));
        assert_eq!(parse_bytes("16 KiB"), Some(16 << 10));
        assert_eq!(parse_bytes("32 KiB"), Some(32 << 10));
        assert_eq!(parse_bytes("1 GiB"), Some(1 << 30));
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("max(global/4, 128 MiB)"), None);
        assert_eq!(parse_bytes("16 furlongs"), None);
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(show_bytes(49152), "48 KiB");
        assert_eq!(show_bytes(50176), "49 KiB");
        assert_eq!(show_bytes(1000), "1000 B");
    }
}
