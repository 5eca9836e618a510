//! Pure conversions from Vulkan's numbers and enums to blocksweep's: no side effects, no
//! driver calls, all unit-tested.

use ash::vk;
use blocksweep_core::DeviceKind;

/// A result code under its specification name, e.g. `VK_ERROR_DEVICE_LOST`; an unknown code
/// keeps its number.
pub fn result_name(r: vk::Result) -> String {
    let debug = format!("{r:?}");
    // ash prints an unknown code as its bare number.
    if debug.parse::<i32>().is_ok() {
        format!("VkResult {}", r.as_raw())
    } else {
        format!("VK_{debug}")
    }
}

pub fn device_kind(t: vk::PhysicalDeviceType) -> DeviceKind {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU
        | vk::PhysicalDeviceType::INTEGRATED_GPU
        | vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceKind::Gpu,
        vk::PhysicalDeviceType::CPU => DeviceKind::Cpu,
        _ => DeviceKind::Other,
    }
}

pub fn device_type_name(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU",
        vk::PhysicalDeviceType::CPU => "VK_PHYSICAL_DEVICE_TYPE_CPU",
        _ => "VK_PHYSICAL_DEVICE_TYPE_OTHER",
    }
}

/// "major.minor.patch" of a packed Vulkan API version (the variant bits are ignored).
pub fn version_string(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

/// `driverVersion` is vendor-specific; NVIDIA packs 10.8.8.6 bits, everyone else (Mesa
/// included) uses the Vulkan version packing.
pub fn driver_version_string(vendor_id: u32, v: u32) -> String {
    if vendor_id == 0x10DE {
        format!(
            "{}.{}.{}.{}",
            v >> 22,
            (v >> 14) & 0xFF,
            (v >> 6) & 0xFF,
            v & 0x3F
        )
    } else {
        version_string(v)
    }
}

/// A NUL-terminated fixed-size C string from a Vulkan struct, lossily decoded.
pub fn fixed_c_str(bytes: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = bytes
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Mask for the meaningful low bits of a timestamp (`timestampValidBits`).
pub fn timestamp_mask(valid_bits: u32) -> u64 {
    match valid_bits {
        0 => 0,
        b if b >= 64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

/// Milliseconds between two raw timestamps: masked to the valid bits (so a counter that wrapped
/// once between them still subtracts right) and scaled by `timestampPeriod` (ns per tick).
pub fn ticks_to_ms(start: u64, end: u64, valid_bits: u32, period_ns: f32) -> f64 {
    let mask = timestamp_mask(valid_bits);
    let ticks = (end & mask).wrapping_sub(start & mask) & mask;
    ticks as f64 * period_ns as f64 / 1e6
}

/// A pipeline-executable statistic's value as text, by its declared format.
pub fn statistic_value(
    format: vk::PipelineExecutableStatisticFormatKHR,
    value: vk::PipelineExecutableStatisticValueKHR,
) -> (String, Option<u64>) {
    // SAFETY: the union member read is the one `format` says the driver wrote.
    unsafe {
        match format {
            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                ((value.b32 != 0).to_string(), None)
            }
            vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                (value.i64.to_string(), u64::try_from(value.i64).ok())
            }
            vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                (value.u64.to_string(), Some(value.u64))
            }
            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => (value.f64.to_string(), None),
            other => (format!("(unknown format {})", other.as_raw()), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_versions() {
        assert_eq!(
            result_name(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY),
            "VK_ERROR_OUT_OF_DEVICE_MEMORY"
        );
        assert_eq!(
            result_name(vk::Result::from_raw(-424242)),
            "VkResult -424242"
        );
        assert_eq!(
            version_string(vk::make_api_version(0, 1, 3, 230)),
            "1.3.230"
        );
        // NVIDIA 580.65.6 packed as 10.8.8.6 bits.
        let nv = (580 << 22) | (65 << 14) | (6 << 6);
        assert_eq!(driver_version_string(0x10DE, nv), "580.65.6.0");
        assert_eq!(device_kind(vk::PhysicalDeviceType::CPU), DeviceKind::Cpu);
        assert_eq!(
            device_kind(vk::PhysicalDeviceType::DISCRETE_GPU),
            DeviceKind::Gpu
        );
        let name = [b'l' as std::ffi::c_char, b'v' as _, b'p' as _, 0, b'x' as _];
        assert_eq!(fixed_c_str(&name), "lvp");
    }

    #[test]
    fn timestamps_mask_wrap_and_scale() {
        assert_eq!(timestamp_mask(64), u64::MAX);
        assert_eq!(timestamp_mask(36), (1 << 36) - 1);
        assert_eq!(timestamp_mask(0), 0);
        // 1000 ticks of 1 ns = 0.001 ms.
        assert_eq!(ticks_to_ms(5, 1005, 64, 1.0), 0.001);
        // A 36-bit counter that wrapped between the two reads.
        let start = (1u64 << 36) - 10;
        assert_eq!(ticks_to_ms(start, 90, 36, 1.0), 100.0 / 1e6);
        // Garbage above the valid bits is ignored; the period scales.
        assert_eq!(ticks_to_ms(1 << 40, (1 << 40) | 500, 36, 2.0), 1000.0 / 1e6);
    }

    #[test]
    fn statistics_decode_by_format() {
        let v = vk::PipelineExecutableStatisticValueKHR { u64: 24 };
        assert_eq!(
            statistic_value(vk::PipelineExecutableStatisticFormatKHR::UINT64, v),
            ("24".into(), Some(24))
        );
        let v = vk::PipelineExecutableStatisticValueKHR { i64: -1 };
        assert_eq!(
            statistic_value(vk::PipelineExecutableStatisticFormatKHR::INT64, v),
            ("-1".into(), None)
        );
    }
}
