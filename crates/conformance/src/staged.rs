//! The staged read-back (`Backend::read_buffer_staged`): where a backend lends its own host copy of
//! a buffer, it holds what `read_buffer` copies, bit for bit, after each kind of write to the
//! output plane (the poison, a full dispatch, a dispatch one block short, a frame of another
//! size), so the sweep verifies the same values either way.

use blocksweep_core::blocks::BlockSize;
use blocksweep_core::builtin;
use blocksweep_core::grid::blocks_to_cover;
use blocksweep_core::verify::verify;
use blocksweep_core::{Backend, Frame, KernelVariant, Launch, Stamps, Work};
use libtest_mimic::Completion;

use crate::checks::SMALL;

/// The staged view (read first, so it cannot borrow what `read_buffer` just copied) against
/// `read_buffer`'s copy; `None` where the backend lends nothing.
fn both(b: &mut dyn Backend, when: &str) -> Option<Vec<f32>> {
    let api = b.api();
    let lent = builtin::read_staged(b)
        .unwrap_or_else(|e| panic!("{api} read_buffer_staged {when}: {e}"))?
        .to_vec();
    let mut copied = vec![0f32; lent.len()];
    builtin::read(b, &mut copied).unwrap_or_else(|e| {
        panic!(
            "{} read_buffer {when} (lent {} values): {e}",
            b.api(),
            lent.len()
        )
    });
    let differs = lent
        .iter()
        .zip(&copied)
        .position(|(l, c)| l.to_bits() != c.to_bits());
    if let Some(i) = differs {
        panic!(
            "{} {when}: the staged view differs from read_buffer at pixel {i}: {} against {}",
            b.api(),
            lent[i],
            copied[i]
        );
    }
    Some(lent)
}

/// Poison, a full dispatch, the one-pixel-per-thread kernel one block short and a frame of
/// another size, each read back both ways; skipped where the backend lends nothing.
pub fn staged_read_back(b: &mut dyn Backend) -> Completion {
    let frame = Frame::generate(SMALL.0, SMALL.1, 17);
    let reference = frame.reference();
    let api = b.api();
    builtin::load(b, KernelVariant::GridStride, &frame).expect("upload");
    builtin::poison(b, frame.pixels()).expect("poison");
    let Some(poisoned) = both(b, "after the poison") else {
        return crate::skip("read_buffer_staged lends nothing on this device (None)");
    };
    assert_eq!(poisoned.len() as u64, frame.pixels(), "one value per pixel");
    assert!(
        poisoned.iter().all(|v| v.is_nan()),
        "the staged view after the poison is NaN"
    );

    let block = BlockSize::linear(64);
    let full = blocks_to_cover(frame.pixels(), 64) as u32;
    b.run_batch(
        Work::Kernel(Launch::linear(block, full / 4)),
        2,
        Stamps::None,
    )
    .expect("a grid-stride dispatch");
    let out = both(b, "after a dispatch").expect("lent once, lent again");
    verify(&out, &reference).unwrap_or_else(|m| panic!("{api} lent after a dispatch: {m:?}"));

    builtin::load(b, KernelVariant::OnePixelPerThread, &frame).unwrap();
    builtin::poison(b, frame.pixels()).expect("poison");
    b.run_batch(
        Work::Kernel(Launch::linear(block, full - 1)),
        1,
        Stamps::None,
    )
    .expect("one block short");
    let short = both(b, "one block short").expect("lent once, lent again");
    let m = verify(&short, &reference).expect_err("one block short must fail");
    assert_eq!(
        m.index,
        (full as u64 - 1) * 64,
        "the first pixel of the missing block"
    );
    assert!(
        m.got.is_nan(),
        "the poison shows through the staged view: {m:?}"
    );

    // A frame of another size: the staged view follows it.
    let other = Frame::generate(320, 90, 19);
    builtin::load(b, KernelVariant::GridStride, &other).expect("re-upload");
    builtin::poison(b, other.pixels()).expect("poison");
    b.run_batch(Work::Kernel(Launch::linear(block, 8)), 1, Stamps::None)
        .expect("a dispatch on the second frame");
    let out = both(b, "after a re-upload").expect("lent for the second frame");
    assert_eq!(
        out.len() as u64,
        other.pixels(),
        "one value per pixel of the new frame"
    );
    verify(&out, &other.reference()).unwrap_or_else(|m| panic!("{api} second frame: {m:?}"));
    Completion::Completed
}
