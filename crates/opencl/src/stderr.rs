//! PoCL's compiler (clang, in the process) prints its diagnostic count ("1 error generated.")
//! on the process's own stderr, beside the build log where the diagnostics themselves are.
//! A build runs with fd 2 sent to a scratch file; the count lines are dropped, anything else
//! is passed on to stderr unchanged.

use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::sync::Mutex;

/// fd 2 is the process's: two builds on two threads must not redirect it at once (the second
/// would save the first's scratch file as "stderr" and restore it, losing stderr for good).
static REDIRECT: Mutex<()> = Mutex::new(());

/// Runs `f` with the process's stderr captured; what `f`'s drivers printed there, less
/// clang's diagnostic counts, is written to stderr afterwards.
pub(crate) fn quieted<T>(f: impl FnOnce() -> T) -> T {
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
    // SAFETY: `saved` is still open (owned here): it puts the original stderr back on fd 2, then is
    // closed once.
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    let mut said = String::new();
    if scratch.rewind().is_ok() && scratch.read_to_string(&mut said).is_ok() {
        let kept = without_counts(&said);
        if !kept.is_empty() {
            let _ = std::io::stderr().write_all(kept.as_bytes());
        }
    }
    value
}

/// `text` without clang's "N error(s) [and M warning(s)] generated." lines.
fn without_counts(text: &str) -> String {
    text.lines()
        .filter(|l| !is_count(l.trim()))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn is_count(line: &str) -> bool {
    let Some(rest) = line.strip_suffix(" generated.") else {
        return false;
    };
    rest.split(" and ").all(|part| {
        let mut words = part.split(' ');
        let number = words.next().is_some_and(|n| n.parse::<u64>().is_ok());
        let noun = words.next();
        number
            && matches!(noun, Some("error" | "errors" | "warning" | "warnings"))
            && words.next().is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_clangs_count_lines_are_dropped() {
        let text = "1 error generated.\n2 warnings generated.\n\
                    1 error and 3 warnings generated.\nreal driver words\n";
        assert_eq!(without_counts(text), "real driver words\n");
        assert!(!is_count("code generated."));
        assert!(!is_count("an error generated."));
    }
}
