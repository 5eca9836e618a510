//! The limits report: one API's limits in full, or the APIs side by side by concept, each
//! value under its native name, beside what each specification guarantees (`tables`); the
//! same figures and guarantees in CSV and JSON (`files`).
//!
//! The guarantees shown are each API's own ([`blocksweep_core::ApiInfo::guarantees`], quoted
//! with their sections in the backend crates and docs/limits.md).

mod files;
mod rows;
mod tables;
mod units;

pub use rows::human_bytes;

use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};

use crate::layout::Layout;
use crate::text::Doc;
use crate::Render;

impl Render for LimitsReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        per_device(
            &self.groups,
            (layout, md),
            |g| g.heading.as_deref(),
            |g, doc| match g.views.len() {
                0 => {}
                1 => tables::render_single(&g.views[0], doc),
                _ => tables::render_cross(g, doc),
            },
        )
    }
    /// `api,concept,value,native_name,device,guaranteed`: one line per limit an API reported
    /// (`concept` is the JSON field; `extra` for API-specific ones), with what its
    /// specification guarantees.
    fn csv(&self) -> String {
        files::csv(self)
    }
    /// The envelope, then `limits`: one object per API view, every device's in turn, each limit
    /// with what its specification guarantees, and the view's `guarantees`.
    fn json(&self) -> String {
        files::json(self)
    }
}

/// One document per group, headed by its physical device when there are several: the reports
/// that answer per physical device (`limits`, `validate`).
pub(crate) fn per_device<G>(
    groups: &[G],
    (layout, md): (Layout, bool),
    heading: impl Fn(&G) -> Option<&str>,
    mut body: impl FnMut(&G, &mut Doc),
) -> String {
    let mut out = Vec::new();
    for g in groups {
        let mut doc = Doc::new(layout, md);
        if groups.len() > 1 {
            if let Some(h) = heading(g) {
                doc.heading(1, h);
            }
        }
        body(g, &mut doc);
        out.push(doc.finish());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout;
    use blocksweep_core::limits::Named;
    use blocksweep_core::testing::{HostBackend, TEST_API_A, TEST_API_B};
    use blocksweep_core::{Api, Backend};

    fn view(api: Api, threads: u64) -> ApiLimits {
        let mut b = HostBackend::new(api);
        b.limits.max_threads_per_block = Some(Named::new(threads, "MAX_THREADS"));
        ApiLimits {
            device: b.identity().clone(),
            limits: b.limits().clone(),
            kernel: b.kernel_facts().clone(),
            timer: b.timer(),
        }
    }

    #[test]
    fn differences_are_marked_only_on_one_physical_device() {
        let mut g = LimitsGroup {
            heading: None,
            one_physical_device: true,
            views: vec![view(TEST_API_A, 1024), view(TEST_API_B, 512)],
        };
        let one = LimitsReport {
            groups: vec![g.clone()],
        };
        let s = one.table(Layout::default());
        assert!(s.contains("max threads per block  ≠"), "{s}");
        assert!(s.contains("spec ≥"), "{s}");
        assert!(layout::max_line_width(&s) <= 100, "{s}");
        g.one_physical_device = false;
        let two = LimitsReport { groups: vec![g] };
        let s = two.table(Layout::default());
        assert!(!s.contains("block  ≠"), "{s}");
        assert!(s.contains("different devices"), "{s}");
        let json: serde_json::Value = serde_json::from_str(&two.json()).unwrap();
        assert_eq!(json["command"], "limits");
        assert_eq!(json["limits"].as_array().unwrap().len(), 2);
        assert!(two
            .csv()
            .starts_with("api,concept,value,native_name,device,guaranteed\n"));
        assert!(two
            .markdown(Layout::default())
            .contains("| **max threads per block** "));
    }

    /// The guarantee the cross table shows beside a limit is in the CSV and the JSON beside
    /// it, also where the API does not report the limit.
    #[test]
    fn each_limit_carries_its_guarantee_into_the_files() {
        let mut unreported = view(TEST_API_B, 512);
        unreported.limits.max_threads_per_block = None;
        let report = LimitsReport {
            groups: vec![LimitsGroup {
                heading: None,
                one_physical_device: false,
                views: vec![view(TEST_API_A, 1024), view(TEST_API_B, 512), unreported],
            }],
        };
        let csv = report.csv();
        let threads: Vec<&str> = csv
            .lines()
            .filter(|l| l.contains(",max_threads_per_block,"))
            .collect();
        assert_eq!(threads.len(), 3, "{csv}");
        assert!(threads[0].starts_with("alpha,max_threads_per_block,1024,MAX_THREADS,"));
        assert!(threads[0].ends_with(','), "alpha promises nothing: {csv}");
        assert!(threads[1].starts_with("beta,max_threads_per_block,512,MAX_THREADS,"));
        assert!(threads[1].ends_with(",128"), "{csv}");
        assert!(threads[2].starts_with("beta,max_threads_per_block,,,"));
        assert!(threads[2].ends_with(",128"), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        let limit = |i: usize, key: &str| json["limits"][i]["limits"][key].clone();
        assert_eq!(
            limit(0, "max_threads_per_block")["guaranteed"],
            serde_json::Value::Null
        );
        assert_eq!(limit(1, "max_threads_per_block")["guaranteed"], "128");
        assert_eq!(limit(1, "warp_size")["guaranteed"], serde_json::Value::Null);
        assert_eq!(limit(1, "warp_size")["value"], 32);
        assert_eq!(
            json["limits"][1]["kernel"]["registers"]["guaranteed"],
            serde_json::Value::Null
        );
        assert_eq!(json["limits"][2]["guarantees"][0]["minimum"], "128");
    }
}
