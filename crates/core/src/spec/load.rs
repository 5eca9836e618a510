//! Reading a spec file: TOML into the raw structs, then each value checked and turned into a
//! [`KernelSpec`], every error naming its key.

use std::collections::BTreeMap;
use std::path::Path;

use super::args::{parse_arg, size_expr, KeyError};
use super::decl::*;
use super::error::{from_toml, not_a_spec, SpecError};
use super::expr::Expr;
use super::raw::{RawCheck, RawLaunch, RawSource, RawSpec};
use crate::api::Api;
use crate::blocks::parse_blocks;
use crate::program::{Language, ProgramSource};

/// Names an expression of the block may use (in `launch.shared_bytes` only).
pub(crate) const BLOCK_NAMES: [&str; 4] = ["block", "block_x", "block_y", "block_z"];
const FUNCTIONS: [&str; 3] = ["ceil_div", "min", "max"];

/// Reads, parses and checks a spec file and the source files it names.
pub fn load(path: &Path) -> Result<KernelSpec, SpecError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| SpecError::new(&file, "", format!("cannot read the spec file: {e}")))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    if path.extension().is_some_and(|e| e != "toml") && toml::from_str::<RawSpec>(&text).is_err() {
        return Err(SpecError::new(&file, "", not_a_spec(path, dir)));
    }
    parse(&file, &text, dir)
}

/// Parses spec text whose relative source paths are under `dir`.
pub fn parse(file: &str, text: &str, dir: &Path) -> Result<KernelSpec, SpecError> {
    let raw: RawSpec = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let err = |key: &str, msg: String| SpecError::new(file, key, msg);
    if raw.name.trim().is_empty() {
        return Err(err("name", "is empty".into()));
    }
    check_size_names(&raw, file)?;
    let sizes = Sizes(raw.sizes.clone());
    let work = parse_work(&raw.work, &sizes).map_err(|m| err("work", m))?;
    let sources = parse_sources(&raw.sources, dir, file)?;
    let tune = match &raw.tune {
        Some(t) => Some(super::tune::parse_tune(t, &sizes).map_err(|(k, m)| {
            err(
                &format!("tune{}", if k.is_empty() { k } else { format!(".{k}") }),
                m,
            )
        })?),
        None => None,
    };
    check_defines(&tune, &sources, file)?;
    let params = tune.as_ref().map(|t| t.first()).unwrap_or_default();
    // Expressions may name the parameters: they are checked against both.
    let known = Sizes(
        sizes
            .0
            .iter()
            .chain(&params.0)
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
    );
    let mut args = parse_args(&raw, &known, file)?;
    super::reference::resolve(&mut args, dir);
    let tolerance = parse_check(&raw.check).map_err(|(k, m)| err(&format!("check.{k}"), m))?;
    let mut spec = KernelSpec {
        file: file.to_string(),
        name: raw.name,
        description: raw.description,
        work,
        sizes,
        sources,
        args,
        bytes_per_item: raw.check.bytes_per_item,
        tolerance,
        grid: GridMode::Stride,
        max_grid: None,
        shared_bytes: None,
        blocks: None,
        subgroup_size: None,
        nonfinite_allowed: match raw.check.nonfinite.as_deref() {
            None | Some("error") => false,
            Some("allowed") => true,
            Some(o) => {
                let why = format!("'{o}' is neither \"error\" (the default) nor \"allowed\"");
                return Err(err("check.nonfinite", why));
            }
        },
        timing_only: raw.check.timing_only.unwrap_or(false),
        tune,
        params,
        references_given: Vec::new(),
    };
    parse_launch(&raw.launch, &mut spec, &known)
        .map_err(|(k, m)| err(&format!("launch.{k}"), m))?;
    check_local(&spec)?;
    check_written(&spec)?;
    Ok(spec)
}

/// Every size name is a name, and none is reserved (a block extent, a function).
fn check_size_names(raw: &RawSpec, file: &str) -> Result<(), SpecError> {
    for name in raw.sizes.keys() {
        let key = format!("sizes.{name}");
        if BLOCK_NAMES.contains(&name.as_str()) || FUNCTIONS.contains(&name.as_str()) {
            return Err(SpecError::new(file, &key, "is a reserved name"));
        }
        if Expr::parse(name).ok().map(|e| e.names() == [name.as_str()]) != Some(true) {
            let why = "is not a name (letters, digits, _)".to_string();
            return Err(SpecError::new(file, &key, why));
        }
    }
    Ok(())
}

/// The arguments in order, each name used once, their expressions over `known`.
fn parse_args(raw: &RawSpec, known: &Sizes, file: &str) -> Result<Vec<ArgDecl>, SpecError> {
    let mut args = Vec::new();
    for (i, a) in raw.args.iter().enumerate() {
        let arg = parse_arg(i, a, known)
            .map_err(|(k, m)| SpecError::new(file, format!("args[{i}]{k}"), m))?;
        if args.iter().any(|b: &ArgDecl| b.name() == arg.name()) {
            let why = format!("'{}' is used twice", a.name);
            return Err(SpecError::new(file, format!("args[{i}].name"), why));
        }
        args.push(arg);
    }
    Ok(args)
}

/// A tune hands its parameters to each compiler as defines; a source in a language without
/// them (its provider says so: `Language::defines`) cannot be tuned, and the error names the
/// languages of that API that can, with their extensions.
fn check_defines(
    tune: &Option<super::tune::TuneDecl>,
    sources: &[(&'static str, ProgramSource)],
    file: &str,
) -> Result<(), SpecError> {
    if tune.is_none() {
        return Ok(());
    }
    if let Some((key, s)) = sources.iter().find(|(_, s)| !s.language.defines) {
        let declared = Api::from_key(key).map(|a| a.info().kernel_languages);
        let mut instead: Vec<(Language, Vec<String>)> = Vec::new();
        for (ext, l) in declared
            .unwrap_or_default()
            .iter()
            .filter(|(_, l)| l.defines)
        {
            match instead.iter_mut().find(|(m, _)| m == l) {
                Some((_, exts)) => exts.push(format!(".{ext}")),
                None => instead.push((*l, vec![format!(".{ext}")])),
            }
        }
        let instead: Vec<String> = instead
            .iter()
            .map(|(l, exts)| format!("{l} ({})", exts.join(", ")))
            .collect();
        let instead = match instead.is_empty() {
            true => String::new(),
            false => format!(" such as {}", instead.join(" or ")),
        };
        return Err(SpecError::new(
            file,
            format!("sources.{key}.file"),
            format!(
                "is {}, which takes no defines: a spec with [tune] gives each parameter as \
                 -DNAME=VALUE, so it needs a source{instead}",
                s.language
            ),
        ));
    }
    Ok(())
}

/// A kernel is checked through what it writes: a spec with no written buffer checks nothing,
/// which is an error unless it says it is for timing only; one that says so writes nothing
/// the harness would check.
fn check_written(spec: &KernelSpec) -> Result<(), SpecError> {
    let written = spec
        .args
        .iter()
        .any(|a| matches!(a, ArgDecl::Buffer(b) if b.written));
    match (written, spec.timing_only) {
        (false, false) => Err(SpecError::new(
            &spec.file,
            "args",
            "no buffer is `written = true`, so nothing the kernel does would be checked: mark \
             its outputs written, or say `[check] timing_only = true` to time it unchecked",
        )),
        (true, true) => Err(SpecError::new(
            &spec.file,
            "check.timing_only",
            "is true, but a buffer is `written = true`: a timing-only spec checks nothing",
        )),
        _ => Ok(()),
    }
}

/// A `local` argument takes its size from `launch.shared_bytes`, so it needs one, and one
/// size serves one such argument.
fn check_local(spec: &KernelSpec) -> Result<(), SpecError> {
    let locals: Vec<usize> = (0..spec.args.len())
        .filter(|i| matches!(spec.args[*i], ArgDecl::Local { .. }))
        .collect();
    let key = |i: usize| format!("args[{i}].local");
    match locals[..] {
        [] => Ok(()),
        [i] if spec.shared_bytes.is_none() => Err(SpecError::new(
            &spec.file,
            key(i),
            "needs launch.shared_bytes (its size per block)",
        )),
        [_] => Ok(()),
        [_, i, ..] => Err(SpecError::new(
            &spec.file,
            key(i),
            "a second local argument: launch.shared_bytes sizes only one",
        )),
    }
}

fn parse_work(value: &toml::Value, sizes: &Sizes) -> Result<Vec<String>, String> {
    const FORMS: &str =
        "is one size name (\"n\") or two (\"width x height\" or [\"width\", \"height\"])";
    let names: Vec<String> = match value {
        toml::Value::String(s) => {
            let spaced = s.replace('×', " x ");
            match spaced.split_whitespace().collect::<Vec<_>>()[..] {
                [one] => vec![one.to_string()],
                [w, "x" | "X", h] => vec![w.to_string(), h.to_string()],
                _ => return Err(format!("'{s}' {FORMS}")),
            }
        }
        toml::Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or(FORMS.to_string()))
            .collect::<Result<_, _>>()?,
        _ => return Err(FORMS.into()),
    };
    if names.is_empty() || names.len() > 2 {
        return Err(format!("has {} dimensions; it takes 1 or 2", names.len()));
    }
    for n in &names {
        if sizes.get(n).is_none() {
            return Err(format!("'{n}' is not in sizes ({sizes})"));
        }
    }
    Ok(names)
}

fn parse_sources(
    raw: &BTreeMap<String, RawSource>,
    dir: &Path,
    file: &str,
) -> Result<Vec<(&'static str, ProgramSource)>, SpecError> {
    let runs_kernels: Vec<Api> = Api::known()
        .into_iter()
        .filter(|a| !a.info().kernel_languages.is_empty())
        .collect();
    let keys: Vec<&str> = runs_kernels.iter().map(|a| a.key()).collect();
    let mut out = Vec::new();
    for (key, src) in raw {
        let api = Api::from_key(key).filter(|a| runs_kernels.contains(a));
        let Some(api) = api else {
            let msg = format!(
                "no API of this blocksweep that runs a user's kernel is called '{key}' ({})",
                keys.join(", ")
            );
            return Err(SpecError::new(file, format!("sources.{key}"), msg));
        };
        out.push((api.key(), read_source(api, src, dir, file)?));
    }
    if out.is_empty() {
        let msg = format!(
            "names no source ({}): a kernel needs at least one",
            keys.join(", ")
        );
        return Err(SpecError::new(file, "sources", msg));
    }
    Ok(out)
}

/// The language of `path` for `api`: its one language, else the one its extension names.
fn language(api: Api, path: &Path, name: &str) -> Result<Language, String> {
    let declared = api.info().kernel_languages;
    if let [(_, only)] = declared {
        return Ok(*only);
    }
    let ext = path.extension().and_then(|e| e.to_str());
    if let Some((_, l)) = declared.iter().find(|(e, _)| Some(*e) == ext) {
        return Ok(*l);
    }
    // ".comp or .glsl (GLSL) or .spv (SPIR-V)"
    let mut said: Vec<String> = Vec::new();
    for (i, (e, l)) in declared.iter().enumerate() {
        let last_of_its_language = declared.get(i + 1).is_none_or(|(_, next)| next != l);
        let tail = if last_of_its_language {
            format!(" ({l})")
        } else {
            String::new()
        };
        said.push(format!(".{e}{tail}"));
    }
    Err(format!(
        "'{name}': a {api} source ends in {}",
        said.join(" or ")
    ))
}

fn read_source(
    api: Api,
    src: &RawSource,
    dir: &Path,
    file: &str,
) -> Result<ProgramSource, SpecError> {
    let key = format!("sources.{}", api.key());
    let path = dir.join(&src.file);
    let language = language(api, &path, &src.file)
        .map_err(|msg| SpecError::new(file, format!("{key}.file"), msg))?;
    let code = std::fs::read(&path).map_err(|e| {
        SpecError::new(
            file,
            format!("{key}.file"),
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let entry = match (&src.entry, api.info().default_entry) {
        (Some(e), _) if !e.trim().is_empty() => e.clone(),
        (_, Some(default)) => default.to_string(),
        _ => {
            return Err(SpecError::new(
                file,
                format!("{key}.entry"),
                "is required (the kernel's name)",
            ))
        }
    };
    Ok(ProgramSource {
        language,
        code,
        entry,
        origin: path.display().to_string(),
        options: src.options.clone(),
    })
}

fn parse_check(c: &RawCheck) -> Result<Tolerance, KeyError> {
    let nonneg = |k: &str, v: Option<f64>| match v {
        Some(x) if !(x >= 0.0 && x.is_finite()) => {
            Err((k.to_string(), format!("{x} is not a finite value >= 0")))
        }
        _ => Ok(v),
    };
    nonneg("bytes_per_item", c.bytes_per_item)?;
    Ok(Tolerance {
        ulps: c.tolerance_ulps.unwrap_or(0),
        abs: nonneg("tolerance_abs", c.tolerance_abs)?,
        rel: nonneg("tolerance_rel", c.tolerance_rel)?,
    })
}

fn parse_launch(l: &RawLaunch, spec: &mut KernelSpec, known: &Sizes) -> Result<(), KeyError> {
    let k = |key: &str, m: String| (key.to_string(), m);
    spec.grid = match l.grid.as_deref() {
        None | Some("stride") => GridMode::Stride,
        Some("data") => GridMode::Data,
        Some(o) => {
            return Err(k(
                "grid",
                format!("'{o}' is not a grid mode (stride, data)"),
            ))
        }
    };
    if let Some(v) = &l.max_grid {
        spec.max_grid = Some(size_expr(v, known, &[]).map_err(|m| k("max_grid", m))?);
    }
    if let Some(v) = &l.shared_bytes {
        spec.shared_bytes =
            Some(size_expr(v, known, &BLOCK_NAMES).map_err(|m| k("shared_bytes", m))?);
    }
    if let Some(b) = &l.blocks {
        spec.blocks = Some(parse_blocks(b).map_err(|e| k("blocks", e.to_string()))?);
    }
    if let Some(s) = l.subgroup_size {
        if s == 0 || !s.is_power_of_two() || s > 128 {
            return Err(k(
                "subgroup_size",
                format!("{s} is not a power of two from 1 to 128"),
            ));
        }
        spec.subgroup_size = Some(s);
    }
    Ok(())
}
