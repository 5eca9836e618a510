//! A program's buffers as pieces: each buffer argument is one `VkBuffer`, except a built-in
//! frame's planes past one allocation or one binding (maxMemoryAllocationSize and
//! maxStorageBufferRange: 4 GiB on NVIDIA, a 50000x50000 plane is 10 GB). Those are split into
//! pieces of 2^shift pixels, each its own allocation, and the split shaders
//! (shaders/grayscale_split*.comp) reach them by buffer device address through a table of the
//! pieces' addresses; the host copies go piece by piece through a staging buffer of one piece.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::{Fill, KernelVariant, Named, ProgramArg, ScalarType};

use crate::command::{record_copy_from, record_copy_to, record_host_read_barrier, Commands};
use crate::context::DeviceContext;
use crate::error::{VulkanError, VulkanResult};
use crate::memory::{Buffer, MemoryKind};

/// One buffer argument's memory: its pieces in order, each `piece` bytes but the last.
pub(crate) struct Pieces {
    pub parts: Vec<Buffer>,
    pub piece: u64,
    pub size: u64,
}

/// Part of a host copy: `len` bytes at `at` in piece `buffer`, at `from` in the copied range.
struct Span {
    buffer: vk::Buffer,
    at: u64,
    from: u64,
    len: u64,
}

impl Pieces {
    /// A buffer argument held whole.
    pub fn whole(buffer: Buffer) -> Pieces {
        Pieces {
            piece: buffer.size,
            size: buffer.size,
            parts: vec![buffer],
        }
    }

    /// The one buffer of an argument held whole; `None` for pieces.
    pub fn one(&self) -> Option<&Buffer> {
        match self.parts.as_slice() {
            [b] => Some(b),
            _ => None,
        }
    }

    /// The bytes of its largest piece: what one staging buffer must hold.
    pub fn largest(&self) -> u64 {
        self.parts.iter().map(|b| b.size).max().unwrap_or(0)
    }

    /// The pieces that `offset..offset + len` covers, in order.
    fn spans(&self, offset: u64, len: u64) -> Vec<Span> {
        let end = offset + len;
        let mut spans = Vec::new();
        for (k, b) in self.parts.iter().enumerate() {
            let start = k as u64 * self.piece;
            let (lo, hi) = (offset.max(start), end.min(start + b.size));
            if lo < hi {
                spans.push(Span {
                    buffer: b.raw,
                    at: lo - start,
                    from: lo - offset,
                    len: hi - lo,
                });
            }
        }
        spans
    }

    /// Copies `data` into its start, a piece at a time through `staging`, waiting for each.
    pub fn write(
        &self,
        commands: &mut Commands,
        staging: &mut Buffer,
        data: &[u8],
    ) -> VulkanResult<()> {
        for s in self.spans(0, data.len() as u64) {
            staging.write_bytes(&data[s.from as usize..(s.from + s.len) as usize])?;
            let src = staging.raw;
            commands.run(|d, cb| record_copy_to(d, cb, src, (s.buffer, s.at), s.len))?;
        }
        Ok(())
    }

    /// Copies `out.len()` bytes from `offset` into `out`, a piece at a time through `staging`.
    pub fn read(
        &self,
        commands: &mut Commands,
        staging: &Buffer,
        offset: u64,
        out: &mut [u8],
    ) -> VulkanResult<()> {
        for s in self.spans(offset, out.len() as u64) {
            let dst = staging.raw;
            commands.run(|d, cb| {
                record_copy_from(d, cb, (s.buffer, s.at), dst, s.len);
                record_host_read_barrier(d, cb);
            })?;
            staging.read_bytes(&mut out[s.from as usize..(s.from + s.len) as usize])?;
        }
        Ok(())
    }

    /// Records vkCmdFillBuffer of each of `fills` (whole 32-bit words, inside the buffer: the
    /// caller checked) over the pieces it covers.
    pub fn record_fills(&self, d: &ash::Device, cb: vk::CommandBuffer, fills: &[Fill]) {
        for f in fills.iter().filter(|f| f.len > 0) {
            let word = u32::from_ne_bytes([f.byte; 4]);
            for s in self.spans(f.offset, f.len) {
                // SAFETY: `cb` is being recorded by the caller's `Commands::run`; each piece is a
                // live buffer made with TRANSFER_DST usage, and the span lies inside it in whole
                // words (pieces are whole words, and so is each fill).
                unsafe { d.cmd_fill_buffer(cb, s.buffer, s.at, s.len, word) };
            }
        }
    }
}

/// Log2 of a piece's pixels: the largest power of two whose f32 plane piece fits `limit`.
pub(crate) fn piece_shift(limit: u64) -> Option<u32> {
    let pixels = limit / 4;
    (pixels > 0).then(|| 63 - pixels.leading_zeros())
}

/// Whether `kernel`'s planes (`args`) are split into pieces of `piece` bytes (the device's
/// `frame_piece_bytes`): `Some(shift)` where one is larger and the kernel has a split shader.
/// `None` where every buffer fits a piece (or nothing can split it, and allocation refuses it
/// by name as before).
pub(crate) fn plan(
    kernel: Option<KernelVariant>,
    context: &DeviceContext,
    args: &[ProgramArg],
    (piece, heap): (Option<u64>, Option<&Named<u64>>),
) -> VulkanResult<Option<u32>> {
    let largest = args.iter().map(ProgramArg::allocation).max().unwrap_or(0);
    let total = args.iter().map(ProgramArg::allocation).sum::<u64>();
    let (Some(kernel), Some(piece)) = (kernel, piece) else {
        return Ok(None);
    };
    if largest <= piece || crate::builtin::split_shader(kernel).is_none() || !context.device_address
    {
        return Ok(None);
    }
    // Past the heap nothing is allocated: pieces would each fit, the frame would not.
    if let Some(heap) = heap.filter(|h| total > h.value) {
        return Err(VulkanError::TooLarge(format!(
            "the planes are {total} bytes; {} is {}",
            heap.name, heap.value
        )));
    }
    let pixels = largest / 4;
    if pixels > u64::from(u32::MAX) {
        return Err(VulkanError::TooLarge(format!(
            "a plane of {pixels} pixels: the split planes index pixels in 32 bits (at most \
             {} pixels)",
            u32::MAX
        )));
    }
    Ok(piece_shift(piece))
}

/// Pieces per plane: the largest buffer argument's.
pub(crate) fn count(args: &[ProgramArg], shift: u32) -> u32 {
    let largest = args.iter().map(ProgramArg::allocation).max().unwrap_or(0);
    largest.div_ceil(4 << shift) as u32
}

/// What the run's facts say of planes in pieces: how many, how large, and why.
pub(crate) fn describe(args: &[ProgramArg], shift: u32) -> String {
    let piece = 4u64 << shift;
    let size = |b: u64| match b >= 1 << 20 {
        true => format!("{} MiB", b >> 20),
        false => format!("{b} bytes"),
    };
    format!(
        "each in {} pieces of {} (one allocation each, past maxMemoryAllocationSize or \
         maxStorageBufferRange), reached by buffer device address",
        count(args, shift),
        size(piece)
    )
}

/// The extra push-constant scalars of a split shader, after the built-in's own: the table's
/// address (u64), log2 of a piece's pixels and the pieces per plane (u32 each).
pub(crate) fn extra_args(shift: u32, count: u32) -> [ProgramArg; 3] {
    let scalar = |ty: ScalarType, v: u64| ProgramArg::Scalar {
        ty,
        bytes: v.to_le_bytes()[..ty.size()].to_vec(),
    };
    [
        scalar(ScalarType::U64, 0),
        scalar(ScalarType::U32, shift.into()),
        scalar(ScalarType::U32, count.into()),
    ]
}

/// Each buffer argument split into pieces of 2^shift pixels, each reachable by address.
pub(crate) fn allocate(
    context: &Arc<DeviceContext>,
    args: &[ProgramArg],
    shift: u32,
    max_alloc: Option<&Named<u64>>,
) -> VulkanResult<Vec<Option<Pieces>>> {
    let piece = 4u64 << shift;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let one = |a: &ProgramArg| -> VulkanResult<Option<Pieces>> {
        let ProgramArg::Buffer { bytes, .. } = *a else {
            return Ok(None);
        };
        let parts = (0..bytes.div_ceil(piece))
            .map(|k| {
                let size = piece.min(bytes - k * piece);
                Buffer::new(context, size, usage, MemoryKind::DeviceLocal, max_alloc)
            })
            .collect::<VulkanResult<Vec<_>>>()?;
        Ok(Some(Pieces {
            parts,
            piece,
            size: bytes,
        }))
    };
    args.iter().map(one).collect()
}

/// The table the split shaders read: plane p's piece k at entry p * count + k, every plane
/// padded to `count` entries (the largest plane's pieces). Host-visible: written once, here.
pub(crate) fn table(
    context: &Arc<DeviceContext>,
    planes: &[Option<Pieces>],
) -> VulkanResult<(Buffer, u32)> {
    let planes: Vec<&Pieces> = planes.iter().flatten().collect();
    let count = planes.iter().map(|p| p.parts.len()).max().unwrap_or(1);
    let mut words = vec![0u64; planes.len() * count];
    for (p, plane) in planes.iter().enumerate() {
        for (k, part) in plane.parts.iter().enumerate() {
            words[p * count + k] = part.address();
        }
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    let mut table = Buffer::new(
        context,
        bytes.len() as u64,
        usage,
        MemoryKind::Staging,
        None,
    )?;
    table.write_bytes(&bytes)?;
    Ok((table, count as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_the_largest_power_of_two_of_pixels_under_the_limit() {
        // NVIDIA: maxMemoryAllocationSize 0xffe00000 → pieces of 2^29 pixels (2 GiB).
        assert_eq!(piece_shift(0xffe0_0000), Some(29));
        assert_eq!(piece_shift(u32::MAX.into()), Some(29));
        assert_eq!(piece_shift(1 << 32), Some(30));
        assert_eq!(piece_shift(4096), Some(10));
        assert_eq!(piece_shift(4095), Some(9));
        assert_eq!(piece_shift(3), None);
    }
}
