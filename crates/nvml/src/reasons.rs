//! The clock-event ("throttle") reasons NVML reports as a bitmask, and their words.
//!
//! The bits are nvml.h's `nvmlClocksEventReason*` / `nvmlClocksThrottleReason*` defines, as
//! NVIDIA's header carries them (NVIDIA/go-nvml, gen/nvml/nvml.h, lines 3322-3404 at commit
//! 2f9e261f): GpuIdle 0x1, ApplicationsClocksSetting 0x2, SwPowerCap 0x4, HwSlowdown 0x8,
//! SyncBoost 0x10, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80,
//! DisplayClockSetting 0x100.

/// Every documented bit and its word, in bit order.
pub const REASONS: &[(u64, &str)] = &[
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
];

/// The words of the bits set in `bits`, in bit order; a bit nvml.h does not document (a newer
/// driver's) is kept as its hex value, so that nothing set is hidden.
pub fn reason_words(bits: u64) -> Vec<String> {
    let known: u64 = REASONS.iter().map(|(b, _)| b).sum();
    let mut words: Vec<String> = REASONS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, w)| w.to_string())
        .collect();
    let unknown = bits & !known;
    for i in 0..64 {
        if unknown & (1 << i) != 0 {
            words.push(format!("{:#x}", 1u64 << i));
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_bits_no_words() {
        assert!(reason_words(0).is_empty());
    }

    #[test]
    fn each_documented_bit_is_its_word() {
        for &(bit, word) in REASONS {
            assert_eq!(reason_words(bit), vec![word.to_string()]);
        }
        assert_eq!(REASONS.len(), 9);
        assert_eq!(reason_words(0x1ff).len(), 9);
    }

    #[test]
    fn several_bits_in_bit_order_and_unknown_ones_as_hex() {
        assert_eq!(
            reason_words(0x4 | 0x1 | 0x40),
            ["gpu_idle", "sw_power_cap", "hw_thermal_slowdown"]
        );
        assert_eq!(reason_words(0x200 | 0x8), ["hw_slowdown", "0x200"]);
    }
}
