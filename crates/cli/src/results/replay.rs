//! What a replay says of the run it shows: where, when and by what it was measured, before
//! the text (nothing is measured now).

use blocksweep_core::report::Report;
use blocksweep_render::layout::{wrap, Layout};
use blocksweep_render::Format;

/// The note before a replay's text (a table's line, a markdown quote); JSON and CSV stay what
/// the run wrote.
pub fn noted(f: Format, l: Layout, note: &str, body: String) -> String {
    match f {
        Format::Table => format!("{}\n\n{body}", wrap(note, l.width)),
        Format::Markdown => format!("> {note}\n\n{body}"),
        Format::Json | Format::Csv => body,
    }
}

/// "Replay of a tune of reduce-elems measured on NVIDIA H200 on 2026-12-06 at 02:47:10 UTC
/// by blocksweep 0.1.0; nothing was measured now."
pub fn tune_provenance(reports: &[blocksweep_core::tune::TuneReport]) -> String {
    let Some(first) = reports.first() else {
        return "Replay of a tune; nothing was measured now.".into();
    };
    let mut devices: Vec<&str> = reports
        .iter()
        .flat_map(|r| &r.devices)
        .map(String::as_str)
        .collect();
    devices.dedup();
    let on = match devices.is_empty() {
        true => String::new(),
        false => format!(" on {}", devices.join(" and ")),
    };
    format!(
        "Replay of a tune of {}{on} measured {} by {}; nothing was measured now.",
        first.kernel,
        when(&first.date),
        first.tool
    )
}

/// "on 2026-12-01 at 20:17:51 UTC" from an RFC 3339 date.
fn when(date: &str) -> String {
    match date.split_once('T') {
        Some((day, time)) => format!("on {day} at {} UTC", time.trim_end_matches('Z')),
        None => format!("on {date}"),
    }
}

/// "Replay of a run measured on NVIDIA H200 (CUDA, Vulkan, OpenCL) on 2026-12-01 at
/// 20:17:51 UTC by blocksweep 0.1.0; nothing was measured now."
pub fn provenance(runs: &[Report]) -> String {
    let devices: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            let first = r.results.first()?;
            let apis: Vec<String> = r.results.iter().map(|x| x.api.to_string()).collect();
            Some(format!("{} ({})", first.device.name, apis.join(", ")))
        })
        .collect();
    let first = &runs[0];
    format!(
        "Replay of a run measured on {} {} by {}; nothing was measured now.",
        devices.join(" and "),
        when(&first.date),
        first.tool
    )
}
