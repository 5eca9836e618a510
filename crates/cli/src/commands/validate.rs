//! `blocksweep validate`: portable sizing assumptions, launched on every API.

use std::process::ExitCode;

use blocksweep_core::validate::{self, Outcome};
use blocksweep_core::Frame;

use crate::args::{FormatChoice, ValidateArgs};
use crate::output::stdio;

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let each = super::resolve_each(&reg, &args.device)?;
    let options = args.device.open_options();
    // Small, and not a multiple of any block size, so coverage bugs cannot hide.
    let frame = Frame::generate(509, 253, 3);
    let reference = frame.reference();
    let md = args.format == FormatChoice::Markdown;
    let mut all_checks = Vec::new();
    let mut text = String::new();
    let mut failed = false;
    for targets in &each {
        let mut checks = Vec::new();
        let mut apis = Vec::new();
        for d in &targets.devices {
            let result = reg
                .open(d, &options)
                .and_then(|mut b| validate::run(b.as_mut(), &frame, &reference));
            match result {
                Ok(c) => {
                    apis.push((d.api, d.name.clone()));
                    checks.extend(c);
                }
                Err(e) => {
                    warn!("{e}");
                    failed = true;
                }
            }
        }
        if each.len() > 1 {
            text.push_str(&super::device_heading(targets, md));
        }
        text.push_str(&validate::render(&checks, &apis, md));
        all_checks.extend(checks);
    }
    let checks = all_checks;
    match args.format {
        FormatChoice::Json => stdio::println(&serde_json::to_string_pretty(&checks)?)?,
        _ => stdio::print(&text)?,
    }
    let wrong = checks
        .iter()
        .any(|c| matches!(c.outcome, Outcome::Wrong { .. }));
    Ok(if wrong || failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
