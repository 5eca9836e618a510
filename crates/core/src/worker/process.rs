//! The worker process itself: started with its pipes, its answers read on a thread of their
//! own (so a wait can time out), its stderr kept (the last lines say why it died), and its
//! end put in words.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::WorkerCommand;

/// Lines of the worker's stderr kept for the message that says how it ended.
const TAIL_LINES: usize = 6;

pub(crate) struct Process {
    child: Child,
    to: ChildStdin,
    from: Receiver<String>,
    tail: Arc<Mutex<VecDeque<String>>>,
}

/// Why no answer came.
pub(crate) enum Silence {
    /// Nothing within the time allowed; the worker is still running.
    Timeout,
    /// The worker closed its end: it has ended.
    Gone,
}

impl Process {
    pub fn start(command: &WorkerCommand, what: &str) -> std::io::Result<Process> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(to), Some(out), Some(err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(std::io::Error::other("the worker's pipes were not made"));
        };
        let (tx, from) = mpsc::channel();
        let name = format!("worker answers: {what}");
        std::thread::Builder::new().name(name).spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        })?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let kept = tail.clone();
        let forward = crate::trace::enabled();
        std::thread::Builder::new()
            .name(format!("worker stderr: {what}"))
            .spawn(move || keep_tail(err, &kept, forward))?;
        Ok(Process {
            child,
            to,
            from,
            tail,
        })
    }

    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        self.to.write_all(line.as_bytes())?;
        self.to.write_all(b"\n")?;
        self.to.flush()
    }

    pub fn receive(&self, within: Duration) -> Result<String, Silence> {
        self.from.recv_timeout(within).map_err(|e| match e {
            RecvTimeoutError::Timeout => Silence::Timeout,
            RecvTimeoutError::Disconnected => Silence::Gone,
        })
    }

    /// Kills the worker (the device's work dies with it) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// How the worker ended, waiting at most `within` for it to finish ending (then killing
    /// it), with the last lines it wrote to stderr.
    pub fn ending(&mut self, within: Duration) -> String {
        let status = self.wait(within);
        let how = match status {
            Some(s) => ended_by(s),
            None => {
                self.kill();
                "it stopped answering and was killed".to_string()
            }
        };
        let tail = self.tail.lock().map(|t| t.clone()).unwrap_or_default();
        let said: Vec<String> = tail.into_iter().filter(|l| !l.trim().is_empty()).collect();
        match said.last() {
            Some(last) => format!("{how}; its last words on stderr: \"{}\"", last.trim()),
            None => how,
        }
    }

    /// Waits up to `within` for the worker to exit.
    pub fn wait(&mut self, within: Duration) -> Option<ExitStatus> {
        let start = std::time::Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return Some(s),
                Ok(None) if start.elapsed() < within => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => return None,
            }
        }
    }
}

fn keep_tail(err: impl std::io::Read, tail: &Mutex<VecDeque<String>>, forward: bool) {
    for line in BufReader::new(err).lines() {
        let Ok(line) = line else { break };
        if forward {
            eprintln!("{line}");
        }
        if let Ok(mut t) = tail.lock() {
            if t.len() == TAIL_LINES {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
}

/// "it was killed by SIGSEGV (a crash in the driver or the kernel)", "it exited with code 3".
pub(crate) fn ended_by(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        return format!(
            "its worker process was killed by {} ({})",
            signal_name(sig),
            signal_meaning(sig)
        );
    }
    match status.code() {
        Some(0) => "its worker process ended".to_string(),
        Some(c) => format!("its worker process exited with code {c}"),
        None => "its worker process ended".to_string(),
    }
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

fn signal_meaning(sig: i32) -> &'static str {
    match sig {
        11 | 7 => {
            "a memory access outside what the process owns: on a CPU driver the kernel \
                   runs in the process, so an out-of-bounds access there is this"
        }
        6 => {
            "an abort: on a CPU driver, often the C library finding its heap corrupted by a \
              kernel's out-of-bounds write"
        }
        4 => "an illegal instruction",
        8 => "an arithmetic fault",
        9 => "killed from outside, by blocksweep after a deadline or by the system for memory",
        _ => "a signal",
    }
}
