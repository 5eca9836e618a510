//! Mesa's Vulkan drivers, as wgpu enumerates them with every window-system extension on (it
//! cannot be told not to), print "XDG_RUNTIME_DIR is invalid or not set in the environment."
//! on the process's own stderr where no Wayland session is: twice per enumeration, words about
//! windows a compute run never opens. The enumeration runs with fd 2 captured by the core and
//! that line dropped; anything else is passed on unchanged.

/// Runs `f` (an adapter enumeration) with the process's stderr captured; what the drivers
/// printed there, less the Wayland line, is written to stderr afterwards.
pub(crate) fn quieted<T>(f: impl FnOnce() -> T) -> T {
    blocksweep_core::stderr::quieted(is_wayland_noise, f)
}

fn is_wayland_noise(line: &str) -> bool {
    line.contains("XDG_RUNTIME_DIR is invalid or not set")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_wayland_line_is_noise() {
        assert!(super::is_wayland_noise(
            "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
        ));
        assert!(!super::is_wayland_noise("error: something real"));
    }
}
