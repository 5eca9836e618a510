//! An output path (`--output`, `--plot`), checked before anything is measured and written
//! the way its kind of file needs.
//!
//! | what the path is (symlinks followed)              | check                      | write                                  |
//! |---------------------------------------------------|----------------------------|----------------------------------------|
//! | regular file, or none yet in an existing directory | a temporary file can be made beside it; an existing file is writable | temporary file, fsync, rename, fsync of the directory |
//! | this process's descriptor: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N (`>(...)`) | open for writing | written to that descriptor, at its offset |
//! | FIFO, character device (/dev/null, a terminal)     | writable                   | opened for writing (no create, no truncate), written |
//! | another process's /proc/PID/fd/N                   | writable                   | opened through the link (truncated if a regular file) |
//! | directory, block device, socket, missing directory, /proc or /sys file | refused, one line naming why | |

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{cleanup, describe};

/// A checked output path; see the module doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTarget {
    /// The path as given, for messages.
    shown: PathBuf,
    how: How,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum How {
    /// Replaced atomically: `file` is the final path after following symlinks.
    Atomic { file: PathBuf },
    /// One of this process's open descriptors.
    Fd(RawFd),
    /// Opened for writing through `path`; `truncate` only for a regular file reached through
    /// another process's /proc/PID/fd link.
    Through { path: PathBuf, truncate: bool },
}

/// What a path leads to once ordinary symlinks are followed.
enum Resolved {
    Missing(PathBuf),
    Existing(PathBuf, fs::Metadata),
    OwnFd(RawFd),
    /// A procfs "magic" link of another process: only `open` can follow it.
    Magic(PathBuf, fs::Metadata),
}

/// Linux's limit on symlinks followed in one lookup.
const MAX_LINKS: usize = 40;

#[cfg(test)]
pub(super) static PAUSE_BEFORE_RENAME_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

impl OutputTarget {
    /// Checks `path` for writing; `Err` is one line naming the path and the cause.
    pub fn check(path: &Path) -> Result<OutputTarget, String> {
        let shown = path.display().to_string();
        let fail = |why: String| format!("cannot write {shown}: {why}");
        if path.as_os_str().is_empty() {
            return Err("an output path is empty".into());
        }
        if path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(fail(if path.is_dir() {
                "it is a directory; give a file name in it, e.g. run.json".into()
            } else {
                "a path ending in '/' names a directory, not a file".into()
            }));
        }
        let how = match resolve(path).map_err(|e| fail(describe(&e)))? {
            Resolved::OwnFd(fd) => {
                check_fd(fd).map_err(fail)?;
                How::Fd(fd)
            }
            Resolved::Magic(p, meta) => {
                access_w(&p).map_err(|e| fail(describe(&e)))?;
                How::Through {
                    path: p,
                    truncate: meta.is_file(),
                }
            }
            Resolved::Existing(p, meta) => {
                let t = meta.file_type();
                if t.is_dir() {
                    return Err(fail(
                        "it is a directory; give a file name in it, e.g. run.json".into(),
                    ));
                } else if t.is_file() {
                    check_atomic(&p, true).map_err(fail)?;
                    How::Atomic { file: p }
                } else if t.is_fifo() || t.is_char_device() {
                    access_w(&p).map_err(|e| fail(describe(&e)))?;
                    How::Through {
                        path: p,
                        truncate: false,
                    }
                } else if t.is_block_device() {
                    return Err(fail(
                        "it is a block device; results go to files, FIFOs or character devices"
                            .into(),
                    ));
                } else if t.is_socket() {
                    return Err(fail(
                        "it is a socket, which cannot be opened for writing".into(),
                    ));
                } else {
                    return Err(fail("it is not a file blocksweep can write".into()));
                }
            }
            Resolved::Missing(p) => {
                let dir = parent(&p);
                match fs::metadata(dir) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => return Err(fail(format!("{} is not a directory", dir.display()))),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        return Err(fail(format!("directory {} does not exist", dir.display())))
                    }
                    Err(e) => return Err(fail(format!("{}: {}", dir.display(), describe(&e)))),
                }
                check_atomic(&p, false).map_err(fail)?;
                How::Atomic { file: p }
            }
        };
        Ok(OutputTarget {
            shown: path.to_path_buf(),
            how,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// True for a regular file: it is replaced whole by every [`write`](Self::write), so it
    /// may be rewritten as often as wanted (after every row). A write-through target (FIFO,
    /// device, descriptor) gets each write appended to what it already received: write it once.
    pub fn is_atomic(&self) -> bool {
        matches!(self.how, How::Atomic { .. })
    }

    /// Writes `bytes`: atomically for a regular file, else through. `Err` is one line naming
    /// the path. A closed stdout (`-o /dev/stdout | head`) ends the process quietly.
    pub fn write(&self, bytes: &[u8]) -> Result<(), String> {
        let fail = |why: String| format!("cannot write {}: {why}", self.shown.display());
        match &self.how {
            How::Atomic { file } => write_atomic(file, bytes).map_err(fail),
            How::Fd(1) => super::stdio::write_stdout(bytes).map_err(|e| fail(describe(&e))),
            How::Fd(fd) => {
                // Borrowed: the descriptor stays open for whoever else writes to it.
                // SAFETY: `fd` passed `check_fd` (open, for writing) when this target was made, and
                // the ManuallyDrop keeps the borrowed File from closing it, so ownership never
                // really moves.
                let mut f = ManuallyDrop::new(unsafe { File::from_raw_fd(*fd) });
                f.write_all(bytes).map_err(|e| fail(describe_write(&e)))
            }
            How::Through { path, truncate } => {
                let mut f = OpenOptions::new()
                    .write(true)
                    .truncate(*truncate)
                    .custom_flags(libc::O_NOCTTY)
                    .open(path)
                    .map_err(|e| fail(describe(&e)))?;
                f.write_all(bytes).map_err(|e| fail(describe_write(&e)))
            }
        }
    }
}

fn describe_write(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::BrokenPipe {
        "its reader has closed it (Broken pipe)".into()
    } else {
        describe(e)
    }
}

/// The directory a path's file is in ("." for a bare name).
fn parent(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Follows symlinks one at a time (so that the final path, not the link, is what gets
/// replaced), stopping at this process's descriptors and at procfs's magic links.
fn resolve(path: &Path) -> io::Result<Resolved> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = own_fd(&p) {
            return Ok(Resolved::OwnFd(fd));
        }
        let meta = match fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Resolved::Missing(p)),
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_symlink() {
            return Ok(Resolved::Existing(p, meta));
        }
        if fs_magic(parent(&p)) == Some(FsKind::Proc) {
            // /proc/PID/fd/N, /proc/PID/cwd, ...: the text of the link ("pipe:[123]") is no
            // path; the kernel follows it on open.
            let meta = fs::metadata(&p)?;
            return Ok(Resolved::Magic(p, meta));
        }
        let to = fs::read_link(&p)?;
        p = if to.is_absolute() {
            to
        } else {
            parent(&p).join(to)
        };
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// `N` when `p` is /proc/self/fd/N, `/proc/<this pid>/fd/N`, /proc/thread-self/fd/N (or
/// /dev/fd/N, /dev/stdout, which lead there).
fn own_fd(p: &Path) -> Option<RawFd> {
    let n: RawFd = p.file_name()?.to_str()?.parse().ok()?;
    let dir = fs::canonicalize(p.parent()?).ok()?;
    let pid = std::process::id().to_string();
    let mine = Path::new("/proc").join(&pid).join("fd");
    let thread = dir.starts_with(Path::new("/proc").join(&pid).join("task"))
        && dir.ends_with("fd")
        && dir.components().count() == 6;
    (dir == mine || thread).then_some(n)
}

fn check_fd(fd: RawFd) -> Result<(), String> {
    // SAFETY: F_GETFL takes no argument and reads only the descriptor's flags; an fd that is not
    // open gives -1 (EBADF), handled below.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(format!("file descriptor {fd} is not open"));
    }
    match flags & libc::O_ACCMODE {
        libc::O_WRONLY | libc::O_RDWR => Ok(()),
        _ => Err(format!("file descriptor {fd} is open for reading only")),
    }
}

fn access_w(p: &Path) -> io::Result<()> {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated path that outlives the call, which only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FsKind {
    Proc,
    Sys,
    Other,
}

/// The kind of file system `dir` is on (procfs and sysfs hold no results files).
fn fs_magic(dir: &Path) -> Option<FsKind> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: libc::statfs is plain integers and arrays, for which all zero bytes are a valid
    // value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a statfs owned here; both outlive the call,
    // which writes only `st`.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // f_type and the magic numbers differ in width between targets: compare them as i64.
    #[allow(clippy::unnecessary_cast)]
    let (t, proc_magic, sys_magic) = (
        st.f_type as i64,
        libc::PROC_SUPER_MAGIC as i64,
        libc::SYSFS_MAGIC as i64,
    );
    Some(if t == proc_magic {
        FsKind::Proc
    } else if t == sys_magic {
        FsKind::Sys
    } else {
        FsKind::Other
    })
}

/// `file`'s name, for its temporary file's (`.NAME.XXXXXX.tmp`).
fn file_name(file: &Path) -> String {
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into())
}

/// Whether `file` can be replaced atomically: not on procfs or sysfs, writable if it exists,
/// and a temporary file can be created beside it (made and removed at once).
fn check_atomic(file: &Path, exists: bool) -> Result<(), String> {
    let dir = parent(file);
    match fs_magic(dir) {
        Some(FsKind::Proc) => {
            return Err(format!(
                "{} is in the kernel's /proc file system, where no file can be created or replaced",
                file.display()
            ))
        }
        Some(FsKind::Sys) => {
            return Err(format!(
                "{} is in the kernel's /sys file system, where no file can be created or replaced",
                file.display()
            ))
        }
        _ => {}
    }
    if exists {
        access_w(file).map_err(|e| describe(&e))?;
    }
    match cleanup::create_temp(dir, &file_name(file), 0o600) {
        Ok(_dropped_and_removed) => Ok(()),
        Err(e) => Err(format!(
            "a temporary file cannot be created in {} ({}) to replace it atomically",
            dir.display(),
            describe(&e)
        )),
    }
}

/// Temporary file beside `file` (tempfile's), written, fsynced, renamed over `file` (its
/// `persist`), directory fsynced. The temporary file is listed for removal on SIGINT/SIGTERM/
/// SIGHUP and removed on any failure; `file` is always either the old file or the new one.
fn write_atomic(file: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = parent(file);
    // Keep an existing file's permission bits (the umask would narrow them).
    let keep = fs::metadata(file)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777);
    let mut tmp =
        cleanup::create_temp(dir, &file_name(file), keep.unwrap_or(0o666)).map_err(|e| {
            format!(
                "cannot create a temporary file in {} ({})",
                dir.display(),
                describe(&e)
            )
        })?;
    let written = (|| -> io::Result<()> {
        let f = tmp.file();
        f.write_all(bytes)?;
        if let Some(mode) = keep {
            f.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        f.sync_all()
    })();
    // Dropping `tmp` removes it.
    written.map_err(|e| describe(&e))?;
    #[cfg(test)]
    {
        let ms = PAUSE_BEFORE_RENAME_MS.load(std::sync::atomic::Ordering::SeqCst);
        if ms > 0 {
            println!("PAUSED {}", tmp.path().display());
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }
    let shown = tmp.path().display().to_string();
    tmp.persist(file)
        .map_err(|e| format!("renaming {shown} onto it failed ({})", describe(&e)))?;
    // The rename is durable once the directory is; some file systems refuse a directory
    // fsync (EINVAL), which changes nothing about the file itself.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;
