//! The line redrawn on a terminal, the notes written elsewhere, the --max-time warning.

use super::*;

pub(super) fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

pub(super) fn row_style() -> ProgressStyle {
    match ProgressStyle::with_template("{prefix:>7} [{bar:20}] {wide_msg}") {
        Ok(s) => s.progress_chars("=> "),
        Err(_) => ProgressStyle::default_bar(),
    }
}

/// The terminal line for `phase` (hidden targets ignore it).
pub(super) fn redraw(bar: &ProgressBar, phase: &Phase, now: Instant) {
    match phase {
        Phase::Idle => {
            if let Some(busy) = phase.describe(now) {
                bar.set_message(busy);
                bar.tick();
            }
        }
        Phase::Status { .. } => {
            bar.set_message(phase.describe(now).unwrap_or_default());
            bar.tick();
        }
        Phase::Rows(r) => {
            // The message first: each call may draw, and the text is what a reader follows.
            let busy = describe_busy(&trace::busy());
            let line = r.describe(now);
            bar.set_message(busy.map_or(line.clone(), |b| format!("{line}; {b}")));
            bar.set_prefix(r.api.to_string());
            bar.set_length(r.count as u64);
            bar.set_position(r.done.min(r.count) as u64);
        }
    }
}

/// A single row running longer than --max-time is worth a warning before it ends.
pub(super) fn check_row_time(s: &mut Shared, settings: Settings, now: Instant, bar: &ProgressBar) {
    let (Some(max), Phase::Rows(r)) = (settings.max_time, &s.phase) else {
        return;
    };
    let running = now.saturating_duration_since(r.row_started);
    if running > max && !s.warned.contains(&r.api) {
        let text = format!(
            "{}: row {} of {} (block {}) has run for {}, longer than --max-time {} s; {}",
            r.api,
            r.index + 1,
            r.count,
            r.block,
            human(running),
            max.as_secs(),
            settings.on_interrupt()
        );
        s.warned.push(r.api);
        bar.suspend(|| warn!("warning: {text}"));
    }
}

pub(super) fn write_notes(s: &mut Shared, now: Instant) {
    let busy: Vec<String> = trace::busy()
        .into_iter()
        .map(|b| format!("{} {}", b.scope, b.what))
        .collect();
    if busy != s.busy_seen {
        s.busy_seen = busy;
        s.generation += 1;
    }
    let lines: Vec<String> = s.pending.drain(..).collect();
    let wrote = !lines.is_empty();
    for line in lines {
        warn!("{line}");
    }
    if wrote {
        s.last_note = Some((now, s.generation));
        return;
    }
    if !note_due(now, s.run_started, s.last_note, s.generation) {
        return;
    }
    if let Some(line) = s.phase.describe(now) {
        let so_far = human(Duration::from_secs(
            now.saturating_duration_since(s.run_started).as_secs(),
        ));
        warn!("{line}; {so_far} so far");
        s.last_note = Some((now, s.generation));
    }
}
