//! The plot, as a reader sees it: a real sweep's SVG rendered by headless Chromium, where a
//! script measures the legend, every data marker and whisker, and every x label with the
//! browser's own fonts (getBoundingClientRect). It fails when the legend covers a data point,
//! when two x labels overlap, when a measured block size has no label, when a marker of one
//! block size reaches a marker of another (or sits right of a larger size's), when an API's
//! markers differ in colour or two APIs share one (or an API's colour changes from one plot to
//! another), when the data leave the upper part of the plotting area empty (an axis stretched
//! past them), or when the canvas has a large empty area below its content.
//!
//! Chromium is `chromium` on PATH (Debian's package; .ci/run installs it), or the program
//! BLOCKSWEEP_CHROMIUM names. Without it the test prints SKIPPED, unless BLOCKSWEEP_REQUIRE
//! contains `browser`: then it fails. BLOCKSWEEP_PLOT_SCREENSHOT=FILE.png also saves a
//! screenshot of the default sweep's plot there, to look at.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{available, succeeds};
use serde_json::Value;

/// The browser, or `None` (after saying SKIPPED) when it is missing and not required.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BLOCKSWEEP_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(move |d| d.join(name))
                .collect::<Vec<_>>()
        })
        .find(|p| p.is_file());
    if found.is_none() {
        let required = std::env::var("BLOCKSWEEP_REQUIRE")
            .unwrap_or_default()
            .split(',')
            .any(|w| w.trim() == "browser");
        assert!(
            !required,
            "BLOCKSWEEP_REQUIRE names browser, but no chromium is on PATH \
             (apt-get install chromium, or set BLOCKSWEEP_CHROMIUM)"
        );
        blocksweep_conformance::note_skip(
            "no chromium on PATH (set BLOCKSWEEP_REQUIRE=browser to make this fail)",
        );
    }
    found
}

/// Runs Chromium headless with a fresh profile; its stdout. Killed after 120 s.
fn run_chromium(browser: &Path, args: &[String]) -> String {
    let profile = tempdir("profile");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    // Read stdout on a thread so a large DOM cannot fill the pipe while we wait.
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish in 120 s: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = reader.join().unwrap();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut stderr).ok();
    }
    let _ = std::fs::remove_dir_all(&profile);
    assert!(status.success(), "chromium failed ({status}): {stderr}");
    stdout
}

/// A new directory under the temporary directory, unique to this process and call.
fn tempdir(what: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "blocksweep-plot-browser-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The page: the SVG inline, and a script that writes what it measured as JSON.
const SCRIPT: &str = r#"
<pre id="result"></pre>
<script>
const box = e => { const b = e.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
const all = sel => [...document.querySelectorAll(sel)];
const result = {
  svg: box(document.querySelector('svg')),
  plot: box(document.getElementById('plot-area')),
  legend: box(document.getElementById('legend')),
  points: all('.point').map(e => Object.assign(box(e), {series: e.dataset.series, x_value: e.dataset.x, fill: getComputedStyle(e.firstElementChild).fill})),
  whiskers: all('.whisker').map(box),
  labels: all('.x-label').map(e => Object.assign(box(e), {text: e.textContent})),
  font: getComputedStyle(document.querySelector('.x-label')).fontFamily,
  content_bottom: Math.max(...all('svg text, svg line, svg path, svg circle, svg polyline, #plot-area, #legend').map(e => e.getBoundingClientRect().bottom)),
};
document.getElementById('result').textContent = 'RESULT:' + JSON.stringify(result) + ':END';
</script>
"#;

#[derive(Debug, Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn of(v: &Value) -> Rect {
        let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
        Rect {
            x: f("x"),
            y: f("y"),
            w: f("w"),
            h: f("h"),
        }
    }

    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// Renders `svg` in the browser and returns the measurements.
fn measure(browser: &Path, svg: &str) -> Value {
    let dir = tempdir("page");
    let page = dir.join("page.html");
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><body style=\"margin:0\">{svg}{SCRIPT}</body></html>"),
    )
    .unwrap();
    let dom = run_chromium(
        browser,
        &["--dump-dom".into(), format!("file://{}", page.display())],
    );
    let _ = std::fs::remove_dir_all(&dir);
    let start = dom.find("RESULT:").expect("the page's script ran") + "RESULT:".len();
    let end = dom[start..].find(":END").expect("the result ends") + start;
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).expect("the page's result is JSON")
}

/// `Err` with the message when `cond` is false.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)*) => {
        if !$cond {
            return Err(format!($($msg)*));
        }
    };
}

/// Every check on one rendered plot: what was measured, or what is wrong.
fn check(m: &Value, what: &str) -> Result<String, String> {
    let legend = Rect::of(&m["legend"]);
    let svg = Rect::of(&m["svg"]);
    let points: Vec<(Rect, String)> = m["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (Rect::of(p), p["x_value"].as_str().unwrap().to_string()))
        .collect();
    let whiskers: Vec<Rect> = m["whiskers"]
        .as_array()
        .unwrap()
        .iter()
        .map(Rect::of)
        .collect();
    let labels: Vec<(Rect, String)> = m["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (Rect::of(l), l["text"].as_str().unwrap().to_string()))
        .collect();
    sizes_apart(&points, what)?;
    colours(m, what)?;
    ensure!(!points.is_empty(), "{what}: no data point in the SVG");
    for (p, x) in &points {
        ensure!(
            !legend.overlaps(p),
            "{what}: the legend {legend:?} covers the data point at block {x} {p:?}"
        );
    }
    for w in &whiskers {
        ensure!(
            !legend.overlaps(w),
            "{what}: the legend covers a whisker {w:?}"
        );
    }
    for (i, (a, ta)) in labels.iter().enumerate() {
        for (b, tb) in &labels[i + 1..] {
            ensure!(
                !a.overlaps(b),
                "{what}: x labels {ta} {a:?} and {tb} {b:?} overlap"
            );
        }
        ensure!(
            !a.overlaps(&legend),
            "{what}: x label {ta} under the legend"
        );
    }
    for (_, x) in &points {
        ensure!(
            labels.iter().any(|(_, t)| t == x),
            "{what}: block size {x} has no x label (labels: {:?})",
            labels.iter().map(|l| &l.1).collect::<Vec<_>>()
        );
    }
    ensure!(
        legend.x + legend.w <= svg.x + svg.w + 0.5 && legend.y + legend.h <= svg.y + svg.h + 0.5,
        "{what}: the legend {legend:?} runs off the drawing {svg:?}"
    );
    let plot = Rect::of(&m["plot"]);
    // The axis' top is the data's plus headroom: at most a fifth more (+2 %) for whiskers, and
    // a copy ceiling up to a quarter above that is shown (+4 %), so the highest point sits at
    // least 1 / (1.2 * 1.02 * 1.25 * 1.04) = 63 % up the plot; a noisy row cannot push it lower.
    let highest = points
        .iter()
        .map(|(p, _)| p.y)
        .fold(f64::INFINITY, f64::min);
    let near_the_top = highest <= plot.y + plot.h * 0.38;
    ensure!(
        near_the_top,
        "{what}: the highest point is {:.0} px below the plot's top of {:.0} px",
        highest - plot.y,
        plot.h
    );
    let content_bottom = m["content_bottom"].as_f64().unwrap();
    let empty = svg.y + svg.h - content_bottom;
    ensure!(
        (0.0..=40.0).contains(&empty),
        "{what}: {empty:.0} px of canvas below the content ({svg:?})"
    );
    Ok(format!(
        "{what}: {} points, {} whiskers, {} x labels, legend at x {:.0}..{:.0} (plot ends at {:.0}), \
         highest point {:.0} px below the plot's top, {empty:.0} px below the content, font {}",
        points.len(),
        whiskers.len(),
        labels.len(),
        legend.x,
        legend.x + legend.w,
        plot.x + plot.w,
        highest - plot.y,
        m["font"]
    ))
}

/// Every marker of a smaller block size ends left of every marker of a larger one: the
/// markers of two sizes never overlap, and a slot's order is the table's.
fn sizes_apart(points: &[(Rect, String)], what: &str) -> Result<(), String> {
    let size = |x: &str| x.parse::<f64>().unwrap();
    for (a, xa) in points {
        for (b, xb) in points {
            ensure!(
                size(xa) >= size(xb) || a.x + a.w <= b.x,
                "{what}: a marker of block {xa} {a:?} reaches one of block {xb} {b:?}"
            );
        }
    }
    Ok(())
}

/// The fill of each API's markers, as the browser paints it: one per API, none shared.
fn api_colours(m: &Value) -> Result<BTreeMap<String, String>, String> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for p in m["points"].as_array().unwrap() {
        // The series is named by its API, then its copy ceiling in parentheses.
        let api = p["series"].as_str().unwrap();
        let api = api.split(" (").next().unwrap().to_string();
        let fill = p["fill"].as_str().unwrap().to_string();
        match seen.get(&api) {
            Some(f) if *f != fill => return Err(format!("{api}'s markers are {f} and {fill}")),
            _ => seen.insert(api, fill),
        };
    }
    let fills: BTreeSet<&String> = seen.values().collect();
    if fills.len() != seen.len() {
        return Err(format!("two APIs share a colour: {seen:?}"));
    }
    Ok(seen)
}

fn colours(m: &Value, what: &str) -> Result<(), String> {
    api_colours(m)
        .map(|_| ())
        .map_err(|e| format!("{what}: {e}"))
}

fn sweep_svg(dir: &Path, name: &str, extra: &[&str]) -> String {
    let path = dir.join(name);
    let mut args: Vec<String> = ["sweep", "--size", "320x180", "--plot"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(path.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    succeeds(&args);
    std::fs::read_to_string(&path).expect("the plot was written")
}

#[test]
fn the_legend_covers_no_data_and_every_size_has_a_label() {
    let Some(browser) = chromium() else { return };
    if !available("opencl") && !available("vulkan") {
        return;
    }
    let dir = tempdir("svg");
    // The default sweep: 13 sizes, 96 and 100 six pixels apart.
    let svg = sweep_svg(&dir, "default.svg", &[]);
    println!(
        "{}",
        check(&measure(&browser, &svg), "default sweep").unwrap()
    );
    // The check itself can fail: the same plot with its legend stretched over the data.
    let covered = svg.replace(
        r#"<g id="legend">"#,
        r#"<g id="legend" transform="translate(-730,0) scale(1,3)">"#,
    );
    let why = check(&measure(&browser, &covered), "legend over the data")
        .expect_err("a legend over the data went unnoticed");
    println!("as it should, the check refuses a tampered plot: {why}");
    // And a marker moved a slot to the right, onto the next size's: the old log2 axis' 96
    // and 100, where OpenCL's 96 landed right of CUDA's 100.
    let moved = svg.replacen(
        r#"<g class="point""#,
        r#"<g class="point" transform="translate(52,0)""#,
        1,
    );
    let why = check(&measure(&browser, &moved), "a marker in the next slot")
        .expect_err("a marker over the next size's went unnoticed");
    println!("as it should, the check refuses a marker in another size's slot: {why}");
    if let Some(png) = std::env::var_os("BLOCKSWEEP_PLOT_SCREENSHOT") {
        let size = svg_size(&svg);
        run_chromium(
            &browser,
            &[
                format!("--screenshot={}", PathBuf::from(png).display()),
                format!("--window-size={},{}", size.0, size.1),
                format!("file://{}", dir.join("default.svg").display()),
            ],
        );
    }
    // Crowded sizes: labels must go to rows of their own, never over each other.
    let crowded =
        "16,24,32,48,64,80,96,100,112,128,144,160,192,224,256,320,384,448,512,640,768,896,1024";
    let svg = sweep_svg(&dir, "crowded.svg", &["--blocks", crowded, "--reps", "3"]);
    let crowded_m = measure(&browser, &svg);
    println!("{}", check(&crowded_m, "crowded sweep").unwrap());
    // Each API keeps its colour in every plot: alone, and beside the others.
    let together = api_colours(&crowded_m).unwrap();
    for (api, fill) in &together {
        let key = api.to_lowercase();
        let svg = sweep_svg(&dir, "alone.svg", &["--backend", &key, "--reps", "3"]);
        let alone = api_colours(&measure(&browser, &svg)).unwrap();
        assert_eq!(
            alone.get(api),
            Some(fill),
            "{api} alone: {alone:?}, together: {together:?}"
        );
        println!("{api} is {fill} alone and beside the others");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The width and height attributes of the SVG element.
fn svg_size(svg: &str) -> (u32, u32) {
    let attr = |name: &str| -> u32 {
        let key = format!(" {name}=\"");
        let start = svg.find(&key).unwrap() + key.len();
        let end = svg[start..].find('"').unwrap() + start;
        svg[start..end].parse::<f64>().unwrap().ceil() as u32
    };
    (attr("width"), attr("height"))
}
