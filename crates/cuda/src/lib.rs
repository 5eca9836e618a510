//! blocksweep's cuda backend (placeholder).
