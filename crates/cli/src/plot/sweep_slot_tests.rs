//! The sweep's plot on its categorical axis: a slot per size, a column and a colour per API,
//! and the occupancy strip. The fixtures are the other tests'.

use super::tests::{attr, count, h200, report, result, svg_doc};
use super::*;

/// The horizontal extent of a point's marker, from its drawing's attributes.
fn marker_span(p: roxmltree::Node) -> (f64, f64) {
    let m = p.first_element_child().unwrap();
    match m.tag_name().name() {
        "circle" => (attr(m, "cx") - attr(m, "r"), attr(m, "cx") + attr(m, "r")),
        "rect" => (attr(m, "x"), attr(m, "x") + attr(m, "width")),
        _ => {
            let xs: Vec<f64> = m
                .attribute("d")
                .unwrap()
                .split(['M', 'L', 'Z'])
                .filter_map(|pair| pair.split(',').next()?.parse().ok())
                .collect();
            (
                xs.iter().copied().fold(f64::MAX, f64::min),
                xs.iter().copied().fold(f64::MIN, f64::max),
            )
        }
    }
}

#[test]
fn each_size_has_its_own_slot_and_each_api_its_column_and_colour() {
    let chart = sweep_chart(&h200()).unwrap();
    let svg = chart.to_svg();
    let doc = svg_doc(&svg);
    let points: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("point"))
        .collect();
    // Every marker of a smaller size lies left of every marker of a larger one.
    for a in &points {
        for b in &points {
            if attr(*a, "data-x") < attr(*b, "data-x") {
                assert!(
                    marker_span(*a).1 + 4.0 <= marker_span(*b).0,
                    "{a:?} reaches {b:?}"
                );
            }
        }
    }
    // One colour per API key, whichever APIs ran and in whatever order.
    let colour = |c: &Chart, name: &str| {
        c.series
            .iter()
            .find(|s| s.name.starts_with(name))
            .unwrap()
            .colour
    };
    let alone = sweep_chart(&report(vec![result("vulkan", "H200", 1.0, 0.02)])).unwrap();
    let swapped = report(vec![
        result("opencl", "H200", 1.0, 0.02),
        result("vulkan", "H200", 1.0, 0.02),
    ]);
    let swapped = sweep_chart(&swapped).unwrap();
    assert_eq!(colour(&alone, "Vulkan"), colour(&chart, "Vulkan"));
    assert_eq!(colour(&swapped, "Vulkan"), colour(&chart, "Vulkan"));
    assert_eq!(colour(&swapped, "OpenCL"), colour(&chart, "OpenCL"));
    // Each API's band is in its own column of every slot: bands of two APIs never overlap.
    let bands: Vec<_> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("band"))
        .map(|b| {
            (
                b.attribute("fill").unwrap(),
                attr(b, "x"),
                attr(b, "x") + attr(b, "width"),
            )
        })
        .collect();
    assert_eq!(bands.len(), 3 * 13);
    for a in &bands {
        for b in &bands {
            assert!(
                a.0 == b.0 || a.2 <= b.1 + 1e-6 || b.2 <= a.1 + 1e-6,
                "{a:?} {b:?}"
            );
        }
    }
    // One legend entry per API, then what the marks mean.
    let legend: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("legend-entry"))
        .map(|e| e.last_child().unwrap().text().unwrap())
        .collect();
    assert_eq!(legend[0], "CUDA (copy 3289.3 GB/s)");
    assert_eq!(legend.len(), 3 + 3, "{legend:?}");
}

#[test]
fn occupancy_is_a_strip_of_bars_where_the_rows_have_it() {
    assert!(sweep_chart(&h200()).unwrap().strip.is_none());
    let mut run = h200();
    for r in &mut run.results {
        for row in &mut r.rows {
            row.occupancy = Some(if row.threads <= 32 { 0.5 } else { 1.0 });
        }
    }
    let chart = sweep_chart(&run).unwrap();
    let strip = chart.strip.as_ref().unwrap();
    assert_eq!(
        strip.bars.len(),
        1,
        "the same on every API: one grey series"
    );
    assert_eq!(strip.bars[0].values[0], (16.0, 0.5));
    let svg = chart.to_svg();
    assert_eq!(count(&svg_doc(&svg), "strip-bar"), 13);
    // Different occupancy per API: one series each, in the API's colour.
    run.results[2].rows[5].occupancy = Some(0.75);
    let strip = sweep_chart(&run).unwrap().strip.unwrap();
    assert_eq!(strip.bars.len(), 3);
    assert_eq!(strip.bars[1].colour, chart.series[1].colour);
}
