//! A row that differs from its API's reference, weighed on a made-up API whose kernel is
//! wrong at one block size: the first size's row when that is the odd one out, else the row.

use crate::blocks::BlockSize;
use crate::sweep::{SweepError, SweepResult};
use crate::testing::metal_like::{scale_workload, sweep_blocks, MetalLikeBackend};

/// `scale` swept over blocks 16, 32, 64 and 128 on a backend wrong at `wrong_at`.
fn swept(wrong_at: u32) -> (SweepResult, Option<SweepError>) {
    let mut b = MetalLikeBackend::new();
    b.wrong_at = Some(wrong_at);
    sweep_blocks(&scale_workload(4096), &mut b, &[16, 32, 64, 128])
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

/// Weighing with another API's output: one later row cannot outvote the first, but another API
/// that passed and agrees with that row can; one that agrees with the first keeps it right.
#[test]
fn another_apis_output_decides_where_the_rows_alone_cannot() {
    use super::{OwnRows, References};
    use crate::backend::Launch;
    use crate::testing::{TEST_API_A, TEST_API_B};
    use crate::workload::references::Checked;
    let work = scale_workload(8);
    let instance = &work.instance;
    let out = |api, block: u32, bump: f32| Checked {
        api,
        block: BlockSize::linear(block),
        grid: "1".into(),
        outputs: std::sync::Arc::new(vec![crate::workload::guard::Output::bare(
            (0..8)
                .flat_map(|i| (i as f32 + bump).to_le_bytes())
                .collect(),
        )]),
    };
    let launch = |block: u32| Launch::linear(BlockSize::linear(block), 1);
    for (witness_bump, first_wrong) in [(0.0, true), (1.0, false)] {
        let mut refs = References::default();
        let mut other = OwnRows::weighed();
        let witness = out(TEST_API_B, 16, witness_bump);
        refs.check(launch(16), instance, witness, &mut other)
            .unwrap();
        let mut own = OwnRows::weighed();
        // The first size is off by one; the one row after it is right.
        refs.check(launch(16), instance, out(TEST_API_A, 16, 1.0), &mut own)
            .unwrap();
        refs.check(launch(32), instance, out(TEST_API_A, 32, 0.0), &mut own)
            .unwrap();
        let settled = refs.settle(TEST_API_A, instance, &mut own).unwrap();
        let named = match &settled.error {
            SweepError::Output { block, .. } => block.x,
            e => panic!("{e:?}"),
        };
        assert_eq!(
            named,
            if first_wrong { 16 } else { 32 },
            "{}",
            settled.error
        );
        if first_wrong {
            assert!(
                settled
                    .error
                    .to_string()
                    .contains("which agrees with Beta's"),
                "{}",
                settled.error
            );
        }
    }
}
