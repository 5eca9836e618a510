//! What each API's specification promises for a limit, as numbers: a count, three extents or
//! bytes, at least that much (Vulkan's and OpenCL's minimums) or exactly that on every device
//! (CUDA's limits, fixed since compute capability 2.0). The limits table shows them; `validate`
//! and the lab judge each claim against them ([`crate::stance`]), so that "who guarantees it"
//! is made from each provider's own figures.

use std::fmt;

use crate::limits::Concept;

/// How much of a limit: what a specification promises, or what a claim needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Count(u64),
    /// x, y and z.
    Dims([u64; 3]),
    Bytes(u64),
    /// The larger of global memory / `divisor` and `floor` bytes (OpenCL's maximum allocation).
    ShareOfGlobal {
        divisor: u64,
        floor: u64,
    },
}

impl Amount {
    /// Whether a limit of `self` allows `need`, where both are of one kind; `None` when the
    /// kinds differ. A share of global memory allows what its floor allows.
    pub fn allows(self, need: Amount) -> Option<bool> {
        match (self, need) {
            (Amount::Count(have), Amount::Count(n)) => Some(n <= have),
            (Amount::Bytes(have), Amount::Bytes(n)) => Some(n <= have),
            (Amount::ShareOfGlobal { floor, .. }, Amount::Bytes(n)) => Some(n <= floor),
            (Amount::Dims(have), Amount::Dims(n)) => Some(n.iter().zip(have).all(|(n, h)| *n <= h)),
            _ => None,
        }
    }

    pub fn count(self) -> Option<u64> {
        match self {
            Amount::Count(n) => Some(n),
            _ => None,
        }
    }

    pub fn dims(self) -> Option<[u64; 3]> {
        match self {
            Amount::Dims(d) => Some(d),
            _ => None,
        }
    }
}

/// "2^31-1" for the largest 32-bit signed value, as the specifications write it.
fn extent(v: u64) -> String {
    match v {
        0x7fff_ffff => "2^31-1".into(),
        _ => v.to_string(),
    }
}

/// "48 KiB", "128 MiB", "1 GiB", "1000 B".
pub fn bytes_in_words(bytes: u64) -> String {
    const UNITS: [(u32, &str); 3] = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, unit) in UNITS {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Amount::Count(n) => write!(f, "{n}"),
            Amount::Dims([x, y, z]) => write!(f, "({}, {}, {})", extent(x), extent(y), extent(z)),
            Amount::Bytes(b) => f.write_str(&bytes_in_words(b)),
            Amount::ShareOfGlobal { divisor, floor } => {
                write!(f, "max(global/{divisor}, {})", bytes_in_words(floor))
            }
        }
    }
}

/// One promise of one API's specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guarantee {
    pub concept: Concept,
    pub amount: Amount,
    /// Every device has exactly `amount` (so a claim beyond it is refused everywhere), not
    /// merely at least that.
    pub fixed: bool,
    /// The limit's name in the API ("maxComputeWorkGroupInvocations").
    pub name: &'static str,
    /// Where the promise holds, in a few words ("cc ≥ 2.0").
    pub condition: Option<&'static str>,
}

impl Guarantee {
    /// The specification promises at least `amount`.
    pub const fn at_least(concept: Concept, amount: Amount, name: &'static str) -> Guarantee {
        Guarantee {
            concept,
            amount,
            fixed: false,
            name,
            condition: None,
        }
    }

    /// Every device has exactly `amount`.
    pub const fn fixed(concept: Concept, amount: Amount, name: &'static str) -> Guarantee {
        Guarantee {
            fixed: true,
            ..Guarantee::at_least(concept, amount, name)
        }
    }

    /// The promise holds only where `condition` does.
    pub const fn when(self, condition: &'static str) -> Guarantee {
        Guarantee {
            condition: Some(condition),
            ..self
        }
    }

    /// "maxComputeWorkGroupInvocations ≥ 128", "CU_DEVICE_ATTRIBUTE_WARP_SIZE = 32".
    pub fn stated(&self) -> String {
        let rel = if self.fixed { "=" } else { "≥" };
        format!("{} {rel} {}", self.name, self.amount)
    }
}

/// What the limits table prints: "1024 (cc ≥ 2.0)", "(128, 128, 64)", "16 KiB".
impl fmt::Display for Guarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.amount)?;
        match self.condition {
            Some(c) => write!(f, " ({c})"),
            None => Ok(()),
        }
    }
}

/// What a claim asks of one limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub concept: Concept,
    pub amount: Amount,
}

impl Need {
    pub const fn new(concept: Concept, amount: Amount) -> Need {
        Need { concept, amount }
    }
}
