//! `blocksweep devices` drawn: the physical devices, then each API's devices or why it has none.

use blocksweep_core::report::{DevicesReport, Envelope};
use blocksweep_core::DeviceIdentity;

use crate::layout::{Column, Layout, Table};
use crate::text::Doc;
use crate::{to_csv, Render};

fn render_text(report: &DevicesReport, layout: Layout, md: bool) -> String {
    let mut doc = Doc::new(layout, md);
    if md {
        doc.heading(2, "Physical devices");
    }
    doc.para(
        "Physical devices: each API's view of one device, grouped by UUID, then PCI bus id, \
         then name (the match column says which rule joined them).",
    );
    let mut t = Table::new(vec![
        Column::right("#"),
        Column::left("device").wrap(16),
        Column::left("type"),
        Column::left("UUID"),
        Column::left("APIs (device index in each)").wrap(14),
        Column::left("match"),
    ]);
    for p in &report.physical_devices {
        let apis: Vec<String> = p
            .members
            .iter()
            .map(|m| format!("{} #{}", m.api, m.index))
            .collect();
        let uuid = p.uuid.map(|u| blocksweep_core::backend::format_uuid(&u));
        t.push(vec![
            p.index.to_string(),
            p.name.clone(),
            p.kind.to_string(),
            match (uuid, md) {
                (Some(u), true) => u,
                // Its first 8 hex digits: a prefix `--device` accepts.
                (Some(u), false) => format!("{}…", &u[..8]),
                (None, _) => "—".into(),
            },
            apis.join(", "),
            p.rule.to_string(),
        ]);
    }
    let legend = match md {
        true => String::new(),
        false => "UUID: the first 8 hex digits, enough for --device; --format json or csv \
                  gives it whole."
            .to_string(),
    };
    doc.table(&t, &legend, &Default::default());
    if md {
        doc.heading(2, "APIs");
    }
    let mut lines = Vec::new();
    for a in &report.apis {
        let api = a.api;
        match &a.unavailable {
            // "<API>: unavailable: <why>": scripts (tools/slurm) read this line.
            Some(why) if why.contains("install") => {
                lines.push(format!("{api}: unavailable: {why}"))
            }
            Some(why) => lines.push(format!(
                "{api}: unavailable: {why} (to use it: {})",
                api.info().install_hint
            )),
            None => {
                for d in &a.devices {
                    lines.push(format!("{api} #{}: {}", d.index, describe(d)));
                }
            }
        }
    }
    match md {
        true => doc.list(&lines),
        false => doc.lines(&lines),
    }
    doc.finish()
}

/// "llvmpipe — CPU, driver Mesa 22.3.6, Vulkan 1.3.230, platform llvmpipe, PCI ...".
fn describe(d: &DeviceIdentity) -> String {
    let version = d.api_version_named();
    format!(
        "{} — {}, driver {}, {version}{}{}",
        d.name,
        d.kind,
        d.driver_version,
        if d.platform.is_empty() {
            String::new()
        } else {
            format!(", platform {}", d.platform)
        },
        d.pci_bus_id
            .as_ref()
            .map(|p| format!(", PCI {p}"))
            .unwrap_or_default()
    )
}

impl Render for DevicesReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        render_text(self, layout, md)
    }
    /// One line per API device, and one per API without a device (its reason in the last
    /// column).
    fn csv(&self) -> String {
        let mut rec: Vec<Vec<String>> = vec![[
            "api",
            "index",
            "name",
            "type",
            "vendor",
            "driver",
            "api_version",
            "platform",
            "uuid",
            "pci_bus_id",
            "physical_device",
            "match",
            "unavailable",
        ]
        .map(String::from)
        .to_vec()];
        for a in &self.apis {
            if let Some(why) = &a.unavailable {
                let mut r = vec![a.api.key().to_string()];
                r.resize(12, String::new());
                r.push(why.clone());
                rec.push(r);
            }
            for d in &a.devices {
                let p = self.physical_of(d);
                rec.push(vec![
                    d.api.key().into(),
                    d.index.to_string(),
                    d.name.clone(),
                    // As in the JSON: "gpu", "cpu", "other".
                    d.kind.to_string().to_lowercase(),
                    d.vendor.clone(),
                    d.driver_version.clone(),
                    d.api_version.clone(),
                    d.platform.clone(),
                    d.uuid_string().unwrap_or_default(),
                    d.pci_bus_id.clone().unwrap_or_default(),
                    p.map(|p| p.index.to_string()).unwrap_or_default(),
                    p.map(|p| p.rule.to_string()).unwrap_or_default(),
                    String::new(),
                ]);
            }
        }
        to_csv(&rec)
    }
    /// The envelope (every device of every API), then `physical_devices` and `unavailable`.
    fn json(&self) -> String {
        let devices = self.apis.iter().flat_map(|a| &a.devices);
        Envelope::now("devices", devices).document(self)
    }
}
