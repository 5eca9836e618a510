//! Hot and cold caches (`--cold`): whether each timed dispatch finds the device's caches as the
//! dispatch before it left them, or its last-level cache flushed; how large the flush is and
//! where that size came from; and the batches a measurement runs under either.
//!
//! Hot (the default) is how a kernel runs in a pipeline of kernels over the same data: a frame
//! smaller than the last-level cache is read from it, and a row can read above the copy ceiling
//! (1280x720 on an H100's 50 MB L2). Cold writes a scratch buffer larger than the last-level
//! cache before every timed dispatch, ordered on the device and outside the dispatch's interval,
//! so that every row reads its data from memory. The rule is here, once; a backend only runs
//! the write ([`Backend::run_batch_flushed`]).

use serde::{Deserialize, Serialize};

use crate::backend::{Api, Backend, BackendError, BatchTimes, Stamps, Work};
use crate::limits::{Limits, Named};

/// The flush is this many times the last-level cache: a cache's replacement is not exactly
/// least-recently-used (and an L2 in two partitions may hold a line twice), so writing only
/// its size can leave some of the kernel's lines in it.
pub const FLUSH_FACTOR: u64 = 2;
/// The smallest flush, whatever the cache a device states.
pub const MIN_FLUSH_BYTES: u64 = 8 << 20;
/// The last-level cache assumed where no API of the device states one (Vulkan has no query):
/// above the largest that GPUs of today have (the H100's L2 is 50 MB; AMD's RDNA3 cards have
/// up to 96 MB of Infinity Cache).
pub const ASSUMED_LLC_BYTES: u64 = 128 << 20;
/// A flushed batch writes at most this much in all (its count split into batches that do):
/// each dispatch is timed alone, so the split changes no time, and a batch of many flushes
/// on a slow device (a CPU driver's memset) stays far inside the dispatch deadline.
pub const FLUSHED_BATCH_BYTES: u64 = 4 << 30;
/// `llc_source` where the size is [`ASSUMED_LLC_BYTES`].
pub const ASSUMED_SOURCE: &str = "assumed: no API of this device states its last-level cache";
/// The flush takes at most this fraction of the device's memory (a small device's own
/// frame needs the rest).
const MEMORY_SHARE: u64 = 8;

/// Whether timed dispatches find the caches warm (hot) or the last-level cache flushed (cold).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Caches {
    /// Dispatches back to back: each finds what the one before left in the caches (the
    /// default).
    #[default]
    Hot,
    /// A write of `flush.bytes` to a scratch buffer before each timed dispatch, ordered on the
    /// device and outside its interval; `None` until the device is known (the measurement
    /// then sizes it from the backend's own limits).
    Cold {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flush: Option<Flush>,
    },
}

/// How much a cold measurement writes before each dispatch, and why that much.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flush {
    /// Bytes written before each timed dispatch.
    pub bytes: u64,
    /// The last-level cache it is sized from.
    pub llc_bytes: u64,
    /// Where `llc_bytes` came from: the API's own query, another API's of the same device, or
    /// "assumed".
    pub llc_source: String,
}

impl Caches {
    /// Cold, the flush still to be sized.
    pub const COLD: Caches = Caches::Cold { flush: None };

    pub fn is_cold(&self) -> bool {
        matches!(self, Caches::Cold { .. })
    }

    pub fn key(&self) -> &'static str {
        match self {
            Caches::Hot => "hot",
            Caches::Cold { .. } => "cold",
        }
    }

    /// Cold with the flush sized for a device of `limits` (`peer`: the last-level cache as
    /// another API of the same device states it); hot as it is.
    pub fn sized(&self, limits: &Limits, peer: Option<&(Api, Named<u64>)>) -> Caches {
        match self {
            Caches::Hot => Caches::Hot,
            Caches::Cold { flush: Some(f) } => Caches::Cold {
                flush: Some(f.clone()),
            },
            Caches::Cold { flush: None } => Caches::Cold {
                flush: Some(Flush::for_device(limits, peer)),
            },
        }
    }

    /// The bytes to write before each dispatch on a device of `limits`; `None` when hot.
    pub fn flush_bytes(&self, limits: &Limits) -> Option<u64> {
        match self {
            Caches::Hot => None,
            Caches::Cold { flush: Some(f) } => Some(f.bytes),
            Caches::Cold { flush: None } => Some(Flush::for_device(limits, None).bytes),
        }
    }

    /// One line of a short report, cold only: "cold: LLC flushed (64.0 MiB) before each
    /// dispatch", saying where the cache's size is assumed.
    pub fn brief(&self) -> Option<String> {
        let Caches::Cold { flush: Some(f) } = self else {
            return self
                .is_cold()
                .then(|| "cold: LLC flushed before each dispatch".into());
        };
        let assumed = match f.llc_source == ASSUMED_SOURCE {
            true => format!(" ({FLUSH_FACTOR} x an assumed {} LLC)", mib(f.llc_bytes)),
            false => String::new(),
        };
        Some(format!(
            "cold: LLC flushed ({}) before each dispatch{assumed}",
            mib(f.bytes)
        ))
    }

    /// The mode in words, for a header line: "hot: ..." or "cold: LLC flushed (64 MiB) ...".
    pub fn describe(&self) -> String {
        match self {
            Caches::Hot => "hot: dispatches back to back, each finds what the one before left \
                            in the caches (a frame smaller than the last-level cache is read \
                            from it)"
                .into(),
            Caches::Cold { flush: Some(f) } => format!(
                "cold: LLC flushed ({}) before each dispatch, every row reads memory ({})",
                mib(f.bytes),
                f.why()
            ),
            Caches::Cold { flush: None } => {
                "cold: LLC flushed before each dispatch, every row reads memory".into()
            }
        }
    }
}

impl Flush {
    /// The flush for a device of `limits`: [`FLUSH_FACTOR`] times its last-level cache, the
    /// larger of what its API states and what `peer` (another API of the same device) states,
    /// else [`ASSUMED_LLC_BYTES`]; at least [`MIN_FLUSH_BYTES`], at most an eighth of its memory
    /// and one allocation, in whole 4 KiB pages. One device has one last-level cache: an API
    /// that states less names another cache (NVIDIA's OpenCL states 4.1 MiB on an H100 whose L2
    /// is 50 MiB, and its cold rows read above the copy ceiling).
    pub fn for_device(limits: &Limits, peer: Option<&(Api, Named<u64>)>) -> Flush {
        let own = limits.l2_bytes.as_ref().filter(|l| l.value > 0);
        let peer = peer.filter(|(_, l)| l.value > 0 && own.is_none_or(|o| l.value > o.value));
        let (llc_bytes, llc_source) = match (own, peer) {
            (_, Some((api, l))) => (l.value, format!("{api} {}, the same device", l.name)),
            (Some(l), None) => (l.value, l.name.clone()),
            (None, None) => (ASSUMED_LLC_BYTES, ASSUMED_SOURCE.into()),
        };
        let share = (limits.global_mem_bytes.as_ref()).map(|g| g.value / MEMORY_SHARE);
        let alloc = limits.max_alloc_bytes.as_ref().map(|a| a.value);
        let cap = share.into_iter().chain(alloc).min().unwrap_or(u64::MAX);
        let want = llc_bytes.saturating_mul(FLUSH_FACTOR).max(MIN_FLUSH_BYTES);
        let bytes = want.min(cap).max(4096) / 4096 * 4096;
        Flush {
            bytes,
            llc_bytes,
            llc_source,
        }
    }

    /// "2 x the 32.0 MiB last-level cache, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".
    pub fn why(&self) -> String {
        format!(
            "{FLUSH_FACTOR} x the {} last-level cache, {}",
            mib(self.llc_bytes),
            self.llc_source
        )
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// One measurement's batches of one work: as asked (hot), or each dispatch after a flush of
/// `flush` bytes (cold), its interval around the dispatch alone.
pub(crate) struct Batches<'a> {
    pub backend: &'a mut dyn Backend,
    pub work: Work,
    pub flush: Option<u64>,
}

impl Batches<'_> {
    /// `count` dispatches with the stamps asked. Flushed, every dispatch is timed on its own,
    /// so [`Stamps::Batch`] answers the sum of the dispatches' intervals (the flushes between
    /// them not counted).
    pub fn run(&mut self, count: u32, stamps: Stamps) -> Result<BatchTimes, BackendError> {
        let Some(bytes) = self.flush else {
            return self.backend.run_batch(self.work, count, stamps);
        };
        let most = (FLUSHED_BATCH_BYTES / bytes.max(1)).clamp(1, u32::MAX as u64) as u32;
        let mut each = Vec::with_capacity(count as usize);
        let mut left = count;
        while left > 0 {
            let n = left.min(most);
            each.extend(self.backend.run_batch_flushed(self.work, n, bytes)?.each_ms);
            left -= n;
        }
        Ok(match stamps {
            Stamps::None => BatchTimes::default(),
            Stamps::Batch => BatchTimes {
                batch_ms: Some(each.iter().sum()),
                each_ms: Vec::new(),
            },
            Stamps::Each => BatchTimes {
                batch_ms: None,
                each_ms: each,
            },
        })
    }

    pub fn api(&self) -> Api {
        self.backend.api()
    }
}

#[cfg(test)]
#[path = "flush_tests.rs"]
mod tests;
