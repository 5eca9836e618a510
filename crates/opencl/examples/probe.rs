//! Lists the OpenCL devices, their limits and kernel facts, and runs a small verified sweep on
//! each: `cargo run -p blocksweep-opencl --example probe [WIDTHxHEIGHT]`.

use blocksweep_core::sweep::{self, Quiet, SweepConfig};
use blocksweep_core::{Backend, Frame};
use blocksweep_opencl::{open, probe, OpenClOptions};

fn main() -> std::process::ExitCode {
    let (w, h) = std::env::args()
        .nth(1)
        .and_then(|s| {
            let (w, h) = s.split_once('x')?;
            Some((w.parse().ok()?, h.parse().ok()?))
        })
        .unwrap_or((640, 360));
    let devices = match probe() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("probe: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    for d in &devices {
        println!(
            "#{} {} | {} | {} | driver {} | {} | {:?} | uuid {:?} | pci {:?}",
            d.index,
            d.name,
            d.vendor,
            d.platform,
            d.driver,
            d.api_version,
            d.kind,
            d.uuid_string(),
            d.pci_bus_id
        );
        let options = OpenClOptions {
            extra_build_options: std::env::var("BLOCKSWEEP_CL_EXTRA").unwrap_or_default(),
        };
        let mut b = match open(d.index, &options) {
            Ok(b) => b,
            Err(e) => {
                println!("  open: {e}");
                continue;
            }
        };
        println!("  limits: {:#?}", b.limits());
        println!("  kernel: {:#?}", b.kernel_facts());
        println!("  timer: {:?}", b.timer());
        println!("  build log:\n{}", b.build_log());
        let frame = Frame::generate(w, h, 42);
        let config = SweepConfig {
            warmups: 3,
            reps: 10,
            ..SweepConfig::default()
        };
        let bytes = frame.pixels() * 4;
        let (r, err) = sweep::run(
            &mut b,
            &frame,
            &frame.reference(),
            &config,
            None,
            Some(bytes),
            &mut Quiet,
        );
        println!("  {w}x{h}, grid: {}", r.grid_source);
        for row in &r.rows {
            println!("  {:>5} grid {:>7} blk/mp {:>4} mean {:>9.4} ms {:>8.1} GB/s of best {:.2} verified {} {}",
                row.block.to_string(), row.grid,
                row.blocks_per_mp.map_or("-".into(), |b| b.to_string()),
                row.stats.map_or(f64::NAN, |s| s.mean), row.gbps.unwrap_or(f64::NAN),
                row.of_best.unwrap_or(f64::NAN), row.verified, row.skipped.as_deref().unwrap_or(""));
        }
        if let Some(c) = &r.copy {
            println!(
                "  copy {} bytes: {:.4} ms = {:.1} GB/s",
                c.bytes, c.stats.mean, c.gbps
            );
        }
        // Blocks above CL_KERNEL_WORK_GROUP_SIZE, straight to the driver: refused, or run and
        // verified?
        if std::env::var_os("BLOCKSWEEP_CL_BEYOND").is_some() {
            let reference = frame.reference();
            let mut out = vec![0f32; frame.pixels() as usize];
            for x in [256u32, 257, 384, 512, 1024] {
                let grid = frame.pixels().div_ceil(x as u64) as u32;
                let launch = blocksweep_core::Launch {
                    block: blocksweep_core::BlockSize::linear(x),
                    grid,
                };
                let res = b
                    .poison_output()
                    .and_then(|_| b.dispatch_timed(launch, 1, 3));
                let verdict = match res.and_then(|t| b.read_output(&mut out).map(|_| t)) {
                    Ok(t) => format!(
                        "{t:?} ms, verified: {:?}",
                        blocksweep_core::verify::verify(&out, &reference).map_err(|m| m.index)
                    ),
                    Err(e) => format!("{:?}: {}", e.kind, e.message),
                };
                println!("  beyond: {launch}: {verdict}");
            }
        }
        if let Some(e) = err {
            println!("  sweep error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    std::process::ExitCode::SUCCESS
}
