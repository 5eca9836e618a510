//! Each checked-in SPIR-V module (the five built-in kernels, the two split ones, copy) is exactly
//! what its checked-in GLSL compiles to, each validates, and the grayscale shaders use the core's
//! weights.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use blocksweep_conformance::{skip_unless_required, Completion, Harness};
use blocksweep_core::WEIGHTS;

/// Each checked-in shader, and the bytes the crate embeds for it.
const SHADERS: [(&str, &[u8]); 8] = [
    ("grayscale", blocksweep_vulkan::SPIRV),
    (
        "grayscale_one_per_thread",
        blocksweep_vulkan::SPIRV_ONE_PER_THREAD,
    ),
    ("grayscale_2d", blocksweep_vulkan::SPIRV_2D),
    ("grayscale_shared", blocksweep_vulkan::SPIRV_SHARED),
    ("grayscale_registers", blocksweep_vulkan::SPIRV_REGISTERS),
    ("copy", blocksweep_vulkan::COPY_SPIRV),
    ("grayscale_split", blocksweep_vulkan::SPIRV_SPLIT),
    (
        "grayscale_split_one_per_thread",
        blocksweep_vulkan::SPIRV_SPLIT_ONE_PER_THREAD,
    ),
];

/// The Vulkan version a shader targets: 1.2 for the split ones (buffer device address).
fn target_env(name: &str) -> &'static str {
    match name.starts_with("grayscale_split") {
        true => "vulkan1.2",
        false => "vulkan1.1",
    }
}

/// The command recorded at the top of shaders/<name>.comp, relative to the repository root,
/// without the source file.
fn compile_args(name: &str) -> [String; 5] {
    [
        "-V".into(),
        "--target-env".into(),
        target_env(name).into(),
        "-o".into(),
        format!("shaders/{name}.spv"),
    ]
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `None` when `tool` runs, else the skip saying why (a failure when BLOCKSWEEP_REQUIRE names
/// vulkan).
fn missing(tool: &str) -> Option<Completion> {
    let e = Command::new(tool).arg("--version").output().err()?;
    Some(skip_unless_required(
        blocksweep_vulkan::API,
        format!("{tool} is not on PATH ({e}; apt-get install glslang-tools spirv-tools)"),
    ))
}

fn checked_in_spirv_is_what_the_source_compiles_to() -> Completion {
    if let Some(skipped) = missing("glslangValidator") {
        return skipped;
    }
    let root = repo_root();
    for (name, embedded) in SHADERS {
        let source = format!("shaders/{name}.comp");
        let out =
            std::env::temp_dir().join(format!("blocksweep-{name}-{}.spv", std::process::id()));
        let mut args = compile_args(name);
        args[4] = out.display().to_string();
        let run = Command::new("glslangValidator")
            .args(&args)
            .arg(&source)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "glslangValidator failed on {source}: {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        let fresh = std::fs::read(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        let checked_in = std::fs::read(root.join(format!("shaders/{name}.spv"))).unwrap();
        let line = format!("glslangValidator {} {source}", compile_args(name).join(" "));
        assert!(
            fresh == checked_in,
            "shaders/{name}.spv is stale: run `{line}` from the repository root"
        );
        assert_eq!(
            embedded,
            &checked_in[..],
            "the crate embeds {name}.spv as is"
        );
        // And the recorded command is the one in the source's header.
        let text = std::fs::read_to_string(root.join(&source)).unwrap();
        assert!(text.contains(&line), "{source} should record `{line}`");
    }
    Completion::Completed
}

fn spirv_val_accepts_the_modules() -> Completion {
    if let Some(skipped) = missing("spirv-val") {
        return skipped;
    }
    for (name, _) in SHADERS {
        let spv = format!("shaders/{name}.spv");
        let run = Command::new("spirv-val")
            .args(["--target-env", target_env(name), &spv])
            .current_dir(repo_root())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "spirv-val {spv}: {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    }
    Completion::Completed
}

fn the_shader_uses_the_core_weights() {
    let source = std::fs::read_to_string(repo_root().join("shaders/grayscale.comp")).unwrap();
    let [r, g, b] = WEIGHTS;
    let sum = format!("{r} * r[i] + {g} * g[i] + {b} * b[i]");
    assert_eq!(source.matches(&sum).count(), 1, "expected `{sum}` once");
    // The others: one pixel per thread computes the same sum, the 2-D one indexes a row, the
    // register-heavy one keeps `value`, the shared-memory one writes the three weights into
    // its array.
    let lab = |name: &str| std::fs::read_to_string(repo_root().join(name)).unwrap();
    assert!(
        lab("shaders/grayscale_one_per_thread.comp").contains(&sum),
        "{sum}"
    );
    let row = format!("{r} * r[row + x] + {g} * g[row + x] + {b} * b[row + x]");
    assert!(lab("shaders/grayscale_2d.comp").contains(&row), "{row}");
    assert!(
        lab("shaders/grayscale_registers.comp").contains(&sum),
        "{sum}"
    );
    let split = format!("{r} * r + {g} * g + {b} * b");
    for name in ["grayscale_split", "grayscale_split_one_per_thread"] {
        let text = lab(&format!("shaders/{name}.comp"));
        assert!(text.contains(&split), "{name}: {split}");
    }
    let fill = format!("k % 3 == 0 ? {r} : (k % 3 == 1 ? {g} : {b})");
    assert!(
        lab("shaders/grayscale_shared.comp").contains(&fill),
        "{fill}"
    );
}

fn main() -> ExitCode {
    Harness::new()
        .test(
            "checked_in_spirv_is_what_the_source_compiles_to",
            checked_in_spirv_is_what_the_source_compiles_to,
        )
        .test(
            "spirv_val_accepts_the_modules",
            spirv_val_accepts_the_modules,
        )
        .test(
            "the_shader_uses_the_core_weights",
            the_shader_uses_the_core_weights,
        )
        .run()
}
