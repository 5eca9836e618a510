//! The conformance kit (crates/conformance) on every CUDA device this machine has; without
//! one, each trial is reported as ignored with the reason (failed under
//! BLOCKSWEEP_REQUIRE=cuda).

fn main() -> std::process::ExitCode {
    blocksweep_conformance::main(&blocksweep_cuda::PROVIDER)
}
