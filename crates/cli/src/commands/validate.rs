//! `blocksweep validate`: portable sizing assumptions, launched on every API.

use std::process::ExitCode;

use blocksweep_core::validate::{self, Outcome};
use blocksweep_core::Frame;

use crate::args::{FormatChoice, ValidateArgs};
use crate::output::stdio;

pub fn run(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let reg = super::registry();
    let targets = super::resolve(&reg, &args.device)?;
    let options = args.device.open_options();
    // Small, and not a multiple of any block size, so coverage bugs cannot hide.
    let frame = Frame::generate(509, 253, 3);
    let reference = frame.reference();
    let mut checks = Vec::new();
    let mut apis = Vec::new();
    let mut failed = false;
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
    match args.format {
        FormatChoice::Json => stdio::println(&serde_json::to_string_pretty(&checks)?)?,
        f => stdio::print(&validate::render(
            &checks,
            &apis,
            f == FormatChoice::Markdown,
        ))?,
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
