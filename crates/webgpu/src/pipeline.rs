//! What a pipeline is made against: the launch's workgroup size and storage checked against
//! the device's limits before wgpu sees them, and group 0's layout and bind group (the
//! buffers' kernel parts, then the uniform block of scalars).

use blocksweep_core::Launch;

use crate::context::DeviceContext;
use crate::error::{WebGpuError, WebGpuResult};
use crate::kernel::Reflection;
use crate::memory::{words, Buffer, Uniform};

/// Refuses, naming the limit, a workgroup past the device's size limits or a launch whose
/// workgroup storage (the shared bytes an override sizes, plus the constant part) is past
/// maxComputeWorkgroupStorageSize. WebGPU's createComputePipeline must refuse both, but wgpu
/// 30 does not check a size that override constants set (tried on lavapipe, 2026-12-06: a
/// 1024-invocation pipeline on a 256-invocation device was made and ran).
pub(crate) fn check_limits(
    l: &wgpu::Limits,
    launch: Launch,
    constant_bytes: u64,
) -> WebGpuResult<()> {
    let b = launch.block;
    let sizes = [
        (
            b.x,
            l.max_compute_workgroup_size_x,
            "maxComputeWorkgroupSizeX",
        ),
        (
            b.y,
            l.max_compute_workgroup_size_y,
            "maxComputeWorkgroupSizeY",
        ),
        (
            b.z,
            l.max_compute_workgroup_size_z,
            "maxComputeWorkgroupSizeZ",
        ),
    ];
    let refused = |what: String| {
        Err(WebGpuError::LaunchRejected(format!(
            "{what} (refused before wgpu, which does not check sizes set by override constants)"
        )))
    };
    if let Some((v, max, name)) = sizes.iter().find(|(v, max, _)| v > max) {
        return refused(format!("workgroup {b}: {v} > {name} = {max}"));
    }
    let max = l.max_compute_invocations_per_workgroup;
    if b.threads() > u64::from(max) {
        return refused(format!(
            "workgroup {b} = {} invocations > maxComputeInvocationsPerWorkgroup = {max}",
            b.threads()
        ));
    }
    let storage = u64::from(launch.shared_bytes / 4 * 4) + constant_bytes;
    let max = l.max_compute_workgroup_storage_size;
    if storage > u64::from(max) {
        return refused(format!(
            "{storage} bytes of workgroup storage > maxComputeWorkgroupStorageSize = {max}"
        ));
    }
    Ok(())
}

/// The layout of group 0 (each buffer read-only where the shader only reads it, then the
/// uniform block) and the bind group of the kernel's parts.
pub(crate) fn bind(
    ctx: &DeviceContext,
    refl: &Reflection,
    buffers: &[Option<Buffer>],
    uniform: Option<&Uniform>,
) -> WebGpuResult<(wgpu::PipelineLayout, wgpu::BindGroup)> {
    let parts: Vec<&Buffer> = buffers.iter().flatten().collect();
    let mut entries: Vec<wgpu::BindGroupLayoutEntry> = refl
        .storage
        .iter()
        .map(|&(binding, written)| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage {
                    read_only: !written,
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let mut bound: Vec<wgpu::BindGroupEntry> = parts
        .iter()
        .enumerate()
        .map(|(k, b)| wgpu::BindGroupEntry {
            binding: k as u32,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &b.buffer,
                offset: b.guard,
                size: wgpu::BufferSize::new(words(b.bytes)),
            }),
        })
        .collect();
    if let Some(u) = uniform {
        let binding = parts.len() as u32;
        entries.push(wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
        bound.push(wgpu::BindGroupEntry {
            binding,
            resource: u.buffer.as_entire_binding(),
        });
    }
    ctx.scoped("createBindGroup", || {
        let group_layout = ctx
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("arguments"),
                entries: &entries,
            });
        let layout = ctx
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("arguments"),
                bind_group_layouts: &[Some(&group_layout)],
                immediate_size: 0,
            });
        let group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("arguments"),
            layout: &group_layout,
            entries: &bound,
        });
        (layout, group)
    })
    .map_err(|e| match e {
        WebGpuError::Driver { message, .. } => WebGpuError::OutOfMemory(format!(
            "binding the arguments (a buffer past maxStorageBufferBindingSize?): {message}"
        )),
        other => other,
    })
}
