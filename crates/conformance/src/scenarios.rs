//! The kit's scenarios: what each checks, and whether it runs per device or once per API.

use libtest_mimic::Completion;

use crate::trial::Target;
use crate::{checks, lab, staged};

/// One scenario of the kit.
pub struct Scenario {
    /// The first part of each trial's name.
    pub name: &'static str,
    /// What it checks, in a sentence.
    pub what: &'static str,
    /// One trial per device (else one per API).
    pub per_device: bool,
    pub check: fn(&Target) -> Completion,
}

const fn device(
    name: &'static str,
    what: &'static str,
    check: fn(&Target) -> Completion,
) -> Scenario {
    Scenario {
        name,
        what,
        per_device: true,
        check,
    }
}

/// Every scenario, in the order the trials are listed.
pub const SCENARIOS: &[Scenario] = &[
    device(
        "identity",
        "probe() lists the device at its index under this API, with a name, vendor, provider, \
         version and a well-formed PCI address; open() describes the same device",
        |t| {
            checks::identity(t);
            Completion::Completed
        },
    ),
    device(
        "limits",
        "limits are consistent and each carries its native name; timer and kernel facts stated",
        |t| {
            checks::limits(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "sweep_13_sizes",
        "the default 13 sizes: every row the limits allow runs and verifies, with a batch \
         interval and per-dispatch samples; the rest are skipped naming a limit",
        |t| {
            let result = checks::full_sweep(&mut *t.open());
            checks::show_rows(&result);
            Completion::Completed
        },
    ),
    device(
        "one_block_short",
        "the one-pixel-per-thread kernel one block short is caught (NaN poison, message names \
         block, grid and first index); the grid-stride kernel at the same grid verifies",
        |t| {
            checks::one_block_short(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "oversize_block",
        "a block above the device's limit is a skipped row naming the limit",
        |t| {
            checks::oversize_block(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "block_3d",
        "3-D and 2-D blocks within the limits run and verify, across re-uploads of frames of \
         other sizes",
        |t| checks::block_3d(&mut *t.open()),
    ),
    device(
        "lab_kernel_2d",
        "the 2-D kernel: every power-of-two shape of 64 and 256 threads the limits allow, with \
         data-sized and short grids, verifies; a re-upload changes width and height",
        |t| lab::kernel_2d(&mut *t.open()),
    ),
    device(
        "lab_shared_memory",
        "the shared-memory kernel verifies at 1 KiB and at the device's limit; 1 KiB above it is \
         refused (or run and verified), and the backend stays usable",
        |t| lab::shared_probe(&mut *t.open()),
    ),
    device(
        "lab_register_heavy",
        "the register-heavy kernel verifies at 64 threads; at the largest block it verifies or \
         is refused, never a provider error",
        |t| lab::register_heavy(&mut *t.open()),
    ),
    device(
        "frame_too_large",
        "a frame too large for the device is refused from its limits before allocation, and \
         by load_program; a mismatched frame and an oversize copy are refused; the backend \
         stays usable",
        |t| {
            checks::frame_too_large(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "copy_timing",
        "Work::Copy gives positive, finite per-dispatch and batch times, and its buffers serve \
         later batches",
        |t| {
            checks::copy_timing(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "kernel_timing",
        "kernel batches of at least 100 ms read, on the device's clock, between a third of the \
         host's wait around them and the wait itself, stamped once or per dispatch",
        |t| {
            checks::kernel_timing(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "batch_protocol",
        "run_batch returns one interval (Batch), n intervals (Each) or none (None); back-to-back \
         dispatches verify; poison and read-back are ordered after a batch",
        |t| {
            checks::batch_protocol(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "rejected_launch",
        "a launch the API rejects is LaunchRejected naming the block, and leaves the backend \
         usable: a legal launch after it verifies",
        |t| {
            checks::rejected_launch(&mut *t.open());
            Completion::Completed
        },
    ),
    device(
        "staged_read_back",
        "where read_buffer_staged lends the backend's host copy of the output, it equals \
         read_buffer's pixel for pixel after the poison, a dispatch, one block short and a \
         frame of another size",
        |t| staged::staged_read_back(&mut *t.open()),
    ),
    Scenario {
        name: "open_past_last_device",
        what: "opening the index after the last device is an Unavailable error naming it, not a \
               panic",
        per_device: false,
        check: |t| {
            checks::open_past_last_device(t.provider, &t.devices);
            Completion::Completed
        },
    },
];
