//! The conformance kit (crates/conformance) on every WebGPU adapter this machine has.

fn main() -> std::process::ExitCode {
    blocksweep_conformance::main(&blocksweep_webgpu::PROVIDER)
}
