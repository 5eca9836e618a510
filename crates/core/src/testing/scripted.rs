//! A backend that runs nothing and reports scripted times: the protocol's arithmetic checked exactly.

use super::*;

/// A backend that runs nothing: each dispatch "takes" `kernel_ms`, a timestamp pair around a
/// dispatch adds `stamp_ms` to that dispatch's interval, and the first dispatch of every batch
/// pays `host_wait_ms` (what the device idles away while the host waits and launches again).
/// The very first dispatch also pays `first_ms` (a driver's one-time work on first use). It
/// records every batch it is asked for. Flushed batches (`--cold`) time each dispatch alone, its
/// interval `kernel_ms + stamp_ms` as a device's stamps after the flush would read. Its device,
/// limits and kernel are the host backend's ([`ScriptedBackend::limits_mut`] changes them).
pub struct ScriptedBackend {
    host: HostBackend,
    pub kernel_ms: f64,
    pub stamp_ms: f64,
    pub host_wait_ms: f64,
    pub first_ms: f64,
    pub batches: Vec<(u32, Stamps)>,
    /// Every flushed batch: its count and flush bytes.
    pub flushed: Vec<(u32, u64)>,
}

impl ScriptedBackend {
    pub fn new(api: Api, kernel_ms: f64, stamp_ms: f64) -> Self {
        ScriptedBackend {
            host: HostBackend::new(api),
            kernel_ms,
            stamp_ms,
            host_wait_ms: 0.0,
            first_ms: 0.0,
            batches: Vec::new(),
            flushed: Vec::new(),
        }
    }
}

impl ScriptedBackend {
    pub fn limits_mut(&mut self) -> &mut Limits {
        &mut self.host.limits
    }
}

impl Backend for ScriptedBackend {
    fn identity(&self) -> &DeviceIdentity {
        self.host.identity()
    }
    fn limits(&self) -> &Limits {
        self.host.limits()
    }
    fn kernel_facts(&self) -> &KernelFacts {
        self.host.kernel_facts()
    }
    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: "script".into(),
            resolution_ns: 1.0,
        }
    }
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(None)
    }
    fn run_batch(&mut self, _work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        let first = match self.batches.is_empty() {
            true => self.first_ms,
            false => 0.0,
        };
        self.batches.push((count, stamps));
        let k = self.kernel_ms;
        Ok(match stamps {
            Stamps::None => BatchTimes::default(),
            Stamps::Batch => BatchTimes {
                batch_ms: Some(count as f64 * k + self.host_wait_ms + first),
                each_ms: Vec::new(),
            },
            Stamps::Each => BatchTimes {
                batch_ms: None,
                each_ms: (0..count)
                    .map(|i| match i {
                        0 => k + self.stamp_ms + self.host_wait_ms + first,
                        _ => k + self.stamp_ms,
                    })
                    .collect(),
            },
        })
    }
    fn run_batch_flushed(
        &mut self,
        _work: Work,
        count: u32,
        bytes: u64,
    ) -> BackendResult<BatchTimes> {
        let first = match self.batches.is_empty() && self.flushed.is_empty() {
            true => self.first_ms,
            false => 0.0,
        };
        self.flushed.push((count, bytes));
        let k = self.kernel_ms + self.stamp_ms;
        Ok(BatchTimes {
            batch_ms: None,
            each_ms: (0..count)
                .map(|i| k + if i == 0 { first } else { 0.0 })
                .collect(),
        })
    }
    fn copy_method(&self) -> String {
        "script".into()
    }
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        self.host.builtin(kernel)
    }
    fn load_program(&mut self, _source: &ProgramSource, _args: &[ProgramArg]) -> BackendResult<()> {
        Ok(())
    }
    fn write_buffer(&mut self, _arg: usize, _bytes: &[u8]) -> BackendResult<()> {
        Ok(())
    }
    fn fill_buffer(&mut self, _arg: usize, _fills: &[Fill]) -> BackendResult<bool> {
        Ok(true)
    }
    fn read_buffer(&mut self, _arg: usize, _offset: u64, _out: &mut [u8]) -> BackendResult<()> {
        Ok(())
    }
}
