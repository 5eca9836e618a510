//! Pairs written as objects in the JSON, so that a script reads a field by name instead of a
//! position in a tuple: a `[tune]` parameter as `{"name", "values"}`, a regret as
//! `{"api", "regret"}`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::api::Api;

#[derive(Serialize, Deserialize)]
struct Param {
    name: String,
    values: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct Regret {
    api: Api,
    regret: f64,
}

/// `[tune]`'s parameters, in declaration order.
pub mod params {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[(String, Vec<u64>)], s: S) -> Result<S::Ok, S::Error> {
        let named: Vec<Param> = v
            .iter()
            .map(|(name, values)| Param {
                name: name.clone(),
                values: values.clone(),
            })
            .collect();
        named.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, Vec<u64>)>, D::Error> {
        let named = Vec::<Param>::deserialize(d)?;
        Ok(named.into_iter().map(|p| (p.name, p.values)).collect())
    }
}

/// A choice's regret on each API.
pub mod regret {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[(Api, f64)], s: S) -> Result<S::Ok, S::Error> {
        let named: Vec<Regret> = v
            .iter()
            .map(|&(api, regret)| Regret { api, regret })
            .collect();
        named.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(Api, f64)>, D::Error> {
        let named = Vec::<Regret>::deserialize(d)?;
        Ok(named.into_iter().map(|r| (r.api, r.regret)).collect())
    }
}
