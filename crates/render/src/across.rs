//! The answer across GPUs drawn (`compare` of runs on different GPUs): the GPUs and their
//! files, the answer's sentences, the least-regret choice, then one line per (GPU, API) with
//! its fastest configuration, its ties and the choice's regret there. Its CSV has one line per
//! configuration on each (GPU, API).

use blocksweep_core::answer::Config;
use blocksweep_core::report::across::Across;

use crate::layout::{Column, Overflow, Table};
use crate::text::{ms, Doc};

/// The first `n` configurations as the answer names them, then how many more.
fn list(a: &Across, configs: &[Config], n: usize) -> String {
    let mut parts: Vec<String> = configs.iter().take(n).map(|c| a.answer.label(c)).collect();
    if configs.len() > n {
        parts.push(format!("and {} more", configs.len() - n));
    }
    parts.join(", ")
}

/// The section under the side-by-side table (or alone, for tunes).
pub(crate) fn text(a: &Across, doc: &mut Doc, md: bool) {
    let noun = a.noun;
    let title = format!("Across {noun}s ({})", a.kernel);
    match md {
        true => doc.heading(2, &title),
        false => doc.para(title),
    }
    let gpus: Vec<String> = a
        .gpus
        .iter()
        .map(|g| {
            let apis: Vec<String> = g.apis.iter().map(|a| a.to_string()).collect();
            format!(
                "{} {}: {} ({})",
                capital(noun),
                g.name,
                g.files.join(", "),
                apis.join(", ")
            )
        })
        .collect();
    doc.lines(&gpus);
    let mut said = a.answer.sentences_on(noun);
    if let Some(c) = &a.answer.choice {
        let worst = c.regret.iter().map(|r| r.regret).fold(0.0, f64::max);
        let what = match c.portable {
            true => "Least-regret choice (portable)",
            false => "Least-regret choice (not portable: no configuration is good everywhere)",
        };
        said.push(format!(
            "{what}: {}, at worst {worst:.3} × the best (its time ÷ each {noun}'s and API's own \
             best: the table's regret).",
            a.answer.label(&c.config)
        ));
    }
    match md {
        true => doc.list(&said),
        false => doc.lines(&said),
    }
    doc.table(
        &table(a),
        &format!(
            "fastest: that {noun}'s and API's fastest configuration and its mean time; tied \
             (≈): within 95 % and within the noise of it; good: within 95 % of it, of those \
             ranked; regret: the least-regret choice's time ÷ that best (1.00: it is the best \
             there)."
        ),
        &Default::default(),
    );
}

/// "GPU", "Device": the noun opening a line.
fn capital(noun: &str) -> String {
    let mut c = noun.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn table(a: &Across) -> Table {
    let cols = vec![
        Column::left(a.noun).key(),
        Column::left("API").key(),
        Column::left("fastest"),
        Column::right("ms"),
        Column::left("tied (≈)").wrap(12),
        Column::right("good"),
        Column::right("regret"),
    ];
    let mut t = Table::new(cols).overflow(Overflow::Split);
    for b in &a.answer.best {
        let regret = a.answer.choice.as_ref().and_then(|c| {
            let r = c.regret.iter().find(|r| r.gpu == b.gpu && r.api == b.api)?;
            Some(format!("{:.3}", r.regret))
        });
        t.push(vec![
            b.gpu.clone().unwrap_or_default(),
            b.api.to_string(),
            a.answer.label(&b.config),
            ms(b.ms),
            match b.tied.is_empty() {
                true => "-".into(),
                false => list(a, &b.tied, 4),
            },
            format!("{}/{}", b.good, b.ranked),
            regret.unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

/// One line per configuration on each (GPU, API): its time, its fraction of that column's
/// best, and whether it is the best, portable, or the choice.
pub(crate) fn csv(a: &Across) -> Vec<Vec<String>> {
    let mut rec: Vec<Vec<String>> = vec![[
        "gpu", "api", "params", "block", "grid", "ms", "of_best", "best", "portable", "choice",
    ]
    .map(String::from)
    .to_vec()];
    let choice = a.answer.choice.as_ref().map(|c| &c.config);
    for m in &a.measurements {
        let best = a
            .answer
            .best
            .iter()
            .find(|b| (b.gpu.as_deref(), b.api) == m.column());
        let of_best = match (best, m.ms()) {
            (Some(b), Some(t)) => format!("{:.4}", b.ms / t),
            _ => String::new(),
        };
        rec.push(vec![
            m.gpu.clone().unwrap_or_default(),
            m.api.key().into(),
            m.config.params_text(),
            m.config.block.to_string(),
            m.config.grid.0.clone(),
            m.ms().map(|t| format!("{t:.6}")).unwrap_or_default(),
            of_best,
            best.is_some_and(|b| b.config == m.config).to_string(),
            a.answer.portable.contains(&m.config).to_string(),
            (choice == Some(&m.config)).to_string(),
        ]);
    }
    rec
}
