//! Cross-API tests live in `tests/`; the end-to-end tests that drive the `blocksweep` binary
//! live beside it, in `crates/cli/tests/`.

#![warn(clippy::undocumented_unsafe_blocks)]
