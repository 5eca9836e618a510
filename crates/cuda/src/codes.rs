//! Result codes exactly as libcuda and libnvrtc return them, and their names (a driver code's
//! name, which may ask the loaded driver, is `CuCode::name` in entry_points.rs).
//!
//! cudarc's bindings declare `CUresult` and `nvrtcResult` as Rust enums, so a code the bindings
//! do not list (one a newer driver added: the CUDA 12.9 bindings lack CUDA 13.0's
//! `CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER`, which an R580 driver returns) would be an invalid
//! enum value, which is undefined behaviour the moment it is returned. So every entry point is
//! declared here as returning a [`CuCode`] or [`NvrtcCode`], plain 32-bit integers where every
//! value is valid, and the bindings' enums are used only to spell the constants below.

use std::fmt;

use cudarc::driver::sys::CUresult;
use cudarc::nvrtc::sys::nvrtcResult;

/// A `CUresult` as the driver returned it: any value, known to these bindings or not.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CuCode(pub u32);

/// An `nvrtcResult` as NVRTC returned it: any value.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NvrtcCode(pub u32);

/// Named constants from the bindings' enum (a name the bindings lack fails to compile), and
/// the table that names them without any library loaded.
macro_rules! named_codes {
    ($ty:ident, $enum:ident, $table:ident: $($name:ident),* $(,)?) => {
        #[allow(non_upper_case_globals)]
        impl $ty {
            $(pub const $name: $ty = $ty($enum::$name as u32);)*
        }
        pub(crate) const $table: &[($ty, &str)] = &[$(($ty::$name, stringify!($name))),*];
    };
}

named_codes!(CuCode, CUresult, DRIVER_NAMES:
    CUDA_SUCCESS,
    CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_OUT_OF_MEMORY,
    CUDA_ERROR_NOT_INITIALIZED,
    CUDA_ERROR_STUB_LIBRARY,
    CUDA_ERROR_DEVICE_UNAVAILABLE,
    CUDA_ERROR_NO_DEVICE,
    CUDA_ERROR_INVALID_DEVICE,
    CUDA_ERROR_INVALID_IMAGE,
    CUDA_ERROR_NO_BINARY_FOR_GPU,
    CUDA_ERROR_INVALID_PTX,
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
    CUDA_ERROR_JIT_COMPILATION_DISABLED,
    CUDA_ERROR_INVALID_SOURCE,
    CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
    CUDA_ERROR_OPERATING_SYSTEM,
    CUDA_ERROR_NOT_FOUND,
    CUDA_ERROR_NOT_READY,
    CUDA_ERROR_ECC_UNCORRECTABLE,
    CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
    CUDA_ERROR_LAUNCH_TIMEOUT,
    CUDA_ERROR_CONTEXT_IS_DESTROYED,
    CUDA_ERROR_ASSERT,
    CUDA_ERROR_HARDWARE_STACK_ERROR,
    CUDA_ERROR_ILLEGAL_INSTRUCTION,
    CUDA_ERROR_MISALIGNED_ADDRESS,
    CUDA_ERROR_INVALID_ADDRESS_SPACE,
    CUDA_ERROR_INVALID_PC,
    CUDA_ERROR_LAUNCH_FAILED,
    CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
    CUDA_ERROR_NOT_PERMITTED,
    CUDA_ERROR_NOT_SUPPORTED,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
    CUDA_ERROR_UNKNOWN,
);

named_codes!(NvrtcCode, nvrtcResult, NVRTC_NAMES:
    NVRTC_SUCCESS,
    NVRTC_ERROR_OUT_OF_MEMORY,
    NVRTC_ERROR_PROGRAM_CREATION_FAILURE,
    NVRTC_ERROR_INVALID_INPUT,
    NVRTC_ERROR_INVALID_PROGRAM,
    NVRTC_ERROR_INVALID_OPTION,
    NVRTC_ERROR_COMPILATION,
    NVRTC_ERROR_BUILTIN_OPERATION_FAILURE,
    NVRTC_ERROR_INTERNAL_ERROR,
);

impl CuCode {
    /// CUDA 13.0's cuda.h (36), which the 12.x bindings do not have: an R580+ driver returns
    /// it for a call that needs a newer driver than the one installed (a forward-compat
    /// setup gone wrong).
    pub const CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: CuCode = CuCode(36);

    pub fn is_success(self) -> bool {
        self == CuCode::CUDA_SUCCESS
    }
}

impl NvrtcCode {
    pub fn is_success(self) -> bool {
        self == NvrtcCode::NVRTC_SUCCESS
    }

    /// The header's name (`NVRTC_ERROR_COMPILATION`), or `nvrtcResult 42` for a code newer
    /// than these bindings (NVRTC's own nvrtcGetErrorString is used where a library is at hand).
    pub fn name(self) -> String {
        match NVRTC_NAMES.iter().find(|(c, _)| *c == self) {
            Some((_, n)) => (*n).to_string(),
            None => format!("nvrtcResult {}", self.0),
        }
    }
}

impl fmt::Debug for CuCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

impl fmt::Display for CuCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl fmt::Debug for NvrtcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

impl fmt::Display for NvrtcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_header_values() {
        assert_eq!(CuCode::CUDA_SUCCESS.0, 0);
        assert_eq!(CuCode::CUDA_ERROR_INVALID_VALUE.0, 1);
        assert_eq!(CuCode::CUDA_ERROR_NO_DEVICE.0, 100);
        assert_eq!(CuCode::CUDA_ERROR_UNSUPPORTED_PTX_VERSION.0, 222);
        assert_eq!(CuCode::CUDA_ERROR_UNKNOWN.0, 999);
        assert_eq!(NvrtcCode::NVRTC_ERROR_COMPILATION.0, 6);
    }

    #[test]
    fn every_value_has_a_name_without_undefined_behaviour() {
        assert_eq!(CuCode(1).name(), "CUDA_ERROR_INVALID_VALUE");
        assert_eq!(
            CuCode(36).to_string(),
            "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"
        );
        // A code no binding knows (no driver loaded in unit tests) is a number, not UB.
        assert_eq!(CuCode(4242).name(), "CUresult 4242");
        assert_eq!(format!("{:?}", CuCode(2)), "CUDA_ERROR_OUT_OF_MEMORY (2)");
        assert_eq!(NvrtcCode(6).name(), "NVRTC_ERROR_COMPILATION");
        assert_eq!(NvrtcCode(99).name(), "nvrtcResult 99");
    }
}
