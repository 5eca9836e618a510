//! A row that differs from its API's reference, weighed on a made-up API whose kernel is
//! wrong at one block size: the first size's row when that is the odd one out, else the row.

use crate::blocks::BlockSize;
use crate::sweep::{Quiet, SweepConfig, SweepError, SweepResult, SweepRun};
use crate::testing::metal_like::{scale_workload, MetalLikeBackend};
use crate::workload::Workload;

/// `scale` swept over blocks 16, 32, 64 and 128 on a backend wrong at `wrong_at`.
fn swept(wrong_at: u32) -> (SweepResult, Option<SweepError>) {
    let work = scale_workload(4096);
    let mut b = MetalLikeBackend::new();
    b.wrong_at = Some(wrong_at);
    work.prepare(&mut b).unwrap();
    let config = SweepConfig {
        blocks: [16, 32, 64, 128].map(BlockSize::linear).to_vec(),
        protocol: crate::Protocol {
            warmups: 0,
            reps: crate::Reps::Fixed(1),
            discipline: crate::Discipline::Batch,
        },
        copy: false,
        ..Default::default()
    };
    let how = SweepRun {
        config: &config,
        shared: None,
        observer: &mut Quiet,
        on_row: &mut |_| {},
    };
    work.measure(&mut b, true, how)
}

/// Each row as (block x, verified, timed).
fn rows(r: &SweepResult) -> Vec<(u32, bool, bool)> {
    (r.rows.iter())
        .map(|x| (x.block.x, x.verified, x.timing.is_some()))
        .collect()
}

#[test]
fn a_first_size_that_the_other_rows_contradict_is_the_wrong_one() {
    let (r, err) = swept(16);
    let Some(SweepError::Output {
        block,
        against,
        detail,
        ..
    }) = err
    else {
        panic!("no output error: {err:?}");
    };
    assert_eq!(block, BlockSize::linear(16));
    assert_eq!(
        against,
        "its outputs at blocks 32, 64 and 128, which agree with each other"
    );
    assert!(detail.starts_with("element 3: expected "), "{detail}");
    assert!(detail.contains("This row, MetalLike's first size, is the wrong one"));
    assert!(!detail.contains("cover the work"), "{detail}");
    // The wrong row has no speed; the others keep theirs, verified.
    assert_eq!(
        rows(&r),
        [
            (16, false, false),
            (32, true, true),
            (64, true, true),
            (128, true, true)
        ]
    );
    assert!(r.rows[0].of_best.is_none());
    assert!(r.rows[0]
        .note
        .as_deref()
        .unwrap()
        .starts_with("wrong output"));
    assert!(r.rows[1..].iter().all(|x| x.note.is_none()), "{:?}", r.rows);
}

#[test]
fn a_row_that_differs_from_a_reference_the_others_agree_with_is_the_wrong_one() {
    let (r, err) = swept(64);
    let Some(SweepError::Output { block, against, .. }) = err else {
        panic!("no output error: {err:?}");
    };
    assert_eq!(block, BlockSize::linear(64));
    assert_eq!(against, "its own output at block 16 (its reference)");
    assert_eq!(
        rows(&r),
        [
            (16, true, true),
            (32, true, true),
            (64, false, false),
            (128, true, true)
        ]
    );
}
