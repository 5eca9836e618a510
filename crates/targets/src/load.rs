//! Reading target files: the catalogue's (embedded in the binary) and a user's own. A file that
//! is not what FORMAT.md describes is refused with its name and the key at fault.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::{Key, Kind, Source, Stated, Subgroup, Target, Value};

/// A target file that could not be read, named with the file and the key at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct FileError {
    pub file: String,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    family: String,
    title: Option<String>,
    #[serde(default)]
    sources: BTreeMap<String, RawSource>,
    #[serde(default)]
    targets: Vec<RawTarget>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    document: Option<String>,
    repository: Option<String>,
    path: Option<String>,
    commit: Option<String>,
    url: Option<String>,
    read: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    name: String,
    title: Option<String>,
    api: String,
    source: Option<String>,
    inherits: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    kind: Option<String>,
    #[serde(default)]
    limits: BTreeMap<String, RawStated>,
    subgroup: Option<RawSubgroup>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStated {
    value: RawValue,
    name: String,
    source: Option<String>,
}

/// A limit's value as written: checked against its key's shape in [`target`], which names the
/// key (an untagged enum's error named neither the key nor what was wrong).
type RawValue = toml::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSubgroup {
    min: Option<u64>,
    max: Option<u64>,
    default: Option<u64>,
    name: Option<String>,
    source: Option<String>,
}

/// A file's targets before inheritance: each keeps the name of the target it inherits from.
pub(crate) struct Parsed {
    pub targets: Vec<(Target, Option<String>)>,
    pub title: String,
}

/// Parses one target file's text; `file` names it in every error.
pub(crate) fn parse(file: &str, text: &str) -> Result<Parsed, FileError> {
    let err = |message: String| FileError {
        file: file.to_string(),
        message,
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| err(toml_message(&e, text)))?;
    let mut sources = BTreeMap::new();
    for (id, s) in raw.sources {
        let source = Source {
            id: id.clone(),
            document: s.document,
            repository: s.repository,
            path: s.path,
            commit: s.commit,
            url: s.url,
            read: s.read.unwrap_or_default(),
        };
        if !source.is_complete() {
            return Err(err(format!(
                "sources.{id}: a source needs `read` (the date) and a `document`, a \
                 `repository` with its `path`, or a `url`"
            )));
        }
        sources.insert(id, source);
    }
    let mut targets = Vec::new();
    for (i, t) in raw.targets.into_iter().enumerate() {
        let at = format!("targets[{i}] ('{}')", t.name);
        let parsed =
            target(t, &raw.family, file, &sources).map_err(|m| err(format!("{at}.{m}")))?;
        targets.push(parsed);
    }
    Ok(Parsed {
        targets,
        title: raw.title.unwrap_or(raw.family),
    })
}

/// A whole number of zero or more, as TOML writes one.
fn whole(v: &toml::Value) -> Option<u64> {
    v.as_integer().and_then(|i| u64::try_from(i).ok())
}

/// Three whole numbers, `[x, y, z]`.
fn dims(v: &toml::Value) -> Option<[u64; 3]> {
    let a = v.as_array()?;
    match a.iter().map(whole).collect::<Option<Vec<u64>>>()?[..] {
        [x, y, z] => Some([x, y, z]),
        _ => None,
    }
}

/// The toml crate's message on one line, with the line and column it points at in `text`.
fn toml_message(e: &toml::de::Error, text: &str) -> String {
    let first = e.message().lines().next().unwrap_or("not TOML").to_string();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {first}")
        }
        None => first,
    }
}

fn target(
    t: RawTarget,
    family: &str,
    file: &str,
    sources: &BTreeMap<String, Source>,
) -> Result<(Target, Option<String>), String> {
    if t.name.is_empty()
        || !t
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    {
        return Err("name: a target's name is lowercase letters, digits, '-' and '.'".into());
    }
    let find =
        |id: &Option<String>, what: &str| -> Result<Option<Source>, String> {
            match id {
                None => Ok(None),
                Some(id) => sources.get(id).cloned().map(Some).ok_or_else(|| {
                    format!("{what}: source '{id}' is not among the file's [sources]")
                }),
            }
        };
    let default = find(&t.source, "source")?;
    let kind = match t.kind.as_deref() {
        None | Some("minimum") => Kind::Minimum,
        Some("device") => Kind::Device,
        Some(other) => {
            return Err(format!(
                "kind: '{other}' is neither \"minimum\" nor \"device\""
            ))
        }
    };
    let mut limits = BTreeMap::new();
    for (k, s) in t.limits {
        let key = Key::parse(&k).ok_or_else(|| {
            let known: Vec<&str> = Key::ALL.iter().map(|k| k.key()).collect();
            format!("limits.{k}: not a limit (known: {})", known.join(", "))
        })?;
        let value = match (whole(&s.value), dims(&s.value), key.is_dims()) {
            (Some(v), _, false) => Value::One(v),
            (_, Some(d), true) => Value::Dims(d),
            (_, _, true) => {
                return Err(format!(
                    "limits.{k}.value: {} is not three extents [x, y, z]",
                    s.value
                ))
            }
            (_, _, false) => {
                return Err(format!(
                    "limits.{k}.value: {} is not one whole number",
                    s.value
                ))
            }
        };
        let source = find(&s.source, &format!("limits.{k}.source"))?
            .or_else(|| default.clone())
            .ok_or_else(|| format!("limits.{k}: no source (give the value or the target one)"))?;
        let stated = Stated {
            value,
            name: s.name,
            source,
            inherited_from: None,
        };
        limits.insert(key, stated);
    }
    let subgroup = match t.subgroup {
        None => None,
        Some(s) => {
            let source = find(&s.source, "subgroup.source")?
                .or_else(|| default.clone())
                .ok_or("subgroup: no source (give it or the target one)")?;
            // Only a default: the one size it runs (a mobile GPU's report).
            let min = s
                .min
                .or(s.default)
                .ok_or("subgroup: needs `min` or `default`")?;
            let max = s.max.or(s.min.is_none().then_some(min));
            let ordered = |lo: u64, hi: Option<u64>| hi.is_none_or(|h| lo <= h);
            if min == 0
                || !ordered(min, max)
                || s.default.is_some_and(|d| d < min || !ordered(d, max))
            {
                return Err("subgroup: needs 0 < min <= default <= max".into());
            }
            Some(Subgroup {
                min,
                max,
                default: s.default,
                name: s.name.unwrap_or_else(|| "subgroup size".into()),
                source,
            })
        }
    };
    let target = Target {
        title: t.title.unwrap_or_else(|| t.name.clone()),
        name: t.name,
        family: family.to_string(),
        api: t.api,
        kind,
        tags: t.tags,
        limits,
        subgroup,
        file: file.to_string(),
    };
    Ok((target, t.inherits))
}

/// Fills each target's unstated values (and subgroups) from the target it inherits, through
/// the chain; a missing parent or a cycle is the file's error.
pub(crate) fn inherit(
    parsed: Vec<(Target, Option<String>)>,
    known: &[Target],
) -> Result<Vec<Target>, FileError> {
    let order: Vec<String> = parsed.iter().map(|(t, _)| t.name.clone()).collect();
    let mut done: Vec<Target> = Vec::new();
    let mut pending = parsed;
    while !pending.is_empty() {
        let before = pending.len();
        let mut rest = Vec::new();
        for (mut t, parent) in pending {
            let Some(p) = &parent else {
                done.push(t);
                continue;
            };
            let found = done.iter().chain(known).find(|k| &k.name == p).cloned();
            match found {
                Some(base) => {
                    for (k, v) in &base.limits {
                        t.limits.entry(*k).or_insert_with(|| Stated {
                            inherited_from: Some(
                                v.inherited_from.clone().unwrap_or(base.name.clone()),
                            ),
                            ..v.clone()
                        });
                    }
                    if t.subgroup.is_none() {
                        t.subgroup = base.subgroup.clone();
                    }
                    done.push(t);
                }
                None => rest.push((t, parent)),
            }
        }
        if rest.len() == before {
            let (t, p) = &rest[0];
            return Err(FileError {
                file: t.file.clone(),
                message: format!(
                    "target '{}' inherits '{}', which is no target read before it (or the chain \
                     is a cycle)",
                    t.name,
                    p.as_deref().unwrap_or_default()
                ),
            });
        }
        pending = rest;
    }
    // The file's order, not the order the chain was resolved in.
    done.sort_by_key(|t| order.iter().position(|n| n == &t.name));
    Ok(done)
}
