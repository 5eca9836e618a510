#!/usr/bin/env bash
# The toolchain floor check (tests/tests/msrv.rs): the workspace's rust-version must be at least
# the highest rust-version of any package it builds (cargo metadata's resolved graph for this host,
# normal and build dependencies). Prints which package sets the floor and through which chain.
# Only one toolchain is on the CI machines, so this stands in for `cargo +<msrv> check`.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test -q -p blocksweep-tests --test msrv -- --nocapture --test-threads 1
