//! End to end on the CPU drivers: `compare` of two sweeps of Vulkan and OpenCL, each API on
//! its own CPU device, answers across those devices, and no line a user reads calls a CPU
//! device a GPU (the table, markdown, CSV and the plot's titles).

use crate::support::{both, scratch, succeeds, words};

/// "GPU" as a word of its own (not inside a name).
fn says_gpu(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            l.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == "GPU" || w == "GPUs")
        })
        .collect()
}

#[test]
fn compare_of_cpu_sweeps_calls_the_devices_devices() {
    if !both() {
        return;
    }
    let dir = scratch("across-cpu");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for (out, size) in [(&a, "320x180"), (&b, "256x256")] {
        let mut args = words("sweep --backend all --reps 2 --warmups 1 --blocks 32,64,128 -q");
        args.extend(["--size", size, "-o", out.to_str().unwrap()]);
        succeeds(&args);
    }
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let table = succeeds(&["compare", a, b, "--wide"]);
    // Each API ran on its own CPU device: the answer spans two devices.
    assert!(table.contains("Across devices (grayscale)"), "{table}");
    assert!(
        table.contains("each device's and each API's best"),
        "{table}"
    );
    let md = succeeds(&["compare", a, b, "--format", "markdown"]);
    assert!(md.contains("## Across devices (grayscale)"), "{md}");
    let csv = succeeds(&["compare", a, b, "--format", "csv"]);
    let svg = dir.join("across.svg");
    succeeds(&["compare", a, b, "--plot", svg.to_str().unwrap(), "-q"]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("portable: worst of every device"), "{svg}");
    for (what, text) in [
        ("table", &table),
        ("markdown", &md),
        ("csv", &csv),
        ("plot", &svg),
    ] {
        let gpu = says_gpu(text);
        assert!(
            gpu.is_empty(),
            "the {what} calls a CPU device a GPU: {gpu:#?}"
        );
    }
}
