//! GLSL to SPIR-V through the `glslangValidator` command (Debian's glslang-tools), where no
//! loadable libshaderc exists: Debian 12's libshaderc1 cannot be opened on its own (it leaves
//! glslang's symbols undefined and names no library that has them).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{VulkanError, VulkanResult};

/// The command: `BLOCKSWEEP_GLSLANG` when set, else `glslangValidator` on the PATH.
fn program() -> String {
    std::env::var("BLOCKSWEEP_GLSLANG").unwrap_or_else(|_| "glslangValidator".into())
}

/// "glslangValidator (Glslang Version: 11:12.0.0)", or why it cannot run.
pub(crate) fn version() -> Result<String, String> {
    let p = program();
    let out = Command::new(&p)
        .arg("--version")
        .output()
        .map_err(|e| format!("{p}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Glslang Version"))
        .unwrap_or("version unknown")
        .trim();
    Ok(format!("{p} ({line})"))
}

/// A temporary file that is removed when dropped.
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// SPIR-V words of compute shader `source`, with `defines` as -D options, for Vulkan 1.1.
/// The compiler's own message (with line numbers) is the error, under `origin`'s name.
pub(crate) fn compile(
    source: &str,
    origin: &str,
    entry: &str,
    defines: &[(&str, &str)],
) -> VulkanResult<Vec<u32>> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let build = |detail: String| VulkanError::Build {
        call: "glslangValidator",
        detail,
    };
    let stem = std::env::temp_dir().join(format!(
        "blocksweep-{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    // This glslangValidator (12.0) refuses --stdin beside -S: the source goes in a file.
    let input = Temp(stem.with_extension("comp"));
    let out = Temp(stem.with_extension("spv"));
    std::fs::write(&input.0, source)
        .map_err(|e| build(format!("writing {origin} for the compiler: {e}")))?;
    let mut cmd = Command::new(program());
    cmd.args(["-V", "--target-env", "vulkan1.1", "-S", "comp"]);
    if entry != "main" {
        cmd.args(["-e", entry, "--source-entrypoint", entry]);
    }
    for (name, value) in defines {
        cmd.arg(match value.is_empty() {
            true => format!("-D{name}"),
            false => format!("-D{name}={value}"),
        });
    }
    cmd.arg("-o").arg(&out.0).arg(&input.0);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| VulkanError::Unavailable(format!("{}: {e}", program())))?;
    let done = child
        .wait_with_output()
        .map_err(|e| build(format!("waiting for the compiler: {e}")))?;
    if !done.status.success() {
        // glslang names the temporary file: say which file it was.
        let said =
            String::from_utf8_lossy(&done.stdout).replace(&*input.0.to_string_lossy(), origin);
        let said: Vec<&str> = said
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.ends_with("compilation errors.  No code generated."))
            .collect();
        return Err(build(format!("{origin}: {}", said.join("; "))));
    }
    let bytes = std::fs::read(&out.0).map_err(|e| build(format!("reading its SPIR-V: {e}")))?;
    if bytes.len() % 4 != 0 {
        return Err(build(format!("it wrote {} bytes of SPIR-V", bytes.len())));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}
