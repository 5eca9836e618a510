//! Progress on stderr while a sweep runs; hidden when stderr is not a terminal, so logs and
//! pipes get results only.

use std::io::IsTerminal;

use blocksweep_core::sweep::{Observer, SweepRow};
use blocksweep_core::{Api, BlockSize};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        if !std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        if let Ok(style) = ProgressStyle::with_template("{prefix:>7} [{bar:30}] {pos}/{len} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        Bar { bar }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for Bar {
    /// A status line (e.g. "compiling the kernel"), shown only on a terminal.
    fn status(&mut self, api: Option<Api>, what: &str) {
        self.bar
            .set_prefix(api.map(|a| a.to_string()).unwrap_or_default());
        self.bar.set_message(what.to_string());
        self.bar.tick();
    }

    fn row_started(&mut self, api: Api, index: usize, count: usize, block: BlockSize) {
        self.bar.set_prefix(api.to_string());
        self.bar.set_length(count as u64);
        self.bar.set_position(index as u64);
        self.bar.set_message(format!("block {block}"));
    }

    fn row_finished(&mut self, _api: Api, _row: &SweepRow) {
        self.bar.inc(1);
    }
}
