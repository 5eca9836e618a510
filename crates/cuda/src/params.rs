//! `cuLaunchKernel`'s parameters for a user's kernel: the arguments as the kernel's
//! parameters (a buffer is a device pointer, a scalar its bytes, a local argument nothing),
//! checked against what the driver says of the compiled kernel, and packed once.

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr;

use blocksweep_core::{ProgramArg, ScalarType};
use cudarc::driver::sys::CUdeviceptr;

use crate::error::CudaError;

/// One kernel parameter as declared: which argument, how many bytes, and what it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Param {
    pub arg: usize,
    pub size: usize,
    pub what: String,
}

/// The kernel's parameters the arguments declare, in order: a buffer is a device pointer, a
/// scalar its type's size (its bytes must be that many); a local argument is no parameter.
pub(crate) fn declared_params(args: &[ProgramArg]) -> Result<Vec<Param>, CudaError> {
    let mut params = Vec::new();
    for (arg, a) in args.iter().enumerate() {
        let (size, what) = match a {
            ProgramArg::Buffer { .. } => (size_of::<CUdeviceptr>(), "buffer".to_string()),
            ProgramArg::Scalar { ty, bytes } if bytes.len() != ty.size() => {
                return Err(CudaError::Usage(format!(
                    "argument {arg}: a {ty} scalar given as {} bytes",
                    bytes.len()
                )))
            }
            ProgramArg::Scalar { ty, .. } => (ty.size(), ty.key().to_string()),
            ProgramArg::Local => continue,
        };
        params.push(Param { arg, size, what });
    }
    Ok(params)
}

/// The declared parameters against the compiled kernel's sizes (`cuFuncGetParamInfo`).
pub(crate) fn check_params(
    entry: &str,
    declared: &[Param],
    actual: &[usize],
) -> Result<(), CudaError> {
    if declared.len() != actual.len() {
        return Err(CudaError::Program(format!(
            "the kernel '{entry}' takes {} parameters (cuFuncGetParamInfo) but {} arguments \
             are declared (buffers and scalars; local arguments are not passed on CUDA)",
            actual.len(),
            declared.len()
        )));
    }
    for (i, (d, &size)) in declared.iter().zip(actual).enumerate() {
        if d.size != size {
            return Err(CudaError::Program(format!(
                "argument {} ({}, {} bytes) does not fit parameter {i} of '{entry}', which is \
                 {size} bytes (cuFuncGetParamInfo)",
                d.arg, d.what, d.size
            )));
        }
    }
    Ok(())
}

/// `cuLaunchKernel`'s `kernelParams`: one pointer per buffer or scalar argument, in order,
/// each to a value owned here (a buffer's `CUdeviceptr`, a scalar's bytes) in 8-byte-aligned
/// heap memory that does not move with this struct, so one array serves every launch.
pub(crate) struct Params {
    _values: Vec<Box<[u64]>>,
    pointers: Vec<*mut c_void>,
    /// Per argument, where it is a scalar: its parameter's index in `pointers`, and its type.
    scalars: Vec<Option<(usize, ScalarType)>>,
}

impl Params {
    /// Packs `args`; `buffers[i]` is argument `i`'s device pointer where it is a buffer.
    pub(crate) fn pack(
        args: &[ProgramArg],
        buffers: &[Option<CUdeviceptr>],
    ) -> Result<Params, CudaError> {
        let mut values: Vec<Box<[u64]>> = Vec::new();
        let mut scalars = vec![None; args.len()];
        for (arg, a) in args.iter().enumerate() {
            match a {
                ProgramArg::Buffer { .. } => {
                    let ptr = buffers.get(arg).copied().flatten().ok_or_else(|| {
                        CudaError::Usage(format!("argument {arg}: no device buffer"))
                    })?;
                    values.push(Box::new([ptr]));
                }
                ProgramArg::Scalar { ty, bytes } if bytes.len() != ty.size() => {
                    return Err(CudaError::Usage(format!(
                        "argument {arg}: a {ty} scalar given as {} bytes",
                        bytes.len()
                    )))
                }
                ProgramArg::Scalar { ty, bytes } => {
                    scalars[arg] = Some((values.len(), *ty));
                    values.push(words(bytes));
                }
                ProgramArg::Local => {}
            }
        }
        let pointers = values
            .iter_mut()
            .map(|v| v.as_mut_ptr().cast::<c_void>())
            .collect();
        Ok(Params {
            _values: values,
            pointers,
            scalars,
        })
    }

    /// Replaces scalar argument `arg`'s value with `bytes`, in place, so the array every launch
    /// passes stays valid; refused where `arg` is no scalar or `bytes` are not its type's size.
    pub(crate) fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> Result<(), CudaError> {
        let usage = |why: String| Err(CudaError::Usage(format!("set_scalar({arg}): {why}")));
        let (index, ty) = match self.scalars.get(arg) {
            Some(Some(slot)) => *slot,
            Some(None) => return usage(format!("argument {arg} is not a scalar")),
            None => return usage(format!("the kernel has {} arguments", self.scalars.len())),
        };
        if bytes.len() != ty.size() {
            return usage(format!("{} bytes for a {ty} scalar", bytes.len()));
        }
        // SAFETY: the pointer is to this scalar's words (at least `ty.size()` bytes), owned by
        // `self`, which is borrowed mutably; cuLaunchKernel copied them at each earlier launch.
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), self.pointers[index].cast(), bytes.len())
        };
        Ok(())
    }

    /// The array as cuLaunchKernel takes it (which only reads it); null for no parameters.
    pub(crate) fn launch_arg(&self) -> *mut *mut c_void {
        match self.pointers.is_empty() {
            true => ptr::null_mut(),
            false => self.pointers.as_ptr().cast_mut(),
        }
    }
}

/// `bytes` in 64-bit words whose memory holds exactly those bytes first (native order).
fn words(bytes: &[u8]) -> Box<[u64]> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_ne_bytes(w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::ErrorKind;

    fn scalar(ty: ScalarType, bytes: &[u8]) -> ProgramArg {
        ProgramArg::Scalar {
            ty,
            bytes: bytes.to_vec(),
        }
    }

    /// saxpy's arguments with a local one in the middle: y, x, a local, a = 2.5, n = 1000.
    fn saxpy_args() -> Vec<ProgramArg> {
        vec![
            ProgramArg::buffer(4000),
            ProgramArg::buffer(4000),
            ProgramArg::Local,
            scalar(ScalarType::F32, &2.5f32.to_le_bytes()),
            scalar(ScalarType::U64, &1000u64.to_le_bytes()),
        ]
    }

    /// The bytes parameter `i` of `params` points at.
    fn pointee(params: &Params, i: usize, len: usize) -> Vec<u8> {
        let p = params.pointers[i].cast::<u8>();
        // SAFETY: the test reads no more than the value packed there.
        unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
    }

    #[test]
    fn packing_gives_one_pointer_per_buffer_and_scalar_in_order() {
        let buffers = [Some(0xdead_0000), Some(0xbeef_0000), None, None, None];
        let params = Params::pack(&saxpy_args(), &buffers).unwrap();
        assert_eq!(params.pointers.len(), 4, "the local argument is skipped");
        assert_eq!(pointee(&params, 0, 8), 0xdead_0000u64.to_ne_bytes());
        assert_eq!(pointee(&params, 1, 8), 0xbeef_0000u64.to_ne_bytes());
        assert_eq!(pointee(&params, 2, 4), 2.5f32.to_le_bytes());
        assert_eq!(pointee(&params, 3, 8), 1000u64.to_le_bytes());
        for p in &params.pointers {
            assert!(
                p.cast::<u64>().is_aligned(),
                "every value is 8-byte aligned"
            );
        }
        assert_eq!(params.launch_arg().cast_const(), params.pointers.as_ptr());
    }

    #[test]
    fn packed_values_stay_put_when_the_params_move() {
        let buffers = [Some(7), Some(8), None, None, None];
        let params = Params::pack(&saxpy_args(), &buffers).unwrap();
        let before = params.pointers.clone();
        let moved = Box::new(params);
        assert_eq!(moved.pointers, before);
        assert_eq!(pointee(&moved, 3, 8), 1000u64.to_le_bytes());
    }

    #[test]
    fn packing_refuses_what_would_mislead_the_kernel() {
        // A buffer argument without its device buffer.
        let e = Params::pack(&saxpy_args(), &[Some(1)]).err().unwrap();
        assert!(
            e.to_string().contains("argument 1: no device buffer"),
            "{e}"
        );
        // A scalar whose bytes are not its type's size.
        let short = [scalar(ScalarType::F64, &[0; 4])];
        let e = Params::pack(&short, &[None]).err().unwrap();
        assert_eq!(e.to_string(), "argument 0: a f64 scalar given as 4 bytes");
        assert!(declared_params(&short).is_err());
        // No arguments: a null array.
        let none = Params::pack(&[], &[]).unwrap();
        assert!(none.launch_arg().is_null());
    }

    #[test]
    fn declared_parameters_skip_locals_and_keep_argument_indices() {
        let d = declared_params(&saxpy_args()).unwrap();
        let seen: Vec<(usize, usize, &str)> = d.iter().map(|p| (p.arg, p.size, &*p.what)).collect();
        assert_eq!(
            seen,
            [
                (0, 8, "buffer"),
                (1, 8, "buffer"),
                (3, 4, "f32"),
                (4, 8, "u64")
            ]
        );
    }

    #[test]
    fn the_check_names_both_counts_or_the_argument_that_does_not_fit() {
        let d = declared_params(&saxpy_args()).unwrap();
        assert!(check_params("saxpy", &d, &[8, 8, 4, 8]).is_ok());
        let e = check_params("saxpy", &d, &[8, 8, 4]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Build);
        let m = e.to_string();
        assert!(m.contains("'saxpy' takes 3 parameters"), "{m}");
        assert!(m.contains("but 4 arguments are declared"), "{m}");
        // u64 declared where the kernel takes an int.
        let e = check_params("saxpy", &d, &[8, 8, 4, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument 4 (u64, 8 bytes) does not fit parameter 3 of 'saxpy', which is 4 bytes \
             (cuFuncGetParamInfo)"
        );
    }

    #[test]
    fn scalar_words_hold_the_bytes_in_order() {
        let w = words(&[1, 2, 3, 4]);
        assert_eq!(w.len(), 1);
        assert_eq!(&w[0].to_ne_bytes()[..4], [1, 2, 3, 4]);
        assert_eq!(words(&[9; 8]).len(), 1);
    }

    #[test]
    fn a_scalar_set_after_packing_is_what_later_launches_read() {
        let buffers = [Some(7), Some(8), None, None, None];
        let mut params = Params::pack(&saxpy_args(), &buffers).unwrap();
        let before = params.pointers.clone();
        params.set_scalar(4, &77u64.to_le_bytes()).unwrap();
        params.set_scalar(3, &(-1.5f32).to_le_bytes()).unwrap();
        assert_eq!(
            params.pointers, before,
            "the same array serves every launch"
        );
        assert_eq!(pointee(&params, 3, 8), 77u64.to_le_bytes());
        assert_eq!(pointee(&params, 2, 4), (-1.5f32).to_le_bytes());
        assert_eq!(
            pointee(&params, 0, 8),
            7u64.to_ne_bytes(),
            "buffers untouched"
        );
    }

    #[test]
    fn set_scalar_refuses_what_is_no_scalar_or_not_its_size() {
        let buffers = [Some(7), Some(8), None, None, None];
        let mut params = Params::pack(&saxpy_args(), &buffers).unwrap();
        let refused = |params: &mut Params, arg, bytes: &[u8]| {
            let e = params.set_scalar(arg, bytes).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Driver, "a Usage error: {e}");
            e.to_string()
        };
        let buffer = refused(&mut params, 0, &[0; 8]);
        assert_eq!(buffer, "set_scalar(0): argument 0 is not a scalar");
        let local = refused(&mut params, 2, &[0; 4]);
        assert_eq!(local, "set_scalar(2): argument 2 is not a scalar");
        let past = refused(&mut params, 5, &[0; 4]);
        assert_eq!(past, "set_scalar(5): the kernel has 5 arguments");
        let short = refused(&mut params, 4, &[0; 4]);
        assert_eq!(short, "set_scalar(4): 4 bytes for a u64 scalar");
        assert_eq!(pointee(&params, 3, 8), 1000u64.to_le_bytes(), "unchanged");
    }
}
