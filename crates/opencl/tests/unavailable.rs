//! Without OpenCL, probe() and open() return an Unavailable error with the reason; they never
//! panic or abort.
//!
//! The OpenCL library is loaded once per process, so each case runs this test binary again in
//! a child process whose environment lacks OpenCL, and there runs one ignored trial (the
//! "child"), which prints a marker when its assertions passed.

mod common;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use blocksweep_conformance::{ignored, skip, Completion, Harness};
use blocksweep_core::{BackendError, ErrorKind};
use blocksweep_opencl::{open, probe, OpenClError, OpenClOptions};
use common::{run_child, PASSED};

fn assert_unavailable(e: OpenClError, needle: &str) {
    assert!(matches!(e, OpenClError::Unavailable { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
    assert_eq!(BackendError::from(e).kind, ErrorKind::Unavailable);
}

fn no_platforms_is_unavailable() {
    let exe = std::env::current_exe().unwrap();
    // ocl-icd reads OCL_ICD_VENDORS, the Khronos loader OCL_ICD_FILENAMES / OPENCL_VENDOR_PATH.
    run_child(
        Command::new(exe)
            .env("OCL_ICD_VENDORS", "/nonexistent")
            .env("OPENCL_VENDOR_PATH", "/nonexistent")
            .env_remove("OCL_ICD_FILENAMES"),
        "child_no_platforms",
    );
}

fn child_no_platforms() {
    assert_unavailable(probe().unwrap_err(), "no OpenCL platforms");
    assert_unavailable(
        open(0, &OpenClOptions::default()).err().unwrap(),
        "no OpenCL platforms",
    );
    println!("{PASSED}");
}

/// The file libOpenCL.so.1 resolves to, as this process loaded it.
fn loaded_library() -> Option<PathBuf> {
    let _ = probe(); // loads the library, if there is one
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("libOpenCL.so"))
        .map(PathBuf::from)
}

fn missing_library_is_unavailable() -> Completion {
    let exe = std::env::current_exe().unwrap();
    let Some(lib) = loaded_library() else {
        // Nothing to hide: the library is missing already.
        run_child(&mut Command::new(exe), "child_missing_library");
        return Completion::Completed;
    };
    // Hide the library from the child only: a private mount namespace (unprivileged, through
    // a user namespace) where /dev/null is bind-mounted over it, so dlopen fails.
    let namespaces = Command::new("unshare").args(["-rm", "true"]).status();
    if !namespaces.is_ok_and(|s| s.success()) {
        return skip("unshare -rm is not permitted here, so libOpenCL cannot be hidden");
    }
    run_child(
        Command::new("unshare")
            .args([
                "-rm",
                "sh",
                "-c",
                "mount --bind /dev/null \"$1\" && shift && exec \"$@\"",
                "sh",
            ])
            .arg(&lib)
            .arg(&exe),
        "child_missing_library",
    );
    Completion::Completed
}

fn child_missing_library() {
    assert_unavailable(probe().unwrap_err(), "libOpenCL.so.1 could not be loaded");
    assert_unavailable(
        open(0, &OpenClOptions::default()).err().unwrap(),
        "libOpenCL.so.1",
    );
    println!("{PASSED}");
}

fn main() -> ExitCode {
    Harness::new()
        .test("no_platforms_is_unavailable", no_platforms_is_unavailable)
        .test(
            "missing_library_is_unavailable",
            missing_library_is_unavailable,
        )
        .test(ignored("child_no_platforms"), child_no_platforms)
        .test(ignored("child_missing_library"), child_missing_library)
        .run()
}
