//! A backend that runs the kernels on the host, so the driver and reports can be tested
//! without any GPU API (wgpu-hal's `empty` backend plays the same role). It simulates the
//! launch geometry thread by thread, so a coverage bug in a launch shows up as it would on a
//! device. Its "device clock" is the host clock: it is never used for real measurements.

use std::time::Instant;

use crate::backend::*;
use crate::blocks::BlockSize;
use crate::frame::{Frame, WEIGHTS};
use crate::grid::nvidia_model;
use crate::limits::{Dims, Limits, Named};

pub struct HostBackend {
    pub identity: DeviceIdentity,
    pub limits: Limits,
    pub kernel: KernelFacts,
    planes: [Vec<f32>; 4],
    variant: KernelVariant,
    /// Rejects blocks of exactly this size, as an API would.
    pub reject: Option<u64>,
}

impl HostBackend {
    pub fn new(api: Api) -> Self {
        let limits = Limits {
            max_threads_per_block: Some(Named::new(1024, "HOST_MAX_THREADS")),
            max_block_dims: Some(Named::new(Dims([1024, 1024, 64]), "HOST_MAX_BLOCK_DIMS")),
            max_grid_dims: Some(Named::new(Dims([1 << 31, 65535, 65535]), "HOST_MAX_GRID")),
            warp_size: Some(Named::new(32, "HOST_WARP")),
            multiprocessors: Some(Named::new(4, "HOST_MPS")),
            mp_model: nvidia_model(7, 5, "host test"),
            ..Limits::default()
        };
        HostBackend {
            identity: DeviceIdentity {
                api,
                index: 0,
                name: "host test device".into(),
                vendor: "test".into(),
                driver: "0".into(),
                api_version: "0".into(),
                platform: String::new(),
                kind: DeviceKind::Cpu,
                uuid: Some([7; 16]),
                pci_bus_id: None,
            },
            limits,
            kernel: KernelFacts {
                registers: Some(Named::new(16, "HOST_REGS")),
                compiled_by: "rustc".into(),
                ..Default::default()
            },
            planes: Default::default(),
            variant: KernelVariant::GridStride,
            reject: None,
        }
    }
}

impl Backend for HostBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }
    fn limits(&self) -> &Limits {
        &self.limits
    }
    fn kernel_facts(&self) -> &KernelFacts {
        &self.kernel
    }
    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: "host clock (test double)".into(),
            resolution_ns: 1.0,
        }
    }
    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        self.planes = [
            frame.r.clone(),
            frame.g.clone(),
            frame.b.clone(),
            vec![0.0; frame.r.len()],
        ];
        Ok(())
    }
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(None)
    }
    fn poison_output(&mut self) -> BackendResult<()> {
        self.planes[3].iter_mut().for_each(|v| *v = f32::NAN);
        Ok(())
    }
    fn dispatch_timed(
        &mut self,
        launch: Launch,
        warmups: u32,
        reps: u32,
    ) -> BackendResult<Vec<f64>> {
        if self.reject == Some(launch.block.threads()) {
            return Err(BackendError::new(
                self.api(),
                ErrorKind::LaunchRejected,
                "HOST_INVALID_CONFIGURATION",
            ));
        }
        let n = self.planes[0].len() as u64;
        let mut times = Vec::new();
        for i in 0..warmups + reps {
            let t = Instant::now();
            let (bx, grid) = (launch.block.x as u64, launch.grid as u64);
            let [r, g, b, out] = &mut self.planes;
            for thread in 0..grid * bx {
                let mut i = thread;
                while i < n {
                    out[i as usize] = WEIGHTS[0] * r[i as usize]
                        + WEIGHTS[1] * g[i as usize]
                        + WEIGHTS[2] * b[i as usize];
                    i += match self.variant {
                        KernelVariant::GridStride => grid * bx,
                        KernelVariant::OnePixelPerThread => n,
                    };
                }
            }
            if i >= warmups {
                times.push(t.elapsed().as_secs_f64() * 1e3 + 1e-6);
            }
        }
        Ok(times)
    }
    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        out.copy_from_slice(&self.planes[3]);
        Ok(())
    }
    fn copy_timed(&mut self, bytes: u64, _w: u32, reps: u32) -> BackendResult<Option<Vec<f64>>> {
        let src = vec![1u8; bytes as usize];
        let mut times = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            let dst = src.clone();
            std::hint::black_box(&dst);
            times.push(t.elapsed().as_secs_f64() * 1e3 + 1e-6);
        }
        Ok(Some(times))
    }
    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.variant = variant;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance;
    use crate::report::{parse_report, Format, Report};
    use crate::sweep::{self, Quiet, SweepConfig};

    #[test]
    fn host_backend_passes_conformance() {
        let mut b = HostBackend::new(Api::OpenCl);
        conformance::check_limits(&b);
        let r = conformance::check_full_sweep(&mut b);
        // The model reproduces the seed's T4 residency column through the driver.
        let col: Vec<u32> = r.rows.iter().map(|x| x.blocks_per_mp.unwrap()).collect();
        assert_eq!(col, [16, 16, 16, 10, 8, 8, 6, 5, 4, 2, 2, 1, 1]);
        assert_eq!(r.rows[4].idle_lanes, Some(28));
        conformance::check_fault_is_caught(&mut b);
        conformance::check_oversize_is_skipped(&mut b);
    }

    #[test]
    fn rejected_launch_is_a_skipped_row_with_the_apis_words() {
        let mut b = HostBackend::new(Api::Cuda);
        b.reject = Some(128);
        let f = Frame::generate(64, 8, 1);
        let cfg = SweepConfig {
            blocks: crate::blocks::parse_blocks("64,128,256").unwrap(),
            ..Default::default()
        };
        let (r, err) = sweep::run(
            &mut b,
            &f,
            &f.reference(),
            &cfg,
            None,
            Some(4096),
            &mut Quiet,
        );
        assert!(err.is_none());
        assert_eq!(r.rows_run(), 2);
        assert!(r.rows[1]
            .skipped
            .as_deref()
            .unwrap()
            .contains("HOST_INVALID_CONFIGURATION"));
        assert!(r.copy.is_some() && r.rows[0].of_copy.is_some());
    }

    #[test]
    fn wave_grid_is_raised_where_a_driver_caps_loop_iterations() {
        let mut b = HostBackend::new(Api::Vulkan);
        b.limits.max_loop_iterations = Some(crate::limits::Named::new(100, "TEST_LOOP_CAP"));
        let cfg = SweepConfig {
            blocks: crate::blocks::parse_blocks("16,1024").unwrap(),
            ..Default::default()
        };
        // 1 << 20 pixels / (16 threads x 100 iterations) needs 656 blocks; the model's wave
        // (4 MPs x 16 resident blocks) would give 64.
        let p = sweep::plan(&mut b, 1 << 20, &cfg).unwrap();
        assert_eq!(p.rows[0].grid, 656);
        assert_eq!(p.rows[1].grid, 11);
        assert!(p.grid_source.contains("TEST_LOOP_CAP"), "{}", p.grid_source);
    }

    fn report() -> Report {
        let f = Frame::generate(128, 16, 3);
        let cfg = SweepConfig {
            blocks: crate::blocks::parse_blocks("32,100,2048").unwrap(),
            warmups: 0,
            reps: 2,
            ..Default::default()
        };
        let mut rep = Report::new("blocksweep test", "2026-11-30T00:00:00Z");
        for api in [Api::Cuda, Api::Vulkan] {
            let mut b = HostBackend::new(api);
            let (r, e) = sweep::run(&mut b, &f, &f.reference(), &cfg, None, None, &mut Quiet);
            assert!(e.is_none());
            rep.results.push(r);
        }
        rep
    }

    #[test]
    fn exports_carry_every_row() {
        let rep = report();
        let csv = Format::Csv.exporter().render(&rep);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].starts_with("api,device,block,threads,warps,idle,blocks_per_sm,warps_per_sm,occupancy,grid,ms_mean,ms_min,ms_median,ms_max,gbps,of_best"));
        assert_eq!(lines.len(), 1 + 6);
        assert!(
            lines[3].contains("2048") && lines[3].contains("HOST_MAX_THREADS"),
            "{}",
            lines[3]
        );
        let table = Format::Table.exporter().render(&rep);
        assert!(table.contains("Fastest measured:"), "{table}");
        assert!(table.contains("configurations reach at least 95 percent"));
        assert!(
            table.contains("Vulkan/CUDA"),
            "merged ratio column missing:\n{table}"
        );
        let md = Format::Markdown.exporter().render(&rep);
        assert!(md.contains("| thr/blk |"), "{md}");
        let json = Format::Json.exporter().render(&rep);
        let back = parse_report(&json).unwrap();
        assert_eq!(back.results[0].rows[0].times_ms.len(), 2);
        assert_eq!(back.results.len(), 2);
        assert!(parse_report("{\"x\":1}")
            .unwrap_err()
            .contains("schema_version"));
        assert!(parse_report("not json").unwrap_err().contains("not JSON"));
    }
}
