//! The answer a sweep report opens with: the sizes good on every API, each API's fastest
//! size with those the noise cannot tell from it, and the warnings that qualify them.

use super::cells::ms;
use super::Doc;
use blocksweep_core::answer::Answer;
use blocksweep_core::backend::DeviceKind;
use blocksweep_core::blocks::BlockSize;
use blocksweep_core::report::Report;
use blocksweep_core::sweep::SweepResult;

/// The answer, before any table: which sizes are good on every API (several APIs), and each
/// API's fastest size with the sizes the noise cannot tell from it. An API that failed (its
/// result has an error) is given no speed: the failure leads instead.
pub(super) fn answer(report: &Report, doc: &mut Doc) {
    let ran: Vec<&SweepResult> = report
        .results
        .iter()
        .filter(|r| r.best().is_some() && r.error.is_none())
        .collect();
    let mut items = Vec::new();
    if let Some(a) = report.answer.as_ref().filter(|a| a.apis.len() > 1) {
        items.extend(a.sentences());
        items.extend(nowhere(report, a));
    }
    if ran.is_empty() && items.is_empty() {
        return;
    }
    let name_device = ran.len() == 1 || !report.shared_plan;
    for r in &ran {
        items.push(fastest_sentence(r, name_device));
    }
    let title = match doc.md {
        true => "**Answer**",
        false => "Answer",
    };
    let text: Vec<String> = items.iter().map(|i| format!("- {i}")).collect();
    doc.para(format!("{title}\n{}", text.join("\n")));
    if let Some(w) = noise_warning(report) {
        doc.para(w);
    }
    if let Some(n) = noise_rule(report) {
        doc.para(n);
    }
    if let Some(c) = super::clocks::clocks_warning(report) {
        doc.para(c);
    }
}

/// With `--max-noise`: on how many rows the mean reached the relative standard error asked,
/// and each row that did not, with what it reached.
pub(crate) fn noise_rule(report: &Report) -> Option<String> {
    let rows: Vec<(String, blocksweep_core::measure::Noise)> = report
        .results
        .iter()
        .flat_map(|r| {
            r.rows.iter().filter_map(move |x| {
                let n = x.timing.as_ref()?.noise?;
                Some((format!("{} {}", r.api, x.block), n))
            })
        })
        .collect();
    let target = rows.first()?.1.target;
    let short: Vec<String> = rows
        .iter()
        .filter(|(_, n)| !n.reached)
        .map(|(row, n)| format!("{row} ({:.2} %)", n.rse * 100.0))
        .collect();
    let reached = rows.len() - short.len();
    let mut s = format!(
        "--max-noise {:.2} %: the mean's relative standard error reached it on {reached} of {} \
         rows",
        target * 100.0,
        rows.len()
    );
    match short.is_empty() {
        true => s.push('.'),
        false => s.push_str(&format!(
            "; not within --max-noise-time on {}: their ties are judged on the noise they \
             reached.",
            short.join(", ")
        )),
    }
    Some(s)
}

/// The sizes good on no API, which the portable answer's lists leave out (a reader took them
/// for fine): "Not within 95 % of its best on any API: 32, 100 threads per block."
fn nowhere(report: &Report, a: &Answer) -> Option<String> {
    let mut blocks: Vec<BlockSize> = Vec::new();
    for x in report.results.iter().flat_map(|r| &r.rows) {
        let listed = a.portable.iter().any(|c| c.block == x.block)
            || a.exceptions.iter().any(|e| e.config.block == x.block)
            || blocks.contains(&x.block);
        let good = |r: &SweepResult| {
            (r.rows.iter()).any(|y| y.block == x.block && y.verdict.is_some_and(|v| v.good()))
        };
        if !listed && !report.results.iter().any(good) {
            blocks.push(x.block);
        }
    }
    let list: Vec<String> = blocks.iter().map(|b| b.to_string()).collect();
    (!list.is_empty()).then(|| {
        format!(
            "Not within {:.0} % of its best on any API: {} threads per block.",
            a.fraction * 100.0,
            list.join(", ")
        )
    })
}

/// Said once when the spreads are past what can rank the rows (hyperfine's outlier warning):
/// some row reads below 95 % of its best yet the noise cannot tell it from the best.
pub(crate) fn noise_warning(report: &Report) -> Option<String> {
    let unranked: Vec<String> = report
        .results
        .iter()
        .flat_map(|r| {
            r.rows_unranked()
                .into_iter()
                .map(move |x| format!("{} {}", r.api, x.block))
        })
        .collect();
    if unranked.is_empty() {
        return None;
    }
    let (api, row, cv) = report
        .results
        .iter()
        .filter_map(|r| r.widest_spread().map(|(x, cv)| (r.api, x.block, cv)))
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    Some(format!(
        "Warning: the measurements are too noisy to rank every row. Spreads reach ±{:.1}% \
         ({api} {row}), and {} row(s) read below 95 % of their best yet cannot be told from \
         it (marked ?): {}. Nothing counts them as good. Run on a quieter machine (nothing \
         else busy), or give each batch more device time (--min-time 20, in ms, or --reps).",
        cv * 100.0,
        unranked.len(),
        unranked.join(", ")
    ))
}

/// "OpenCL (on pthread-haswell-AMD EPYC): fastest 100 work-items per work-group, 0.3433 ms
/// (10.7 GB/s); within the noise of it (≈): 96, 160; 1 of 13 sizes within 95 % of it."
pub(crate) fn fastest_sentence(r: &SweepResult, name_device: bool) -> String {
    let w = r.api.words();
    let who = match name_device {
        true => format!("{} on {} ({})", r.api, r.device.name, r.device.kind),
        false => r.api.to_string(),
    };
    let Some(best) = r.best() else {
        return format!("{who}: no size ran");
    };
    let tied = tied_with_best(r);
    let ties = match tied.is_empty() {
        true => "no other size is within the measurement noise of it".to_string(),
        false => format!(
            "within the measurement noise of it (≈): {}",
            tied.join(", ")
        ),
    };
    // A user's kernel that declares no bytes moved has times only.
    let gbps = best
        .gbps
        .map(|g| format!(" ({g:.1} GB/s)"))
        .unwrap_or_default();
    format!(
        "{who}: fastest {} {}s per {}, {} ms{gbps}; {ties}; {} of {} sizes within 95 % of it.",
        best.block,
        w.thread,
        w.block,
        ms(best.mean_ms().unwrap_or(0.0)),
        r.rows_good(),
        r.rows_run()
    )
}

pub(super) fn tied_with_best(r: &SweepResult) -> Vec<String> {
    let Some(best) = r.best() else {
        return Vec::new();
    };
    r.rows
        .iter()
        .filter(|x| {
            x.verdict == Some(blocksweep_core::sweep::Verdict::Tied) && x.block != best.block
        })
        .map(|x| x.block.to_string())
        .collect()
}

/// Said once when any API ran on a CPU: what such a run teaches about GPUs and what it does
/// not.
pub(crate) fn cpu_paragraph(report: &Report, verbose: bool) -> Option<String> {
    let cpus: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.device.kind == DeviceKind::Cpu)
        .map(|r| format!("{} on {}", r.api, r.device.name))
        .collect();
    if cpus.is_empty() {
        return None;
    }
    let which = match (cpus.len(), report.results.len()) {
        (1, 1) => format!("This ran on a CPU, not a GPU ({}).", cpus[0]),
        (n, m) if n == m => format!("These ran on CPUs, not GPUs ({}).", cpus.join("; ")),
        _ => format!(
            "Part of this ran on a CPU, not a GPU ({}).",
            cpus.join("; ")
        ),
    };
    if !verbose {
        return Some(format!(
            "{which} The method and the checks carry over to a GPU; which block size is \
             fastest does not: a CPU runs a block as a loop on one core, with no warps or \
             occupancy (--verbose says more)."
        ));
    }
    Some(format!(
        "{which} What carries over to a GPU: the method (a grid-stride kernel that is correct \
         for any launch, timing on the device's clock, ratios within one run), the verification \
         of every output at every size, and each API's launch limits and how it enforces them. \
         What does not: a CPU driver runs a block as a loop on one core, with no warps, \
         multiprocessors or occupancy (those columns are left out; the warp column counts \
         SIMD groups), so which block size is fastest here says nothing about a GPU. The \
         guide's exercise (where does the curve go flat, and why not at full occupancy?) \
         needs a GPU."
    ))
}
