//! blocksweep's vulkan backend (placeholder).
