//! The one checked dispatch in both orders: the frame's check verifies what its timed batch
//! wrote; a check whose kernel may read what it writes dispatches once untimed first, and a
//! wrong output is never timed.

use std::sync::{Arc, Mutex};

use super::*;
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::limits::Limits;
use crate::testing::{HostBackend, TEST_API_A};
use crate::{Discipline, Protocol, Reps};

/// What a [`Recorded`] backend (or a test's check) was asked to do, in order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Event {
    /// A buffer written or filled (a reset).
    Wrote,
    /// `run_batch` of `count` dispatches of a kernel, with timestamps (`timed`) or without.
    Batch { count: u32, timed: bool },
    /// A buffer read back: in the host memory the backend lends (`staged`), or copied out.
    Read { staged: bool },
    /// What a test's own check did.
    Check(&'static str),
}

/// A backend that logs what it is asked to do, and where told, writes a wrong value into
/// `arg` at byte `offset` after every timed batch (a device whose timed dispatches go wrong),
/// or lends a staged view one value short (a broken backend).
pub(crate) struct Recorded<B> {
    pub inner: B,
    pub log: Arc<Mutex<Vec<Event>>>,
    pub corrupt_timed: Option<(usize, u64)>,
    pub short_staged: bool,
}

impl<B: Backend> Recorded<B> {
    pub(crate) fn new(inner: B) -> Self {
        Recorded {
            inner,
            log: Arc::default(),
            corrupt_timed: None,
            short_staged: false,
        }
    }

    pub(crate) fn events(&self) -> Vec<Event> {
        self.log.lock().unwrap().clone()
    }

    fn note(&self, e: Event) {
        self.log.lock().unwrap().push(e);
    }
}

impl<B: Backend> Backend for Recorded<B> {
    fn identity(&self) -> &DeviceIdentity {
        self.inner.identity()
    }
    fn limits(&self) -> &Limits {
        self.inner.limits()
    }
    fn kernel_facts(&self) -> &KernelFacts {
        self.inner.kernel_facts()
    }
    fn timer(&self) -> TimerInfo {
        self.inner.timer()
    }
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.inner.residency(block)
    }
    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        let timed = stamps != Stamps::None;
        self.note(Event::Batch { count, timed });
        let times = self.inner.run_batch(work, count, stamps)?;
        if let Some((arg, offset)) = self.corrupt_timed.filter(|_| timed) {
            let wrong = Fill {
                offset,
                len: 4,
                byte: 0,
            };
            self.inner.fill_buffer(arg, &[wrong])?;
        }
        Ok(times)
    }
    fn copy_method(&self) -> String {
        self.inner.copy_method()
    }
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        self.inner.builtin(kernel)
    }
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.inner.load_program(source, args)
    }
    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.inner.set_scalar(arg, bytes)
    }
    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.note(Event::Wrote);
        self.inner.write_buffer(arg, bytes)
    }
    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.note(Event::Wrote);
        self.inner.fill_buffer(arg, fills)
    }
    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.note(Event::Read { staged: false });
        self.inner.read_buffer(arg, offset, out)
    }
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let view = self.inner.read_buffer_staged(arg)?;
        if view.is_some() {
            self.log.lock().unwrap().push(Event::Read { staged: true });
        }
        Ok(view.map(|v| if self.short_staged { &v[4..] } else { v }))
    }
}

/// No warm-up, two dispatches a batch: one batch timed as a whole, one per dispatch.
pub(crate) const TWO_DISPATCHES: Protocol = Protocol {
    warmups: 0,
    reps: Reps::Fixed(2),
    discipline: Discipline::Batch,
    caches: crate::flush::Caches::Hot,
};

/// The timed batches [`TWO_DISPATCHES`] runs.
pub(crate) const TIMED: [Event; 2] = [Event::Batch {
    count: 2,
    timed: true,
}; 2];

/// One untimed dispatch.
pub(crate) const UNTIMED: Event = Event::Batch {
    count: 1,
    timed: false,
};

/// The host backend with the grid-stride kernel loaded on a 64 x 16 frame, and that frame's
/// reference.
fn on_frame() -> (Recorded<HostBackend>, Vec<f32>) {
    let frame = Frame::generate(64, 16, 5);
    let mut b = Recorded::new(HostBackend::new(TEST_API_A));
    crate::builtin::load(&mut b, KernelVariant::GridStride, &frame).unwrap();
    b.log.lock().unwrap().clear();
    (b, frame.reference())
}

const LAUNCH: Launch = Launch::linear(BlockSize::linear(64), 4);

#[test]
fn the_frames_check_verifies_what_its_timed_batch_wrote() {
    let (mut b, reference) = on_frame();
    let mut kept = FrameReadback::timed(TEST_API_A);
    let mut check = FrameCheck::new(&mut kept, &reference);
    let ran = checked_dispatch(&mut b, LAUNCH, Some(&TWO_DISPATCHES), &mut check).unwrap();
    assert!(matches!(ran, Dispatched::Ran(Some(ref t), Ok(())) if t.reps == 2));
    // Poisoned, timed, read back: no untimed dispatch before the timed batch.
    let [poison, timed @ .., read] = &b.events()[..] else {
        panic!("{:?}", b.events());
    };
    assert_eq!(
        (*poison, timed, *read),
        (Event::Wrote, &TIMED[..], Event::Read { staged: true })
    );

    // Pixel 5 goes wrong in every timed batch: the check sees it, so it checked their output.
    b.corrupt_timed = Some((crate::builtin::OUTPUT, 5 * 4));
    let mut check = FrameCheck::new(&mut kept, &reference);
    match checked_dispatch(&mut b, LAUNCH, Some(&TWO_DISPATCHES), &mut check).unwrap() {
        Dispatched::Ran(Some(_), Err(m)) => assert_eq!((m.index, m.bad_pixels), (5, 1)),
        _ => panic!("the timed batch's wrong pixel was not seen"),
    }

    // Untimed (validate's): one dispatch between the poison and the read-back.
    b.log.lock().unwrap().clear();
    let mut check = FrameCheck::new(&mut kept, &reference);
    let ran = checked_dispatch(&mut b, LAUNCH, None, &mut check).unwrap();
    assert!(matches!(ran, Dispatched::Ran(None, Ok(()))));
    assert_eq!(
        b.events(),
        [Event::Wrote, UNTIMED, Event::Read { staged: true }]
    );
}

/// A check of an output the kernel may read: it logs its steps and says the output is wrong
/// unless told it matches.
struct ReadsWhatItWrites {
    log: Arc<Mutex<Vec<Event>>>,
    matches: bool,
}

impl OutputCheck for ReadsWhatItWrites {
    type Wrong = &'static str;

    fn reset(&mut self, _: &mut dyn Backend) -> Result<(), BackendError> {
        self.log.lock().unwrap().push(Event::Check("reset"));
        Ok(())
    }

    fn verify(
        &mut self,
        _: &mut dyn Backend,
        _: Launch,
    ) -> Result<Matched<&'static str>, SweepError> {
        self.log.lock().unwrap().push(Event::Check("verify"));
        Ok(if self.matches { Ok(()) } else { Err("wrong") })
    }

    fn checks_timed_output(&self) -> bool {
        false
    }
}

#[test]
fn a_kernel_that_may_read_its_output_is_checked_untimed_first_and_timed_only_if_it_matched() {
    for matches in [true, false] {
        let (mut b, _) = on_frame();
        let log = b.log.clone();
        let mut check = ReadsWhatItWrites { log, matches };
        let ran = checked_dispatch(&mut b, LAUNCH, Some(&TWO_DISPATCHES), &mut check).unwrap();
        let checked = [Event::Check("reset"), UNTIMED, Event::Check("verify")];
        match ran {
            Dispatched::Ran(Some(t), Ok(())) if matches => {
                assert_eq!(t.reps, 2);
                assert_eq!(b.events(), [&checked[..], &TIMED[..]].concat());
            }
            Dispatched::Ran(None, Err("wrong")) if !matches => {
                assert_eq!(b.events(), checked, "a wrong output is never timed");
            }
            _ => panic!("matches {matches}: {:?}", b.events()),
        }
    }
}

#[test]
fn a_refused_first_dispatch_is_a_result_in_either_order() {
    let (mut b, reference) = on_frame();
    b.inner.reject = Some(64);
    let mut kept = FrameReadback::timed(TEST_API_A);
    let mut frame = FrameCheck::new(&mut kept, &reference);
    let ran = checked_dispatch(&mut b, LAUNCH, Some(&TWO_DISPATCHES), &mut frame);
    assert!(matches!(ran, Ok(Dispatched::Refused(e)) if e.kind == ErrorKind::LaunchRejected));
    let log = b.log.clone();
    let mut kernel = ReadsWhatItWrites { log, matches: true };
    let ran = checked_dispatch(&mut b, LAUNCH, Some(&TWO_DISPATCHES), &mut kernel);
    assert!(matches!(ran, Ok(Dispatched::Refused(_))));
    assert_eq!(
        b.events().last(),
        Some(&UNTIMED),
        "nothing after the refusal"
    );
}
