//! The devices in hand written as a target file (`blocksweep limits -o mygpu.toml`), so that a
//! colleague's GPU is captured once and checked against anywhere (`--target ./mygpu.toml`).
//! Each API's view of a device becomes one target, its values under the API's own names, the
//! source the query itself (tool, device, driver, date).

use std::fmt::Write;

use blocksweep_core::limits::{Dims, Limits, Named};
use blocksweep_core::DeviceIdentity;

use crate::model::Key;

/// One API's view of a device, as `limits` read it.
pub struct View<'a> {
    pub device: &'a DeviceIdentity,
    pub limits: &'a Limits,
}

/// The target file's text: family `family` (the file's stem), one target per view.
pub fn target_file(family: &str, views: &[View], tool: &str, date: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by `{tool} limits -o` on {date}: each API's view of the devices in hand as \
         a target.\n# `--target <this file>` checks launches against it (docs/targets.md)."
    );
    let _ = writeln!(out, "family = {}", quote(&slug(family)));
    let _ = writeln!(
        out,
        "title = {}",
        quote(&format!("{family} (blocksweep limits)"))
    );
    let day = date.get(..10).unwrap_or(date);
    for (i, v) in views.iter().enumerate() {
        let d = v.device;
        let _ = writeln!(out, "\n[sources.view{i}]");
        let document = format!(
            "{tool} limits: {} through {} (driver {}), the API's own queries",
            d.name,
            d.api_version_named(),
            d.driver_version
        );
        let _ = writeln!(out, "document = {}", quote(&document));
        let _ = writeln!(out, "read = {}", quote(day));
    }
    let mut names: Vec<String> = Vec::new();
    for (i, v) in views.iter().enumerate() {
        let mut name = format!("{}-{}", slug(&v.device.name), v.device.api.key());
        while names.contains(&name) {
            name.push_str("-2");
        }
        names.push(name.clone());
        target(&mut out, &name, i, v);
    }
    out
}

fn target(out: &mut String, name: &str, i: usize, v: &View) {
    let d = v.device;
    let _ = writeln!(out, "\n[[targets]]");
    let _ = writeln!(out, "name = {}", quote(name));
    let _ = writeln!(out, "title = {}", quote(&format!("{} ({})", d.name, d.api)));
    let _ = writeln!(out, "api = {}", quote(d.api.key()));
    let _ = writeln!(out, "kind = \"device\"");
    let _ = writeln!(out, "source = \"view{i}\"");
    let _ = writeln!(out, "[targets.limits]");
    for (key, value, label) in values(v.limits) {
        let _ = writeln!(
            out,
            "{} = {{ value = {value}, name = {} }}",
            key.key(),
            quote(&label)
        );
    }
    if let Some((min, max, default, label)) = subgroup(v.limits) {
        let _ = writeln!(out, "[targets.subgroup]");
        let _ = writeln!(out, "min = {min}\nmax = {max}");
        if let Some(d) = default {
            let _ = writeln!(out, "default = {d}");
        }
        let _ = writeln!(out, "name = {}", quote(&label));
    }
}

/// (key, value as TOML, the API's name) for every limit the view states.
pub fn values(l: &Limits) -> Vec<(Key, String, String)> {
    let mut out = Vec::new();
    let mut one = |key: Key, n: &Option<Named<u64>>| {
        if let Some(n) = n {
            out.push((key, n.value.to_string(), n.name.clone()));
        }
    };
    one(Key::ThreadsPerBlock, &l.max_threads_per_block);
    one(Key::SharedBytes, &l.shared_mem_per_block);
    one(Key::SharedBytesOptin, &l.shared_mem_per_block_optin);
    one(Key::RegistersPerBlock, &l.registers_per_block);
    one(Key::RegistersPerSm, &l.registers_per_mp);
    one(Key::ThreadsPerSm, &l.max_threads_per_mp);
    one(Key::BlocksPerSm, &l.max_blocks_per_mp);
    match &l.max_buffer_binding_bytes {
        Some(_) => one(Key::StorageBindingBytes, &l.max_buffer_binding_bytes),
        None => one(Key::StorageBindingBytes, &l.max_alloc_bytes),
    }
    let dims = |n: &Option<Named<Dims>>| {
        n.as_ref().map(|n| {
            let [x, y, z] = n.value.0;
            (format!("[{x}, {y}, {z}]"), n.name.clone())
        })
    };
    if let Some((v, name)) = dims(&l.max_block_dims) {
        out.push((Key::BlockDims, v, name));
    }
    if let Some((v, name)) = dims(&l.max_grid_dims) {
        out.push((Key::GridDims, v, name));
    }
    if let Some(m) = &l.mp_model {
        out.push((
            Key::RegisterGranularity,
            m.register_granularity.to_string(),
            format!("register allocation unit per warp ({})", m.source),
        ));
    }
    let extras = [
        ("maxPushConstantsSize", Key::PushConstantBytes),
        ("CL_DEVICE_MAX_PARAMETER_SIZE", Key::ParameterBytes),
        ("maxPerStageDescriptorStorageBuffers", Key::StorageBuffers),
        ("maxStorageBuffersPerShaderStage", Key::StorageBuffers),
        (
            "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
            Key::SharedBytesPerSm,
        ),
        (
            "RESERVED_SHARED_MEMORY_PER_BLOCK",
            Key::SharedReservedPerBlock,
        ),
    ];
    for (name, key) in extras {
        let found = l
            .extra
            .iter()
            .find(|(k, _)| k.ends_with(name))
            .and_then(|(k, v)| v.trim().parse::<u64>().ok().map(|v| (k, v)));
        if let Some((k, v)) = found {
            out.push((key, v.to_string(), k.clone()));
        }
    }
    out.sort_by_key(|(k, _, _)| *k);
    out
}

/// The subgroup sizes: the range where the API states one, else the one size it reports.
pub fn subgroup(l: &Limits) -> Option<(u64, u64, Option<u64>, String)> {
    let extra = |name: &str| {
        l.extra
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.trim().parse::<u64>().ok())
    };
    let size = l.warp_size.as_ref().filter(|w| w.value > 0);
    match (extra("minSubgroupSize"), extra("maxSubgroupSize"), size) {
        (Some(min), Some(max), s) if min > 0 && min <= max => Some((
            min,
            max,
            s.map(|s| s.value).filter(|v| (min..=max).contains(v)),
            "minSubgroupSize / maxSubgroupSize".into(),
        )),
        (_, _, Some(s)) => Some((s.value, s.value, Some(s.value), s.name.clone())),
        _ => None,
    }
}

/// "NVIDIA H200" → "nvidia-h200": lowercase letters, digits and '-', at most 40 characters.
pub fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9') => s.push(c),
            _ if !s.ends_with('-') && !s.is_empty() => s.push('-'),
            _ => {}
        }
    }
    let mut s: String = s.trim_end_matches('-').chars().take(40).collect();
    while s.ends_with('-') {
        s.pop();
    }
    match s.is_empty() {
        true => "device".into(),
        false => s,
    }
}

fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
