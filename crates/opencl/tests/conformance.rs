//! The conformance kit (crates/conformance) on every OpenCL device this machine has.

fn main() -> std::process::ExitCode {
    blocksweep_conformance::main(&blocksweep_opencl::PROVIDER)
}
