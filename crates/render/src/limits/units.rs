//! The unit of every limit the JSON carries, and each guarantee as a number with its unit, so a
//! script compares figures without parsing "16 KiB" or "1024 (cc ≥ 2.0)".

use serde_json::{json, Value};

use blocksweep_core::guarantee::{Amount, Guarantee};
use blocksweep_core::limits::Concept;

/// The unit a concept's figures count in.
pub(crate) fn concept_unit(c: Concept) -> &'static str {
    use Concept::*;
    match c {
        MaxThreadsPerBlock | MaxBlockDims | WarpSize | MaxThreadsPerMp | KernelMaxBlock => {
            "threads"
        }
        MaxGridDims | MaxBlocksPerMp => "blocks",
        Multiprocessors => "multiprocessors",
        SharedMemPerBlock
        | SharedMemPerBlockOptin
        | MaxAlloc
        | MaxBufferBinding
        | GlobalMemory
        | LastLevelCache => "bytes",
        RegistersPerBlock => "registers",
        KernelRegisters => "registers per thread",
        TimerResolution => "ns",
    }
}

/// The unit of the limit the JSON calls `key` (a field of `limits`, or `kernel_` and a field
/// of `kernel`); `None` for a key that holds no figure.
pub(crate) fn unit(key: &str) -> Option<&'static str> {
    let concept = super::rows::ROWS.iter().find(|r| r.key == key);
    if let Some(row) = concept {
        return Some(concept_unit(row.concept));
    }
    Some(match key {
        "registers_per_mp" => "registers",
        "theoretical_gbps" => "GB/s",
        "compute_capability" => "version",
        "max_loop_iterations" => "iterations",
        "kernel_preferred_multiple" => "threads",
        "kernel_private_bytes" | "kernel_shared_bytes" | "frame_piece_bytes" => "bytes",
        _ => return None,
    })
}

/// A guarantee as a number with its unit: `{ "value": 16384, "unit": "bytes" }`, three extents
/// as `[x, y, z]`; a share of global memory gives its floor and `global_divisor`.
pub(crate) fn amount(g: &Guarantee) -> Value {
    let unit = concept_unit(g.concept);
    match g.amount {
        Amount::Count(n) => json!({ "value": n, "unit": unit }),
        Amount::Dims(d) => json!({ "value": d, "unit": unit }),
        Amount::Bytes(b) => json!({ "value": b, "unit": "bytes" }),
        Amount::ShareOfGlobal { divisor, floor } => {
            json!({ "value": floor, "unit": "bytes", "global_divisor": divisor })
        }
    }
}

/// What a guarantee promises, typed: its amount, whether every device has exactly it, and
/// where it holds.
pub(crate) fn promised(g: &Guarantee) -> Value {
    let mut v = amount(g);
    if let Some(m) = v.as_object_mut() {
        m.insert("fixed".into(), g.fixed.into());
        m.insert("condition".into(), g.condition.into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::api::Api;

    /// Every row the tables show has a unit, and every guarantee of every API a number.
    #[test]
    fn every_limit_and_guarantee_has_a_unit() {
        for row in super::super::rows::ROWS {
            assert!(unit(row.key).is_some(), "{}", row.key);
        }
        for api in Api::known() {
            for g in api.info().guarantees {
                let v = promised(g);
                assert!(v["value"].is_number() || v["value"].is_array(), "{v}");
                assert!(v["unit"].is_string(), "{v}");
            }
        }
        let g = Guarantee::at_least(
            Concept::SharedMemPerBlock,
            Amount::Bytes(16 << 10),
            "maxComputeSharedMemorySize",
        );
        assert_eq!(
            promised(&g),
            json!({"value": 16384, "unit": "bytes", "fixed": false, "condition": null})
        );
    }
}
