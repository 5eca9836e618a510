//! `blocksweep limits`: one API in full, or every API side by side with spec minimums.

use std::process::ExitCode;

use blocksweep_core::report::limits::{render_cross, render_single, ApiLimits};

use crate::args::{FormatChoice, LimitsArgs};
use crate::output::stdio;

pub fn run(args: &LimitsArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let options = args.device.open_options();
    let mut groups: Vec<Vec<ApiLimits>> = Vec::new();
    let mut failed = false;
    for targets in &each {
        let mut views = Vec::new();
        for d in &targets.devices {
            match reg.open(d, &options) {
                Ok(b) => views.push(ApiLimits {
                    device: b.identity().clone(),
                    limits: b.limits().clone(),
                    kernel: b.kernel_facts().clone(),
                    timer: b.timer(),
                }),
                Err(e) => {
                    warn!("{e}");
                    failed = true;
                }
            }
        }
        groups.push(views);
    }
    let md = args.format == FormatChoice::Markdown;
    let views: Vec<ApiLimits> = groups.iter().flatten().cloned().collect();
    match args.format {
        FormatChoice::Json => stdio::println(&serde_json::to_string_pretty(&views)?)?,
        FormatChoice::Csv => {
            let mut text = String::from("api,concept,value,native_name\n");
            for v in &views {
                for (concept, value, name) in csv_rows(v) {
                    text.push_str(&format!(
                        "{},{},{},{}\n",
                        v.device.api.key(),
                        quote(&concept),
                        quote(&value),
                        quote(&name)
                    ));
                }
            }
            stdio::print(&text)?;
        }
        _ => {
            let mut text = String::new();
            for (targets, views) in each.iter().zip(&groups) {
                if each.len() > 1 {
                    text.push_str(&super::device_heading(targets, md));
                }
                match views.len() {
                    0 => {}
                    1 => text.push_str(&render_single(&views[0], md)),
                    _ => text.push_str(&render_cross(views, md)),
                }
                if each.len() > 1 {
                    text.push('\n');
                }
            }
            stdio::print(&text)?;
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_rows(v: &ApiLimits) -> Vec<(String, String, String)> {
    let j = serde_json::to_value(&v.limits).unwrap_or_default();
    let mut out = Vec::new();
    if let Some(map) = j.as_object() {
        for (k, val) in map {
            if let (Some(value), Some(name)) =
                (val.get("value"), val.get("name").and_then(|n| n.as_str()))
            {
                out.push((k.clone(), value.to_string(), name.to_string()));
            }
        }
    }
    for (k, val) in &v.limits.extra {
        out.push(("extra".into(), val.clone(), k.clone()));
    }
    out
}
