//! A driver that prints on the process's own stderr (PoCL's compiler: "1 error generated.";
//! Mesa's Vulkan WSI under wgpu: "XDG_RUNTIME_DIR is invalid or not set") says nothing a user
//! can act on there. [`quieted`] runs a call with fd 2 sent to a scratch file, then passes on
//! every line the caller's filter keeps. One redirect at a time for the whole process, whichever
//! backend asks: two at once would save one's scratch file as "stderr" and lose stderr for good.

use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

static REDIRECT: Mutex<()> = Mutex::new(());

/// Runs `f` with the process's stderr captured; what was printed there meanwhile, less the
/// lines `noise` names, is written to stderr afterwards.
pub fn quieted<T>(noise: fn(&str) -> bool, f: impl FnOnce() -> T) -> T {
    let _one_at_a_time = REDIRECT.lock().unwrap_or_else(|p| p.into_inner());
    let Ok(mut scratch) = tempfile::tempfile() else {
        return f();
    };
    // SAFETY: dup takes only an integer and returns a new descriptor, owned here; fd 2 exists
    // for the whole process. Every return below restores fd 2 (a panic in `f` would leave it on
    // the scratch file: lost output, not unsoundness).
    let saved = unsafe { libc::dup(2) };
    if saved < 0 {
        return f();
    }
    // SAFETY: dup2 takes only integers; `scratch` is open for the call, and fd 2 is replaced only
    // while REDIRECT is held, by this function.
    if unsafe { libc::dup2(scratch.as_raw_fd(), 2) } < 0 {
        // SAFETY: `saved` is the duplicate made above, owned by this function alone and closed
        // once.
        unsafe { libc::close(saved) };
        return f();
    }
    let value = f();
    // SAFETY: `saved` is still open (owned here): it puts the original stderr back on fd 2, then
    // is closed once.
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    let mut said = String::new();
    if scratch.rewind().is_ok() && scratch.read_to_string(&mut said).is_ok() {
        let kept = kept_lines(&said, noise);
        if !kept.is_empty() {
            let _ = std::io::stderr().write_all(kept.as_bytes());
        }
    }
    value
}

/// `text` without the lines `noise` names (each judged trimmed).
fn kept_lines(text: &str, noise: fn(&str) -> bool) -> String {
    text.lines()
        .filter(|l| !noise(l.trim()))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_lines_are_dropped() {
        let noise: fn(&str) -> bool = |l| l.starts_with("noise");
        assert_eq!(
            kept_lines("noise 1\n  real words \nnoise\n", noise),
            "  real words \n"
        );
    }
}
