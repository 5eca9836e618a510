//! The temporary files of atomic writes in flight (tempfile's, which removes them on drop), and
//! what removes them when the process is told to stop (SIGINT, SIGTERM, SIGHUP) between writing
//! one and renaming it: no destructor runs then, so tempfile alone would leave them behind.
//!
//! The signal handler itself does nothing but wake a watcher thread (signal-hook's iterator: a
//! self-pipe, async-signal-safe). The watcher takes the registry's lock for good, unlinks every
//! registered temporary file, and ends the process with the signal's default action (so the
//! parent sees "killed by SIGTERM", `$?` = 143 in a shell; 130 for SIGINT). Creating a
//! temporary file and renaming it both happen under the same lock, so either the rename has
//! happened (the target is the complete new file) or it never will (the target stays the old
//! file): the watcher cannot interleave with either step.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use tempfile::NamedTempFile;

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

/// A temporary file of an atomic write: tempfile's `NamedTempFile` (random name, created
/// exclusively, removed on drop), listed for the watcher from creation until it is renamed into
/// place or dropped, because a signal's exit runs no destructor.
pub(super) struct Temp(Option<NamedTempFile>);

/// Creates `.NAME.XXXXXX.tmp` in `dir` (with `mode` before the umask), listed for removal on a
/// signal.
pub(super) fn create_temp(dir: &Path, name: &str, mode: u32) -> io::Result<Temp> {
    install();
    let mut guard = temps();
    let f = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(without_path)?;
    guard.push(f.path().to_path_buf());
    Ok(Temp(Some(f)))
}

/// The system's reason alone: tempfile appends " at path DIR/.NAME.XXXXXX.tmp" to its errors,
/// and the messages built on this one name the directory already.
fn without_path(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => io::Error::new(e.kind(), &text[..i]),
        None => e,
    }
}

impl Temp {
    pub(super) fn path(&self) -> &Path {
        self.0.as_ref().map_or(Path::new(""), |f| f.path())
    }

    pub(super) fn file(&mut self) -> &mut File {
        self.0
            .as_mut()
            .expect("a Temp holds its file until persist")
            .as_file_mut()
    }

    /// Renames the file onto `target` (tempfile's `persist`) under the lock the watcher takes,
    /// so a signal sees it either before the rename or after; on failure the file is removed.
    pub(super) fn persist(mut self, target: &Path) -> io::Result<()> {
        let mut guard = temps();
        let Some(f) = self.0.take() else {
            return Ok(());
        };
        let path = f.path().to_path_buf();
        // A PersistError still holds the file: dropping it (here, under the lock) removes it.
        let r = f.persist(target).map(drop).map_err(|e| e.error);
        guard.retain(|p| *p != path);
        r
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            let mut guard = temps();
            let path = f.path().to_path_buf();
            drop(f);
            guard.retain(|p| *p != path);
        }
    }
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
