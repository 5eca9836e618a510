//! The Makefile's set-up targets, run for real with `make` against fake ICD directories, a fake
//! apt-get, a fake ldconfig and a fake cargo (scripts in a temporary directory that log how
//! they were called). They check that:
//!
//! - a driver found in ANY of the loader's directories means apt-get is never called (Debian
//!   ships an empty /etc/vulkan/icd.d beside the JSON files in /usr/share/vulkan/icd.d);
//! - a missing driver, loader library or test tool does call apt-get, and none of its output nor
//!   make's own messages reach stdout;
//! - `make sweep` prints on stdout exactly what the program prints, no echoed command;
//! - `make test` ends by counting the tests that were skipped, with their reasons, and keeps
//!   cargo's exit status;
//! - the APIs it installs CPU drivers for (which CI requires) are APIs of the provider list.
//!
//! The fakes are first on PATH too, so an older Makefile that hard-codes `apt-get` runs the fake
//! rather than the real one. BLOCKSWEEP_TEST_MAKEFILE=path runs these tests against another
//! Makefile (e.g. `git show HEAD~1:Makefile > /tmp/old.mk`) to see them fail on it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temporary directory, removed when dropped.
struct Sandbox(PathBuf);

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "blocksweep-makefile-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).unwrap();
        Sandbox(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// An empty directory (or an existing one) under the sandbox.
    fn dir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(&p).unwrap();
        p
    }

    /// A file with some content, its directories created.
    fn file(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }

    /// An executable shell script in the sandbox's bin/.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let p = self.file(&format!("bin/{name}"), &format!("#!/bin/sh\n{body}\n"));
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn makefile() -> PathBuf {
    match std::env::var_os("BLOCKSWEEP_TEST_MAKEFILE") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../Makefile"),
    }
}

/// What apt-get, ldconfig, the tools and cargo look like to make in one sandbox.
struct Fakes {
    sb: Sandbox,
    apt_log: PathBuf,
    ldconfig: PathBuf,
}

const APT_STDOUT: &str = "FAKE-APT-GET-STDOUT";
const APT_STDERR: &str = "FAKE-APT-GET-STDERR";

impl Fakes {
    /// Fakes for apt-get (logs its arguments, talks on stdout and stderr, succeeds), ldconfig
    /// (lists the loader libraries when `loaders` is true, nothing otherwise), the two test
    /// tools, and cargo (prints its arguments on stdout, like the program it would run).
    fn new(name: &str, loaders: bool) -> Fakes {
        let sb = Sandbox::new(name);
        let apt_log = sb.path("apt-get.log");
        sb.script(
            "apt-get",
            &format!(
                "echo \"$*\" >> '{}'\necho {APT_STDOUT}\necho {APT_STDERR} >&2",
                apt_log.display()
            ),
        );
        let listing = if loaders {
            "echo '2 libs found in cache'\n\
             printf '\\tlibvulkan.so.1 (libc6,x86-64) => /fake/libvulkan.so.1\\n'\n\
             printf '\\tlibOpenCL.so.1 (libc6,x86-64) => /fake/libOpenCL.so.1\\n'"
        } else {
            "echo '0 libs found in cache'"
        };
        let ldconfig = sb.script("ldconfig", listing);
        sb.script("glslangValidator", "exit 0");
        sb.script("spirv-val", "exit 0");
        sb.script("cargo", "echo \"PROGRAM-STDOUT $*\"");
        Fakes {
            sb,
            apt_log,
            ldconfig,
        }
    }

    /// Runs make on `targets` with the fakes first on PATH and in the Makefile's variables.
    /// `silent` adds -s. `vars` are further `NAME=value` overrides.
    fn make(&self, silent: bool, targets: &[&str], vars: &[(&str, String)]) -> Output {
        let path = format!(
            "{}:{}",
            self.sb.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("make");
        cmd.arg("-f").arg(makefile());
        if silent {
            cmd.arg("-s");
        }
        cmd.args(targets)
            .arg(format!("APT_GET={}", self.sb.path("bin/apt-get").display()))
            .arg(format!("LDCONFIG={}", self.ldconfig.display()))
            .arg(format!("CARGO={}", self.sb.path("bin/cargo").display()))
            .arg("SUDO=")
            .args(vars.iter().map(|(k, v)| format!("{k}={v}")))
            .current_dir(&self.sb.0)
            .env("PATH", path);
        // A surrounding `make test` must not pass its flags down; the driver-directory defaults
        // read these, and the overrides above replace them anyway.
        for v in [
            "MAKEFLAGS",
            "MFLAGS",
            "MAKELEVEL",
            "MAKEOVERRIDES",
            "OCL_ICD_VENDORS",
            "XDG_CONFIG_DIRS",
            "XDG_DATA_DIRS",
            "XDG_DATA_HOME",
        ] {
            cmd.env_remove(v);
        }
        cmd.output().expect("make runs (is make installed?)")
    }

    fn apt_calls(&self) -> Vec<String> {
        fs::read_to_string(&self.apt_log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The loader directories laid out like Debian's: Vulkan JSON in the second directory only
    /// (the first exists and is empty, the way /etc/vulkan/icd.d is), an OpenCL .icd file, the
    /// validation layer's manifest.
    fn installed_dirs(&self) -> Vec<(&'static str, String)> {
        self.sb.dir("etc/vulkan/icd.d");
        self.sb.file(
            "usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
            r#"{"ICD": {"library_path": "libvulkan_lvp.so"}}"#,
        );
        self.sb
            .file("etc/OpenCL/vendors/pocl.icd", "libpocl.so.2.11.0\n");
        self.sb.file(
            "usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json",
            "{}",
        );
        self.dirs()
    }

    /// The same directories, all empty (and one that does not exist at all).
    fn empty_dirs(&self) -> Vec<(&'static str, String)> {
        for d in [
            "etc/vulkan/icd.d",
            "usr/share/vulkan/icd.d",
            "etc/OpenCL/vendors",
            "usr/share/vulkan/explicit_layer.d",
        ] {
            self.sb.dir(d);
        }
        self.dirs()
    }

    fn dirs(&self) -> Vec<(&'static str, String)> {
        let p = |r: &str| self.sb.path(r).display().to_string();
        vec![
            (
                "VULKAN_ICD_DIRS",
                format!(
                    "{} {} {}",
                    p("etc/vulkan/icd.d"),
                    p("does/not/exist"),
                    p("usr/share/vulkan/icd.d")
                ),
            ),
            ("OPENCL_VENDOR_DIRS", p("etc/OpenCL/vendors")),
            (
                "VULKAN_LAYER_DIRS",
                format!(
                    "{} {}",
                    p("etc/vulkan/explicit_layer.d"),
                    p("usr/share/vulkan/explicit_layer.d")
                ),
            ),
        ]
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn describe(out: &Output) -> String {
    format!(
        "status {}\n--- stdout ---\n{}--- stderr ---\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

#[test]
fn drivers_in_any_icd_directory_need_no_apt_get() {
    let f = Fakes::new("present", true);
    let vars = f.installed_dirs();
    for silent in [true, false] {
        let out = f.make(silent, &["drivers", "test-tools"], &vars);
        assert!(out.status.success(), "{}", describe(&out));
        assert_eq!(
            f.apt_calls(),
            Vec::<String>::new(),
            "apt-get was called although every driver and tool is there (make{}):\n{}",
            if silent { " -s" } else { "" },
            describe(&out)
        );
        assert_eq!(
            text(&out.stdout),
            "",
            "make printed on stdout:\n{}",
            describe(&out)
        );
    }
}

#[test]
fn missing_drivers_and_tools_are_installed_with_nothing_on_stdout() {
    let f = Fakes::new("empty", true);
    let mut vars = f.empty_dirs();
    vars.push((
        "TEST_TOOL_COMMANDS",
        "blocksweep-test-no-such-tool".to_owned(),
    ));
    let out = f.make(true, &["drivers", "test-tools"], &vars);
    assert!(out.status.success(), "{}", describe(&out));
    let calls = f.apt_calls();
    let installs: Vec<&String> = calls.iter().filter(|c| c.contains("install")).collect();
    assert!(
        calls.iter().any(|c| c.starts_with("update")),
        "no apt-get update: {calls:?}\n{}",
        describe(&out)
    );
    for package in [
        "pocl-opencl-icd",
        "ocl-icd-libopencl1",
        "mesa-vulkan-drivers",
        "libvulkan1",
        "vulkan-validationlayers",
        "glslang-tools",
        "spirv-tools",
    ] {
        assert!(
            installs
                .iter()
                .any(|c| c.split_whitespace().any(|w| w == package)),
            "{package} was not installed: apt-get calls {calls:?}\n{}",
            describe(&out)
        );
    }
    assert_eq!(
        text(&out.stdout),
        "",
        "set-up output reached stdout:\n{}",
        describe(&out)
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(APT_STDOUT) && err.contains(APT_STDERR),
        "apt-get's output should be on stderr:\n{}",
        describe(&out)
    );
}

#[test]
fn an_icd_file_without_its_loader_library_is_no_driver() {
    let f = Fakes::new("noloader", false);
    let vars = f.installed_dirs();
    let out = f.make(true, &["drivers"], &vars);
    assert!(out.status.success(), "{}", describe(&out));
    let calls = f.apt_calls();
    for package in ["ocl-icd-libopencl1", "libvulkan1"] {
        assert!(
            calls
                .iter()
                .any(|c| c.contains("install") && c.split_whitespace().any(|w| w == package)),
            "{package} was not installed although ldconfig lists no loader: {calls:?}\n{}",
            describe(&out)
        );
    }
    assert_eq!(text(&out.stdout), "", "{}", describe(&out));
}

#[test]
fn make_sweep_prints_only_the_program_output() {
    let f = Fakes::new("sweep", true);
    let mut vars = f.installed_dirs();
    vars.push(("ARGS", "--size 64x64".to_owned()));
    // Without -s: the README's plain `make sweep`.
    let out = f.make(false, &["sweep"], &vars);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        text(&out.stdout),
        "PROGRAM-STDOUT run --release -p blocksweep-cli -- sweep --size 64x64\n",
        "stdout must be the program's own output:\n{}",
        describe(&out)
    );
    assert_eq!(f.apt_calls(), Vec::<String>::new(), "{}", describe(&out));
}

#[test]
fn make_test_counts_the_skipped_tests_and_keeps_the_status() {
    let f = Fakes::new("test", true);
    let mut vars = f.installed_dirs();
    // A cargo whose tests: one ran, two were ignored by libtest (with and without padding),
    // a child trial was listed as ignored (its parent runs it: no skip), and one returned
    // early after noting its skip in the log; then it fails.
    let cargo = f.sb.script(
        "fake-test-cargo",
        "echo 'test a ... ok'\n\
         echo 'test b ... ignored, needs a CUDA GPU'\n\
         echo 'test c::d     ... ignored (Vulkan unavailable: no ICD)'\n\
         echo 'test child_g  ... ignored'\n\
         echo 'e-0123 f: Vulkan unavailable: no ICD' >> \"$BLOCKSWEEP_SKIP_LOG\"\n\
         exit 101",
    );
    vars.push(("CARGO", cargo.display().to_string()));
    vars.push(("TEST_NOTES", f.sb.path("notes").display().to_string()));
    let out = f.make(true, &["test"], &vars);
    assert_eq!(
        out.status.code(),
        Some(2),
        "make reports the failure: {}",
        describe(&out)
    );
    let stdout = text(&out.stdout);
    let summary: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("make test:"))
        .collect();
    assert_eq!(
        summary[..3],
        [
            "make test: 3 tests skipped:",
            "  2 × Vulkan unavailable: no ICD",
            "  1 × needs a CUDA GPU"
        ],
        "{}",
        describe(&out)
    );
}

#[test]
fn cpu_driver_apis_are_in_the_driver_list() {
    let f = Fakes::new("cpu-driver-apis", true);
    let out = f.make(true, &["cpu-driver-apis"], &[]);
    assert!(out.status.success(), "{}", describe(&out));
    let listed = text(&out.stdout);
    let apis: Vec<&str> = listed.split_whitespace().collect();
    assert!(!apis.is_empty(), "{}", describe(&out));
    let keys: Vec<&str> = blocksweep_apis::all()
        .iter()
        .map(|d| d.api().key())
        .collect();
    for api in apis {
        assert!(
            keys.contains(&api),
            "{api} is not in the provider list {keys:?}"
        );
    }
}
