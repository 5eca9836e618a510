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
        Bar::with_target(if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        })
    }

    /// indicatif ignores the errors of its draws (a full or closed terminal is not a panic);
    /// the test below holds it to that.
    fn with_target(target: ProgressDrawTarget) -> Bar {
        let bar = ProgressBar::with_draw_target(Some(0), target);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A terminal on which every write fails with ENOSPC, counting the attempts.
    #[derive(Debug)]
    struct FullTerminal(Arc<AtomicUsize>);

    impl FullTerminal {
        fn fail(&self) -> io::Result<()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Err(io::Error::from_raw_os_error(libc::ENOSPC))
        }
    }

    impl indicatif::TermLike for FullTerminal {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            self.fail()
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            self.fail()
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            self.fail()
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            self.fail()
        }
        fn write_line(&self, _: &str) -> io::Result<()> {
            self.fail()
        }
        fn write_str(&self, _: &str) -> io::Result<()> {
            self.fail()
        }
        fn clear_line(&self) -> io::Result<()> {
            self.fail()
        }
        fn flush(&self) -> io::Result<()> {
            self.fail()
        }
    }

    #[test]
    fn a_full_terminal_never_panics() {
        let attempts = Arc::new(AtomicUsize::new(0));
        let term = FullTerminal(attempts.clone());
        let mut bar = Bar::with_target(ProgressDrawTarget::term_like_with_hz(Box::new(term), 1));
        let api = blocksweep_drivers::all()[0].api();
        bar.status(Some(api), "compiling the kernel");
        for i in 0..3 {
            bar.row_started(api, i, 3, BlockSize::linear(64));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        bar.finish();
        assert!(
            attempts.load(Ordering::SeqCst) > 0,
            "the bar tried to draw on the failing terminal"
        );
    }
}
