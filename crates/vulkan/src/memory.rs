//! Buffers: a `VkBuffer` bound to its own memory ([`Buffer`]), mapped for good where it is
//! staging; a program's buffers and their bindings; and the one staging buffer their host
//! copies go through ([`Staging`]), lent in place for a staged read-back.

use std::ptr::NonNull;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::{Named, ProgramArg};

use crate::command::{record_copy_from, record_host_read_barrier, Commands};
use crate::context::DeviceContext;
use crate::error::{
    map_allocate_memory, map_bind_memory, map_host_device_oom, map_map_memory, VulkanError,
    VulkanResult,
};

/// Where a buffer's memory lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemoryKind {
    /// DEVICE_LOCAL: a program's buffers and the copy-ceiling buffers.
    DeviceLocal,
    /// HOST_VISIBLE | HOST_COHERENT (HOST_CACHED preferred, for read-back): staging.
    Staging,
}

impl MemoryKind {
    /// The property flags a memory type must have, and those it should have.
    fn flags(self) -> (vk::MemoryPropertyFlags, vk::MemoryPropertyFlags) {
        match self {
            MemoryKind::DeviceLocal => (
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
            ),
            MemoryKind::Staging => (
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
                vk::MemoryPropertyFlags::HOST_CACHED,
            ),
        }
    }
}

/// Index of a memory type allowed by `type_bits` with all of `required`, preferring one that
/// also has `preferred`.
fn memory_type(
    memory: &vk::PhysicalDeviceMemoryProperties,
    type_bits: u32,
    required: vk::MemoryPropertyFlags,
    preferred: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let flags = |i: u32| memory.memory_types[i as usize].property_flags;
    let candidates: Vec<u32> = (0..memory.memory_type_count)
        .filter(|&i| type_bits & (1 << i) != 0)
        .filter(|&i| flags(i).contains(required))
        .collect();
    candidates
        .iter()
        .copied()
        .find(|&i| flags(i).contains(preferred))
        .or(candidates.first().copied())
}

/// A `VkBuffer` bound to its own `VkDeviceMemory`, both freed on drop.
pub(crate) struct Buffer {
    device: Arc<DeviceContext>,
    pub raw: vk::Buffer,
    memory: vk::DeviceMemory,
    pub size: u64,
    /// Staging only: the whole allocation, mapped once at creation and unmapped on drop, so
    /// no host access pays for vkMapMemory / vkUnmapMemory.
    mapping: Option<Mapping>,
}

/// Where a staging buffer's memory appears in the host's address space.
struct Mapping {
    ptr: NonNull<u8>,
    /// The memory type is HOST_CACHED: the CPU reads it through its caches. Uncached
    /// (write-combined) memory reads an order of magnitude slower, so it is never lent.
    cached: bool,
}

// SAFETY: the mapping is an address range of this process that stays valid until the buffer
// unmaps it on drop; it moves with the buffer, and host access through it goes through
// `Buffer`'s methods, whose borrows keep reads and writes apart.
unsafe impl Send for Mapping {}

impl Buffer {
    /// Creates and binds a buffer. `max_alloc` is maxMemoryAllocationSize, checked against the
    /// driver's real requirement (which may exceed `size`) before allocating.
    pub fn new(
        device: &Arc<DeviceContext>,
        size: u64,
        usage: vk::BufferUsageFlags,
        kind: MemoryKind,
        max_alloc: Option<&Named<u64>>,
    ) -> VulkanResult<Buffer> {
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: `device.raw` is alive (the Arc); the create info outlives the call.
        let raw = unsafe { device.raw.create_buffer(&info, None) }
            .map_err(map_host_device_oom("vkCreateBuffer"))?;
        // From here on, an early return drops `buffer`, which destroys what exists so far.
        let mut buffer = Buffer {
            device: device.clone(),
            raw,
            memory: vk::DeviceMemory::null(),
            size,
            mapping: None,
        };
        // SAFETY: `raw` was just created on this device.
        let req = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        if let Some(max) = max_alloc.filter(|m| req.size > m.value) {
            return Err(VulkanError::TooLarge(format!(
                "a buffer of {size} bytes needs an allocation of {} bytes; {} is {}",
                req.size, max.name, max.value
            )));
        }
        let (required, preferred) = kind.flags();
        let type_index = memory_type(&device.memory, req.memory_type_bits, required, preferred)
            .ok_or_else(|| {
                VulkanError::Unavailable(format!(
                    "no memory type with {required:?} for a buffer (memoryTypeBits 0x{:x})",
                    req.memory_type_bits
                ))
            })?;
        // A buffer reached by address needs memory allocated for it (bufferDeviceAddress).
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(type_index);
        if usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS) {
            alloc = alloc.push_next(&mut flags);
        }
        // SAFETY: the allocate info outlives the call; `type_index` is a memory type the buffer's
        // `memory_type_bits` allows.
        buffer.memory = unsafe { device.raw.allocate_memory(&alloc, None) }
            .map_err(map_allocate_memory("vkAllocateMemory"))?;
        // SAFETY: the buffer and memory were made above on this device, the memory of a type and
        // size the buffer's requirements allow, and the buffer is bound once, at offset 0.
        unsafe { device.raw.bind_buffer_memory(raw, buffer.memory, 0) }
            .map_err(map_bind_memory("vkBindBufferMemory"))?;
        if kind == MemoryKind::Staging {
            let flags = device.memory.memory_types[type_index as usize].property_flags;
            let d = &device.raw;
            // SAFETY: HOST_VISIBLE memory (Staging requires it), not mapped yet; the whole
            // allocation stays mapped until drop.
            let ptr = unsafe {
                d.map_memory(
                    buffer.memory,
                    0,
                    vk::WHOLE_SIZE,
                    vk::MemoryMapFlags::empty(),
                )
            }
            .map_err(map_map_memory("vkMapMemory"))?;
            let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| {
                VulkanError::Usage("vkMapMemory succeeded with a null pointer".into())
            })?;
            buffer.mapping = Some(Mapping {
                ptr,
                cached: flags.contains(vk::MemoryPropertyFlags::HOST_CACHED),
            });
        }
        Ok(buffer)
    }

    /// Copies `data` into the start of a staging buffer.
    #[cfg(any(test, feature = "test-support"))]
    pub fn write(&mut self, data: &[f32]) -> VulkanResult<()> {
        let bytes = std::mem::size_of_val(data);
        let p = self.mapped(bytes)?;
        if p.align_offset(std::mem::align_of::<f32>()) != 0 {
            // Vulkan maps at least minMemoryMapAlignment (>= 64) bytes aligned; checked anyway.
            // SAFETY: as below, byte for byte.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), p, bytes) };
            return Ok(());
        }
        // SAFETY: the mapping covers `bytes` bytes, is f32-aligned (checked above), and
        // `&mut self` rules out a staged view of it; HOST_COHERENT needs no flush, and the next
        // vkQueueSubmit makes host writes visible to the device.
        let dst = unsafe { std::slice::from_raw_parts_mut(p.cast::<f32>(), data.len()) };
        blocksweep_core::frame::copy_parallel(dst, data);
        Ok(())
    }

    /// Copies the start of a staging buffer into `out`. The caller has waited for the copy
    /// that filled it (and its barrier to HOST_READ).
    #[cfg(any(test, feature = "test-support"))]
    pub fn read(&self, out: &mut [f32]) -> VulkanResult<()> {
        let bytes = std::mem::size_of_val(out);
        let p = self.mapped(bytes)?;
        // SAFETY: as in `write`; HOST_COHERENT memory needs no invalidate.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr().cast::<u8>(), bytes) };
        Ok(())
    }

    /// Copies `data` into the start of a staging buffer, byte for byte, on every core (a
    /// plane's pieces of 2 GiB went through here on one core at a few GB/s).
    pub fn write_bytes(&mut self, data: &[u8]) -> VulkanResult<()> {
        let p = self.mapped(data.len())?;
        // SAFETY: the mapping covers `data.len()` bytes (checked by `mapped`) and `&mut self`
        // rules out a staged view of it; HOST_COHERENT needs no flush.
        let dst = unsafe { std::slice::from_raw_parts_mut(p, data.len()) };
        blocksweep_core::frame::copy_parallel(dst, data);
        Ok(())
    }

    /// Copies the start of a staging buffer into `out`, byte for byte, on every core. The
    /// caller has waited for the copy that filled it (and its barrier to HOST_READ).
    pub fn read_bytes(&self, out: &mut [u8]) -> VulkanResult<()> {
        let p = self.mapped(out.len())?;
        // SAFETY: as in `write_bytes`; HOST_COHERENT memory needs no invalidate, and nothing
        // writes the mapping while `&self` is borrowed.
        let src = unsafe { std::slice::from_raw_parts(p.cast_const(), out.len()) };
        blocksweep_core::frame::copy_parallel(out, src);
        Ok(())
    }

    /// The first `len` bytes of a staging buffer, read in place; `None` where its memory is
    /// not HOST_CACHED (reading write-combined memory from the CPU is very slow: copy it out
    /// with [`Buffer::read_bytes`] instead).
    ///
    /// # Safety
    ///
    /// The caller has waited for every device write to the buffer (and the barrier to
    /// HOST_READ), and records none while the slice lives.
    pub unsafe fn staged_view(&self, len: usize) -> VulkanResult<Option<&[u8]>> {
        let p = self.mapped(len)?;
        if !self.host_cached() {
            return Ok(None);
        }
        // SAFETY: `len` bytes inside the mapping (checked by `mapped`); HOST_COHERENT needs no
        // invalidate. The device does not write them while the slice lives (the caller's
        // promise), and the host does not either: the writes take `&mut self`.
        Ok(Some(unsafe { std::slice::from_raw_parts(p, len) }))
    }

    /// The buffer's device address; made with SHADER_DEVICE_ADDRESS usage on a device with
    /// bufferDeviceAddress enabled (the pieces' callers check both).
    pub fn address(&self) -> u64 {
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.raw);
        // SAFETY: the buffer is alive and bound (`&self`), made with SHADER_DEVICE_ADDRESS usage
        // on a device with the feature enabled (the callers' promise, as the doc says).
        unsafe { self.device.raw.get_buffer_device_address(&info) }
    }

    /// Whether the buffer is mapped and its memory type HOST_CACHED.
    pub fn host_cached(&self) -> bool {
        self.mapping.as_ref().is_some_and(|m| m.cached)
    }

    /// The start of a staging buffer's mapping, where `bytes` bytes fit it.
    fn mapped(&self, bytes: usize) -> VulkanResult<*mut u8> {
        let mapping = self.mapping.as_ref().ok_or_else(|| {
            VulkanError::Usage("host access to a buffer that is not staging".into())
        })?;
        if bytes == 0 || bytes as u64 > self.size {
            return Err(VulkanError::Usage(format!(
                "host copy of {bytes} bytes does not fit a {}-byte staging buffer",
                self.size
            )));
        }
        Ok(mapping.ptr.as_ptr())
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the backend waits for the queue before dropping buffers; the mapping was
        // made once, at creation; destroying null handles (a half-built buffer) is a no-op.
        unsafe {
            if self.mapping.is_some() {
                self.device.raw.unmap_memory(self.memory);
            }
            self.device.raw.destroy_buffer(self.raw, None);
            self.device.raw.free_memory(self.memory, None);
        }
    }
}

/// A device-local buffer for each buffer argument, refused by name above maxStorageBufferRange
/// or maxMemoryAllocationSize.
pub(crate) fn allocate(
    context: &Arc<DeviceContext>,
    (max_range, max_alloc): (Option<&Named<u64>>, Option<&Named<u64>>),
    args: &[ProgramArg],
) -> VulkanResult<Vec<Option<Buffer>>> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST;
    let too_large = |i: usize, bytes: u64, limit: &Named<u64>| {
        VulkanError::TooLarge(format!(
            "argument {i}: a buffer of {bytes} bytes; {} is {}",
            limit.name, limit.value
        ))
    };
    let one = |(i, a): (usize, &ProgramArg)| -> VulkanResult<Option<Buffer>> {
        let ProgramArg::Buffer { bytes, .. } = *a else {
            return Ok(None);
        };
        if bytes == 0 {
            return Err(VulkanError::Usage(format!(
                "argument {i}: a buffer of 0 bytes (Vulkan has no empty buffers)"
            )));
        }
        if let Some(limit) = max_range.filter(|l| bytes > l.value) {
            return Err(too_large(i, bytes, limit));
        }
        let total = a.allocation();
        if let Some(limit) = max_alloc.filter(|l| total > l.value) {
            return Err(too_large(i, total, limit));
        }
        let kind = MemoryKind::DeviceLocal;
        Buffer::new(context, total, usage, kind, max_alloc).map(Some)
    };
    args.iter().enumerate().map(one).collect()
}

/// Each buffer's binding: from past its leading guard band, over the kernel's bytes and the
/// trailing band too, so that a store past the end lands in the band and is found (lavapipe and
/// NVIDIA drop a store past a binding's range, which would hide it). Where the shader reads the
/// array's length (`.length()`), or the range would pass maxStorageBufferRange, the binding
/// ends with the kernel's bytes.
pub(crate) fn bound_ranges(
    buffers: &[Option<Buffer>],
    args: &[ProgramArg],
    found: &crate::reflect::Reflection,
    max_range: Option<&Named<u64>>,
) -> Vec<(vk::Buffer, u64, u64)> {
    let mut binding = 0u32;
    let mut ranges = Vec::new();
    for (b, a) in buffers.iter().zip(args) {
        let (Some(b), ProgramArg::Buffer { bytes, guard }) = (b, a) else {
            continue;
        };
        let reads_length = found.length_read.contains(&(0, binding));
        let with_tail = bytes + guard;
        let fits = max_range.is_none_or(|m| with_tail <= m.value);
        let range = match reads_length || !fits {
            true => *bytes,
            false => with_tail,
        };
        ranges.push((b.raw, *guard, range));
        binding += 1;
    }
    ranges
}

/// The staging buffer every host copy of a program's buffers goes through, and that
/// [`Backend::read_buffer_staged`](blocksweep_core::Backend) lends: one persistently mapped
/// buffer, kept while the size the program needs stays the same (across programs too: the lab
/// loads one kernel after another over the same frame), so the frame's host memory is one
/// plane's.
#[derive(Default)]
pub(crate) struct Staging {
    buffer: Option<Buffer>,
}

impl Staging {
    /// The staging buffer of `bytes`, made on first use and remade when the size changes.
    pub fn of(
        &mut self,
        device: &Arc<DeviceContext>,
        bytes: u64,
        max_alloc: Option<&Named<u64>>,
    ) -> VulkanResult<&mut Buffer> {
        if !matches!(&self.buffer, Some(b) if b.size == bytes) {
            // The old one first: nothing pending uses it.
            self.buffer = None;
            let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
            let buffer = Buffer::new(device, bytes, usage, MemoryKind::Staging, max_alloc)?;
            self.buffer = Some(buffer);
        }
        self.buffer
            .as_mut()
            .ok_or_else(|| VulkanError::Usage("staging buffer missing".into()))
    }
}

/// Copies `bytes` of `src` from `offset` into the start of `staging`, makes them visible to
/// the host, waits, and lends them in place with no host copy; `None` (and no copy) where the
/// staging memory is not HOST_CACHED.
pub(crate) fn read_in_place<'a>(
    staging: &'a Buffer,
    commands: &mut Commands,
    (src, offset, bytes): (vk::Buffer, u64, u64),
) -> VulkanResult<Option<&'a [u8]>> {
    if !staging.host_cached() {
        return Ok(None);
    }
    let dst = staging.raw;
    commands.run(|d, cb| {
        record_copy_from(d, cb, (src, offset), dst, bytes);
        record_host_read_barrier(d, cb);
    })?;
    // SAFETY: the copy into the staging buffer and its barrier to HOST_READ are waited for;
    // the caller's borrow of the staging buffer outlives the slice, so nothing records into
    // it until the slice is dropped.
    unsafe { staging.staged_view(bytes as usize) }
}
