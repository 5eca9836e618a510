//! The copy ceiling both ways (vkCmdCopyBuffer and shaders/copy.comp) on every Vulkan device,
//! for each byte count given (default: the CLI's 4K copy, 3840 x 2160 x 8 bytes):
//!
//! ```text
//! cargo run --release -p blocksweep-vulkan --example copy_ceiling -- [bytes...]
//! ```

use blocksweep_core::Backend;
use blocksweep_vulkan::{open, probe, VulkanOptions};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut sizes: Vec<u64> = Vec::new();
    for a in std::env::args().skip(1) {
        match a.parse() {
            Ok(n) => sizes.push(n),
            Err(e) => {
                eprintln!("{a}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if sizes.is_empty() {
        sizes.push(3840 * 2160 * 8);
    }
    let devices = match probe() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("Vulkan unavailable: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = false;
    for d in &devices {
        println!("device {}: {} (driver {})", d.index, d.name, d.driver);
        let mut b = match open(d.index, &VulkanOptions::default()) {
            Ok(b) => b,
            Err(e) => {
                println!("  open failed: {e}");
                failed = true;
                continue;
            }
        };
        for &bytes in &sizes {
            match b.copy_timed(bytes, 3, 10) {
                Ok(_) => {
                    let Some(m) = b.last_copy() else { continue };
                    println!(
                        "  {bytes} bytes: vkCmdCopyBuffer {:.1} GB/s, compute-shader copy {:.1} GB/s\n    {}",
                        m.transfer_gbps(),
                        m.shader_gbps(),
                        b.copy_method()
                    );
                }
                Err(e) => {
                    println!("  {bytes} bytes: {e}");
                    failed = true;
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
