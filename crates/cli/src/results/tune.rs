//! A tune's outputs: its `--output` files checked before anything is measured and rewritten
//! after every parameter set (an interrupted tune keeps its rows in them, not only in the
//! cache), then written with stdout and the `--plot` heat maps; and what the core's tune
//! driver asks of the program ([`Caller`]): the progress bar and the lines on stderr.

use blocksweep_core::report::EnvelopeDevice;
use blocksweep_core::sweep::Observer;
use blocksweep_core::tune::{Caller, TuneReport};
use blocksweep_core::DeviceIdentity;
use blocksweep_render::tune::Tunes;
use blocksweep_render::{Format, Layout, Render};

use crate::args::SweepArgs;
use crate::output::files::Files;
use crate::output::OutputTarget;
use crate::progress::Bar;

/// The tune's files and plot, checked, and the devices its document names.
pub struct TuneOutputs {
    files: Files,
    plot: Option<OutputTarget>,
    devices: Vec<DeviceIdentity>,
}

impl TuneOutputs {
    /// Checks every output path (the plot's too) before anything is measured.
    pub fn check(args: &SweepArgs, devices: Vec<DeviceIdentity>) -> anyhow::Result<TuneOutputs> {
        let (files, plot) = super::check_outputs(args)?;
        Ok(TuneOutputs {
            files,
            plot,
            devices,
        })
    }

    /// Every file, then stdout, then the plot; false when a write failed.
    pub fn finish(&self, reports: &[TuneReport]) -> anyhow::Result<bool> {
        let mut written = self
            .files
            .write_each(&|f, l| render(f, l, reports, &self.devices))?;
        if let (Some(p), Some(first)) = (&self.plot, reports.first()) {
            let svg = crate::plot::tune::heat_maps(first);
            match p.write(svg.as_bytes()) {
                Ok(()) => crate::output::stdio::eprint_line(&format!(
                    "blocksweep: wrote {}",
                    p.path().display()
                )),
                Err(e) => {
                    warn!("error: {e}");
                    written = false;
                }
            }
        }
        Ok(written)
    }
}

impl Caller for TuneOutputs {
    fn with_progress(&mut self, sweep: &mut dyn FnMut(&mut dyn Observer)) {
        let mut bar = Bar::new();
        sweep(&mut bar);
        bar.finish();
    }

    fn say(&mut self, line: &str) {
        warn!("{line}");
    }

    /// The regular files rewritten, quietly and never failing the run (the last write
    /// reports errors).
    fn saved(&mut self, so_far: &[TuneReport]) {
        let rows: usize = so_far.iter().map(|r| r.measurements.len()).sum();
        let _ = self
            .files
            .rewrite(rows, &|f, l| render(f, l, so_far, &self.devices));
    }
}

/// One format's text of the tune reports.
fn render(f: Format, l: Layout, reports: &[TuneReport], devices: &[DeviceIdentity]) -> String {
    let devices = devices.iter().map(EnvelopeDevice::of).collect();
    Tunes { reports, devices }.render(f, l)
}
