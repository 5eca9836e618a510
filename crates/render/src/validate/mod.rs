//! `validate` drawn: per physical device, the assumptions' table (one row per claim, one column
//! per API), the lab's resource rows, and the subgroup table.

mod claims;

use blocksweep_core::report::Envelope;
use blocksweep_core::validate::{verdict_word, Check, LaunchOutcome, ValidateReport};
use blocksweep_core::Api;

use crate::layout::Layout;
use crate::limits::per_device;
use crate::text::Doc;
use crate::{subgroup, to_csv, Render};

fn render_text(report: &ValidateReport, layout: Layout, md: bool) -> String {
    let body = per_device(
        &report.groups,
        (layout, md),
        |g| g.heading.as_deref(),
        |g, doc| {
            claims::render_group(&g.checks, &g.apis, doc);
            let apis: Vec<Api> = g.apis.iter().map(|(a, _)| *a).collect();
            crate::lab::render_resources(&g.resources, &apis, doc);
            subgroup::render(&g.subgroups, &apis, doc);
        },
    );
    match &report.kernel {
        Some(k) => {
            let mut doc = Doc::new(layout, md);
            doc.lines(&[format!("Your kernel: {k}")]);
            format!("{}\n{body}", doc.finish())
        }
        None => body,
    }
}
