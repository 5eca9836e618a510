//! The parent's end of the pipe to one worker: a request sent, its one answer awaited within a
//! time, and the worker's end (a crash, a silence, a driver error) put in words once, after
//! which every call fails with them.

use std::time::Duration;

use super::process::{Process, Silence};
use super::protocol::{Reply, Request};
use crate::backend::{Api, BackendError, BackendResult, ErrorKind};
use crate::program::deadline;

/// How long a worker may take to open its device or build a kernel: compilers and driver
/// start-up are slow, but not this slow.
const SLOW_CALL: Duration = Duration::from_secs(300);
/// Beyond the dispatch deadline, which the backend in the worker enforces itself, how long
/// the parent waits before it kills a worker stuck inside a driver call.
const GRACE: Duration = Duration::from_secs(10);
/// How long a closing worker may take before it is killed.
const CLOSING: Duration = Duration::from_secs(20);

/// How long the parent waits for each kind of answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waits {
    /// Opening a device, building a kernel, small calls.
    pub slow: Duration,
    /// The dispatch deadline in force (`program::deadline`).
    pub deadline: Duration,
    pub grace: Duration,
    pub closing: Duration,
}

impl Waits {
    /// The waits of a run: the constants above and the deadline in force.
    pub fn standard() -> Waits {
        Waits {
            slow: SLOW_CALL,
            deadline: deadline(),
            grace: GRACE,
            closing: CLOSING,
        }
    }

    pub fn slow(&self) -> Duration {
        self.slow
    }

    /// One batch: the deadline the worker's backend enforces, plus the grace.
    pub fn dispatch(&self) -> Duration {
        self.deadline + self.grace
    }

    /// A transfer of `bytes`: the deadline and the grace, plus a second per 100 MB.
    pub fn transfer(&self, bytes: u64) -> Duration {
        self.dispatch() + Duration::from_secs(bytes / 100_000_000)
    }

    /// A checked dispatch moving `bytes` in all: a dispatch, then its transfers (bounded
    /// together by one more deadline).
    pub fn checked(&self, bytes: u64) -> Duration {
        self.deadline + self.transfer(bytes)
    }
}

pub(crate) struct Link {
    pub process: Process,
    pub api: Api,
    /// Set once the worker has ended: why, and every later call fails with it.
    pub ended: Option<String>,
}

/// Why a call got no reply.
pub(crate) enum Lost {
    /// The worker had ended before the call: nothing was sent.
    Before(BackendError),
    /// The worker ended, went silent or answered out of turn during the call.
    During(BackendError),
    /// The backend in the worker reported an error (the worker may be ended too).
    Said(BackendError),
}

impl Lost {
    pub fn error(self) -> BackendError {
        match self {
            Lost::Before(e) | Lost::During(e) | Lost::Said(e) => e,
        }
    }
}

impl Link {
    /// Sends one request and waits up to `within` for its answer. A worker that ended, went
    /// silent, or reported a driver error (after which its device state is unknown) is gone:
    /// killed, and every later call fails with the reason.
    pub fn call(&mut self, request: &Request, within: Duration) -> BackendResult<Reply> {
        self.exchange(request, within).map_err(Lost::error)
    }

    /// [`Link::call`], saying whether the worker was lost during the call.
    pub fn exchange(&mut self, request: &Request, within: Duration) -> Result<Reply, Lost> {
        if let Some(why) = &self.ended {
            let e = BackendError::new(self.api, ErrorKind::Fault, why.clone());
            return Err(Lost::Before(e));
        }
        let line = serde_json::to_string(request).map_err(|e| {
            Lost::Before(BackendError::new(
                self.api,
                ErrorKind::Driver,
                format!("request: {e}"),
            ))
        })?;
        if self.process.send(&line).is_err() {
            return Err(Lost::During(self.gone()));
        }
        let answer = match self.process.receive(within) {
            Ok(a) => a,
            Err(Silence::Gone) => return Err(Lost::During(self.gone())),
            Err(Silence::Timeout) => return Err(Lost::During(self.silent(within))),
        };
        match serde_json::from_str(&answer) {
            Ok(Reply::Error { kind, message }) => Err(Lost::Said(self.failed(kind, message))),
            Ok(other) => Ok(other),
            Err(e) => Err(Lost::During(self.garbled(&answer, e))),
        }
    }

    /// The worker ended on its own: a crash (a signal), an abort, an exit.
    fn gone(&mut self) -> BackendError {
        let how = self.process.ending(Duration::from_secs(5));
        self.end(
            ErrorKind::Fault,
            format!("the kernel crashed the driver: {how}"),
        )
    }

    /// No answer in time: the worker is killed, which also ends whatever it left running on
    /// the device.
    fn silent(&mut self, within: Duration) -> BackendError {
        self.process.kill();
        let why = format!(
            "no answer within {:.0} s (the kernel or the provider hung): its worker process \
             was killed, which frees the device",
            within.as_secs_f64()
        );
        self.end(ErrorKind::Fault, why)
    }

    /// An answer that is not one (cut short, or garbage on the worker's stdout): the pipe is
    /// out of step, so the worker is stopped rather than asked again.
    fn garbled(&mut self, answer: &str, e: serde_json::Error) -> BackendError {
        self.process.kill();
        let shown: String = answer.chars().take(200).collect();
        let why = format!(
            "the worker's answer is not understood ({e}): {shown}; its worker process was \
             then stopped"
        );
        self.end(ErrorKind::Driver, why)
    }

    /// An error the backend reported. After a driver error (a deadline passed, an illegal
    /// address) the device may still be busy or broken: the worker is killed, so that the
    /// APIs measured next find the device free.
    pub fn failed(&mut self, kind: ErrorKind, message: String) -> BackendError {
        if matches!(kind, ErrorKind::Driver | ErrorKind::Fault) {
            self.process.kill();
            let why =
                format!("{message}; its worker process was then stopped, which frees the device");
            return self.end(kind, why);
        }
        BackendError::new(self.api, kind, message)
    }

    fn end(&mut self, kind: ErrorKind, why: String) -> BackendError {
        self.ended = Some(why.clone());
        BackendError::new(self.api, kind, why)
    }

    pub fn unexpected(&self, what: &str) -> BackendError {
        BackendError::new(
            self.api,
            ErrorKind::Driver,
            format!("the worker answered {what} with something else"),
        )
    }
}
