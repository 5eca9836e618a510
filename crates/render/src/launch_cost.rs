//! `blocksweep launch-cost` drawn: per physical device, one row per API with what a dispatch
//! costs back to back (device and host clock) and one at a time (host clock).

use blocksweep_core::launch_cost::{CostGroup, CostReport, LaunchCost};
use blocksweep_core::report::Envelope;

use crate::layout::{Column, Layout, Table};
use crate::limits::per_device;
use crate::text::Doc;
use crate::{to_csv, Render};

/// "4.21": microseconds as the table shows them.
fn us(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

fn group(g: &CostGroup, doc: &mut Doc, md: bool) {
    let Some(first) = g.costs.first() else {
        doc.para("No API measured a launch.");
        return;
    };
    doc.para(format!(
        "What one dispatch costs: the built-in grayscale kernel over one pixel (one block of {} \
         threads, grid 1, the pixel checked against the CPU), {} dispatches back to back, then \
         {} one at a time. Microseconds per dispatch.",
        first.launch.block, first.config.dispatches, first.config.round_trips
    ));
    let mut t = Table::new(vec![
        Column::left("API"),
        Column::left("device").wrap(12),
        Column::right("device µs"),
        Column::right("enqueue µs"),
        Column::right("round trip µs"),
        Column::right("min"),
        Column::right("p90"),
        Column::right("timer ns"),
    ]);
    for c in &g.costs {
        t.push(vec![
            c.device.api.to_string(),
            c.device.name.clone(),
            us(c.device_us),
            us(c.enqueue_us),
            us(c.round_trip.median_us),
            us(c.round_trip.min_us),
            us(c.round_trip.p90_us),
            c.timer.resolution_ns.to_string(),
        ]);
    }
    doc.table(&t, "", &Default::default());
    let lines = [
        "device µs: the device clock around the back-to-back batch, over its dispatches: how \
         long each dispatch holds the device when the queue never runs dry (for a kernel this \
         small, mostly the gap between kernels).",
        "enqueue µs: the host clock around that same batch (enqueued, then one wait): how fast \
         the host issues dispatches.",
        "round trip µs: the host clock around one dispatch and its wait (median, minimum, 90th \
         percentile): what a program that waits for every kernel pays.",
        "timer ns: the device timer's resolution, as the API states it (its method is in the \
         CSV and JSON).",
        "Host figures include blocksweep's own work around each API; benches/ times the same \
         with nothing but the API (docs/launch-cost.md).",
    ];
    match md {
        true => doc.list(&lines.map(String::from)),
        false => doc.lines(&lines.map(String::from)),
    }
}

impl Render for CostReport {
    fn text(&self, layout: Layout, md: bool) -> String {
        per_device(
            &self.groups,
            (layout, md),
            |g| g.heading.as_deref(),
            |g, doc| group(g, doc, md),
        )
    }

    /// One line per API of each device.
    fn csv(&self) -> String {
        let mut rec: Vec<Vec<String>> = vec![[
            "api",
            "device",
            "block",
            "grid",
            "dispatches",
            "round_trips",
            "device_us",
            "enqueue_us",
            "round_trip_median_us",
            "round_trip_min_us",
            "round_trip_p90_us",
            "timer",
            "timer_resolution_ns",
        ]
        .map(String::from)
        .to_vec()];
        for c in self.costs() {
            rec.push(line(c));
        }
        to_csv(&rec)
    }

    /// The envelope, then `groups`: each device's costs, every figure in microseconds.
    fn json(&self) -> String {
        let devices = self.costs().map(|c| &c.device);
        Envelope::now("launch-cost", devices).document(self)
    }
}

fn line(c: &LaunchCost) -> Vec<String> {
    vec![
        c.device.api.key().to_string(),
        c.device.name.clone(),
        c.launch.block.to_string(),
        c.launch.grid.to_string(),
        c.config.dispatches.to_string(),
        c.config.round_trips.to_string(),
        format!("{:.4}", c.device_us),
        format!("{:.4}", c.enqueue_us),
        format!("{:.4}", c.round_trip.median_us),
        format!("{:.4}", c.round_trip.min_us),
        format!("{:.4}", c.round_trip.p90_us),
        c.timer.method.clone(),
        c.timer.resolution_ns.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::launch_cost::{measure, CostConfig};
    use blocksweep_core::testing::{HostBackend, TEST_API_A, TEST_API_B};

    fn report() -> CostReport {
        let config = CostConfig {
            dispatches: 20,
            round_trips: 5,
            ..CostConfig::default()
        };
        let costs = [TEST_API_A, TEST_API_B]
            .map(|api| measure(&mut HostBackend::new(api), &config).unwrap())
            .to_vec();
        CostReport {
            groups: vec![CostGroup {
                heading: None,
                costs,
            }],
        }
    }

    #[test]
    fn every_format_has_a_line_per_api() {
        let r = report();
        let text = r.text(Layout::new(200), false);
        for api in [TEST_API_A, TEST_API_B] {
            assert!(text.contains(&api.to_string()), "{text}");
        }
        assert!(text.contains("20 dispatches back to back, then 5 one at a time"));
        let csv = r.csv();
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(csv.lines().nth(1).unwrap().contains(",32,1,20,5,"), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&r.json()).unwrap();
        assert_eq!(json["command"], "launch-cost");
        assert_eq!(json["groups"][0]["costs"].as_array().unwrap().len(), 2);
        assert!(json["groups"][0]["costs"][1]["device_us"].as_f64().unwrap() > 0.0);
    }
}
