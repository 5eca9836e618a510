//! The worker's side of a checked dispatch without a process: `serve` fed a conversation as
//! lines, on the made-up API's backend, reads back through the region what the calls it is
//! made of read in one process.

use std::io::Cursor;

use super::protocol::{RegionReset, Reply, Request};
use super::serve;
use super::shared::Shared;
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::options::OpenOptions;
use crate::provider::Provider;
use crate::testing::metal_like::{scale_workload, MetalLikeBackend, METAL_LIKE_PROVIDER};
use crate::workload::guard;

#[test]
fn a_checked_dispatch_in_the_worker_reads_what_its_calls_read_in_one_process() {
    checked_in_the_worker(256);
}

/// An output of 2 MiB is read through the backend's staging with its bands apart
/// (`checked::read_span`): the same bytes as one plain read of the whole allocation.
#[test]
fn a_large_output_is_read_through_the_staging_with_its_bands() {
    checked_in_the_worker(1 << 19);
}

fn checked_in_the_worker(n: u64) {
    let work = scale_workload(n);
    let source = work.spec.sources_for("metal-like").unwrap();
    let [x, y] = [0, 1].map(|i| &work.instance.buffers[i]);
    let launch = Launch::linear(BlockSize::linear(64), 4);
    let x_image = guard::padded(&x.initial);
    let y_len = y.initial.len() as u64;
    let resets = [
        Reset::Write {
            arg: x.decl.index,
            bytes: &x_image,
        },
        Reset::Fill {
            arg: y.decl.index,
            fills: guard::fills(y_len, 0xFF),
        },
    ];
    let reads = vec![
        Span {
            arg: y.decl.index,
            offset: 0,
            len: y_len + 2 * guard::GUARD,
        },
        Span {
            arg: x.decl.index,
            offset: 0,
            len: guard::GUARD,
        },
    ];

    // In one process: the default, the calls it is made of.
    let mut here = MetalLikeBackend::new();
    here.load_program(&source, &work.instance.args).unwrap();
    let run = CheckedRun {
        resets: resets.to_vec(),
        launch: Some(launch),
        reads: reads.clone(),
    };
    let mut expected: Vec<Vec<u8>> = reads.iter().map(|s| vec![0; s.len as usize]).collect();
    here.run_checked(&run, &mut expected).unwrap().unwrap();
    assert!(
        guard::data(&expected[0]).iter().any(|&b| b != 0xFF),
        "y was written"
    );
    let mut plain = vec![0; expected[0].len()];
    here.read_buffer(y.decl.index, 0, &mut plain).unwrap();
    assert!(plain == expected[0], "y read whole by one plain read");

    // In the worker: x's image in the region, the reads laid into it from its start.
    let len: u64 = reads
        .iter()
        .map(|s| s.len)
        .sum::<u64>()
        .max(x_image.len() as u64);
    let (mut region, path) = Shared::create(len).unwrap();
    region
        .bytes_mut(x_image.len() as u64)
        .copy_from_slice(&x_image);
    let device = METAL_LIKE_PROVIDER.probe().unwrap().remove(0);
    let requests = [
        Request::Open {
            device,
            options: OpenOptions::default(),
        },
        Request::Map {
            path: path.to_string_lossy().into_owned(),
            len: region.len(),
        },
        Request::LoadProgram {
            source,
            args: work.instance.args.clone(),
        },
        Request::Residency {
            block: BlockSize::linear(64),
        },
        Request::RunChecked {
            resets: vec![
                RegionReset::Write {
                    arg: x.decl.index,
                    at: 0,
                    len: x_image.len() as u64,
                },
                RegionReset::Fill {
                    arg: y.decl.index,
                    fills: guard::fills(y_len, 0xFF),
                },
            ],
            launch: Some(launch),
            reads: reads.clone(),
        },
        Request::Close,
    ];
    let input: String = requests
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    let mut output = Vec::new();
    let code = serve(&[&METAL_LIKE_PROVIDER], Cursor::new(input), &mut output);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0);
    let replies: Vec<Reply> = String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        matches!(
            replies[..],
            [
                Reply::Opened(_),
                Reply::Done,
                Reply::Facts(_),
                Reply::Residency(_),
                Reply::Checked(None),
                Reply::Done
            ]
        ),
        "{replies:?}"
    );
    let read = region.bytes(len);
    let (first, rest) = read.split_at(expected[0].len());
    assert_eq!(first, &expected[0][..], "y, whole");
    assert_eq!(
        &rest[..expected[1].len()],
        &expected[1][..],
        "x's leading band"
    );
}

#[test]
fn a_refused_dispatch_is_the_checked_replys_own_and_nothing_is_read() {
    let device = METAL_LIKE_PROVIDER.probe().unwrap().remove(0);
    let (region, path) = Shared::create(4096).unwrap();
    let requests = [
        Request::Open {
            device,
            options: OpenOptions::default(),
        },
        Request::Map {
            path: path.to_string_lossy().into_owned(),
            len: region.len(),
        },
        Request::RunChecked {
            resets: Vec::new(),
            launch: Some(Launch::linear(BlockSize::linear(64), 4)),
            reads: Vec::new(),
        },
    ];
    let input: String = requests
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    let mut output = Vec::new();
    serve(&[&METAL_LIKE_PROVIDER], Cursor::new(input), &mut output);
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8(output).unwrap();
    let last: Reply = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    // No program loaded: the dispatch's own error, not the call's.
    assert!(
        matches!(last, Reply::Checked(Some((_, ref message))) if !message.is_empty()),
        "{text}"
    );
}
