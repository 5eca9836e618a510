//! entry_points.rs's unit tests.

use super::*;

/// Identifiers in `code` that name a CUDA driver entry point (`cu` then a capital).
fn driver_names(code: &str) -> Vec<String> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 2 && w.starts_with("cu") && w.as_bytes()[2].is_ascii_uppercase())
        .map(str::to_string)
        .collect()
}

/// The crate's sources: comment lines and test modules left out.
fn sources() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        // Test files (`*_tests.rs`) name entry points in their assertions.
        let tests = path.to_string_lossy().ends_with("_tests.rs");
        if path.extension().is_some_and(|e| e == "rs") && !tests {
            let text = std::fs::read_to_string(&path).unwrap();
            let code: Vec<&str> = text
                .lines()
                .take_while(|l| l.trim() != "#[cfg(test)]")
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            out.push((path.display().to_string(), code.join("\n")));
        }
    }
    assert!(
        out.len() >= 10,
        "read {} files from {}",
        out.len(),
        dir.display()
    );
    out
}

#[test]
fn every_driver_call_in_the_sources_is_in_the_list() {
    for (file, code) in sources() {
        // cudarc's own call layers bypass the table and return its CUresult enum.
        let bypass = code.matches("sys::cu").count()
            + code.matches("result::").count()
            + code.matches("CudaContext").count()
            + code.matches("CudaStream").count()
            - code.matches("std::result::").count();
        assert_eq!(
            bypass, 0,
            "{file} calls through cudarc: add the entry point to the table"
        );
        for name in driver_names(&code) {
            // A header name such as cuMemcpyDtoDAsync is the versioned symbol underneath.
            let known = DRIVER_ENTRY_POINTS.contains(&name.as_str())
                || DRIVER_ENTRY_POINTS.contains(&format!("{name}_v2").as_str())
                || OPTIONAL_DRIVER_ENTRY_POINTS.contains(&name.as_str());
            assert!(
                known,
                "{file} names {name}, which is not in DRIVER_ENTRY_POINTS"
            );
        }
        for (i, _) in code.match_indices("nvrtc!(") {
            let args = code[i + "nvrtc!(".len()..]
                .split('(')
                .next()
                .unwrap_or_default();
            let name = args.rsplit(',').next().unwrap_or_default().trim();
            assert!(
                NVRTC_ENTRY_POINTS.contains(&name),
                "{file}: nvrtc!({args}(...)) is not in NVRTC_ENTRY_POINTS"
            );
        }
    }
}

#[test]
fn the_lists_are_the_floor_names() {
    // Nothing newer than CUDA 12.0: the 12.8 symbol is not called, the 12.0 one is.
    assert!(!DRIVER_ENTRY_POINTS.contains(&"cuEventElapsedTime_v2"));
    assert!(DRIVER_ENTRY_POINTS.contains(&"cuEventElapsedTime"));
    // A 12.4 entry point is optional, never required.
    assert!(!DRIVER_ENTRY_POINTS.contains(&"cuFuncGetParamInfo"));
    assert!(OPTIONAL_DRIVER_ENTRY_POINTS.contains(&"cuFuncGetParamInfo"));
    let mut sorted = DRIVER_ENTRY_POINTS.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        DRIVER_ENTRY_POINTS.len(),
        "a name is listed twice"
    );
    assert_eq!(driver_names("x = cu!(cuInit(0)); // CUdevice"), ["cuInit"]);
}

#[test]
fn versions_from_library_file_names() {
    let f = "/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.535.309.01";
    assert_eq!(file_version(f).as_deref(), Some("535.309.01"));
    assert_eq!(file_version("/usr/lib/libcuda.so.1"), None);
    assert_eq!(
        file_version("libnvrtc.so.12.0.140").as_deref(),
        Some("12.0.140")
    );
}
