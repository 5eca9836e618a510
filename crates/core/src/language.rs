//! The languages kernels are written in. Each provider declares its own
//! (`ApiInfo::kernel_languages`); reading one back by key ([`Language::from_key`]) is done
//! beside the registry of APIs, in [`crate::api`].

use serde::{Serialize, Serializer};
use std::fmt;

/// A language a kernel's source is written in, which says which API can build it. Each
/// driver declares its own (`ApiInfo::kernel_languages`) and its backend checks that a
/// source is in one of them; the core only carries them. Compared and serialised by key.
#[derive(Debug, Clone, Copy)]
pub struct Language {
    /// Lower-case key, as reports and the worker's requests write it.
    pub key: &'static str,
    /// Its name in messages.
    pub name: &'static str,
    /// Whether its compiler takes `-DNAME=VALUE` defines, as a tune hands each parameter
    /// (a SPIR-V binary has no preprocessor).
    pub defines: bool,
}

impl Language {
    /// A language whose compiler takes defines.
    pub const fn new(key: &'static str, name: &'static str) -> Language {
        Language {
            key,
            name,
            defines: true,
        }
    }

    /// The same language, whose sources take no defines (so no `[tune]`).
    pub const fn without_defines(self) -> Language {
        Language {
            defines: false,
            ..self
        }
    }
}

impl PartialEq for Language {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Language {}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl Serialize for Language {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.key)
    }
}
