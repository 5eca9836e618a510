//! `blocksweep devices`: physical devices with the APIs that see them, then each API's status.

use std::process::ExitCode;

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::args::{DevicesArgs, FormatChoice};
use crate::output::stdio;

pub fn run(args: &DevicesArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    if args.format == FormatChoice::Json {
        let unavailable: Vec<serde_json::Value> = reg
            .apis()
            .filter_map(|a| {
                reg.unavailable(a)
                    .map(|why| serde_json::json!({"api": a, "reason": why}))
            })
            .collect();
        let v = serde_json::json!({ "physical_devices": reg.physical, "unavailable": unavailable });
        stdio::println(&serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut b = Builder::default();
    b.push_record([
        "#",
        "device",
        "type",
        "UUID",
        "APIs (API device index)",
        "match",
    ]);
    for p in &reg.physical {
        let apis: Vec<String> = p
            .members
            .iter()
            .map(|m| format!("{} #{}", m.api, m.index))
            .collect();
        b.push_record([
            p.index.to_string(),
            p.name.clone(),
            p.kind.to_string(),
            p.uuid
                .map(|u| blocksweep_core::backend::format_uuid(&u))
                .unwrap_or_else(|| "—".into()),
            apis.join(", "),
            p.rule.to_string(),
        ]);
    }
    let mut t = b.build();
    t.with(Style::blank());
    let mut text = format!("{t}\n\n");
    for api in reg.apis() {
        match reg.unavailable(api) {
            // "<API>: unavailable: <why>": scripts (tools/slurm) read this line.
            Some(why) if why.contains("install") => {
                text.push_str(&format!("{api}: unavailable: {why}\n"))
            }
            Some(why) => text.push_str(&format!(
                "{api}: unavailable: {why} (to use it: {})\n",
                api.info().install_hint
            )),
            None => {
                for d in reg.devices(api) {
                    text.push_str(&format!(
                        "{api} #{}: {} — {}, driver {}, {} {}{}{}\n",
                        d.index,
                        d.name,
                        d.kind,
                        d.driver,
                        api,
                        d.api_version,
                        if d.platform.is_empty() {
                            String::new()
                        } else {
                            format!(", platform {}", d.platform)
                        },
                        d.pci_bus_id
                            .as_ref()
                            .map(|p| format!(", PCI {p}"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
    }
    stdio::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
