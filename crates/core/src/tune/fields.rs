//! Pairs written as objects in the JSON, so that a script reads a field by name instead of a
//! position in a tuple: a `[tune]` parameter as `{"name", "values"}`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
struct Param {
    name: String,
    values: Vec<u64>,
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
