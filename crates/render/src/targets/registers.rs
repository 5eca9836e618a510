//! The register and occupancy arithmetic per compute capability: at the count a local build
//! reports, or, where none does, at the counts where each block's residency changes.

use blocksweep_targets::report::TargetReport;

use crate::layout::{Column, Notes, Table};
use crate::text::Doc;

/// Per target that states a multiprocessor: the largest block the registers allow, and the
/// resident blocks and occupancy at each block.
pub(super) fn known(r: &TargetReport, doc: &mut Doc) {
    let Some(first) = r.registers.first() else {
        return;
    };
    doc.heading(3, &format!("Registers: {} per thread", first.registers));
    let blocks: Vec<u64> = first.residency.iter().map(|x| x.threads).collect();
    let mut cols = vec![Column::left("target"), Column::right("largest block")];
    cols.extend(blocks.iter().map(|b| Column::right(b.to_string())));
    let mut table = Table::new(cols);
    for reg in &r.registers {
        let mut cells = vec![
            reg.target.clone(),
            reg.largest_block.map_or("—".into(), |b| b.to_string()),
        ];
        for b in &blocks {
            let c = reg.residency.iter().find(|x| x.threads == *b);
            cells.push(c.map_or("—".into(), |x| {
                format!("{}·{:.0}%", x.blocks_per_sm, x.occupancy * 100.0)
            }));
        }
        table.push(cells);
    }
    doc.table(
        &table,
        "largest block: threads per block the kernel's registers allow (whole warps within the \
         registers per block); each block's cell: resident blocks per SM · occupancy (warps \
         resident ÷ the SM's warp slots), the least of the block, warp, register and shared-memory \
         limits, as the seed works it out.",
        &Notes::new(),
    );
}

/// Where no build reports the kernel's registers: per block, its residency where registers do
/// not bound it, the most registers per thread that keep it, the most at which the block
/// launches, and its residency there.
pub(super) fn unknown(r: &TargetReport, doc: &mut Doc) {
    if r.if_registers.is_empty() {
        return;
    }
    doc.heading(3, "If the kernel uses R registers per thread");
    let cols = vec![
        Column::left("target").wrap(24),
        Column::right("block"),
        Column::right("warps"),
        Column::right("no register\nlimit"),
        Column::right("same up\nto R"),
        Column::right("launches\nup to R"),
        Column::right("at that R"),
    ];
    let mut table = Table::new(cols);
    let cell = |x: &blocksweep_targets::occupancy::Residency| {
        format!("{}·{:.0}%", x.blocks_per_sm, x.occupancy * 100.0)
    };
    for g in &r.if_registers {
        for b in &g.blocks {
            table.push(vec![
                g.targets.join(", "),
                b.threads.to_string(),
                b.unbound.warps_per_block.to_string(),
                cell(&b.unbound),
                b.kept_up_to.to_string(),
                b.launches_up_to.to_string(),
                cell(&b.at_launch_limit),
            ]);
        }
    }
    let figures: Vec<String> = (r.if_registers.iter())
        .map(|g| {
            let f = &g.figures;
            format!(
                "{}: {} warp slots ({} threads per SM ÷ warps of {}), {} blocks per SM, {} \
                 registers per SM and {} per block, given to a warp in units of {}, at most {} \
                 per thread.",
                g.targets.join(", "),
                f.threads_per_sm / f.warp,
                f.threads_per_sm,
                f.warp,
                f.blocks_per_sm,
                f.registers_per_sm,
                f.registers_per_block,
                f.register_unit,
                f.registers_per_thread
            )
        })
        .collect();
    doc.table(
        &table,
        "No local build reports the kernel's registers per thread (R), so each block is worked \
         out at the counts where its residency changes. A cell: resident blocks per SM · \
         occupancy (resident warps ÷ the SM's warp slots). no register limit: the least of the \
         blocks per SM and the warp slots ÷ the block's warps; same up to R: the most R at \
         which the registers per SM ÷ (the block's warps × a warp's registers, R × the warp \
         rounded up to the unit) leave as many blocks; launches up to R: the most R at which \
         one block's warps fit the registers per block; at that R: the residency there. From \
         the catalogue:",
        &Notes::new(),
    );
    doc.lines(&figures);
}
