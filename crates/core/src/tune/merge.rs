//! Tunes of one space split over GPUs (`--shard`, `--device all`, the Slurm tune array),
//! merged into one report and one answer by `compare`; and a tune as a run of the answer
//! across GPUs, where `compare` is given tunes of different GPUs.

use super::{Held, TuneReport};
use crate::report::across::Input;

/// The reports as one: every entry once (the first file's where two hold the same API and
/// configuration), the rejected, the wrong and the errors of all, the searches summed, and the
/// answer made again. A winner's second time is kept where the merged winner is the same.
pub fn merge(mut reports: Vec<TuneReport>) -> Option<TuneReport> {
    if reports.is_empty() {
        return None;
    }
    let shares = reports.len();
    let mut out = reports.remove(0);
    let mut held: Vec<Held> = out
        .answer
        .best
        .iter()
        .filter_map(|b| b.held.clone())
        .collect();
    for r in reports {
        out.clocks.extend(r.clocks);
        for e in r.measurements {
            if !out
                .measurements
                .iter()
                .any(|x| x.api == e.api && x.config == e.config)
            {
                out.measurements.push(e);
            }
        }
        for x in r.rejected {
            if !out.rejected.contains(&x) {
                out.rejected.push(x);
            }
        }
        for w in r.wrong {
            if !out.is_wrong(w.api, &w.params) {
                out.wrong.push(w);
            }
        }
        for d in r.devices {
            if !out.devices.contains(&d) {
                out.devices.push(d);
            }
        }
        out.errors.extend(r.errors);
        held.extend(r.answer.best.iter().filter_map(|b| b.held.clone()));
        let (a, b) = (&mut out.search, r.search);
        a.covered += b.covered;
        a.measured += b.measured;
        a.from_cache += b.from_cache;
        a.compiles += b.compiles;
        a.compile_s += b.compile_s;
        a.wall_s = a.wall_s.max(b.wall_s);
    }
    // "exhaustive, share 1/2" named the first share only: the merge is every share's.
    let order = out
        .search
        .order
        .split(", share ")
        .next()
        .unwrap_or_default();
    out.search.order = match shares {
        1 => format!("{order} (merged)"),
        n => format!("{order} (merged from {n} shares)"),
    };
    out.refresh_answer(&[]);
    let winners: Vec<Held> = held
        .into_iter()
        .filter(|h| {
            out.answer
                .best
                .iter()
                .any(|b| b.api == h.api && b.config == h.config)
        })
        .collect();
    out.refresh_answer(&winners);
    Some(out)
}

impl TuneReport {
    /// The tune as a run of the answer across GPUs (`compare` of tunes of several GPUs): its
    /// GPU is the one its devices name ("CUDA: NVIDIA H200 (580.x)").
    pub fn input(&self, file: &str) -> Input {
        let name = |d: &String| {
            let words = d.split_once(": ").map_or(d.as_str(), |(_, w)| w);
            words
                .rsplit_once(" (")
                .map_or(words, |(n, _)| n)
                .to_string()
        };
        let gpu = self.devices.first().map(name).unwrap_or_default();
        let mut ms = self.measurements.clone();
        ms.retain(|m| !self.is_wrong(m.api, &m.config.params));
        ms.iter_mut().for_each(|m| m.gpu = Some(gpu.clone()));
        // "grayscale frame 3840x2160", "kernel 'reduce-elems' at n=65536".
        let (kernel, size) = match self.kernel.strip_prefix("grayscale frame ") {
            Some(size) => ("grayscale".to_string(), size.to_string()),
            None => {
                let k = self.kernel.trim_start_matches("kernel ");
                let (k, s) = k.split_once(" at ").unwrap_or((k, ""));
                (k.trim_matches('\'').to_string(), s.to_string())
            }
        };
        Input {
            file: file.to_string(),
            gpu,
            kind: None,
            kernel,
            size,
            spec_hash: self.spec_hash.clone(),
            discipline: None,
            measurements: ms,
            stops: Vec::new(),
        }
    }
}
