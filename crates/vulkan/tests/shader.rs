//! The checked-in SPIR-V is exactly what the checked-in GLSL compiles to, it validates, and
//! the shader uses the core's weights.

use std::path::{Path, PathBuf};
use std::process::Command;

use blocksweep_core::conformance::required;
use blocksweep_core::{Api, WEIGHTS};

/// The command recorded at the top of shaders/grayscale.comp, relative to the repository root.
const COMPILE: [&str; 5] = [
    "-V",
    "--target-env",
    "vulkan1.1",
    "-o",
    "shaders/grayscale.spv",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `tool` runs; absent is a failure when BLOCKSWEEP_REQUIRE names vulkan.
fn tool_present(tool: &str) -> bool {
    match Command::new(tool).arg("--version").output() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                !required(Api::Vulkan),
                "{tool} is required when BLOCKSWEEP_REQUIRE names vulkan: {e} \
                 (apt-get install glslang-tools spirv-tools)"
            );
            eprintln!("SKIPPED: {tool} not on PATH ({e})");
            false
        }
    }
}

#[test]
fn checked_in_spirv_is_what_the_source_compiles_to() {
    if !tool_present("glslangValidator") {
        return;
    }
    let root = repo_root();
    let out = std::env::temp_dir().join(format!("blocksweep-grayscale-{}.spv", std::process::id()));
    let mut args = COMPILE.map(String::from);
    args[4] = out.display().to_string();
    let run = Command::new("glslangValidator")
        .args(&args)
        .arg("shaders/grayscale.comp")
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "glslangValidator failed: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let fresh = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let checked_in = std::fs::read(root.join("shaders/grayscale.spv")).unwrap();
    assert!(
        fresh == checked_in,
        "shaders/grayscale.spv is stale: run `glslangValidator {} shaders/grayscale.comp` \
         from the repository root",
        COMPILE.join(" ")
    );
    assert_eq!(
        blocksweep_vulkan::SPIRV,
        &checked_in[..],
        "the crate embeds the same bytes"
    );
    // And the recorded command is the one in the source's header.
    let source = std::fs::read_to_string(root.join("shaders/grayscale.comp")).unwrap();
    let line = format!(
        "glslangValidator {} shaders/grayscale.comp",
        COMPILE.join(" ")
    );
    assert!(
        source.contains(&line),
        "grayscale.comp should record `{line}`"
    );
}

#[test]
fn spirv_val_accepts_the_module() {
    if !tool_present("spirv-val") {
        return;
    }
    let run = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.1", "shaders/grayscale.spv"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "spirv-val: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn the_shader_uses_the_core_weights() {
    let source = std::fs::read_to_string(repo_root().join("shaders/grayscale.comp")).unwrap();
    let [r, g, b] = WEIGHTS;
    let sum = format!("{r} * r[i] + {g} * g[i] + {b} * b[i]");
    // Once in the grid-stride loop, once in the one-pixel-per-thread variant.
    assert_eq!(source.matches(&sum).count(), 2, "expected `{sum}` twice");
}
