//! The test image: three planar f32 colour planes, filled deterministically from a seed.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Rec. 601 luma weights (ITU-R BT.601: Y = 0.299 R + 0.587 G + 0.114 B). Every kernel
/// (`kernels/grayscale.cu`, `kernels/grayscale.cl`, `shaders/grayscale.comp`) uses these same
/// three literals; a test checks the sources against this constant.
pub const WEIGHTS: [f32; 3] = [0.299, 0.587, 0.114];

/// Bytes moved per pixel: three f32 reads and one f32 write.
pub const BYTES_PER_PIXEL: u64 = 16;

/// The default frame: 3840 x 2160 (4K UHD).
pub const DEFAULT_SIZE: (u32, u32) = (3840, 2160);

/// The frame `sweep` uses without `--size` when every device is a CPU (see the CLI).
pub const CPU_DEFAULT_SIZE: (u32, u32) = (1280, 720);

/// A planar RGB frame.
#[derive(Debug, Clone)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub seed: u64,
    pub r: Vec<f32>,
    pub g: Vec<f32>,
    pub b: Vec<f32>,
}

/// Frame description without the pixels, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameInfo {
    pub width: u32,
    pub height: u32,
    pub pixels: u64,
    pub seed: u64,
    /// Bytes read and written by one pass of the kernel.
    pub bytes_per_pass: u64,
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's output function. The generator's state after k steps is base + k * GOLDEN, so
/// value k can be computed on its own: the planes fill in parallel and stay bit-identical to a
/// sequential fill (tiny, well-mixed and deterministic across platforms; no crate needed).
fn splitmix64_at(base: u64, k: u64) -> u64 {
    let mut z = base.wrapping_add(GOLDEN.wrapping_mul(k.wrapping_add(1)));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Host memory for a frame or a read-back buffer could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot allocate {bytes} bytes of host memory for {what}")]
pub struct HostAllocError {
    pub what: &'static str,
    pub bytes: u64,
}

pub use crate::parallel::copy_parallel;

/// A zero-filled host buffer of `len` floats; an error, never an abort, when memory is short.
/// The memory comes from `alloc_zeroed` (calloc: a large block is fresh zero pages from the
/// kernel, as for `vec![0.0; n]`), so nothing is written here: a `resize` would zero 10 GB on
/// one core before the parallel fill wrote it again, where now the first touch happens in the
/// fill, on every core.
pub fn try_zeroed(len: u64, what: &'static str) -> Result<Vec<f32>, HostAllocError> {
    let err = || HostAllocError {
        what,
        bytes: len.saturating_mul(4),
    };
    let n = usize::try_from(len).map_err(|_| err())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<f32>(n).map_err(|_| err())?;
    // SAFETY: the layout's size is not zero (n > 0).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<f32>();
    if ptr.is_null() {
        return Err(err());
    }
    // SAFETY: allocated by the global allocator with the layout of n f32 values (what a Vec of
    // capacity n uses), every byte zero, which is the f32 0.0.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Work per parallel task: large enough that scheduling costs nothing.
const CHUNK: usize = 1 << 16;

impl Frame {
    /// Pixels in a `width` x `height` frame (64-bit: the product of two u32 always fits).
    pub fn pixel_count(width: u32, height: u32) -> u64 {
        width as u64 * height as u64
    }

    /// A frame of uniform values in [0, 1), the same for the same seed on every platform.
    /// Panics only where [`Frame::try_generate`] would fail; tests use this.
    pub fn generate(width: u32, height: u32, seed: u64) -> Frame {
        Self::try_generate(width, height, seed).expect("host memory for the frame")
    }

    /// A frame of uniform values in [0, 1), filled on every core; an error when host memory
    /// for the three planes cannot be had.
    pub fn try_generate(width: u32, height: u32, seed: u64) -> Result<Frame, HostAllocError> {
        let n = Self::pixel_count(width, height);
        let base = seed ^ 0x6A09_E667_F3BC_C908;
        let busy = crate::trace::activity("core", "making the frame", 3 * n);
        let plane = |index: u64| -> Result<Vec<f32>, HostAllocError> {
            let mut p = try_zeroed(n, "the frame")?;
            p.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
                let first = index * n + (c * CHUNK) as u64;
                for (j, v) in chunk.iter_mut().enumerate() {
                    *v = (splitmix64_at(base, first + j as u64) >> 40) as f32 / (1u64 << 24) as f32;
                }
                busy.advance(chunk.len() as u64);
            });
            Ok(p)
        };
        Ok(Frame {
            width,
            height,
            seed,
            r: plane(0)?,
            g: plane(1)?,
            b: plane(2)?,
        })
    }

    /// A frame that only states its size: its planes are empty, no pixel is allocated. Only a
    /// check made before anything is allocated or uploaded can answer for it, which is what
    /// the checks of frames too large for a device need without gigabytes of host memory.
    pub fn sized(width: u32, height: u32) -> Frame {
        Frame {
            width,
            height,
            seed: 0,
            r: Vec::new(),
            g: Vec::new(),
            b: Vec::new(),
        }
    }

    pub fn pixels(&self) -> u64 {
        Self::pixel_count(self.width, self.height)
    }

    /// Bytes read and written by one pass of the kernel.
    pub fn bytes_per_pass(&self) -> u64 {
        self.pixels() * BYTES_PER_PIXEL
    }

    pub fn info(&self) -> FrameInfo {
        FrameInfo {
            width: self.width,
            height: self.height,
            pixels: self.pixels(),
            seed: self.seed,
            bytes_per_pass: self.bytes_per_pass(),
        }
    }

    /// The CPU reference: the kernel's arithmetic, in the same order, on every core. (The
    /// GPU may fuse it into FMAs; verification allows for that.)
    pub fn reference(&self) -> Vec<f32> {
        self.try_reference().expect("host memory for the reference")
    }

    pub fn try_reference(&self) -> Result<Vec<f32>, HostAllocError> {
        let [wr, wg, wb] = WEIGHTS;
        let busy = crate::trace::activity("core", "making the CPU reference", self.pixels());
        let mut out = try_zeroed(self.pixels(), "the CPU reference")?;
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let at = c * CHUNK;
                let (r, g, b) = (&self.r[at..], &self.g[at..], &self.b[at..]);
                for (j, o) in chunk.iter_mut().enumerate() {
                    *o = wr * r[j] + wg * g[j] + wb * b[j];
                }
                busy.advance(chunk.len() as u64);
            });
        Ok(out)
    }
}

/// A frame and its CPU reference: what the built-in tasks (a sweep, the lab's, `validate`) run
/// and check every pixel against, with the task facts the frame alone decides, written once.
pub struct CheckedFrame {
    pub frame: Frame,
    pub reference: Vec<f32>,
}

impl CheckedFrame {
    pub fn new(frame: Frame) -> CheckedFrame {
        let reference = frame.reference();
        CheckedFrame { frame, reference }
    }

    /// Generates the frame and its reference, or the allocation the host refused.
    pub fn try_make(width: u32, height: u32, seed: u64) -> Result<CheckedFrame, HostAllocError> {
        let frame = Frame::try_generate(width, height, seed)?;
        let reference = frame.try_reference()?;
        Ok(CheckedFrame { frame, reference })
    }

    /// [`CheckedFrame::try_make`], saying why the host cannot hold them.
    pub fn make(width: u32, height: u32, seed: u64) -> Result<CheckedFrame, String> {
        Self::try_make(width, height, seed).map_err(|e| e.to_string())
    }

    /// "frame 3840x2160": what a task on it is, in messages.
    pub fn describe(&self) -> String {
        format!("frame {}x{}", self.frame.width, self.frame.height)
    }

    /// Whether a device's limits take the frame's pixels.
    pub fn fits(&self, limits: &crate::limits::Limits) -> Result<(), String> {
        limits.frame_fits(self.frame.pixels())
    }

    /// Whether the host holds the frame with every API of the run (their staging too).
    pub fn check_host(
        &self,
        apis: &[(crate::backend::Api, crate::backend::DeviceKind)],
    ) -> Result<(), String> {
        crate::hostmem::check_frame(self.frame.width, self.frame.height, apis)
            .map_err(|e| e.to_string())
    }

    /// Device bytes the frame takes: four f32 planes, three in and one out.
    pub fn device_bytes(&self) -> u64 {
        self.frame.pixels().saturating_mul(16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_seed_dependent() {
        let a = Frame::generate(64, 8, 1);
        let b = Frame::generate(64, 8, 1);
        let c = Frame::generate(64, 8, 2);
        assert_eq!(a.r, b.r);
        assert_ne!(a.r, c.r);
        assert_ne!(a.r, a.g);
        assert!(a.r.iter().all(|v| (0.0..1.0).contains(v)));
        assert!(a.reference().iter().any(|&v| v != 0.0));
    }

    #[test]
    fn seed_frame_moves_126_6_mib() {
        let info = FrameInfo {
            width: 3840,
            height: 2160,
            pixels: 3840 * 2160,
            seed: 0,
            bytes_per_pass: 3840 * 2160 * BYTES_PER_PIXEL,
        };
        let mib = info.bytes_per_pass as f64 / (1024.0 * 1024.0);
        assert!((mib - 126.6).abs() < 0.05, "{mib}");
    }

    #[test]
    fn parallel_fill_matches_the_sequential_generator() {
        // The sequential splitmix64 this frame was defined by, one state for all three planes.
        let (w, h, seed) = (300u32, 700u32, 9u64);
        let mut state = seed ^ 0x6A09_E667_F3BC_C908;
        let mut next = || {
            state = state.wrapping_add(GOLDEN);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
        };
        let n = (w * h) as usize;
        let seq: Vec<f32> = (0..3 * n).map(|_| next()).collect();
        let f = Frame::generate(w, h, seed);
        assert_eq!(f.r, seq[..n]);
        assert_eq!(f.g, seq[n..2 * n]);
        assert_eq!(f.b, seq[2 * n..]);
    }

    #[test]
    fn impossible_allocations_are_errors() {
        let e = try_zeroed(u64::MAX / 8, "a test").unwrap_err();
        assert!(e.to_string().contains("host memory for a test"), "{e}");
    }

    #[test]
    fn reference_matches_weights() {
        let f = Frame::generate(4, 1, 7);
        let out = f.reference();
        let want = 0.299 * f.r[2] + 0.587 * f.g[2] + 0.114 * f.b[2];
        assert_eq!(out[2], want);
    }

    /// Host-side sizes past 2^32, computed in 64 bits: 65536 x 65536 is 2^32 pixels (0 in 32
    /// bits), and the H200's 50000 x 50000 frame is 2.5 G pixels, 10 GB per plane and 40 GB
    /// per pass (all three past 2^32); a limit's refusal names the plane's bytes. The data grid
    /// that covers 2^32 pixels one thread per block is 2^32 blocks (0 in 32 bits: the plan
    /// then refuses it for the launch field, sweep/rows.rs). No pixel is allocated: the sizes
    /// come from the sides alone.
    #[test]
    fn sizes_past_2_pow_32_are_64_bit() {
        assert_eq!(Frame::pixel_count(65536, 65536), 1 << 32);
        assert_eq!(
            Frame::pixel_count(u32::MAX, u32::MAX),
            u64::MAX - 2 * u32::MAX as u64
        );
        let h200 = Frame::sized(50000, 50000).info();
        assert_eq!(h200.pixels, 2_500_000_000);
        assert_eq!(h200.bytes_per_pass, 40_000_000_000);
        let limits = crate::Limits {
            max_alloc_bytes: Some(crate::Named::new(4_292_870_144, "maxMemoryAllocationSize")),
            ..Default::default()
        };
        let refused = limits.frame_fits(h200.pixels).unwrap_err();
        assert!(
            refused.contains("10000000000 bytes")
                && refused.contains("maxMemoryAllocationSize is 4292870144"),
            "{refused}"
        );
        let block = crate::BlockSize::linear(1);
        let grid = crate::GridPolicy::Data.grid(block, 1 << 32, None, 132, None);
        assert_eq!(grid, 1 << 32);
        let at_1024 =
            crate::GridPolicy::Data.grid(crate::BlockSize::linear(1024), 1 << 32, None, 132, None);
        assert_eq!(at_1024 * 1024, 1 << 32);
        assert_eq!(grid as u32, 0, "what a 32-bit grid would have been");
    }
}
