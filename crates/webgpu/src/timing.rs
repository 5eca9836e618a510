//! run_batch: dispatches recorded back to back in compute passes, timed on the device's clock
//! by timestamp queries written at the beginning and end of a pass: one pass around a whole
//! batch (wgpu puts a barrier between its dispatches), or one pass per dispatch. One submit,
//! one wait, under the deadline.

use std::time::Duration;

use blocksweep_core::{BatchTimes, Stamps, TimerInfo};

use crate::context::DeviceContext;
use crate::error::{WebGpuError, WebGpuResult};

/// Queries per query set (wgpu's QUERY_SET_MAX_QUERIES).
const SET_QUERIES: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// The query sets (grown to the largest batch) and the buffers their ticks come back through.
pub(crate) struct Timestamps {
    sets: Vec<wgpu::QuerySet>,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

impl Timestamps {
    /// Query sets for at least `queries` timestamps: `kept` where it has enough.
    fn sized(
        kept: Option<Timestamps>,
        ctx: &DeviceContext,
        queries: u32,
    ) -> WebGpuResult<Timestamps> {
        let sets = queries.div_ceil(SET_QUERIES).max(1) as usize;
        if let Some(t) = kept.filter(|t| t.sets.len() >= sets) {
            return Ok(t);
        }
        let bytes = sets as u64 * u64::from(SET_QUERIES) * 8;
        ctx.scoped("createQuerySet", || Timestamps {
            sets: (0..sets)
                .map(|_| {
                    ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                        label: Some("timestamps"),
                        ty: wgpu::QueryType::Timestamp,
                        count: SET_QUERIES,
                    })
                })
                .collect(),
            resolve: ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps resolved"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps read"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        })
    }

    /// Writes timestamp `query` (counting across the sets) inside `pass`.
    fn write(&self, pass: &mut wgpu::ComputePass<'_>, query: u32) {
        let set = &self.sets[(query / SET_QUERIES) as usize];
        pass.write_timestamp(set, query % SET_QUERIES);
    }

    /// Resolves the first `queries` timestamps and copies them where they are read.
    fn resolve(&self, encoder: &mut wgpu::CommandEncoder, queries: u32) {
        for (i, set) in self.sets.iter().enumerate() {
            let used = queries
                .saturating_sub(i as u32 * SET_QUERIES)
                .min(SET_QUERIES);
            if used > 0 {
                let offset = i as u64 * u64::from(SET_QUERIES) * 8;
                encoder.resolve_query_set(set, 0..used, &self.resolve, offset);
            }
        }
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, u64::from(queries) * 8);
    }

    /// The timestamp writes of query pair `pair` (its beginning and end).
    fn pair(&self, pair: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        let at = pair * 2;
        let set = &self.sets[(at / SET_QUERIES) as usize];
        let local = at % SET_QUERIES;
        wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(local),
            end_of_pass_write_index: Some(local + 1),
        }
    }
}

/// What one batch dispatches: a pipeline, its bind group, and the workgroup counts.
pub(crate) struct Dispatch<'a> {
    pub pipeline: &'a wgpu::ComputePipeline,
    pub bind_group: &'a wgpu::BindGroup,
    pub groups: [u32; 3],
    /// "kernel" or "copy", for the deadline's message.
    pub what: &'static str,
}

/// `count` dispatches back to back, timed as `stamps` asks; waits once, up to `deadline`.
/// With `flush` (`--cold`), each timed pass follows a clearBuffer of that whole buffer, outside
/// the pass and so outside its interval (with [`Stamps::Each`] only).
pub(crate) fn batch(
    ctx: &DeviceContext,
    timestamps: &mut Option<Timestamps>,
    d: &Dispatch<'_>,
    (count, stamps): (u32, Stamps),
    deadline: Option<Duration>,
    flush: Option<&wgpu::Buffer>,
) -> WebGpuResult<BatchTimes> {
    // Each, without a flush and where the device can: one pass, a timestamp before the first
    // dispatch and after each (count + 1 queries), as Vulkan's vkCmdWriteTimestamp between
    // back-to-back dispatches. Otherwise a pass per dispatch, stamped at its ends.
    let inside = stamps == Stamps::Each && flush.is_none() && ctx.inside_passes;
    let queries = match stamps {
        Stamps::None => 0,
        Stamps::Batch => 2,
        Stamps::Each if inside => count + 1,
        Stamps::Each => count * 2,
    };
    let ts = match queries {
        0 => None,
        n => {
            let kept = timestamps.take();
            Some(&*timestamps.insert(Timestamps::sized(kept, ctx, n)?))
        }
    };
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    ctx.scoped("dispatchWorkgroups", || {
        let one_each = stamps == Stamps::Each && !inside;
        let (passes, per_pass) = if one_each { (count, 1) } else { (1, count) };
        for p in 0..passes {
            if let Some(scratch) = flush {
                encoder.clear_buffer(scratch, 0, None);
            }
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: ts.filter(|_| !inside).map(|t| t.pair(p)),
            });
            pass.set_pipeline(d.pipeline);
            pass.set_bind_group(0, d.bind_group, &[]);
            let stamp = |pass: &mut wgpu::ComputePass<'_>, q: u32| {
                if let (true, Some(t)) = (inside, ts) {
                    t.write(pass, q);
                }
            };
            stamp(&mut pass, 0);
            for k in 0..per_pass {
                pass.dispatch_workgroups(d.groups[0], d.groups[1], d.groups[2]);
                stamp(&mut pass, k + 1);
            }
        }
        if let Some(t) = ts {
            t.resolve(&mut encoder, queries);
        }
    })
    .map_err(|e| match e {
        WebGpuError::Driver { message, .. } => WebGpuError::LaunchRejected(message),
        other => other,
    })?;
    // A dispatch past a limit shows when the encoder is finished: wgpu's refusal of the launch.
    let refused = |e: WebGpuError| match e {
        WebGpuError::Driver {
            call: "CommandEncoder::finish",
            message,
        } => WebGpuError::LaunchRejected(message),
        other => other,
    };
    let Some(t) = ts else {
        ctx.submit_and_wait(encoder, deadline, d.what)
            .map_err(refused)?;
        return Ok(BatchTimes::default());
    };
    let ticks = ctx
        .submit_and_read(
            encoder,
            (deadline, d.what),
            (&t.read, u64::from(queries) * 8),
            |bytes| {
                bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect::<Vec<u64>>()
            },
        )
        .map_err(refused)?;
    let spans: Vec<(u64, u64)> = match inside {
        true => ticks.windows(2).map(|p| (p[0], p[1])).collect(),
        false => ticks.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
    };
    let intervals = (spans.into_iter())
        .map(|(a, b)| interval_ms(a, b, ctx.period_ns))
        .collect::<WebGpuResult<Vec<f64>>>()?;
    Ok(match stamps {
        Stamps::Batch => BatchTimes {
            batch_ms: intervals.first().copied(),
            each_ms: Vec::new(),
        },
        _ => BatchTimes {
            batch_ms: None,
            each_ms: intervals,
        },
    })
}

/// Makes the query sets and runs the timestamp path once, untimed, around one empty dispatch: its first
/// use on NVIDIA's driver cost 24-150 ms (the kit's timed batches on the H100, call18), which
/// would otherwise land in the first timed batch's host wait.
pub(crate) fn warm(ctx: &DeviceContext, timestamps: &mut Option<Timestamps>) -> WebGpuResult<()> {
    let kept = timestamps.take();
    let t = &*timestamps.insert(Timestamps::sized(kept, ctx, 2)?);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    ctx.scoped("resolveQuerySet", || {
        // One dispatch of a shader that does nothing, between the two stamps, as a batch has.
        let module = ctx
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("timestamp warm-up"),
                source: wgpu::ShaderSource::Wgsl("@compute @workgroup_size(1) fn main() {}".into()),
            });
        let pipeline = ctx
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("timestamp warm-up"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(t.pair(0)),
        });
        pass.set_pipeline(&pipeline);
        pass.dispatch_workgroups(1, 1, 1);
        drop(pass);
        encoder.resolve_query_set(&t.sets[0], 0..2, &t.resolve, 0);
        encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, 16);
    })?;
    ctx.submit_and_wait(encoder, None, "timestamp warm-up")?;
    ctx.read_mapped(&t.read, 16, |_| ())
}

/// Milliseconds between two timestamps; a zero or backward pair is an error, not a time
/// (a query read before it was written reads 0: gfx-rs/wgpu#6406).
fn interval_ms(start: u64, end: u64, period_ns: f32) -> WebGpuResult<f64> {
    if start == 0 || end <= start {
        return Err(WebGpuError::Driver {
            call: "resolveQuerySet",
            message: format!("timestamps {start} to {end}: not an interval"),
        });
    }
    Ok((end - start) as f64 * f64::from(period_ns) / 1e6)
}

/// How this backend times, and the clock's resolution.
pub(crate) fn timer(period_ns: f32) -> TimerInfo {
    TimerInfo {
        method: "timestamp queries at the beginning and end of compute passes (wgpu)".into(),
        resolution_ns: f64::from(period_ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_scale_by_the_period_and_refuse_zeros() {
        assert_eq!(interval_ms(1000, 3_001_000, 1.0).unwrap(), 3.0);
        assert_eq!(interval_ms(10, 20, 100_000.0).unwrap(), 1.0);
        assert!(interval_ms(0, 5, 1.0).is_err());
        assert!(interval_ms(7, 7, 1.0)
            .unwrap_err()
            .to_string()
            .contains("not an interval"));
    }
}
