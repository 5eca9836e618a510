//! The copy ceiling on every device this machine has: both methods (vkCmdCopyBuffer and the
//! compute-shader copy of shaders/copy.comp) are timed, the faster one's times are returned,
//! the description names both, and both really copy, bit for bit, in one dispatch or several.

mod common;

use std::process::ExitCode;

use blocksweep_conformance::checks::device_time_fits_host;
use blocksweep_conformance::{show, BatchExt, Suite};
use blocksweep_core::{Backend, DeviceIdentity};
use common::open_device;

/// A pattern no fill can fake: every word differs from its neighbours and from the NaN
/// poison, and some are NaNs with payloads (which a float copy might canonicalize).
fn pattern(words: usize) -> Vec<u32> {
    (0..words as u32)
        .map(|i| match i % 7 {
            0 => 0x7fc0_0000 | i,
            _ => i.wrapping_mul(0x9E37_79B9) ^ 0x5555_5555,
        })
        .collect()
}

/// Read + written bytes per second, in 1e9: 2 x bytes / (mean ms / 1e3) / 1e9.
fn gbps(bytes: u64, times: &[f64]) -> f64 {
    2.0 * bytes as f64 / (times.iter().sum::<f64>() / times.len() as f64) / 1e6
}

fn the_copy_selects_the_faster_method_in_a_selection_batch(d: &DeviceIdentity) {
    {
        let mut b = open_device(d);
        assert!(b.last_copy().is_none());
        let bytes = 16 << 20;
        let start = std::time::Instant::now();
        let times = b.copy_each(bytes, 1, 4).unwrap();
        let host = start.elapsed();
        let m = b.last_copy().expect("both methods were measured").clone();
        assert_eq!((m.bytes, m.copied_bytes, m.dispatches), (bytes, bytes, 1));
        for (method, t) in [
            ("vkCmdCopyBuffer", &m.transfer_ms),
            ("shader", &m.shader_ms),
        ] {
            assert_eq!(t.len(), 5, "{method}: the selection batch's copies");
            assert!(
                t.iter().all(|&t| t > 0.0 && t.is_finite()),
                "{method}: {t:?}"
            );
        }
        assert_eq!(times.len(), 4);
        assert!(times.iter().all(|&t| t > 0.0 && t.is_finite()), "{times:?}");
        // Every copy of the call, both methods' selection batches and the timed ones, ran
        // inside the host's wait for it (the independent clock; see device_time_fits_host).
        let device: f64 = [&m.transfer_ms, &m.shader_ms, &times]
            .iter()
            .flat_map(|t| t.iter())
            .sum();
        device_time_fits_host(device, host, "copy_each");
        // The method chosen is the one whose selection copies took less in all, summed here
        // from the raw times (ties go to vkCmdCopyBuffer).
        let sum = |t: &[f64]| t.iter().sum::<f64>();
        let want_shader = sum(&m.shader_ms) < sum(&m.transfer_ms);
        assert_eq!(m.shader_is_faster(), want_shader, "{m:?}");
        let chosen = if want_shader {
            &m.shader_ms
        } else {
            &m.transfer_ms
        };
        assert_eq!(m.fastest_ms(), &chosen[..], "{m:?}");
        // GB/s as bytes read and written over the mean time in seconds, derived here.
        for (got, t) in [
            (m.transfer_gbps(), &m.transfer_ms),
            (m.shader_gbps(), &m.shader_ms),
        ] {
            let want = gbps(bytes, t);
            assert!((got - want).abs() <= 1e-9 * want, "{got} GB/s, want {want}");
        }
        assert_eq!(m.workgroup, 256);
        assert!(m.grid >= 1);
        let method = b.copy_method();
        assert!(method.contains("vkCmdCopyBuffer"), "{method}");
        assert!(
            method.contains("compute-shader copy (shaders/copy.comp"),
            "{method}"
        );
        assert!(
            method.contains("the faster in a selection batch"),
            "{method}"
        );
        let other = if m.shader_is_faster() {
            m.transfer_gbps()
        } else {
            m.shader_gbps()
        };
        assert!(
            method.contains(&format!("measured {other:.1} GB/s")),
            "{method}"
        );
        assert!(
            !method.contains("asked"),
            "no padding at {bytes} bytes: {method}"
        );
        show!(
            "{}: copy of {bytes} bytes: vkCmdCopyBuffer {:.1} GB/s {:?} ms; \
             compute-shader copy {:.1} GB/s {:?} ms\n  copy_method: {method}",
            d.name,
            m.transfer_gbps(),
            m.transfer_ms,
            m.shader_gbps(),
            m.shader_ms
        );
        assert!(b.validation_messages().is_empty());
    }
}

/// The CLI asks for pixels x 8 bytes, not always a multiple of 16: both methods copy the count
/// rounded up, and the description says so.
fn a_byte_count_off_the_element_size_is_rounded_up_for_both(d: &DeviceIdentity) {
    {
        let mut b = open_device(d);
        let bytes = (1 << 20) + 8;
        assert_eq!(b.copy_each(bytes, 0, 2).unwrap().len(), 2);
        let m = b.last_copy().unwrap();
        assert_eq!((m.bytes, m.copied_bytes), (bytes, bytes + 8));
        assert_eq!((m.transfer_ms.len(), m.shader_ms.len()), (5, 5));
        let method = b.copy_method();
        assert!(
            method.contains(&format!(
                "both copied {} bytes for the {bytes} asked",
                bytes + 8
            )),
            "{method}"
        );
    }
}

fn the_shader_copy_really_copies(d: &DeviceIdentity) {
    {
        let mut b = open_device(d);
        // 10001 words = 40004 bytes: not a whole number of 16-byte elements.
        let words = pattern(10_001);
        let [transfer, shader] = b.copy_round_trip_for_tests(&words).unwrap();
        assert!(transfer == words, "{}: vkCmdCopyBuffer lost words", d.name);
        let wrong = shader.iter().zip(&words).filter(|(a, b)| a != b).count();
        assert_eq!(
            wrong, 0,
            "{}: the shader copy got {wrong} words wrong",
            d.name
        );
        // A copy above (here: a pretended) maxStorageBufferRange is several dispatches.
        b.set_copy_dispatch_bytes_for_tests(4096);
        let [transfer, shader] = b.copy_round_trip_for_tests(&words).unwrap();
        assert!(transfer == words);
        let wrong = shader.iter().zip(&words).filter(|(a, b)| a != b).count();
        assert_eq!(
            wrong, 0,
            "{}: split shader copy got {wrong} words wrong",
            d.name
        );
        b.copy_each(40_004, 0, 1).unwrap();
        assert_eq!(b.last_copy().unwrap().dispatches, 10, "40016 bytes / 4096");
        assert!(
            b.copy_method().contains("10 dispatches"),
            "{}",
            b.copy_method()
        );
    }
}

fn main() -> ExitCode {
    Suite::new(&blocksweep_vulkan::PROVIDER)
        .each_device(
            "copy_selects_the_faster_method",
            the_copy_selects_the_faster_method_in_a_selection_batch,
        )
        .each_device(
            "copy_rounds_odd_byte_counts_up",
            a_byte_count_off_the_element_size_is_rounded_up_for_both,
        )
        .each_device("shader_copy_really_copies", the_shader_copy_really_copies)
        .run()
}
