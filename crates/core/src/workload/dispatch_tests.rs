//! A user kernel's check through the one checked dispatch: one untimed dispatch from reset
//! outputs, checked, then timed only where it matched.

use super::*;
use crate::sweep::check_tests::{Event, Recorded, TIMED, TWO_DISPATCHES, UNTIMED};
use crate::sweep::{checked_dispatch, Dispatched};
use crate::testing::metal_like::MetalLikeBackend;
use crate::workload::diagnosis::OwnRows;

/// `scale` built on the made-up API's backend, its buffers filled, the log empty.
fn prepared() -> (ProgramWorkload, Recorded<MetalLikeBackend>) {
    let work = crate::testing::metal_like::scale_workload(256);
    let mut b = Recorded::new(MetalLikeBackend::new());
    work.prepare(&mut b).unwrap();
    b.log.lock().unwrap().clear();
    (work, b)
}

#[test]
fn a_kernels_check_dispatches_once_untimed_before_timing_and_a_wrong_output_is_never_timed() {
    let (work, mut b) = prepared();
    let launch = Launch::linear(crate::blocks::BlockSize::linear(64), 4);
    let mut own = OwnRows::default();
    let mut check = KernelCheck::new(&work, &mut own, true);
    let ran = checked_dispatch(&mut b, launch, Some(&TWO_DISPATCHES), &mut check).unwrap();
    assert!(matches!(ran, Dispatched::Ran(Some(_), Ok(()))));
    let events = b.events();
    let batches: Vec<&Event> = (events.iter())
        .filter(|e| matches!(e, Event::Batch { .. }))
        .collect();
    assert_eq!(batches, [&UNTIMED, &TIMED[0], &TIMED[1]], "{events:?}");
    let untimed = events.iter().position(|e| *e == UNTIMED).unwrap();
    assert!(
        events[..untimed].contains(&Event::Wrote),
        "reset first: {events:?}"
    );
    assert!(
        events[untimed..].starts_with(&[UNTIMED, Event::Read { staged: false }]),
        "{events:?}"
    );
    let (first, _) = own
        .first
        .clone()
        .expect("the first checked dispatch is the API's reference");

    // The same launch against a reference it does not match: checked, never timed.
    b.log.lock().unwrap().clear();
    let mut wrong = OwnRows {
        first: Some((first, launch)),
        ..OwnRows::default()
    };
    std::sync::Arc::make_mut(&mut wrong.first.as_mut().unwrap().0.outputs)[0].fill(0);
    let mut check = KernelCheck::new(&work, &mut wrong, true);
    match checked_dispatch(&mut b, launch, Some(&TWO_DISPATCHES), &mut check).unwrap() {
        Dispatched::Ran(None, Err(SweepError::Output { buffer, .. })) => assert_eq!(buffer, "y"),
        _ => panic!("a wrong output was not caught: {:?}", b.events()),
    }
    let batches = b
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::Batch { .. }));
    assert_eq!(batches.collect::<Vec<_>>(), [UNTIMED], "never timed");
}

/// A row above the kernel's own stated limit that the driver ran is noted with the limit, on a
/// user's kernel as on the frame (the reference row's note took its place, so a brief line's
/// "--verbose names the limit" named nothing).
#[test]
fn a_row_above_the_kernels_own_limit_is_noted_with_it() {
    use crate::testing::metal_like::{scale_workload, sweep_blocks};
    let mut b = MetalLikeBackend::new();
    b.kernel_max_block = Some(64);
    let (r, err) = sweep_blocks(&scale_workload(256), &mut b, &[128, 32]);
    assert!(err.is_none(), "{err:?}");
    let notes: Vec<(u32, Option<&str>)> = (r.rows.iter())
        .map(|x| (x.block.x, x.note.as_deref()))
        .collect();
    let reference = "the reference: MetalLike's other sizes are compared with this row's output";
    let above = "ran although 128 threads > maxTotalThreadsPerThreadgroup = 64 for this kernel: \
                 the driver accepted it";
    assert_eq!(
        notes,
        [
            (128, Some(format!("{reference}; {above}").as_str())),
            (32, None)
        ]
    );
}

/// A row after the reference reads into the buffer the row before it gave back (no fresh
/// allocation per row), and a wrong output read into that reused buffer is still caught.
#[test]
fn a_rows_read_back_reuses_the_last_rows_buffer_and_still_catches_a_wrong_row() {
    use crate::testing::metal_like::{scale_workload, sweep_blocks};
    let work = scale_workload(1 << 12);
    let mut b = MetalLikeBackend::new();
    let (r, err) = sweep_blocks(&work, &mut b, &[64, 128, 256]);
    assert!(err.is_none(), "{err:?}");
    assert!(r.rows.iter().all(|x| x.timing.is_some()), "{:?}", r.rows);
    let y = &work.instance.buffers[1];
    let whole = guard::allocated(y.initial.len() as u64) as usize;
    let spare: Vec<usize> = work.spare.lock().unwrap().iter().map(Vec::len).collect();
    assert_eq!(spare, [whole], "one output buffer kept for the next row");
    // A kernel wrong at block 256 (every seventh element off by 1), after two good rows.
    let mut wrong = MetalLikeBackend::new();
    wrong.wrong_at = Some(256);
    let work = scale_workload(1 << 12);
    let (_, err) = sweep_blocks(&work, &mut wrong, &[64, 128, 256]);
    assert!(
        matches!(err, Some(SweepError::Output { ref buffer, .. }) if buffer == "y"),
        "{err:?}"
    );
}
