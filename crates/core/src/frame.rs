//! The test image: three planar f32 colour planes, filled deterministically from a seed.

use serde::{Deserialize, Serialize};

/// Rec. 601 luma weights (ITU-R BT.601: Y = 0.299 R + 0.587 G + 0.114 B). Every kernel
/// (`kernels/grayscale.cu`, `kernels/grayscale.cl`, `shaders/grayscale.comp`) uses these same
/// three literals; a test checks the sources against this constant.
pub const WEIGHTS: [f32; 3] = [0.299, 0.587, 0.114];

/// Bytes moved per pixel: three f32 reads and one f32 write.
pub const BYTES_PER_PIXEL: u64 = 16;

/// The seed's default frame: 3840 x 2160 (4K UHD).
pub const DEFAULT_SIZE: (u32, u32) = (3840, 2160);

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

/// splitmix64: tiny, well-mixed and fully deterministic across platforms, which is all a
/// test pattern needs (no crate for twelve lines).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Frame {
    /// Pixels per plane, in 64 bits (the seed's point about overflowing sizing arithmetic).
    pub fn pixel_count(width: u32, height: u32) -> u64 {
        width as u64 * height as u64
    }

    /// Builds a frame of random values in [0, 1). Values are never all zero, so an output
    /// left at zero cannot pass verification by accident.
    pub fn generate(width: u32, height: u32, seed: u64) -> Frame {
        let n = Self::pixel_count(width, height) as usize;
        let mut state = seed ^ 0x6A09_E667_F3BC_C908;
        let mut plane = || -> Vec<f32> {
            (0..n)
                // 24 random bits -> exactly representable f32 in [0, 1).
                .map(|_| (splitmix64(&mut state) >> 40) as f32 / (1u64 << 24) as f32)
                .collect()
        };
        let r = plane();
        let g = plane();
        let b = plane();
        Frame {
            width,
            height,
            seed,
            r,
            g,
            b,
        }
    }

    pub fn pixels(&self) -> u64 {
        Self::pixel_count(self.width, self.height)
    }

    pub fn info(&self) -> FrameInfo {
        FrameInfo {
            width: self.width,
            height: self.height,
            pixels: self.pixels(),
            seed: self.seed,
            bytes_per_pass: self.pixels() * BYTES_PER_PIXEL,
        }
    }

    /// The CPU reference: the same weighted sum every kernel computes, in the same order.
    pub fn reference(&self) -> Vec<f32> {
        let [wr, wg, wb] = WEIGHTS;
        self.r
            .iter()
            .zip(&self.g)
            .zip(&self.b)
            .map(|((&r, &g), &b)| wr * r + wg * g + wb * b)
            .collect()
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
    fn reference_matches_weights() {
        let f = Frame::generate(4, 1, 7);
        let out = f.reference();
        let want = 0.299 * f.r[2] + 0.587 * f.g[2] + 0.114 * f.b[2];
        assert_eq!(out[2], want);
    }
}
