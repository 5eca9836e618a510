//! The GPU's clocks around each API's turn, where they were read: a line under each API's
//! header, and a paragraph after the answer when an API's rows ran on moving clocks.

use blocksweep_core::clocks::Clocks;
use blocksweep_core::report::Report;
use blocksweep_core::sweep::SweepResult;

/// "SM 1980 MHz → 1980 MHz, memory 2619 MHz; no throttling" (start → end of the turn); the reasons that slowed
/// the device where any did, and a mark where the rows ran on moving clocks.
pub(super) fn clocks_line(r: &SweepResult) -> Option<String> {
    let c = r.clocks.as_ref()?;
    let (a, b) = (&c.start, &c.end);
    let memory = match a.mem_mhz == b.mem_mhz {
        true => format!("{} MHz", a.mem_mhz),
        false => format!("{} MHz → {} MHz", a.mem_mhz, b.mem_mhz),
    };
    let slowing = |c: &Clocks, when: &str| {
        let s = c.slowing();
        (!s.is_empty()).then(|| format!("{} at the {when}", s.join(", ")))
    };
    let throttled: Vec<String> = [slowing(a, "start"), slowing(b, "end")]
        .into_iter()
        .flatten()
        .collect();
    let throttling = match throttled.is_empty() {
        true => "no throttling".to_string(),
        false => format!("throttled: {}", throttled.join("; ")),
    };
    let moved = match r.clocks_moved {
        Some(_) => "; rows measured on moving clocks",
        None => "",
    };
    Some(format!(
        "SM {} MHz → {} MHz, memory {memory}; {throttling}{moved}",
        a.sm_mhz, b.sm_mhz
    ))
}

/// After the answer: each API whose rows ran on moving clocks, and why; the rows measured
/// twice on a slowed GPU (below 75 % of its stated SM clock).
pub(super) fn clocks_warning(report: &Report) -> Option<String> {
    let moved: Vec<String> = report
        .results
        .iter()
        .filter_map(|r| Some(format!("{} ({})", r.api, r.clocks_moved.as_ref()?)))
        .collect();
    let slow: Vec<String> = report
        .results
        .iter()
        .filter_map(|r| {
            let rows: Vec<String> = (r.rows.iter().filter(|x| x.slow_clock))
                .map(|x| x.block.to_string())
                .collect();
            (!rows.is_empty()).then(|| format!("{} {}", r.api, rows.join(", ")))
        })
        .collect();
    let mut said = Vec::new();
    if !moved.is_empty() {
        said.push(format!(
            "Clocks moved during the turn of {}: those rows were measured while the GPU's clock \
             changed or was held down, and may not repeat; run again with the GPU warm.",
            moved.join(", ")
        ));
    }
    if !slow.is_empty() {
        said.push(format!(
            "Measured twice below {:.0} % of the GPU's stated SM clock: {} (the notes give the \
             clocks); those rows are the slowed GPU's.",
            blocksweep_core::clocks::SLOW_FRACTION * 100.0,
            slow.join("; ")
        ));
    }
    (!said.is_empty()).then(|| said.join(" "))
}
