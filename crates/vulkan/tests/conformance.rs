//! The conformance kit (crates/conformance) on every Vulkan device this machine has.

fn main() -> std::process::ExitCode {
    blocksweep_conformance::main(&blocksweep_vulkan::PROVIDER)
}
