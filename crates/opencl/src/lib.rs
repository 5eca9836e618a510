//! blocksweep's opencl backend (placeholder).
