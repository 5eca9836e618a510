//! OutputTarget against real files of every kind, and real signals sent to a child process.

use super::*;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// A fresh directory under the system's temp dir, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d =
            std::env::temp_dir().join(format!("blocksweep-output-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
    /// Names in the directory that look like temporary files.
    fn temps(&self) -> Vec<String> {
        fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn pipe() -> (File, RawFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: pipe succeeded, so `fds[0]` is a new descriptor owned by nothing else; the File takes
    // it.
    (unsafe { File::from_raw_fd(fds[0]) }, fds[1])
}

#[test]
fn a_regular_file_is_replaced_whole_keeping_its_mode() {
    let d = Dir::new("regular");
    let p = d.join("run.json");
    fs::write(&p, "old report, longer than the new one").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
    let inode = fs::metadata(&p).unwrap().ino();
    let t = OutputTarget::check(&p).unwrap();
    assert!(t.is_atomic());
    assert!(d.temps().is_empty(), "the check leaves nothing behind");
    t.write(b"new").unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "new");
    let m = fs::metadata(&p).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o640);
    assert_ne!(m.ino(), inode, "a new file was renamed into place");
    assert!(d.temps().is_empty());
    assert!(!cleanup::registered().iter().any(|t| t.starts_with(&d.0)));
    // A file that does not exist yet, in an existing directory; rewritten twice.
    let q = d.join("new.md");
    let t = OutputTarget::check(&q).unwrap();
    assert!(!q.exists(), "the check creates no output");
    t.write(b"row 1\n").unwrap();
    t.write(b"row 1\nrow 2\n").unwrap();
    assert_eq!(fs::read_to_string(&q).unwrap(), "row 1\nrow 2\n");
}

#[test]
fn a_bare_file_name_is_in_the_current_directory() {
    let t = OutputTarget::check(Path::new("no-such-bare-name-blocksweep.json")).unwrap();
    assert_eq!(
        t.how,
        How::Atomic {
            file: PathBuf::from("no-such-bare-name-blocksweep.json")
        }
    );
}

#[test]
fn symlinks_are_followed_and_survive() {
    let d = Dir::new("symlink");
    let real = d.join("real.json");
    fs::write(&real, "old").unwrap();
    // A relative link, and a link to that link.
    std::os::unix::fs::symlink("real.json", d.join("link.json")).unwrap();
    std::os::unix::fs::symlink(d.join("link.json"), d.join("link2.json")).unwrap();
    let t = OutputTarget::check(&d.join("link2.json")).unwrap();
    assert_eq!(t.how, How::Atomic { file: real.clone() });
    t.write(b"new").unwrap();
    assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    for l in ["link.json", "link2.json"] {
        assert!(fs::symlink_metadata(d.join(l))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // A dangling link: its target is created, the link stays a link.
    std::os::unix::fs::symlink("later.json", d.join("dangling.json")).unwrap();
    OutputTarget::check(&d.join("dangling.json"))
        .unwrap()
        .write(b"made")
        .unwrap();
    assert_eq!(fs::read_to_string(d.join("later.json")).unwrap(), "made");
    assert!(fs::symlink_metadata(d.join("dangling.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    // A loop is refused.
    std::os::unix::fs::symlink("loop-b", d.join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", d.join("loop-b")).unwrap();
    let e = OutputTarget::check(&d.join("loop-a")).unwrap_err();
    assert!(e.contains("symbolic links"), "{e}");
    assert!(d.temps().is_empty());
}

#[test]
fn a_fifo_is_written_through_and_stays_a_fifo() {
    let d = Dir::new("fifo");
    let p = d.join("results.fifo");
    mkfifo(&p);
    let t = OutputTarget::check(&p).unwrap();
    assert!(!t.is_atomic());
    let reader = {
        let p = p.clone();
        std::thread::spawn(move || fs::read_to_string(p).unwrap())
    };
    t.write(b"api,block\n").unwrap();
    assert_eq!(reader.join().unwrap(), "api,block\n");
    assert!(fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
    assert!(d.temps().is_empty());
}

#[test]
fn dev_null_stays_a_character_device() {
    let t = OutputTarget::check(Path::new("/dev/null")).unwrap();
    assert!(!t.is_atomic());
    t.write(b"discarded").unwrap();
    let m = fs::symlink_metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device());
    assert_eq!(m.rdev(), libc::makedev(1, 3));
}

#[test]
fn dev_full_is_a_write_error_naming_the_cause() {
    let t = OutputTarget::check(Path::new("/dev/full")).unwrap();
    let e = t.write(b"x").unwrap_err();
    assert_eq!(e, "cannot write /dev/full: No space left on device");
}

#[test]
fn own_descriptors_are_written_where_they_point() {
    // What `-o >(gzip > x.gz)` and `-o /dev/stdout` hand over: /dev/fd/N, /proc/self/fd/N.
    let (mut read, w) = pipe();
    for path in [format!("/proc/self/fd/{w}"), format!("/dev/fd/{w}")] {
        let t = OutputTarget::check(Path::new(&path)).unwrap();
        assert_eq!(t.how, How::Fd(w), "{path}");
        t.write(path.as_bytes()).unwrap();
    }
    // SAFETY: `w` is the write end `pipe` left unowned; it is closed once, here, so that the read
    // below sees end of file.
    unsafe { libc::close(w) };
    let mut got = String::new();
    read.read_to_string(&mut got).unwrap();
    assert_eq!(got, format!("/proc/self/fd/{w}/dev/fd/{w}"));
    assert_eq!(
        OutputTarget::check(Path::new("/dev/stdout")).unwrap().how,
        How::Fd(1)
    );
    // A descriptor open for reading only is refused.
    let f = File::open("/dev/null").unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    let e = OutputTarget::check(Path::new(&format!("/proc/self/fd/{fd}"))).unwrap_err();
    assert!(
        e.ends_with(&format!("file descriptor {fd} is open for reading only")),
        "{e}"
    );
}

#[test]
fn directories_and_missing_directories_are_refused() {
    let d = Dir::new("dirs");
    let e = OutputTarget::check(&d.0).unwrap_err();
    assert!(e.contains("it is a directory"), "{e}");
    let slash = format!("{}/", d.0.display());
    let e = OutputTarget::check(Path::new(&slash)).unwrap_err();
    assert!(e.contains("it is a directory"), "{e}");
    let e = OutputTarget::check(&d.join("no-such-dir/run.json")).unwrap_err();
    assert_eq!(
        e,
        format!(
            "cannot write {0}/no-such-dir/run.json: directory {0}/no-such-dir does not exist",
            d.0.display()
        )
    );
    fs::write(d.join("file"), "").unwrap();
    let e = OutputTarget::check(&d.join("file/run.json")).unwrap_err();
    assert!(e.ends_with("Not a directory"), "{e}");
    let e = OutputTarget::check(Path::new("no-such-dir-blocksweep/")).unwrap_err();
    assert!(e.contains("names a directory"), "{e}");
    assert!(d.temps().is_empty());
}

#[test]
fn kernel_files_name_the_real_cause() {
    // /proc/version exists; what fails is creating a file in /proc, and the message says so
    // (it used to say "No such file or directory").
    let e = OutputTarget::check(Path::new("/proc/version")).unwrap_err();
    assert_eq!(
        e,
        "cannot write /proc/version: /proc/version is in the kernel's /proc file system, \
         where no file can be created or replaced"
    );
    let e = OutputTarget::check(Path::new("/sys/new.json")).unwrap_err();
    assert!(e.contains("/sys file system"), "{e}");
}

#[test]
fn sockets_are_refused() {
    let d = Dir::new("socket");
    let p = d.join("s.sock");
    let _l = std::os::unix::net::UnixListener::bind(&p).unwrap();
    let e = OutputTarget::check(&p).unwrap_err();
    assert!(
        e.ends_with("it is a socket, which cannot be opened for writing"),
        "{e}"
    );
}

#[test]
fn a_failed_rename_leaves_no_temporary_file() {
    let d = Dir::new("rename");
    let p = d.join("run.json");
    let t = OutputTarget::check(&p).unwrap();
    // Between the check and the write, someone makes a directory of that name.
    fs::create_dir(&p).unwrap();
    fs::write(p.join("keep"), "").unwrap();
    let e = t.write(b"x").unwrap_err();
    assert!(e.contains("renaming"), "{e}");
    assert!(d.temps().is_empty(), "{:?}", d.temps());
    assert!(!cleanup::registered().iter().any(|t| t.starts_with(&d.0)));
}

/// The child's part of the signal tests, in the process [`interrupt_a_write`] starts (the same
/// test, BLOCKSWEEP_TEST_TARGET set): writes over the target, pausing between the fsynced
/// temporary file and the rename. Returns false in the parent, which goes on as the test.
fn as_signal_child() -> bool {
    let Some(target) = std::env::var_os("BLOCKSWEEP_TEST_TARGET") else {
        return false;
    };
    let t = OutputTarget::check(Path::new(&target)).unwrap();
    PAUSE_BEFORE_RENAME_MS.store(60_000, std::sync::atomic::Ordering::SeqCst);
    t.write(b"new complete report").unwrap();
    println!("NOT INTERRUPTED");
    true
}

/// Starts the test `test` again as the child writing over `target` ([`as_signal_child`]),
/// waits until it holds its temporary file, then sends `sig`; returns how the child ended.
fn interrupt_a_write(target: &Path, sig: i32, test: &str) -> std::process::ExitStatus {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("output::target::tests::{test}"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BLOCKSWEEP_TEST_TARGET", target)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // libtest prints "test NAME ... " before the test's own output, on the same line.
    let paused = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find_map(|l| l.split_once("PAUSED ").map(|(_, p)| p.to_string()))
        .expect("the child reaches its pause");
    let tmp = PathBuf::from(paused);
    assert!(
        tmp.exists(),
        "the temporary file is there before the signal"
    );
    assert_eq!(
        fs::read(&tmp).unwrap(),
        b"new complete report",
        "and complete"
    );
    // SAFETY: kill takes only integers; `child` has not been waited for, so its pid is still its
    // own.
    unsafe { libc::kill(child.id() as i32, sig) };
    let status = child.wait().unwrap();
    assert!(!tmp.exists(), "{} left behind", tmp.display());
    status
}

#[test]
fn sigterm_between_write_and_rename_removes_the_temporary_file() {
    if as_signal_child() {
        return;
    }
    let d = Dir::new("sigterm");
    let p = d.join("run.json");
    fs::write(&p, "old").unwrap();
    let test = "sigterm_between_write_and_rename_removes_the_temporary_file";
    let status = interrupt_a_write(&p, libc::SIGTERM, test);
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_eq!(
        fs::read_to_string(&p).unwrap(),
        "old",
        "the target is untouched"
    );
    assert!(d.temps().is_empty(), "{:?}", d.temps());
}

#[test]
fn sigint_between_write_and_rename_removes_the_temporary_file() {
    if as_signal_child() {
        return;
    }
    let d = Dir::new("sigint");
    let p = d.join("new.csv");
    let test = "sigint_between_write_and_rename_removes_the_temporary_file";
    let status = interrupt_a_write(&p, libc::SIGINT, test);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert!(!p.exists(), "no half file appears");
    assert!(d.temps().is_empty(), "{:?}", d.temps());
}

fn check_permissions(d: &Path) {
    let e = OutputTarget::check(&d.join("locked/new.json")).unwrap_err();
    assert_eq!(
        e,
        format!(
            "cannot write {0}/locked/new.json: a temporary file cannot be created in \
             {0}/locked (Permission denied) to replace it atomically",
            d.display()
        )
    );
    let e = OutputTarget::check(&d.join("open/ro.json")).unwrap_err();
    assert_eq!(
        e,
        format!(
            "cannot write {}/open/ro.json: Permission denied",
            d.display()
        )
    );
    OutputTarget::check(&d.join("open/new.json")).unwrap();
}

#[test]
fn permission_denied_names_the_cause() {
    // The child's part: this test again, as an unprivileged user (as root every permission
    // check passes), in the directory the parent made.
    if let Some(d) = std::env::var_os("BLOCKSWEEP_TEST_PERM_DIR") {
        check_permissions(Path::new(&d));
        println!("PERMISSION-CHECKS-RAN");
        return;
    }
    let d = Dir::new("perm");
    fs::set_permissions(&d.0, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir(d.join("locked")).unwrap();
    fs::set_permissions(d.join("locked"), fs::Permissions::from_mode(0o555)).unwrap();
    fs::create_dir(d.join("open")).unwrap();
    fs::set_permissions(d.join("open"), fs::Permissions::from_mode(0o777)).unwrap();
    fs::write(d.join("open/ro.json"), "old").unwrap();
    fs::set_permissions(d.join("open/ro.json"), fs::Permissions::from_mode(0o444)).unwrap();
    // SAFETY: geteuid takes nothing and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        check_permissions(&d.0);
        return;
    }
    // As root, drop to nobody for the checks (util-linux's setpriv).
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "output::target::tests::permission_denied_names_the_cause",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("BLOCKSWEEP_TEST_PERM_DIR", &d.0)
        .output();
    let Ok(out) = out else {
        blocksweep_conformance::note_skip(
            "setpriv is not installed; as root the permission checks need it to drop to nobody",
        );
        return;
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("PERMISSION-CHECKS-RAN"), "{text}");
}
