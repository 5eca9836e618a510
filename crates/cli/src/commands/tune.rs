//! `blocksweep sweep` with a grid list, a spec's `[tune]` or `--budget`: the whole launch
//! tuned across APIs (block × grid × the kernel's own parameters). Each parameter set is one
//! sweep (one compile per API); what is cached is not measured again; the answer names each
//! API's best, the portable set, the regret of the portable choice and whether each winner
//! held when measured twice. Exit code: 0, or 1 when a configuration was wrong or an API
//! failed, or 2 for bad input.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use blocksweep_core::spec::{KernelSpec, Sizes};
use blocksweep_core::tune::cache::{self, Cache};
use blocksweep_core::tune::{self, Config, Order, Outcome, Search, Space, TuneReport};
use blocksweep_core::{GridPolicy, Targets};
use blocksweep_render::Format;

use super::tune_set::{self, Ctx, Refs};
use crate::args::{Budget, SweepArgs};
use crate::output::files::{Files, Where};
use crate::output::OutputTarget;
use crate::usage;

/// Whether the arguments and the spec ask for a tune rather than a plain sweep.
pub fn wanted(args: &SweepArgs, spec: Option<&KernelSpec>) -> bool {
    args.grid.0.len() > 1 || args.tune.budget.is_some() || spec.is_some_and(|s| s.tune.is_some())
}

pub fn run(ctx: &Ctx, each: Vec<Targets>) -> anyhow::Result<ExitCode> {
    if let Some((spec, _)) = ctx.spec {
        if spec.grid == blocksweep_core::spec::GridMode::Data && ctx.args.grid.0.len() > 1 {
            return Err(usage(format!(
                "--grid {}: {} has grid = \"data\", which launches the grid covering its work at \
                 every block; a grid list needs a grid-stride kernel",
                ctx.args
                    .grid
                    .0
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                spec.file
            )));
        }
    }
    let files = Files::check(Where {
        output: &ctx.args.output,
        format: ctx.args.format,
        quiet: ctx.args.quiet,
        wide: ctx.args.wide,
        plotted: ctx.args.plot.is_some(),
    })?;
    // The plot's path is checked before anything is measured, as a sweep's is.
    let plot = ctx
        .args
        .plot
        .as_deref()
        .map(|p| OutputTarget::check(p).map_err(usage))
        .transpose()?;
    let mut cache = match ctx.args.tune.cache_path() {
        Some(p) => Some(Cache::open(&p).map_err(usage)?),
        None => None,
    };
    // `--device all` splits the space over the GPUs, one share each, one after another
    // (`compare` merges them); `--shard` takes one share on this one.
    let n = each.len();
    let devices: Vec<blocksweep_core::DeviceIdentity> =
        each.iter().flat_map(|t| t.devices.clone()).collect();
    let mut reports: Vec<TuneReport> = Vec::new();
    for (i, targets) in each.into_iter().enumerate() {
        let share = ctx.args.tune.shard.or((n > 1).then_some((i + 1, n)));
        // After every parameter set the files hold what is measured so far, as a sweep's do
        // after every row: an interrupted tune keeps its rows in them, not only in the cache.
        let done = &reports;
        let mut save = |partial: &TuneReport| save_so_far(&files, done, partial, &devices);
        let report = one_device(ctx, &targets, cache.as_mut(), share, &mut save)?;
        reports.push(report);
    }
    if reports
        .iter()
        .all(|r| r.entries.iter().all(|e| e.ms().is_none()))
    {
        let why: Vec<&String> = reports.iter().flat_map(|r| r.errors.iter()).collect();
        return Err(anyhow::anyhow!(
            "no configuration ran on any API{}",
            why.first().map(|w| format!(": {w}")).unwrap_or_default()
        ));
    }
    let failed = reports
        .iter()
        .any(|r| !r.wrong.is_empty() || !r.errors.is_empty());
    let written = write(&files, &reports, &devices, plot.as_ref())?;
    Ok(super::exit(failed || !written))
}

/// The regular files rewritten with the reports done and `partial` (its answer for the
/// configurations so far); quietly, and never failing the run (the last write reports errors).
fn save_so_far(
    files: &Files,
    done: &[TuneReport],
    partial: &TuneReport,
    devices: &[blocksweep_core::DeviceIdentity],
) {
    let mut partial = partial.clone();
    partial.refresh_answer(&[]);
    let mut all = done.to_vec();
    all.push(partial);
    let rows: usize = all.iter().map(|r| r.entries.len()).sum();
    let _ = files.rewrite(rows, &|f, l| render(f, l, &all, devices));
}

/// One format's text of the tune reports.
fn render(
    f: Format,
    l: blocksweep_render::Layout,
    reports: &[TuneReport],
    devices: &[blocksweep_core::DeviceIdentity],
) -> String {
    match f {
        Format::Json => tune::document::document(reports, devices),
        Format::Csv => reports
            .iter()
            .map(blocksweep_render::tune::render_csv)
            .collect::<Vec<_>>()
            .join(""),
        Format::Markdown => reports
            .iter()
            .map(|r| {
                format!(
                    "```text\n{}```\n",
                    blocksweep_render::tune::render_text(r, l.width)
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Table => reports
            .iter()
            .map(|r| blocksweep_render::tune::render_text(r, l.width))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Every file, then stdout, then the plot; false when a write failed.
fn write(
    files: &Files,
    reports: &[TuneReport],
    devices: &[blocksweep_core::DeviceIdentity],
    plot: Option<&OutputTarget>,
) -> anyhow::Result<bool> {
    let mut written = files.write_each(&|f, l| render(f, l, reports, devices))?;
    if let Some(p) = plot {
        let svg = crate::plot::tune::heat_maps(&reports[0]);
        match p.write(svg.as_bytes()) {
            Ok(()) => crate::output::stdio::eprint_line(&format!(
                "blocksweep: wrote {}",
                p.path().display()
            )),
            Err(e) => {
                warn!("error: {e}");
                written = false;
            }
        }
    }
    Ok(written)
}

/// The hash a device's cached entries are kept under: the spec (its file, its sources with
/// their options), the sizes, the protocol and the grids' meaning; or the frame's.
fn spec_hash(ctx: &Ctx) -> String {
    let protocol = serde_json::to_string(&ctx.config.protocol).unwrap_or_default();
    let copy = if ctx.config.copy { "copy" } else { "" };
    match (ctx.spec, ctx.frame) {
        (Some((spec, sizes)), _) => {
            let text = std::fs::read(&spec.file).unwrap_or_default();
            let mut parts: Vec<Vec<u8>> = vec![text, sizes.to_string().into_bytes()];
            for key in spec.apis() {
                if let Some(src) = spec.sources_for(key) {
                    parts.push(src.code.clone());
                    parts.push(src.options.join(" ").into_bytes());
                }
            }
            parts.push(protocol.into_bytes());
            parts.push(copy.into());
            cache::hash(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>())
        }
        (None, Some((w, h))) => {
            let frame = format!("grayscale {w}x{h} seed {}", ctx.args.seed);
            cache::hash(&[frame.as_bytes(), protocol.as_bytes(), copy.as_bytes()])
        }
        (None, None) => String::new(),
    }
}

fn one_device(
    ctx: &Ctx,
    targets: &Targets,
    mut cache: Option<&mut Cache>,
    share: Option<(usize, usize)>,
    save: &mut dyn FnMut(&TuneReport),
) -> anyhow::Result<TuneReport> {
    let started = Instant::now();
    let args = ctx.args;
    let grids: &[GridPolicy] = &args.grid.0;
    let budget = args.tune.budget;
    let (decl, sizes) = match ctx.spec {
        Some((spec, sizes)) => (spec.tune.as_ref(), sizes.clone()),
        None => (None, Sizes::default()),
    };
    let order = match budget {
        None => Order::Exhaustive,
        Some(_) => Order::Sampled(args.tune.sample_seed),
    };
    let space = Space::new(decl, &sizes, &ctx.config.blocks, grids, order);
    let covered = match budget {
        Some(Budget::Count(n)) => &space.configs[..n.min(space.configs.len())],
        _ => &space.configs[..],
    };
    let hash = spec_hash(ctx);
    let keys: Vec<(&'static str, String)> = targets
        .devices
        .iter()
        .map(|d| (d.api.key(), cache::device_key(d, &hash)))
        .collect();
    let mut report = new_report(ctx, decl, &space, order);
    report.devices = targets
        .devices
        .iter()
        .map(|d| format!("{}: {} ({})", d.api, d.name, d.driver_version))
        .collect();
    let mut refs: Refs = BTreeMap::new();
    if let Some(c) = cache.as_deref() {
        for (api, key) in &keys {
            if let Some(r) = c.reference(key) {
                refs.insert(api, (r, "the first configuration, from the cache".into()));
            }
        }
    }
    for (params, configs) in shard(Space::batches(covered), share) {
        if let Some(Budget::Seconds(s)) = budget {
            if started.elapsed().as_secs_f64() > s {
                report.search.stopped = Some(format!(
                    "the {s} s budget ran out after {} configurations",
                    report.search.covered
                ));
                break;
            }
        }
        report.search.covered += configs.len();
        let missing = from_cache(&mut report, cache.as_deref(), &keys, &params, &configs);
        if missing.is_empty() {
            continue;
        }
        let set = tune_set::run(ctx, targets, &params, &missing, Some(&mut refs));
        report.search.compiles += 1;
        report.search.compile_s += set.open_s;
        report.search.measured += set.entries.len();
        record(&mut report, cache.as_deref_mut(), &keys, &params, set);
        save(&report);
    }
    tune_set::recheck(ctx, targets, &mut report, cache, &keys);
    report.search.wall_s = started.elapsed().as_secs_f64();
    if let Some((k, n)) = share {
        report.search.order.push_str(&format!(", share {k}/{n}"));
    }
    Ok(report)
}

/// The configurations of a set that every API has in the cache go into the report, with the
/// set's cached verdicts; the others are returned, to be measured.
fn from_cache(
    report: &mut TuneReport,
    cache: Option<&Cache>,
    keys: &[(&'static str, String)],
    params: &BTreeMap<String, u64>,
    configs: &[Config],
) -> Vec<Config> {
    let Some(c) = cache else {
        return configs.to_vec();
    };
    let mut missing = Vec::new();
    for config in configs {
        match keys
            .iter()
            .map(|(_, k)| c.get(k, config))
            .collect::<Option<Vec<_>>>()
        {
            Some(found) => {
                report.search.from_cache += found.len();
                report.entries.extend(found);
            }
            None => missing.push(config.clone()),
        }
    }
    for (api, key) in keys {
        if let (Some(Some(why)), Some(a)) =
            (c.verdict(key, params), blocksweep_core::Api::from_key(api))
        {
            push_wrong(report, a, params, why);
        }
    }
    missing
}

type Batches = Vec<(BTreeMap<String, u64>, Vec<Config>)>;

/// Share `k` of `n`: every n-th parameter set (one compile each), or every n-th configuration
/// where there are fewer sets than shares.
fn shard(batches: Batches, share: Option<(usize, usize)>) -> Batches {
    let Some((k, n)) = share else {
        return batches;
    };
    if batches.len() >= n {
        return batches.into_iter().skip(k - 1).step_by(n).collect();
    }
    batches
        .into_iter()
        .map(|(p, c)| (p, c.into_iter().skip(k - 1).step_by(n).collect::<Vec<_>>()))
        .filter(|(_, c)| !c.is_empty())
        .collect()
}

fn new_report(
    ctx: &Ctx,
    decl: Option<&blocksweep_core::spec::TuneDecl>,
    space: &Space,
    order: Order,
) -> TuneReport {
    let kernel = match (ctx.spec, ctx.frame) {
        (Some((spec, sizes)), _) => format!("kernel '{}' at {sizes}", spec.name),
        (None, Some((w, h))) => format!("grayscale frame {w}x{h}"),
        (None, None) => String::new(),
    };
    TuneReport {
        tool: super::tool(),
        date: ctx.date.to_string(),
        kernel,
        params: decl.map(|d| d.params.clone()).unwrap_or_default(),
        restrict: decl
            .map(|d| d.restrict.iter().map(|c| c.text.clone()).collect())
            .unwrap_or_default(),
        grids: ctx.args.grid.0.iter().map(|g| g.to_string()).collect(),
        blocks: ctx.config.blocks.clone(),
        devices: Vec::new(),
        answer: Default::default(),
        search: Search {
            order: match order {
                Order::Exhaustive => "exhaustive".into(),
                Order::Sampled(seed) => format!("sampled (seed {seed})"),
            },
            space: space.total,
            ..Search::default()
        },
        rejected: space.rejected.clone(),
        wrong: Vec::new(),
        errors: Vec::new(),
        entries: Vec::new(),
    }
}

fn push_wrong(
    report: &mut TuneReport,
    api: blocksweep_core::Api,
    params: &BTreeMap<String, u64>,
    detail: String,
) {
    if !report.is_wrong(api, params) {
        report.wrong.push(tune::Wrong {
            api,
            params: params.clone(),
            detail,
        });
    }
}

/// A set's results into the report and the cache (saved at once: an interrupt loses at
/// most the set being measured).
fn record(
    report: &mut TuneReport,
    cache: Option<&mut Cache>,
    keys: &[(&'static str, String)],
    params: &BTreeMap<String, u64>,
    set: tune_set::SetRun,
) {
    let key_of = |api: blocksweep_core::Api| {
        keys.iter()
            .find(|(k, _)| *k == api.key())
            .map(|(_, v)| v.clone())
    };
    if let Some(c) = cache {
        // What did not run is tried again next time: it may have been the interrupt's.
        for e in set
            .entries
            .iter()
            .filter(|e| !matches!(e.outcome, Outcome::NotRun { .. }))
        {
            if let Some(k) = key_of(e.api) {
                c.put(&k, e);
            }
        }
        for (api, outputs) in &set.new_refs {
            if let Some(k) = key_of(*api) {
                if let Err(e) = c.put_reference(&k, outputs) {
                    warn!("{e}");
                }
            }
        }
        for (api, key) in keys {
            let wrong = set
                .wrong
                .iter()
                .find(|w| w.api.key() == *api)
                .map(|w| w.detail.clone());
            c.put_verdict(key, params, wrong);
        }
        if let Err(e) = c.save() {
            warn!("{e}");
        }
    }
    for w in set.wrong {
        push_wrong(report, w.api, &w.params, w.detail);
    }
    report.errors.extend(set.errors);
    report.entries.extend(set.entries);
}
