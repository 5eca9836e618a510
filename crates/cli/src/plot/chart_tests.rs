use super::layout::{MARGIN, PLOT_H};
use super::*;

const GREEN: Colour = Colour(0x1b, 0x9e, 0x77);
const ORANGE: Colour = Colour(0xd9, 0x5f, 0x02);

fn points(ys: &[f64]) -> Vec<Point> {
    ys.iter()
        .enumerate()
        .map(|(i, &y)| Point {
            x: (i + 1) as f64,
            y,
            whisker: Some((y * 0.9, y * 1.1)),
            tip: format!("point {i}"),
        })
        .collect()
}

/// Two series (circles, squares) of CPU-like GB/s, a band, a copy line at `copy`, and `notes`.
fn chart(copy: f64, notes: Vec<Note>) -> Chart {
    let series = vec![
        Series {
            name: "Vulkan kernel".into(),
            colour: GREEN,
            marker: Marker::Circle,
            points: points(&[3.8, 5.6, 6.1, 4.3]),
        },
        Series {
            name: "OpenCL kernel".into(),
            colour: ORANGE,
            marker: Marker::Square,
            points: points(&[4.1, 4.2, 6.6, 2.8]),
        },
    ];
    let hi = data_top(series.iter().flat_map(|s| &s.points));
    Chart {
        title: vec!["A chart".into(), "on a device".into()],
        x: Axis {
            title: "x".into(),
            scale: Scale::Linear,
            lo: 0.0,
            hi: 5.0,
            ticks: (1..=4)
                .map(|i| Tick {
                    at: i as f64,
                    label: i.to_string(),
                })
                .collect(),
        },
        y: Axis::from_zero("GB/s", hi),
        series,
        guides: vec![
            Guide {
                kind: GuideKind::Line { y: copy },
                colour: GREEN,
                label: "Vulkan device-to-device copy: 91.5 GB/s".into(),
                series: Some(0),
            },
            Guide {
                kind: GuideKind::Band { lo: 5.8, hi: 6.1 },
                colour: GREEN,
                label: "Vulkan >= 95% of best".into(),
                series: Some(0),
            },
        ],
        notes,
        strip: None,
    }
}

fn whiskers() -> Note {
    Note {
        glyph: Glyph::Whisker,
        text: "whiskers: ±1 sd of one dispatch".into(),
    }
}

fn attr(n: roxmltree::Node, name: &str) -> f64 {
    n.attribute(name).unwrap().parse().unwrap()
}

fn by_class<'a>(doc: &'a roxmltree::Document, class: &'a str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .collect()
}

/// The legend entry whose text is `text`: the name of its swatch's first element.
fn swatch_of<'a>(doc: &'a roxmltree::Document, text: &str) -> &'a str {
    let entry = by_class(doc, "legend-entry")
        .into_iter()
        .find(|e| e.children().any(|c| c.text() == Some(text)))
        .unwrap_or_else(|| panic!("no legend entry {text:?}"));
    entry.first_element_child().unwrap().tag_name().name()
}

#[test]
fn the_axis_is_fitted_to_the_data_with_headroom_and_long_whiskers_cut() {
    let top = data_top(&points(&[2.0, 6.0]));
    assert!((top - 6.0 * 1.1 * 1.02).abs() < 1e-9, "{top}");
    let calm = [Point {
        x: 1.0,
        y: 6.0,
        whisker: Some((5.9, 6.1)),
        tip: String::new(),
    }];
    assert!((data_top(&calm) - 6.0 * 1.08).abs() < 1e-9);
    let wild = [Point {
        x: 1.0,
        y: 6.0,
        whisker: Some((0.0, 60.0)),
        tip: String::new(),
    }];
    assert!((data_top(&wild) - 6.0 * WHISKER_REACH * 1.02).abs() < 1e-9);
}

#[test]
fn a_line_above_the_axis_is_a_label_at_the_top_edge_not_a_line() {
    let svg = chart(91.5, vec![whiskers()]).to_svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(
        by_class(&doc, "guide-line").is_empty(),
        "no line off the axis"
    );
    let labels = by_class(&doc, "off-scale");
    assert_eq!(labels.len(), 1);
    assert_eq!(
        labels[0].text(),
        Some("Vulkan device-to-device copy: 91.5 GB/s (off scale ↑)")
    );
    let plot = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("plot-area"))
        .unwrap();
    let label_y = attr(labels[0], "y");
    assert!(label_y < attr(plot, "y") && label_y > attr(plot, "y") - 20.0);
    // A series' own guide has no legend entry (its colour says whose it is); one of no series
    // has, beside the arrow the label ends with.
    let entries = by_class(&doc, "legend-entry").len();
    assert_eq!(entries, 3, "two series and the note");
    let mut c = chart(91.5, vec![whiskers()]);
    c.guides[0].series = None;
    let svg = c.to_svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(
        swatch_of(
            &doc,
            "Vulkan device-to-device copy: 91.5 GB/s (off scale ↑)"
        ),
        "text"
    );
    // The same line within the axis is drawn, dashed, and has no label.
    c.guides[0].kind = GuideKind::Line { y: 6.4 };
    let svg = c.to_svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(by_class(&doc, "guide-line").len(), 1);
    assert!(by_class(&doc, "off-scale").is_empty());
    assert_eq!(
        swatch_of(&doc, "Vulkan device-to-device copy: 91.5 GB/s"),
        "line"
    );
}

#[test]
fn every_legend_entry_shows_the_mark_it_explains() {
    let notes = vec![
        whiskers(),
        Note {
            glyph: Glyph::Marker(Marker::Circle),
            text: "circles: one kernel".into(),
        },
        Note {
            glyph: Glyph::Marker(Marker::Square),
            text: "squares: the other".into(),
        },
    ];
    let svg = chart(6.4, notes).to_svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(swatch_of(&doc, "whiskers: ±1 sd of one dispatch"), "path");
    assert_eq!(swatch_of(&doc, "circles: one kernel"), "circle");
    assert_eq!(swatch_of(&doc, "squares: the other"), "rect");
    for (glyph, shape) in [
        (Glyph::Band, "rect"),
        (Glyph::Dashed, "line"),
        (Glyph::Arrow, "text"),
        (Glyph::Bar, "rect"),
    ] {
        let mut c = chart(6.4, vec![]);
        c.notes.push(Note {
            glyph,
            text: "a note".into(),
        });
        let svg = c.to_svg();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(swatch_of(&doc, "a note"), shape, "{glyph:?}");
    }
    // A series' entry: its line, then the marker its points are drawn with.
    for (name, shape) in [("Vulkan kernel", "circle"), ("OpenCL kernel", "rect")] {
        let entry = by_class(&doc, "legend-entry")
            .into_iter()
            .find(|e| e.children().any(|c| c.text() == Some(name)))
            .unwrap();
        let drawn: Vec<&str> = entry
            .children()
            .filter(|c| c.is_element())
            .map(|c| c.tag_name().name())
            .collect();
        assert_eq!(drawn, ["line", shape, "text"], "{name}");
        let point = by_class(&doc, "point")
            .into_iter()
            .find(|p| p.attribute("data-series") == Some(name))
            .unwrap();
        assert_eq!(
            point.first_element_child().unwrap().tag_name().name(),
            shape
        );
    }
}

#[test]
fn the_canvas_is_as_tall_as_its_content() {
    // A short legend: the x axis' title is the lowest thing drawn; a long one: the legend.
    for notes in [1, 30] {
        let c = chart(6.4, (0..notes).map(|_| whiskers()).collect());
        let svg = c.to_svg();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let height = attr(doc.root_element(), "height");
        let text_bottom = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("transform").is_none())
            .filter_map(|n| n.attribute("y").map(|y| y.parse::<f64>().unwrap()))
            .filter(|y| *y > 0.0)
            .fold(0.0, f64::max);
        let legend = doc
            .descendants()
            .find(|n| n.attribute("id") == Some("legend"))
            .unwrap()
            .first_element_child()
            .unwrap();
        let legend_bottom = attr(legend, "y") + attr(legend, "height");
        let bottom = text_bottom.max(legend_bottom);
        let empty = height - bottom;
        assert!(
            (MARGIN..=MARGIN + 8.0).contains(&empty),
            "{notes} notes: {empty:.1} px below the content (height {height}, content ends at {bottom:.1})"
        );
        if notes == 1 {
            assert!(legend_bottom < text_bottom - PLOT_H / 2.0);
        }
    }
}
