//! The handle the rest hangs off: the device and its queue, opened with the limits asked for;
//! error scopes around the calls that can fail (wgpu reports a validation error through a
//! scope, or to an uncaptured-error handler that would otherwise panic); waits with a deadline.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{WebGpuError, WebGpuResult};
use crate::LimitsChoice;

/// One device and its queue.
pub(crate) struct DeviceContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// Nanoseconds per timestamp tick.
    pub period_ns: f32,
    /// Whether timestamps can be written between the dispatches of a pass.
    pub inside_passes: bool,
    /// Errors no scope caught, and why the device was lost, as they were reported.
    uncaught: Arc<Mutex<Vec<String>>>,
    lost: Arc<Mutex<Option<String>>>,
}

impl DeviceContext {
    /// Opens `adapter` as a device with the limits `choice` names and timestamp queries.
    pub fn new(adapter: &wgpu::Adapter, choice: LimitsChoice) -> WebGpuResult<DeviceContext> {
        let want = wgpu::Features::TIMESTAMP_QUERY;
        // Stamps between the dispatches of one pass, where the adapter has them: a pass per
        // dispatch cost wgpu about 70 us of host time each on the H100 (call20).
        let inside = wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES;
        let inside_passes = adapter.features().contains(inside);
        if !adapter.features().contains(want) {
            return Err(WebGpuError::Unavailable(
                "the adapter has no TIMESTAMP_QUERY feature: blocksweep times on the device's clock only".into(),
            ));
        }
        let required_limits = match choice {
            LimitsChoice::Adapter => adapter.limits(),
            LimitsChoice::Default => wgpu::Limits::default(),
        };
        let desc = wgpu::DeviceDescriptor {
            label: Some("blocksweep"),
            required_features: if inside_passes { want | inside } else { want },
            required_limits,
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| WebGpuError::Unavailable(format!("requestDevice: {e}")))?;
        let uncaught = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaught);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(crate::error::one_line(&e.to_string()));
            }
        }));
        let lost = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut v) = sink.lock() {
                *v = Some(format!("{reason:?}: {message}"));
            }
        });
        let period_ns = queue.get_timestamp_period();
        Ok(DeviceContext {
            device,
            queue,
            period_ns,
            inside_passes,
            uncaught,
            lost,
        })
    }

    /// Runs `f` inside error scopes for validation, memory and internal errors; what they
    /// caught (or an error no scope caught meanwhile) is the result's error, named by `call`.
    pub fn scoped<T>(&self, call: &'static str, f: impl FnOnce() -> T) -> WebGpuResult<T> {
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f();
        let caught = [validation.pop(), memory.pop(), internal.pop()]
            .into_iter()
            .find_map(pollster::block_on);
        if let Some(e) = caught {
            return Err(WebGpuError::caught(call, e));
        }
        self.healthy(call)?;
        Ok(value)
    }

    /// An error if the device was lost or an error escaped the scopes.
    pub fn healthy(&self, call: &'static str) -> WebGpuResult<()> {
        if let Some(why) = self.lost.lock().ok().and_then(|l| l.clone()) {
            return Err(WebGpuError::DeviceLost(why));
        }
        let uncaught = self.uncaught.lock().map(|mut v| std::mem::take(&mut *v));
        match uncaught.ok().filter(|v| !v.is_empty()) {
            Some(v) => Err(WebGpuError::Driver {
                call,
                message: v.join("; "),
            }),
            None => Ok(()),
        }
    }

    /// Waits for `index` to finish, up to `deadline` (none: for ever); `what` names it.
    pub fn wait(
        &self,
        index: wgpu::SubmissionIndex,
        deadline: Option<Duration>,
        what: &'static str,
    ) -> WebGpuResult<()> {
        let poll = wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: deadline,
        };
        match self.device.poll(poll) {
            Ok(_) => self.healthy("Device::poll"),
            Err(wgpu::PollError::Timeout) => Err(WebGpuError::Deadline {
                what,
                seconds: deadline.map_or(0.0, |d| d.as_secs_f64()),
            }),
            Err(e) => Err(WebGpuError::Driver {
                call: "Device::poll",
                message: e.to_string(),
            }),
        }
    }

    /// Finishes and submits `encoder`; a command it recorded against a limit fails at its finish.
    fn submit(&self, encoder: wgpu::CommandEncoder) -> WebGpuResult<wgpu::SubmissionIndex> {
        let commands = self.scoped("CommandEncoder::finish", || encoder.finish())?;
        self.scoped("Queue::submit", || self.queue.submit([commands]))
    }

    /// Submits `encoder` and waits for it, under `deadline`.
    pub fn submit_and_wait(
        &self,
        encoder: wgpu::CommandEncoder,
        deadline: Option<Duration>,
        what: &'static str,
    ) -> WebGpuResult<()> {
        let index = self.submit(encoder)?;
        self.wait(index, deadline, what)
    }

    /// Maps `buffer`'s first `len` bytes for reading, waits, and hands them to `read`.
    pub fn read_mapped<T>(
        &self,
        buffer: &wgpu::Buffer,
        len: u64,
        read: impl FnOnce(&[u8]) -> T,
    ) -> WebGpuResult<T> {
        let outcome = request_map(buffer, len);
        self.poll_all()?;
        self.finish_map(buffer, len, &outcome, read)
    }

    /// Submits `encoder`, asks for `buffer`'s first `len` bytes to be mapped once it is done,
    /// waits once (up to `deadline`) and hands the bytes to `read`: the submission's wait
    /// delivers the mapping too, where a wait and then a map were two trips.
    pub fn submit_and_read<T>(
        &self,
        encoder: wgpu::CommandEncoder,
        (deadline, what): (Option<Duration>, &'static str),
        (buffer, len): (&wgpu::Buffer, u64),
        read: impl FnOnce(&[u8]) -> T,
    ) -> WebGpuResult<T> {
        let index = self.submit(encoder)?;
        let outcome = request_map(buffer, len);
        self.wait(index, deadline, what)?;
        self.finish_map(buffer, len, &outcome, read)
    }

    /// Waits for every submission and delivers what is mapped.
    fn poll_all(&self) -> WebGpuResult<()> {
        let poll = wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        };
        self.device
            .poll(poll)
            .map(|_| ())
            .map_err(|e| WebGpuError::Driver {
                call: "Device::poll",
                message: e.to_string(),
            })
    }

    /// The mapping `outcome` reports (polled once more where the wait did not deliver it),
    /// read and unmapped.
    fn finish_map<T>(
        &self,
        buffer: &wgpu::Buffer,
        len: u64,
        outcome: &Mapping,
        read: impl FnOnce(&[u8]) -> T,
    ) -> WebGpuResult<T> {
        let taken = |o: &Mapping| o.lock().ok().and_then(|mut v| v.take());
        let result = match taken(outcome) {
            Some(r) => Some(r),
            None => {
                self.poll_all()?;
                taken(outcome)
            }
        };
        let failed = |message: String| WebGpuError::Driver {
            call: "Buffer::map_async",
            message,
        };
        match result {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(failed(e.to_string())),
            None => return Err(failed("the mapping did not complete".into())),
        }
        let slice = buffer.slice(..len);
        let view = slice.get_mapped_range().map_err(|e| WebGpuError::Driver {
            call: "Buffer::get_mapped_range",
            message: e.to_string(),
        })?;
        let value = read(&view);
        drop(view);
        buffer.unmap();
        Ok(value)
    }
}

/// Where a mapping's callback leaves its result.
type Mapping = Arc<Mutex<Option<Result<(), wgpu::BufferAsyncError>>>>;

/// Asks for `buffer`'s first `len` bytes to be mapped for reading; the result arrives at a poll.
fn request_map(buffer: &wgpu::Buffer, len: u64) -> Mapping {
    let outcome: Mapping = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&outcome);
    buffer
        .slice(..len)
        .map_async(wgpu::MapMode::Read, move |r| {
            if let Ok(mut v) = sink.lock() {
                *v = Some(r);
            }
        });
    outcome
}
