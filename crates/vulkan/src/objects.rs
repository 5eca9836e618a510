//! The Vulkan objects a shader's pipelines are made with and kept in, each destroyed on drop:
//! the layouts of its storage buffers and push constants, the descriptor pool of its sets
//! (and binding them), and its pipelines by key.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use ash::vk;

use crate::context::DeviceContext;
use crate::error::{map_allocate_descriptor_sets, map_host_device_oom, VulkanResult};

/// A shader's descriptor set layout and pipeline layout ([`storage_layouts`]), destroyed on
/// drop.
pub(crate) struct StorageLayouts {
    device: Arc<DeviceContext>,
    pub set: vk::DescriptorSetLayout,
    pub pipeline: vk::PipelineLayout,
}

impl StorageLayouts {
    /// The layouts of `buffers` storage buffers and `push_bytes` of push constants.
    pub fn new(
        device: &Arc<DeviceContext>,
        buffers: u32,
        push_bytes: u32,
    ) -> VulkanResult<StorageLayouts> {
        let (set, pipeline) = storage_layouts(&device.raw, buffers, push_bytes)?;
        Ok(StorageLayouts {
            device: device.clone(),
            set,
            pipeline,
        })
    }
}

impl Drop for StorageLayouts {
    fn drop(&mut self) {
        let d = &self.device.raw;
        // SAFETY: what was made with them is destroyed or unused (the backend waited for the
        // queue); the pipeline layout before the set layout it names.
        unsafe {
            d.destroy_pipeline_layout(self.pipeline, None);
            d.destroy_descriptor_set_layout(self.set, None);
        }
    }
}

/// The descriptor set layout (`buffers` storage buffers at bindings 0..buffers) and pipeline
/// layout (one compute push-constant range of `push_bytes`, none if 0) that every shader uses.
/// On failure nothing is left behind.
fn storage_layouts(
    d: &ash::Device,
    buffers: u32,
    push_bytes: u32,
) -> VulkanResult<(vk::DescriptorSetLayout, vk::PipelineLayout)> {
    let bindings: Vec<_> = (0..buffers)
        .map(|i| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(i)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    // SAFETY: `d` is a live device; the create infos borrow locals that outlive the calls.
    let set_layout = unsafe {
        d.create_descriptor_set_layout(
            &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
            None,
        )
    }
    .map_err(map_host_device_oom("vkCreateDescriptorSetLayout"))?;
    let range = vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .size(push_bytes);
    let ranges = match push_bytes {
        0 => &[][..],
        _ => std::slice::from_ref(&range),
    };
    let set_layouts = [set_layout];
    // SAFETY: `d` is live; the set layout was created just above, and `set_layouts` and `ranges`
    // outlive the call.
    let layout = unsafe {
        d.create_pipeline_layout(
            &vk::PipelineLayoutCreateInfo::default()
                .set_layouts(&set_layouts)
                .push_constant_ranges(ranges),
            None,
        )
    };
    match layout {
        Ok(layout) => Ok((set_layout, layout)),
        Err(e) => {
            // SAFETY: created above and used by nothing yet.
            unsafe { d.destroy_descriptor_set_layout(set_layout, None) };
            Err(map_host_device_oom("vkCreatePipelineLayout")(e))
        }
    }
}

/// A descriptor pool, destroyed (freeing its sets) on drop.
pub(crate) struct DescriptorPool {
    device: Arc<DeviceContext>,
    raw: vk::DescriptorPool,
}

impl DescriptorPool {
    /// A pool sized for exactly `sets` sets of `layout`, each of `buffers` storage buffers, and
    /// those sets.
    pub fn with_sets(
        device: &Arc<DeviceContext>,
        layout: vk::DescriptorSetLayout,
        sets: u32,
        buffers: u32,
    ) -> VulkanResult<(DescriptorPool, Vec<vk::DescriptorSet>)> {
        let d = &device.raw;
        let size = vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(buffers * sets);
        // A pool size of 0 descriptors is invalid: a kernel with no buffers has none.
        let sizes = match buffers {
            0 => &[][..],
            _ => std::slice::from_ref(&size),
        };
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(sets)
            .pool_sizes(sizes);
        let pool = DescriptorPool {
            device: device.clone(),
            // SAFETY: `d` is the live device `pool` holds an Arc to; `info` and `sizes` outlive the
            // call.
            raw: unsafe { d.create_descriptor_pool(&info, None) }
                .map_err(map_host_device_oom("vkCreateDescriptorPool"))?,
        };
        let layouts = vec![layout; sets as usize];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool.raw)
            .set_layouts(&layouts);
        // SAFETY: the pool was created above with room for exactly these `sets` sets of `buffers`
        // storage buffers; `layouts` outlives the call.
        let sets = unsafe { d.allocate_descriptor_sets(&info) }
            .map_err(map_allocate_descriptor_sets("vkAllocateDescriptorSets"))?;
        Ok((pool, sets))
    }
}

impl Drop for DescriptorPool {
    fn drop(&mut self) {
        // SAFETY: no submission using its sets is pending; destroying frees them.
        unsafe { self.device.raw.destroy_descriptor_pool(self.raw, None) };
    }
}

/// Points bindings 0.. of `set` at the (buffer, offset, range) of `ranges`, as storage
/// buffers. Only called while no command using the set is pending.
pub(crate) fn bind_storage(
    d: &ash::Device,
    set: vk::DescriptorSet,
    ranges: &[(vk::Buffer, u64, u64)],
) {
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = ranges
        .iter()
        .map(|&(buffer, offset, range)| {
            [vk::DescriptorBufferInfo::default()
                .buffer(buffer)
                .offset(offset)
                .range(range)]
        })
        .collect();
    let writes: Vec<_> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info)
        })
        .collect();
    // SAFETY: `writes` and the `infos` they point into outlive the call; callers pass live buffers
    // and a set of this device, and (as the doc says) no pending command uses the set.
    unsafe { d.update_descriptor_sets(&writes, &[]) };
}

/// A shader's pipelines by key, each made on first use; destroyed on drop.
pub(crate) struct PipelineCache<K> {
    device: Arc<DeviceContext>,
    made: HashMap<K, vk::Pipeline>,
}

impl<K: Eq + Hash> PipelineCache<K> {
    pub fn new(device: &Arc<DeviceContext>) -> Self {
        PipelineCache {
            device: device.clone(),
            made: HashMap::new(),
        }
    }

    pub fn get(&self, key: &K) -> Option<vk::Pipeline> {
        self.made.get(key).copied()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.made.contains_key(key)
    }

    pub fn insert(&mut self, key: K, pipeline: vk::Pipeline) {
        self.made.insert(key, pipeline);
    }

    /// Keeps the pipelines made ahead of use ([`Stage::build_parallel`]); one that failed is
    /// only a miss, met again (and reported) when it is asked for.
    ///
    /// [`Stage::build_parallel`]: crate::pipeline::Stage::build_parallel
    pub fn keep(&mut self, made: Vec<(K, VulkanResult<vk::Pipeline>)>) {
        for (key, pipeline) in made {
            if let Ok(pipeline) = pipeline {
                self.made.insert(key, pipeline);
            }
        }
    }
}

impl<K> Drop for PipelineCache<K> {
    fn drop(&mut self) {
        let d = &self.device.raw;
        for (_, p) in self.made.drain() {
            // SAFETY: the backend waited for the queue: no command uses the pipeline.
            unsafe { d.destroy_pipeline(p, None) };
        }
    }
}
