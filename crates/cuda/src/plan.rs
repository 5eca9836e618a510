//! What NVRTC may produce for a device, decided from versions alone (no library needed).
//!
//! A driver JIT-compiles PTX only up to its own ISA, so PTX from an NVRTC newer than the
//! driver fails to load (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`). A cubin for the device's own
//! architecture does load under CUDA's minor-version compatibility (any 12.x cubin on any
//! 12.x driver), but not across a major version. [`plan`] turns that into a decision.

/// What NVRTC should produce for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Plan {
    /// PTX for this virtual architecture, JIT-compiled by the driver (NVRTC not newer than it).
    Ptx { arch: i32 },
    /// A cubin for the device's own architecture (NVRTC newer than the driver, same major).
    Cubin { arch: i32 },
}

impl Plan {
    /// The `--gpu-architecture` value: "compute_90" or "sm_90".
    pub(crate) fn arch_option(self) -> String {
        match self {
            Plan::Ptx { arch } => format!("compute_{arch}"),
            Plan::Cubin { arch } => format!("sm_{arch}"),
        }
    }
}

/// What NVRTC `nvrtc` (supporting `archs`) may produce for a device of compute capability `cc`
/// under a driver implementing CUDA `driver`, or why it should not be used at all. `ptx_jit`
/// is false where the driver's PTX JIT is off (`CUDA_DISABLE_PTX_JIT=1`): only a cubin loads.
pub(crate) fn plan(
    nvrtc: (i32, i32),
    driver: (i32, i32),
    cc: (i32, i32),
    archs: &[i32],
    ptx_jit: bool,
) -> Result<Plan, String> {
    let (n, d) = (
        format!("{}.{}", nvrtc.0, nvrtc.1),
        format!("{}.{}", driver.0, driver.1),
    );
    let device = cc.0 * 10 + cc.1;
    if nvrtc <= driver && ptx_jit {
        return pick_arch(archs, cc)
            .map(|arch| Plan::Ptx { arch })
            .ok_or_else(|| format!("NVRTC {n} supports {archs:?}, none at or below sm_{device}"));
    }
    if nvrtc.0 > driver.0 {
        return Err(format!(
            "NVRTC {n} is a newer major version than the driver's CUDA {d}: \
             neither its PTX nor its cubins are guaranteed to load"
        ));
    }
    if archs.contains(&device) {
        return Ok(Plan::Cubin { arch: device });
    }
    Err(match ptx_jit {
        true => format!(
            "NVRTC {n} is newer than the driver's CUDA {d}, so its PTX would not load, \
             and it cannot build a cubin for sm_{device}"
        ),
        false => format!(
            "PTX JIT is disabled (CUDA_DISABLE_PTX_JIT=1) and NVRTC {n} cannot build a cubin \
             for sm_{device}"
        ),
    })
}

/// Whether the driver will JIT-compile PTX: not when `CUDA_DISABLE_PTX_JIT=1` (CUDA's
/// environment variable; the driver then loads cubins only).
pub(crate) fn ptx_jit_enabled() -> bool {
    std::env::var("CUDA_DISABLE_PTX_JIT").map_or(true, |v| v.trim() != "1")
}

/// The newest virtual architecture NVRTC supports at or below compute capability `cc` (so
/// a GPU newer than the NVRTC still gets PTX its driver can JIT).
pub(crate) fn pick_arch(supported: &[i32], cc: (i32, i32)) -> Option<i32> {
    let want = cc.0 * 10 + cc.1;
    supported.iter().copied().filter(|&a| a <= want).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NVRTC13: [i32; 12] = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

    #[test]
    fn picks_newest_supported_arch_not_above_device() {
        assert_eq!(pick_arch(&NVRTC13, (9, 0)), Some(90));
        assert_eq!(pick_arch(&NVRTC13, (8, 9)), Some(89));
        // A GPU newer than NVRTC gets the newest PTX NVRTC can write.
        assert_eq!(pick_arch(&NVRTC13, (13, 0)), Some(121));
        // An older GPU than NVRTC supports gets nothing.
        assert_eq!(pick_arch(&NVRTC13, (6, 1)), None);
    }

    #[test]
    fn nvrtc_output_is_only_planned_where_it_loads() {
        let nvrtc12 = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];
        // NVRTC no newer than the driver: PTX, JIT-compiled by the driver.
        let h200 = plan((13, 0), (13, 0), (9, 0), &NVRTC13, true);
        assert_eq!(h200, Ok(Plan::Ptx { arch: 90 }));
        let older = plan((12, 0), (13, 0), (9, 0), &nvrtc12, true);
        assert_eq!(older, Ok(Plan::Ptx { arch: 90 }));
        // Newer within the major (NVRTC 12.9, R535's CUDA 12.2, a T4): a cubin for sm_75.
        let t4 = plan((12, 9), (12, 2), (7, 5), &nvrtc12, true);
        assert_eq!(t4, Ok(Plan::Cubin { arch: 75 }));
        assert_eq!(Plan::Cubin { arch: 75 }.arch_option(), "sm_75");
        // PTX JIT off: a cubin even where PTX would load.
        let no_jit = plan((13, 0), (13, 0), (9, 0), &NVRTC13, false);
        assert_eq!(no_jit, Ok(Plan::Cubin { arch: 90 }));
        let e = plan((13, 0), (13, 0), (6, 1), &NVRTC13, false).unwrap_err();
        assert!(e.contains("CUDA_DISABLE_PTX_JIT=1"), "{e}");
        // Newer by a major version (NVRTC 13 on R535): not used.
        let e = plan((13, 0), (12, 2), (7, 5), &NVRTC13, true).unwrap_err();
        assert!(e.contains("NVRTC 13.0 is a newer major version than the driver's CUDA 12.2"));
        // Newer, and no cubin for this device.
        let e = plan((12, 9), (12, 2), (6, 1), &[75, 90], true).unwrap_err();
        assert!(e.contains("cannot build a cubin for sm_61"), "{e}");
        let e = plan((13, 0), (13, 0), (6, 1), &NVRTC13, true).unwrap_err();
        assert!(e.contains("none at or below sm_61"), "{e}");
    }
}
