//! [`HostBackend`]'s side of the [`Backend`] trait: its launches, batches, buffers and
//! programs, each as an API would answer them.

use std::time::Instant;

use super::host::{Held, HostBackend, HostProgram, HOST, HOST_MEMORY};
use crate::backend::*;
use crate::blocks::BlockSize;
use crate::limits::Limits;

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
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(self.residency.map(|blocks_per_mp| Residency {
            blocks_per_mp,
            source: format!("{} occupancy", self.identity.api),
        }))
    }
    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        let mut each = Vec::new();
        let start = Instant::now();
        for _ in 0..count {
            let t = Instant::now();
            match work {
                Work::Kernel(launch) => self.dispatch(launch)?,
                Work::Copy { bytes } => {
                    if bytes.saturating_mul(2) > HOST_MEMORY {
                        return Err(self.error(
                            ErrorKind::OutOfMemory,
                            format!("two copy buffers of {bytes} bytes exceed HOST_MEMORY"),
                        ));
                    }
                    if self.copy.as_ref().is_none_or(|c| c.0.len() as u64 != bytes) {
                        self.copy = Some((vec![1u8; bytes as usize], vec![0u8; bytes as usize]));
                    }
                    let (src, dst) = self.copy.as_mut().unwrap();
                    dst.copy_from_slice(src);
                    std::hint::black_box(dst);
                }
            }
            if stamps == Stamps::Each {
                each.push(t.elapsed().as_secs_f64() * 1e3 + 1e-6);
            }
        }
        Ok(BatchTimes {
            batch_ms: (stamps == Stamps::Batch).then(|| start.elapsed().as_secs_f64() * 1e3 + 1e-6),
            each_ms: each,
        })
    }
    /// Each dispatch timed alone after the scratch buffer is written, as a device would.
    fn run_batch_flushed(
        &mut self,
        work: Work,
        count: u32,
        bytes: u64,
    ) -> BackendResult<BatchTimes> {
        let mut each = Vec::with_capacity(count as usize);
        for i in 0..count {
            self.scratch.resize(bytes as usize, 0);
            self.scratch.fill(i as u8);
            self.flushes += 1;
            each.extend(self.run_batch(work, 1, Stamps::Each)?.each_ms);
        }
        Ok(BatchTimes {
            batch_ms: None,
            each_ms: each,
        })
    }
    fn release(&mut self) -> BackendResult<()> {
        self.program = None;
        self.copy = None;
        self.scratch = Vec::new();
        self.free_device_memory();
        Ok(())
    }
    fn copy_method(&self) -> String {
        "slice copy (test double)".into()
    }
    fn diagnostics(&self) -> Vec<String> {
        self.said.clone()
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        Some(ProgramSource {
            language: HOST,
            code: Vec::new(),
            entry: kernel.entry().into(),
            origin: "the host test double".into(),
            options: Vec::new(),
        })
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.program = None;
        let kernel = KernelVariant::ALL
            .into_iter()
            .find(|k| k.entry() == source.entry);
        let Some(kernel) = kernel.filter(|_| source.language == HOST) else {
            let why = format!("{} is no built-in kernel of the host", source.entry);
            return Err(self.error(ErrorKind::Build, why));
        };
        let bytes: u64 = args.iter().map(ProgramArg::allocation).sum();
        self.free_device_memory();
        if let Some(m) = &self.device_memory {
            use std::sync::atomic::Ordering::SeqCst;
            let was = m.used.fetch_add(bytes, SeqCst);
            if was + bytes > m.capacity {
                m.used.fetch_sub(bytes, SeqCst);
                let why = format!(
                    "buffers of {bytes} bytes: TEST_DEVICE_FULL ({was} of {} bytes in use)",
                    m.capacity
                );
                return Err(self.error(ErrorKind::OutOfMemory, why));
            }
            m.peak.fetch_max(was + bytes, SeqCst);
            self.held = Some(Held {
                memory: m.clone(),
                bytes,
            });
        }
        if self.memory_taken {
            let why = format!("buffers of {bytes} bytes: TEST_MEMORY_TAKEN by another API");
            return Err(self.error(ErrorKind::OutOfMemory, why));
        }
        if bytes > HOST_MEMORY {
            let why = format!("buffers of {bytes} bytes exceed HOST_MEMORY");
            return Err(self.error(ErrorKind::OutOfMemory, why));
        }
        let width = match (kernel, args.get(4)) {
            (KernelVariant::GridStride2D, Some(ProgramArg::Scalar { bytes, .. })) => {
                u32::from_le_bytes(bytes[..4].try_into().unwrap_or_default()) as usize
            }
            _ => 0,
        };
        let buffers = args.iter().map(|a| vec![0u8; a.allocation() as usize]);
        self.program = Some(HostProgram {
            kernel,
            buffers: buffers.collect(),
            width,
            values: None,
        });
        Ok(())
    }

    fn set_scalar(&mut self, _arg: usize, _bytes: &[u8]) -> BackendResult<()> {
        self.program().map(|_| ())
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        if arg == 0 {
            if let Some(n) = &self.uploads {
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let api = self.api();
        let buffer = self.buffer(arg)?;
        if buffer.len() != bytes.len() {
            let why = format!("{} bytes into a buffer of {}", bytes.len(), buffer.len());
            return Err(BackendError::new(api, ErrorKind::Driver, why));
        }
        buffer.copy_from_slice(bytes);
        Ok(())
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        let buffer = self.buffer(arg)?;
        for f in fills {
            buffer[f.offset as usize..(f.offset + f.len) as usize].fill(f.byte);
        }
        Ok(true)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        let api = self.api();
        let buffer = self.buffer(arg)?;
        let at = offset as usize;
        let Some(from) = buffer.get(at..at + out.len()) else {
            let why = format!(
                "{} bytes at {offset} of a buffer of {}",
                out.len(),
                buffer.len()
            );
            return Err(BackendError::new(api, ErrorKind::Driver, why));
        };
        out.copy_from_slice(from);
        Ok(())
    }

    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let stages = self.stages;
        let buffer = self.buffer(arg)?;
        Ok(stages.then_some(buffer.as_slice()))
    }
}
