//! `limits` files agree with the screen: every figure a limits table shows (each value, its
//! native name, and the cross table's "spec ≥") is in the CSV and in the JSON, for the H200
//! run of 2026-11-30 (three APIs on one GPU, no GPU needed) and for the devices here.

use crate::support::{api, available, succeeds};
use blocksweep_core::guarantee::bytes_in_words;
use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};
use blocksweep_core::report::parse_report;
use blocksweep_core::Api;
use blocksweep_render::layout::Layout;
use blocksweep_render::limits::human_bytes;
use blocksweep_render::Render;
use serde_json::Value;

const H200: &str = include_str!("../../../core/src/report/testdata/h200-2026-11-30-v2.json");

/// One row of a limits table as shown: which API, its value, its native name, and the cross
/// table's "spec ≥" (None in the one-API table, which has no such column).
#[derive(Debug)]
struct Shown {
    api: String,
    value: String,
    name: String,
    spec: Option<String>,
}

/// One limit as a file stores it: API key, value, native name, and guarantee ("" for none).
#[derive(Debug)]
struct Stored {
    api: String,
    value: String,
    name: String,
    guaranteed: String,
}

/// A markdown table row's cells, `\|` read back as `|`.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// Every value row of every limits table in `md`, with the API it belongs to: the cross table
/// names it in its first column, the one-API table in the device line above it.
fn shown_rows(md: &str, apis: &[Api]) -> Vec<Shown> {
    let mut rows = Vec::new();
    let (mut head, mut above) = (Vec::<String>::new(), String::new());
    for line in md.lines() {
        if !line.starts_with('|') {
            head.clear();
            if let Some(a) = apis.iter().find(|a| line.starts_with(&format!("{}: ", a))) {
                above = a.key().to_string();
            }
            continue;
        }
        let c = cells(line);
        if head.is_empty() {
            head = c;
            continue;
        }
        if c[0].starts_with([':', '-']) || c[0].starts_with("**") {
            continue;
        }
        let at = |h: &str| head.iter().position(|x| x == h).map(|i| c[i].clone());
        let api = match head[0].as_str() {
            "API" => apis
                .iter()
                .find(|a| a.name() == c[0])
                .map(|a| a.key().to_string())
                .unwrap_or_else(|| panic!("no API named {:?}", c[0])),
            _ => above.clone(),
        };
        rows.push(Shown {
            api,
            value: at("value").expect("a value column"),
            name: at("native name").expect("a native name column"),
            spec: at("spec ≥"),
        });
    }
    rows
}

/// A CSV line's fields (RFC 4180 quotes, no line breaks in fields).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    out.push(field);
    out
}

fn stored_in_csv(csv: &str) -> Vec<Stored> {
    let mut lines = csv.lines();
    let head = csv_fields(lines.next().expect("a header"));
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {head:?}"))
    };
    let (a, v, n, g) = (
        col("api"),
        col("value"),
        col("native_name"),
        col("guaranteed"),
    );
    lines
        .map(csv_fields)
        .map(|f| Stored {
            api: f[a].clone(),
            value: f[v].clone(),
            name: f[n].clone(),
            guaranteed: f[g].clone(),
        })
        .collect()
}

/// A JSON value as the tables write it: a string bare, anything else as JSON.
fn plain(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), String::from)
}

/// Every figure of every view of a `limits` document: each Named limit of `limits` and
/// `kernel` with its `guaranteed`, both `extra` lists, the residency model, the timer, and the
/// view's `guarantees` (which hold a promise also where the limit itself is null).
fn stored_in_json(doc: &str) -> Vec<Stored> {
    let doc: Value = serde_json::from_str(doc).expect("limits JSON parses");
    let mut out = Vec::new();
    for view in doc["limits"].as_array().expect("a limits array") {
        let api = plain(&view["device"]["api"]);
        let mut add = |value: String, name: String, guaranteed: &Value| {
            out.push(Stored {
                api: api.clone(),
                value,
                name,
                guaranteed: guaranteed.as_str().unwrap_or_default().to_string(),
            })
        };
        for part in ["limits", "kernel"] {
            for (key, field) in view[part].as_object().expect("an object") {
                match (key.as_str(), field) {
                    ("extra", Value::Array(extra)) => {
                        for e in extra {
                            add(plain(&e[1]), plain(&e[0]), &Value::Null);
                        }
                    }
                    ("mp_model", Value::Object(_)) => {
                        add(field.to_string(), plain(&field["source"]), &Value::Null)
                    }
                    (_, Value::Object(named)) if named.contains_key("value") => {
                        let guaranteed = named.get("guaranteed").expect("a guaranteed field");
                        add(plain(&named["value"]), plain(&named["name"]), guaranteed);
                    }
                    _ => {}
                }
            }
        }
        let timer = &view["timer"];
        add(
            plain(&timer["resolution_ns"]),
            plain(&timer["method"]),
            &Value::Null,
        );
        for g in view["guarantees"].as_array().expect("a guarantees array") {
            add(String::new(), String::new(), &g["minimum"]);
        }
    }
    out
}

/// Whether `stored` is the figure the table shows as `shown`: the same text, the same bytes
/// in the table's units, or the table's numbers in the stored ones' order (a table writes
/// `(1024, 1024, 64)`, `1 ns`, `9.0`, `4814 GB/s`, `64 warps, 32 blocks per MP`).
fn agrees(shown: &str, stored: &str) -> bool {
    let numbers = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect()
    };
    let (want, have) = (numbers(shown), numbers(stored));
    let mut have = have.iter();
    shown == stored
        || stored.parse().is_ok_and(|b| human_bytes(b) == shown)
        || (!want.is_empty() && want.iter().all(|w| have.any(|h| h == w)))
}

/// Whether `stored` is the guarantee the table shows as `shown`: the JSON keeps its words, the
/// CSV writes it in the value's notation (`[128,128,64]`, bytes as a number, also inside
/// `max(global/4, 134217728)`).
fn promise_agrees(shown: &str, stored: &str) -> bool {
    // `stored` with each number written by `word`.
    let words = |word: &dyn Fn(u64) -> String| {
        let mut out = String::new();
        let mut digits = String::new();
        for c in stored.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            if !digits.is_empty() {
                out.push_str(&word(std::mem::take(&mut digits).parse().unwrap()));
            }
            out.push(c);
        }
        out.trim_end().to_string()
    };
    let bytes = words(&|n| match n {
        1024.. => bytes_in_words(n),
        _ => n.to_string(),
    });
    let extents = words(&|n| match n {
        0x7fff_ffff => "2^31-1".to_string(),
        _ => n.to_string(),
    });
    let extents = extents
        .replace('[', "(")
        .replace(']', ")")
        .replace(',', ", ");
    agrees(shown, stored) || bytes == shown || extents == shown
}

/// Fails, naming the row, when a figure of a table in `md` is not in `file` (`what` says
/// which file): the value under its name, and the guarantee the cross table shows beside it.
fn assert_held(md: &str, file: &[Stored], what: &str, apis: &[Api]) {
    let rows = shown_rows(md, apis);
    assert!(rows.len() > 5, "no limits table in:\n{md}");
    let dash = |s: &str| {
        if s == "—" {
            String::new()
        } else {
            s.to_string()
        }
    };
    for row in &rows {
        let spec = row.spec.as_deref().map(dash);
        let held = file.iter().any(|s| {
            s.api == row.api
                && match row.value.as_str() {
                    "—" => {
                        s.value.is_empty()
                            && spec
                                .as_ref()
                                .is_none_or(|g| promise_agrees(g, &s.guaranteed))
                    }
                    shown => {
                        s.name == row.name
                            && agrees(shown, &s.value)
                            && spec
                                .as_ref()
                                .is_none_or(|g| promise_agrees(g, &s.guaranteed))
                    }
                }
        });
        let unshown = row.value == "—" && spec.as_deref().is_none_or(str::is_empty);
        assert!(held || unshown, "{what} lacks {row:?}");
    }
}

fn assert_files_hold(md: &str, csv: &str, json: &str, apis: &[Api]) {
    assert_held(md, &stored_in_csv(csv), "the CSV", apis);
    assert_held(md, &stored_in_json(json), "the JSON", apis);
}

fn registered() -> Vec<Api> {
    blocksweep_apis::all()
        .iter()
        .map(|d| {
            Api::register(d.api());
            d.api()
        })
        .collect()
}

#[test]
fn every_figure_of_the_h200_limits_tables_is_in_their_csv_and_json() {
    let apis = registered();
    let run = parse_report(H200).expect("the fixture parses");
    let mut views: Vec<ApiLimits> = run.results.iter().map(ApiLimits::from).collect();
    // A limit one API does not report beside the others: the table shows "—" and the
    // guarantee, which the files must hold too.
    let opencl = views.iter_mut().find(|v| v.device.api == api("opencl"));
    opencl.expect("an OpenCL view").limits.max_threads_per_block = None;
    let group = |views: Vec<ApiLimits>| LimitsReport {
        groups: vec![LimitsGroup {
            heading: None,
            one_physical_device: true,
            views,
        }],
    };
    let mut reports = vec![group(views.clone())];
    reports.extend(views.into_iter().map(|v| group(vec![v])));
    for r in &reports {
        let md = r.markdown(Layout::WIDE);
        assert_files_hold(&md, &r.csv(), &r.json(), &apis);
    }
    // The rows only one API's table has are among those checked.
    let cross = reports[0].markdown(Layout::WIDE);
    assert!(cross.contains("| OpenCL | —"), "{cross}");
    let cuda = reports[1].markdown(Layout::WIDE);
    for row in [
        "| residency model",
        "| compute capability",
        "| theoretical DRAM",
    ] {
        assert!(cuda.contains(row), "{row}: {cuda}");
    }
}

#[test]
fn every_figure_of_the_limits_tables_here_is_in_their_csv_and_json() {
    let apis = registered();
    let here: Vec<Api> = ["vulkan", "opencl"]
        .into_iter()
        .map(api)
        .filter(|a| available(a.key()))
        .collect();
    if here.is_empty() {
        return;
    }
    let mut calls: Vec<Vec<&str>> = vec![vec!["limits"]];
    calls.extend(here.iter().map(|a| vec!["limits", "--backend", a.key()]));
    for call in calls {
        let with = |format: &str| succeeds(&[call.clone(), vec!["--format", format]].concat());
        assert_files_hold(&with("markdown"), &with("csv"), &with("json"), &apis);
    }
}
