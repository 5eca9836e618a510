//! GLSL to SPIR-V at run time, through shaderc's C API, opened with dlopen on first use so that
//! the binary starts (and runs SPIR-V kernels) on a machine without libshaderc; without a
//! loadable shaderc, through glslangValidator (`glslang.rs`).

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::OnceLock;

use crate::error::{VulkanError, VulkanResult};

/// The library names tried in order: upstream's shared build, then Debian's (libshaderc1).
const LIBRARIES: [&str; 4] = [
    "libshaderc_shared.so.1",
    "libshaderc_shared.so",
    "libshaderc.so.1",
    "libshaderc.so",
];

/// `shaderc_target_env_vulkan` and `shaderc_env_version_vulkan_1_1` (shaderc/env.h): the
/// backend opens only Vulkan 1.1 devices, and shaders/*.spv target the same.
const TARGET_ENV_VULKAN: u32 = 0;
const ENV_VERSION_VULKAN_1_1: u32 = (1 << 22) | (1 << 12);
/// `shaderc_glsl_compute_shader` (shaderc/shaderc.h).
const GLSL_COMPUTE_SHADER: u32 = 2;
/// `shaderc_compilation_status_success`.
const STATUS_SUCCESS: u32 = 0;

type Handle = *mut c_void;

/// The shaderc entry points this backend calls, resolved once.
struct Shaderc {
    name: &'static str,
    compiler_initialize: unsafe extern "C" fn() -> Handle,
    compiler_release: unsafe extern "C" fn(Handle),
    options_initialize: unsafe extern "C" fn() -> Handle,
    options_release: unsafe extern "C" fn(Handle),
    set_target_env: unsafe extern "C" fn(Handle, u32, u32),
    add_macro: unsafe extern "C" fn(Handle, *const c_char, usize, *const c_char, usize),
    compile_into_spv: unsafe extern "C" fn(
        Handle,
        *const c_char,
        usize,
        u32,
        *const c_char,
        *const c_char,
        Handle,
    ) -> Handle,
    result_status: unsafe extern "C" fn(Handle) -> u32,
    result_length: unsafe extern "C" fn(Handle) -> usize,
    result_bytes: unsafe extern "C" fn(Handle) -> *const c_char,
    result_error: unsafe extern "C" fn(Handle) -> *const c_char,
    result_release: unsafe extern "C" fn(Handle),
    /// Kept loaded for as long as the process runs: the pointers above point into it.
    _library: libloading::Library,
}

impl Shaderc {
    fn open() -> Result<Shaderc, String> {
        let mut tried = Vec::new();
        for name in LIBRARIES {
            // SAFETY: loading shaderc runs no initialiser with preconditions of ours.
            match unsafe { libloading::Library::new(name) } {
                Ok(library) => return Self::resolve(name, library),
                Err(e) => tried.push(format!("{name}: {e}")),
            }
        }
        Err(format!(
            "GLSL needs libshaderc (Debian: libshaderc1) or give a SPIR-V file ({})",
            tried.join("; ")
        ))
    }

    fn resolve(name: &'static str, library: libloading::Library) -> Result<Shaderc, String> {
        macro_rules! sym {
            ($s:literal) => {
                // SAFETY: each type above is the function's C prototype in shaderc.h.
                *unsafe { library.get(concat!($s, "\0").as_bytes()) }
                    .map_err(|e| format!("{name} lacks {}: {e}", $s))?
            };
        }
        Ok(Shaderc {
            name,
            compiler_initialize: sym!("shaderc_compiler_initialize"),
            compiler_release: sym!("shaderc_compiler_release"),
            options_initialize: sym!("shaderc_compile_options_initialize"),
            options_release: sym!("shaderc_compile_options_release"),
            set_target_env: sym!("shaderc_compile_options_set_target_env"),
            add_macro: sym!("shaderc_compile_options_add_macro_definition"),
            compile_into_spv: sym!("shaderc_compile_into_spv"),
            result_status: sym!("shaderc_result_get_compilation_status"),
            result_length: sym!("shaderc_result_get_length"),
            result_bytes: sym!("shaderc_result_get_bytes"),
            result_error: sym!("shaderc_result_get_error_message"),
            result_release: sym!("shaderc_result_release"),
            _library: library,
        })
    }
}

fn shaderc() -> VulkanResult<&'static Shaderc> {
    static SHADERC: OnceLock<Result<Shaderc, String>> = OnceLock::new();
    SHADERC
        .get_or_init(Shaderc::open)
        .as_ref()
        .map_err(|e| VulkanError::Unavailable(e.clone()))
}

/// Which compiler turns GLSL into SPIR-V here: a shaderc library, else glslangValidator.
pub(crate) fn compiler_name() -> VulkanResult<String> {
    match shaderc() {
        Ok(s) => Ok(format!("shaderc ({})", s.name)),
        Err(_) => crate::glslang::version().map_err(VulkanError::Unavailable),
    }
}

/// A shaderc object released by its own function on drop.
struct Owned {
    raw: Handle,
    release: unsafe extern "C" fn(Handle),
}

impl Drop for Owned {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: made by the matching initialize/compile call, released once.
            unsafe { (self.release)(self.raw) }
        }
    }
}

/// `-DNAME=VALUE` or `-DNAME` as (NAME, VALUE); any other option is refused.
pub(crate) fn parse_define(option: &str) -> Result<(&str, &str), String> {
    let Some(define) = option.strip_prefix("-D").filter(|d| !d.is_empty()) else {
        return Err(format!(
            "option `{option}` is not supported for GLSL: only -DNAME or -DNAME=VALUE"
        ));
    };
    Ok(define.split_once('=').unwrap_or((define, "")))
}

/// SPIR-V words of the compute shader `source` (`origin` names it in messages), compiled for
/// Vulkan 1.1 with `options`' macros. A compile error is [`VulkanError::Build`] carrying
/// shaderc's own message, which names the file and line.
pub(crate) fn compile(
    source: &str,
    origin: &str,
    entry: &str,
    options: &[String],
) -> VulkanResult<Vec<u32>> {
    let build = |detail: String| VulkanError::Build {
        call: "shaderc_compile_into_spv",
        detail,
    };
    let defines = options
        .iter()
        .map(|o| parse_define(o))
        .collect::<Result<Vec<_>, _>>()
        .map_err(build)?;
    let s = match shaderc() {
        Ok(s) => s,
        Err(VulkanError::Unavailable(no_shaderc)) => {
            return crate::glslang::compile(source, origin, entry, &defines).map_err(|e| match e {
                VulkanError::Unavailable(no_glslang) => VulkanError::Unavailable(format!(
                    "GLSL needs libshaderc (Debian: libshaderc1) or glslangValidator (Debian: \
                     glslang-tools), or give a SPIR-V file: {no_shaderc}; {no_glslang}"
                )),
                other => other,
            })
        }
        Err(e) => return Err(e),
    };
    compile_with(s, source, origin, entry, &defines).map_err(build)
}

/// [`compile`] through shaderc `s`; an error is the message to report.
fn compile_with(
    s: &Shaderc,
    source: &str,
    origin: &str,
    entry: &str,
    defines: &[(&str, &str)],
) -> Result<Vec<u32>, String> {
    let c = |text: &str, what: &str| {
        CString::new(text).map_err(|_| format!("the {what} contains a NUL byte"))
    };
    let (origin_c, entry_c) = (c(origin, "source's name")?, c(entry, "entry point")?);
    // SAFETY: every call below follows shaderc.h: objects from its initialisers, strings
    // with their lengths (or NUL-terminated where it asks), each object released once by
    // `Owned`, the result read before it is released.
    unsafe {
        let compiler = Owned {
            raw: (s.compiler_initialize)(),
            release: s.compiler_release,
        };
        let opts = Owned {
            raw: (s.options_initialize)(),
            release: s.options_release,
        };
        if compiler.raw.is_null() || opts.raw.is_null() {
            return Err(format!("{} did not initialise", s.name));
        }
        (s.set_target_env)(opts.raw, TARGET_ENV_VULKAN, ENV_VERSION_VULKAN_1_1);
        for (name, value) in defines {
            let (n, v) = (name.as_ptr().cast(), value.as_ptr().cast());
            (s.add_macro)(opts.raw, n, name.len(), v, value.len());
        }
        let result = Owned {
            raw: (s.compile_into_spv)(
                compiler.raw,
                source.as_ptr().cast(),
                source.len(),
                GLSL_COMPUTE_SHADER,
                origin_c.as_ptr(),
                entry_c.as_ptr(),
                opts.raw,
            ),
            release: s.result_release,
        };
        spirv_of(s, &result)
    }
}

/// The SPIR-V words of a compilation's `result`, or shaderc's message (which starts with the
/// source's name and line).
///
/// # Safety
///
/// `result` is what `s`'s `compile_into_spv` returned, not yet released.
unsafe fn spirv_of(s: &Shaderc, result: &Owned) -> Result<Vec<u32>, String> {
    if result.raw.is_null() {
        return Err(format!("{} returned no result", s.name));
    }
    // SAFETY: a live result, as the caller vouches; shaderc's strings are NUL-terminated and
    // its bytes `len` long, read before the result is released.
    unsafe {
        if (s.result_status)(result.raw) != STATUS_SUCCESS {
            let message = (s.result_error)(result.raw);
            let message = match message.is_null() {
                true => "no message".into(),
                false => CStr::from_ptr(message).to_string_lossy().into_owned(),
            };
            return Err(message.trim_end().to_string());
        }
        let (bytes, len) = ((s.result_bytes)(result.raw), (s.result_length)(result.raw));
        if bytes.is_null() || len % 4 != 0 {
            return Err(format!("{} returned {len} bytes of SPIR-V", s.name));
        }
        let bytes = std::slice::from_raw_parts(bytes.cast::<u8>(), len);
        Ok(bytes
            .chunks_exact(4)
            .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_are_the_only_options() {
        assert_eq!(parse_define("-DN=4"), Ok(("N", "4")));
        assert_eq!(parse_define("-DFAST"), Ok(("FAST", "")));
        assert!(parse_define("-O").unwrap_err().contains("only -DNAME"));
        assert!(parse_define("-D").is_err());
    }
}
