//! Device UUIDs as text: the usual 8-4-4-4-12 hex string in JSON and CSV alike (an array of
//! 16 numbers, as files of schema 2 hold them, still reads).

/// A UUID as text in JSON, read back from text or from an array of 16 numbers.
pub mod uuid_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<[u8; 16]>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(u) => s.serialize_str(&super::format_uuid(u)),
            None => s.serialize_none(),
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Text(String),
        Bytes([u8; 16]),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[u8; 16]>, D::Error> {
        match Option::<Either>::deserialize(d)? {
            None => Ok(None),
            Some(Either::Bytes(b)) => Ok(Some(b)),
            Some(Either::Text(t)) => super::parse_uuid(&t)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("'{t}' is not a UUID"))),
        }
    }
}

/// A UUID from 32 hex digits, dashes anywhere.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = text.bytes().filter(|b| *b != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

pub fn format_uuid(u: &[u8; 16]) -> String {
    let h: Vec<String> = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[test]
    fn a_uuid_is_text_in_json_and_older_arrays_still_read() {
        let u = [
            0x8b, 0x71, 0x39, 0x02, 0x27, 0x68, 0x7f, 0x58, 0x54, 0xd6, 0x76, 0x68, 0x7f, 0x06,
            0x29, 0x5d,
        ];
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct W {
            #[serde(with = "uuid_text")]
            uuid: Option<[u8; 16]>,
        }
        let json = serde_json::to_string(&W { uuid: Some(u) }).unwrap();
        assert_eq!(json, r#"{"uuid":"8b713902-2768-7f58-54d6-76687f06295d"}"#);
        assert_eq!(serde_json::from_str::<W>(&json).unwrap().uuid, Some(u));
        let old = format!("{{\"uuid\":{:?}}}", u.to_vec());
        assert_eq!(serde_json::from_str::<W>(&old).unwrap().uuid, Some(u));
        assert_eq!(
            serde_json::from_str::<W>(r#"{"uuid":null}"#).unwrap().uuid,
            None
        );
        assert!(serde_json::from_str::<W>(r#"{"uuid":"nope"}"#).is_err());
    }
}
