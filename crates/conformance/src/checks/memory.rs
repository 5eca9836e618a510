//! Frames too large for the device, refused before anything is allocated, and what the
//! backend refuses after such a refusal.

use blocksweep_core::builtin;
use blocksweep_core::{Backend, BlockSize, ErrorKind, Frame, KernelVariant, Launch, Stamps, Work};

use super::{claimed_frame, run_and_verify};

/// The smallest frame (in pixels) the device's limits refuse, and the limit that refuses it.
fn smallest_refused_frame(b: &dyn Backend) -> (u64, String) {
    let l = b.limits();
    // Per plane (4 bytes a pixel) against the allocation and binding limits, unless the
    // backend splits planes into pieces; four planes (16 bytes a pixel) against the device's
    // memory.
    let whole = l.frame_piece_bytes.is_none();
    [
        (&l.max_alloc_bytes, 4, whole),
        (&l.max_buffer_binding_bytes, 4, whole),
        (&l.global_mem_bytes, 16, true),
    ]
    .into_iter()
    .filter_map(|(limit, per_pixel, applies)| applies.then_some((limit, per_pixel)))
    .filter_map(|(limit, per_pixel)| {
        limit
            .as_ref()
            .map(|n| (n.value / per_pixel + 1, n.name.clone()))
    })
    .min_by_key(|(pixels, _)| *pixels)
    .expect("the device states at least its memory")
}

/// A frame too large for the device is refused by the core from the backend's limits before
/// anything is allocated (the boundary is exact), and by the backend if it is handed one; a
/// frame whose planes do not match its size and a copy larger than the device's memory are
/// refused; after all that, the backend still runs and verifies a frame.
pub fn frame_too_large(b: &mut dyn Backend) {
    let (pixels, limit) = smallest_refused_frame(b);
    let why = b.limits().frame_fits(pixels).unwrap_err();
    assert!(why.contains(&limit), "{why:?} should name {limit}");
    assert_eq!(
        b.limits().frame_fits(pixels - 1),
        Ok(()),
        "one pixel fewer fits"
    );
    let claimed = claimed_frame(pixels);
    assert!(b.limits().frame_fits(claimed.pixels()).is_err());
    // Handed it anyway (the kernel's buffers for it), the backend refuses them.
    let (w, h) = (claimed.width, claimed.height);
    let e = builtin::load_kernel(b, KernelVariant::GridStride, w, h)
        .expect_err("a frame above the limits");
    assert!(
        matches!(e.kind, ErrorKind::OutOfMemory | ErrorKind::Driver),
        "{e}"
    );
    assert_eq!(e.api, b.api());
    // Nothing was loaded: later calls are refused, not undefined.
    let e = builtin::poison(b, 1).expect_err("poison with no program");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    let e = b
        .run_batch(
            Work::Kernel(Launch::linear(BlockSize::linear(64), 1)),
            1,
            Stamps::None,
        )
        .expect_err("a dispatch with no program");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    let e = builtin::read(b, &mut [0f32; 1]).expect_err("read-back with no program");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");

    // Planes that do not hold the frame's pixel count.
    let mut short = Frame::generate(8, 8, 1);
    short.g.pop();
    let e =
        builtin::load(b, KernelVariant::GridStride, &short).expect_err("a plane one value short");
    assert_eq!(e.kind, ErrorKind::Driver, "{e}");
    assert!(
        e.message.contains("252"),
        "{e} should give the write's length (63 values, 252 bytes)"
    );

    // Two copy buffers, each as large as the device's memory.
    let global = b.limits().global_mem_bytes.clone().unwrap();
    assert!(b.limits().copy_fits(global.value, 0).is_err());
    let e = b
        .run_batch(
            Work::Copy {
                bytes: global.value,
            },
            1,
            Stamps::None,
        )
        .expect_err("a copy larger than the device");
    assert_eq!(e.kind, ErrorKind::OutOfMemory, "{e}");

    run_and_verify(
        b,
        &Frame::generate(64, 16, 3),
        Launch::linear(BlockSize::linear(64), 4),
        1,
    );
}
