//! Guard bands: every buffer of a user's kernel is allocated with [`GUARD`] bytes before and
//! after what the kernel sees, filled with [`PATTERN`]. After each checked dispatch the bands
//! are read back; a byte that changed is a write out of bounds, named by buffer and element.
//! Timed dispatches use the same buffers, so the bands cost no bandwidth. This is a portable
//! bounds check: compute-sanitizer covers CUDA only, and a CPU driver runs the kernel on the
//! process's own heap, where an unguarded overrun corrupts blocksweep's memory.

use crate::backend::Fill;
use crate::program::ScalarType;

/// Bytes of each band: a multiple of every API's sub-buffer and binding-offset alignment
/// (CL_DEVICE_MEM_BASE_ADDR_ALIGN, minStorageBufferOffsetAlignment, 256-byte CUDA pointers),
/// and wide enough for the last block of a kernel without its `i < n` guard.
pub const GUARD: u64 = 64 * 1024;

/// The bytes a buffer of `len` bytes takes on the device: the data between its two bands.
pub fn allocated(len: u64) -> u64 {
    len.saturating_add(2 * GUARD)
}

/// What the bands hold: not the poison (0xFF) and not a value arithmetic tends to produce.
pub const PATTERN: u8 = 0xA5;

/// A buffer's whole allocation: band, `data`, band.
pub fn padded(data: &[u8]) -> Vec<u8> {
    let g = GUARD as usize;
    let mut v = vec![PATTERN; data.len() + 2 * g];
    v[g..g + data.len()].copy_from_slice(data);
    v
}

/// A whole allocation of `len` bytes of `byte` between the bands, as fills for the device
/// ([`crate::backend::Reset::Fill`]; a poisoned output is reset so before every checked
/// dispatch).
pub fn fills(len: u64, byte: u8) -> Vec<Fill> {
    let fill = |offset, len, byte| Fill { offset, len, byte };
    vec![
        fill(0, GUARD, PATTERN),
        fill(GUARD, len, byte),
        fill(GUARD + len, GUARD, PATTERN),
    ]
}

/// The kernel's part of a whole allocation read back.
pub fn data(whole: &[u8]) -> &[u8] {
    let g = GUARD as usize;
    &whole[g..whole.len() - g]
}

/// A written buffer's whole allocation as read back, lending the kernel's part between its
/// bands (`Deref`): a fresh copy of a 33 MB output cost a row more than its checks, and moving
/// the part down over the first band a single-core pass over it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    whole: Vec<u8>,
    band: usize,
}

impl Output {
    /// The kernel's part of `whole`, an allocation read back with its two bands.
    pub fn banded(whole: Vec<u8>) -> Output {
        Output {
            whole,
            band: GUARD as usize,
        }
    }

    /// The whole allocation back, for the next read of one of its length.
    pub fn into_whole(self) -> Vec<u8> {
        self.whole
    }

    /// Bytes with no bands around them.
    pub fn bare(data: Vec<u8>) -> Output {
        Output {
            whole: data,
            band: 0,
        }
    }
}

impl Output {
    /// Where the kernel's part lies in the allocation (empty where it holds less than its bands).
    fn part(&self) -> std::ops::Range<usize> {
        match self.whole.len().checked_sub(2 * self.band) {
            Some(len) => self.band..self.band + len,
            None => 0..0,
        }
    }
}

impl std::ops::Deref for Output {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.whole[self.part()]
    }
}

impl std::ops::DerefMut for Output {
    fn deref_mut(&mut self) -> &mut [u8] {
        let part = self.part();
        &mut self.whole[part]
    }
}

/// Writes found in one buffer's bands.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    /// Elements changed before the start, and the lowest index (negative).
    pub before: Option<(u64, i64)>,
    /// Elements changed past the end, and the first index (at or after `elements`).
    pub after: Option<(u64, u64)>,
}

/// Changed elements of the leading band `lead` and the trailing band `tail` of a buffer of
/// `elements` elements of `ty`; `None` where both are untouched.
pub fn breach(ty: ScalarType, elements: u64, lead: &[u8], tail: &[u8]) -> Option<Breach> {
    let size = ty.size();
    let changed = |band: &[u8]| -> Vec<usize> {
        band.chunks(size)
            .enumerate()
            .filter(|(_, c)| c.iter().any(|&b| b != PATTERN))
            .map(|(i, _)| i)
            .collect()
    };
    let (lead, tail) = (changed(lead), changed(tail));
    let per_band = (GUARD as usize / size) as i64;
    let before = lead
        .first()
        .map(|&i| (lead.len() as u64, i as i64 - per_band));
    let after = tail
        .first()
        .map(|&i| (tail.len() as u64, elements + i as u64));
    (before.is_some() || after.is_some()).then_some(Breach { before, after })
}

impl Breach {
    /// "wrote 3 elements past the end of 'y' (n = 1000003; first at index 1000003)".
    pub fn describe(&self, buffer: &str, elements: u64) -> String {
        let mut parts = Vec::new();
        if let Some((n, first)) = self.after {
            parts.push(format!(
                "wrote {n} element{} past the end of '{buffer}' ({elements} elements; first at \
                 index {first})",
                plural(n)
            ));
        }
        if let Some((n, lowest)) = self.before {
            parts.push(format!(
                "wrote {n} element{} before the start of '{buffer}' (lowest at index {lowest})",
                plural(n)
            ));
        }
        parts.join(" and ")
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_allocation_has_its_bands_and_its_data_comes_out_in_place() {
        let g = GUARD as usize;
        let whole = crate::backend::checked::image(&fills(12, 0xFF));
        assert_eq!(whole.len(), 12 + 2 * g);
        assert!(whole[..g]
            .iter()
            .chain(&whole[g + 12..])
            .all(|&b| b == PATTERN));
        assert_eq!(data(&whole), &[0xFF; 12]);
        let read = padded(&[1, 2, 3, 4, 5]);
        assert_eq!(&*Output::banded(read), [1, 2, 3, 4, 5]);
        assert!(Output::banded(Vec::new()).is_empty());
    }

    #[test]
    fn a_write_past_the_end_is_counted_from_the_first_changed_element() {
        let g = GUARD as usize;
        let mut whole = padded(&[0u8; 40]);
        // Elements 10 and 11 of a 10-element f32 buffer: the first two of the trailing band.
        whole[g + 40..g + 48].copy_from_slice(&[0; 8]);
        let (lead, tail) = (&whole[..g], &whole[g + 40..]);
        let b = breach(ScalarType::F32, 10, lead, tail).unwrap();
        assert_eq!(b.after, Some((2, 10)));
        assert_eq!(b.before, None);
        assert_eq!(
            b.describe("y", 10),
            "wrote 2 elements past the end of 'y' (10 elements; first at index 10)"
        );
    }

    #[test]
    fn a_write_before_the_start_has_a_negative_index() {
        let g = GUARD as usize;
        let mut whole = padded(&[1u8; 8]);
        whole[g - 8] = 0; // element -2 of an f32 buffer
        let b = breach(ScalarType::F32, 2, &whole[..g], &whole[g + 8..]).unwrap();
        assert_eq!(b.before, Some((1, -2)));
        assert!(b
            .describe("x", 2)
            .contains("before the start of 'x' (lowest at index -2)"));
    }

    #[test]
    fn untouched_bands_and_the_data_between_them_pass() {
        let whole = padded(&[7u8; 16]);
        assert_eq!(data(&whole), &[7u8; 16]);
        let g = GUARD as usize;
        assert_eq!(
            breach(ScalarType::U32, 4, &whole[..g], &whole[g + 16..]),
            None
        );
    }
}
