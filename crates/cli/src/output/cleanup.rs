//! The temporary files of atomic writes in flight, and what removes them when the process is
//! told to stop (SIGINT, SIGTERM, SIGHUP) between writing one and renaming it.
//!
//! The signal handler itself does nothing but wake a watcher thread (signal-hook's iterator: a
//! self-pipe, async-signal-safe). The watcher takes the registry's lock for good, unlinks every
//! registered temporary file, and ends the process with the signal's default action (so the
//! parent sees "killed by SIGTERM", `$?` = 143 in a shell; 130 for SIGINT). Creating a
//! temporary file and renaming it both happen under the same lock, so either the rename has
//! happened (the target is the complete new file) or it never will (the target stays the old
//! file): the watcher cannot interleave with either step.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();
/// What the output files hold, said on stderr when a signal ends the run ("5 rows kept in
/// int.json"): the files were rewritten after every row, and a silent exit hid that.
static KEPT: Mutex<Option<String>> = Mutex::new(None);
/// Held while the files are rewritten and `KEPT` updated, so that what a signal says matches
/// what the files hold (the signal waits for the one save in progress).
static SAVING: Mutex<()> = Mutex::new(());

pub(super) fn saving() -> MutexGuard<'static, ()> {
    SAVING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets what a signal's last words say was kept (and starts the watcher).
pub(super) fn set_kept(note: String) {
    install();
    *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some(note);
}

fn temps() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the watcher, once. Without it (signal-hook refused) the signals keep their default
/// action, as before: the write itself still works.
pub(super) fn install() {
    INSTALL.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("output-cleanup".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    die_of(sig);
                }
            });
    });
}

fn die_of(sig: i32) -> ! {
    // Both held until the process is gone: no save is under way, and no temporary file is
    // created or renamed after this (the order of `saving` and then `temps`, as in a save).
    let _saving = saving();
    let guard = temps();
    for p in guard.iter() {
        let _ = fs::remove_file(p);
    }
    if let Some(kept) = KEPT.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        let what = match sig {
            SIGINT => "interrupted",
            SIGTERM => "terminated",
            _ => "hung up",
        };
        // On a terminal, over the progress bar's line rather than after it.
        let clear = match io::IsTerminal::is_terminal(&io::stderr()) {
            true => "\r\x1b[2K",
            false => "",
        };
        super::stdio::eprint_line(&format!("{clear}blocksweep: {what}: {kept}"));
    }
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    signal_hook::low_level::exit(128 + sig)
}

/// Creates `tmp` (new, for writing, with `mode` before the umask), registered for removal on a
/// signal. A stale file of that name (a dead process with the same id) is replaced.
pub(super) fn create_temp(tmp: &Path, mode: u32) -> io::Result<File> {
    install();
    let mut guard = temps();
    guard.push(tmp.to_path_buf());
    let open = || {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(tmp)
    };
    let r = match open() {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(tmp).and_then(|()| open())
        }
        r => r,
    };
    if r.is_err() {
        guard.retain(|p| p != tmp);
    }
    r
}

/// Renames `tmp` onto `target` and forgets it; on failure removes it.
pub(super) fn rename_temp(tmp: &Path, target: &Path) -> io::Result<()> {
    let mut guard = temps();
    let r = fs::rename(tmp, target);
    if r.is_err() {
        let _ = fs::remove_file(tmp);
    }
    guard.retain(|p| p != tmp);
    r
}

/// Removes `tmp` and forgets it.
pub(super) fn discard_temp(tmp: &Path) {
    let mut guard = temps();
    let _ = fs::remove_file(tmp);
    guard.retain(|p| p != tmp);
}

/// Removes every registered temporary file (before an early exit).
pub(super) fn remove_all() {
    let mut guard = temps();
    for p in guard.drain(..) {
        let _ = fs::remove_file(p);
    }
}

#[cfg(test)]
pub(super) fn registered() -> Vec<PathBuf> {
    temps().clone()
}
