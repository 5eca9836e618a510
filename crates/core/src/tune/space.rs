//! The space a tune searches: parameter sets × blocks × grids, the constraints applied before
//! anything compiles, and the order it is covered in (as listed, or sampled from a seed).

use std::collections::BTreeMap;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Config, Rejected};
use crate::blocks::BlockSize;
use crate::grid::GridPolicy;
use crate::spec::{Sizes, TuneDecl};

/// How the configurations are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// As listed: parameter sets, then blocks, then grids.
    Exhaustive,
    /// Shuffled by ChaCha8 from this seed: the same seed gives the same order everywhere.
    Sampled(u64),
}

/// Everything a tune could run, before any device is asked.
pub struct Space {
    /// The valid configurations, in the search's order.
    pub configs: Vec<Config>,
    /// Refused by a constraint: never compiled, never launched.
    pub rejected: Vec<Rejected>,
    /// All configurations, constraints not yet applied.
    pub total: usize,
}

impl Space {
    /// The space of `tune` (none: one empty parameter set) over `blocks` × `grids`, with
    /// `sizes` for the constraints' other names.
    pub fn new(
        tune: Option<&TuneDecl>,
        sizes: &Sizes,
        blocks: &[BlockSize],
        grids: &[GridPolicy],
        order: Order,
    ) -> Space {
        let sets = tune
            .map(TuneDecl::combinations)
            .unwrap_or_else(|| vec![Sizes::default()]);
        let mut configs = Vec::new();
        let mut rejected = Vec::new();
        let mut total = 0;
        for set in &sets {
            for &block in blocks {
                for &grid in grids {
                    total += 1;
                    let config = Config {
                        params: set.0.clone(),
                        block,
                        grid: grid.into(),
                    };
                    let lookup = |n: &str| lookup(n, set, sizes, block);
                    match tune.and_then(|t| t.broken(&lookup)) {
                        Some(why) => rejected.push(Rejected { config, why }),
                        None => configs.push(config),
                    }
                }
            }
        }
        if let Order::Sampled(seed) = order {
            shuffle(&mut configs, seed);
        }
        Space {
            configs,
            rejected,
            total,
        }
    }

    /// The first `n` configurations of the order grouped by parameter set, each set in the
    /// order its first configuration comes: one compile each.
    pub fn batches(configs: &[Config]) -> Vec<(BTreeMap<String, u64>, Vec<Config>)> {
        let mut out: Vec<(BTreeMap<String, u64>, Vec<Config>)> = Vec::new();
        for c in configs {
            match out.iter_mut().find(|(p, _)| *p == c.params) {
                Some((_, v)) => v.push(c.clone()),
                None => out.push((c.params.clone(), vec![c.clone()])),
            }
        }
        out
    }
}

fn lookup(n: &str, set: &Sizes, sizes: &Sizes, block: BlockSize) -> Option<u64> {
    match n {
        "block" => Some(block.threads()),
        "block_x" => Some(block.x as u64),
        "block_y" => Some(block.y as u64),
        "block_z" => Some(block.z as u64),
        _ => set.get(n).or_else(|| sizes.get(n)),
    }
}

/// Fisher–Yates with ChaCha8: the same seed, the same order on every machine.
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tune() -> TuneDecl {
        let raw: BTreeMap<String, toml::Value> =
            toml::from_str("TILE = [4, 8, 16]\nrestrict = [\"TILE * TILE <= block\"]").unwrap();
        crate::spec::tune::parse_tune(&raw, &Sizes::default()).unwrap()
    }

    #[test]
    fn constraints_reject_before_anything_runs() {
        let blocks = [16, 64, 256].map(BlockSize::linear);
        let s = Space::new(
            Some(&tune()),
            &Sizes::default(),
            &blocks,
            &[GridPolicy::Wave],
            Order::Exhaustive,
        );
        assert_eq!(s.total, 9);
        // TILE 8 needs 64, TILE 16 needs 256: 16x16 and 8@16, 16@16, 16@64 fail.
        assert_eq!(s.rejected.len(), 3);
        assert_eq!(s.configs.len(), 6);
        assert!(s.rejected[0]
            .why
            .starts_with("restrict: TILE * TILE <= block"));
    }

    #[test]
    fn a_seed_gives_one_order() {
        let blocks: Vec<_> = (1..=32).map(|i| BlockSize::linear(i * 32)).collect();
        let grids = [GridPolicy::Wave, GridPolicy::Data];
        let a = Space::new(
            Some(&tune()),
            &Sizes::default(),
            &blocks,
            &grids,
            Order::Sampled(7),
        );
        let b = Space::new(
            Some(&tune()),
            &Sizes::default(),
            &blocks,
            &grids,
            Order::Sampled(7),
        );
        let c = Space::new(
            Some(&tune()),
            &Sizes::default(),
            &blocks,
            &grids,
            Order::Sampled(8),
        );
        let e = Space::new(
            Some(&tune()),
            &Sizes::default(),
            &blocks,
            &grids,
            Order::Exhaustive,
        );
        assert_eq!(a.configs, b.configs);
        assert_ne!(a.configs, c.configs);
        assert_ne!(a.configs, e.configs);
        let mut sorted = a.configs.clone();
        sorted.sort();
        let mut all = e.configs.clone();
        all.sort();
        assert_eq!(sorted, all, "a sample is a permutation");
        let batches = Space::batches(&a.configs[..10]);
        assert_eq!(batches.iter().map(|b| b.1.len()).sum::<usize>(), 10);
    }
}
