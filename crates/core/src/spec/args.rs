//! Reading one `[[args]]` table: its kind, type, size expression, init and value, each
//! error naming the key inside the table (the caller adds `args[i]`).

use super::decl::*;
use super::expr::Expr;
use super::raw::RawArg;
use crate::program::ScalarType;

pub(crate) type KeyError = (String, String);

fn key_err(key: &str, msg: impl Into<String>) -> KeyError {
    (format!(".{key}"), msg.into())
}

fn parse_type(key: &str, s: &str) -> Result<ScalarType, KeyError> {
    ScalarType::parse(s).ok_or_else(|| {
        let all: Vec<&str> = ScalarType::ALL.iter().map(|t| t.key()).collect();
        key_err(
            key,
            format!("'{s}' is not an element type ({})", all.join(", ")),
        )
    })
}

pub(crate) fn parse_arg(i: usize, a: &RawArg, sizes: &Sizes) -> Result<ArgDecl, KeyError> {
    let kinds = [a.buffer.is_some(), a.scalar.is_some(), a.local.is_some()];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(key_err(
            "",
            "takes exactly one of buffer = \"<type>\", scalar = \"<type>\", local = true",
        ));
    }
    let misplaced = |keys: &[(&str, bool)]| match keys.iter().find(|(_, set)| *set) {
        Some((k, _)) => Err(key_err(
            k,
            format!("does not apply to this kind of argument ('{}')", a.name),
        )),
        None => Ok(()),
    };
    let buffer_keys = [
        ("elements", a.elements.is_some()),
        ("init", a.init.is_some()),
        ("seed", a.seed.is_some()),
        ("range", a.range.is_some()),
        ("written", a.written.is_some()),
        ("compare", a.compare.is_some()),
        ("reference", a.reference.is_some()),
    ];
    if let Some(ty) = &a.buffer {
        misplaced(&[("value", a.value.is_some())])?;
        return parse_buffer(i, a, parse_type("buffer", ty)?, sizes).map(ArgDecl::Buffer);
    }
    misplaced(&buffer_keys)?;
    if let Some(ty) = &a.scalar {
        let ty = parse_type("scalar", ty)?;
        let value = match &a.value {
            None => return Err(key_err("value", "is required for a scalar")),
            Some(v) => parse_value(v, ty, sizes).map_err(|m| key_err("value", m))?,
        };
        return Ok(ArgDecl::Scalar(ScalarDecl {
            name: a.name.clone(),
            ty,
            value,
        }));
    }
    misplaced(&[("value", a.value.is_some())])?;
    if a.local != Some(true) {
        return Err(key_err(
            "local",
            "is only ever true (an argument in the block's local memory, sized by launch.shared_bytes)",
        ));
    }
    Ok(ArgDecl::Local {
        name: a.name.clone(),
    })
}

fn parse_buffer(
    i: usize,
    a: &RawArg,
    ty: ScalarType,
    sizes: &Sizes,
) -> Result<BufferDecl, KeyError> {
    let elements = match &a.elements {
        None => {
            return Err(key_err(
                "elements",
                "is required for a buffer (an expression of the sizes)",
            ))
        }
        Some(v) => size_expr(v, sizes, &[]).map_err(|m| key_err("elements", m))?,
    };
    let init = parse_init(a, ty)?;
    let compare = match a.compare.as_deref() {
        None | Some("exact") => CompareMode::Exact,
        Some("sum") => CompareMode::Sum,
        Some(o) => {
            return Err(key_err(
                "compare",
                format!("'{o}' is not a comparison (exact, sum)"),
            ))
        }
    };
    let written = a.written.unwrap_or(false);
    if a.compare.is_some() && !written {
        return Err(key_err("compare", "applies to a written buffer only"));
    }
    if a.reference.is_some() && !written {
        let why = "applies to a written buffer only (the file holds what the kernel must write)";
        return Err(key_err("reference", why));
    }
    Ok(BufferDecl {
        name: a.name.clone(),
        index: i,
        ty,
        elements,
        init,
        written,
        compare,
        reference: a.reference.clone(),
    })
}

fn parse_init(a: &RawArg, ty: ScalarType) -> Result<InitDecl, KeyError> {
    const INITS: &str = "random, zeros, ramp, constant";
    let init = match &a.init {
        None => InitDecl::Zeros,
        Some(toml::Value::String(s)) => match s.as_str() {
            "random" => {
                let range = match &a.range {
                    None => None,
                    Some([lo, hi]) => {
                        Some(parse_range(lo, hi, ty).map_err(|m| key_err("range", m))?)
                    }
                };
                InitDecl::Random {
                    seed: a.seed.unwrap_or(1),
                    range,
                }
            }
            "zeros" => InitDecl::Zeros,
            "ramp" => InitDecl::Ramp,
            "constant" => {
                return Err(key_err(
                    "init",
                    "a constant is written init = { constant = <value> }",
                ))
            }
            o => return Err(key_err("init", format!("'{o}' is not an init ({INITS})"))),
        },
        Some(toml::Value::Table(t)) if t.len() == 1 && t.contains_key("constant") => {
            let n = number(&t["constant"], ty).map_err(|m| key_err("init.constant", m))?;
            InitDecl::Constant(n)
        }
        Some(_) => {
            return Err(key_err(
                "init",
                format!("is one of {INITS} (constant as {{ constant = <value> }})"),
            ))
        }
    };
    if !matches!(init, InitDecl::Random { .. }) && (a.seed.is_some() || a.range.is_some()) {
        let k = if a.seed.is_some() { "seed" } else { "range" };
        return Err(key_err(k, "applies to init = \"random\" only"));
    }
    Ok(init)
}

fn parse_range(
    lo: &toml::Value,
    hi: &toml::Value,
    ty: ScalarType,
) -> Result<(Number, Number), String> {
    let (lo, hi) = (number(lo, ty)?, number(hi, ty)?);
    if lo.as_f64() >= hi.as_f64() || lo.as_f64().is_nan() || hi.as_f64().is_nan() {
        return Err(format!(
            "[{lo}, {hi}] is empty: lo must be below hi (hi is excluded)"
        ));
    }
    Ok((lo, hi))
}

/// A TOML number that the element type can hold: integers in range for integer types.
fn number(v: &toml::Value, ty: ScalarType) -> Result<Number, String> {
    let fits = |i: i64| match ty {
        ScalarType::I32 => i32::try_from(i).is_ok(),
        ScalarType::U32 => u32::try_from(i).is_ok(),
        ScalarType::U64 => i >= 0,
        _ => true,
    };
    match v {
        toml::Value::Integer(i) if !fits(*i) => Err(format!("{i} does not fit {ty}")),
        toml::Value::Integer(i) => Ok(Number::Int(*i)),
        toml::Value::Float(f) if ty.is_float() => Ok(Number::Float(*f)),
        toml::Value::Float(f) => Err(format!("{f} is not an integer, and the type is {ty}")),
        other => Err(format!("'{other}' is not a number")),
    }
}

fn parse_value(v: &toml::Value, ty: ScalarType, sizes: &Sizes) -> Result<ScalarValue, String> {
    match v {
        toml::Value::String(_) => size_expr(v, sizes, &[]).map(ScalarValue::Expr),
        _ => number(v, ty).map(ScalarValue::Number),
    }
}

/// An expression from a string (or a non-negative TOML integer) whose names are all sizes or
/// among `extra`.
pub(crate) fn size_expr(v: &toml::Value, sizes: &Sizes, extra: &[&str]) -> Result<Expr, String> {
    let e = match v {
        toml::Value::String(s) => Expr::parse(s)?,
        toml::Value::Integer(i) if *i >= 0 => Expr::constant(*i as u64),
        other => {
            return Err(format!(
                "'{other}' is not an expression (a string such as \"n * 2\", or a whole number)"
            ))
        }
    };
    if let Some(n) = e
        .names()
        .into_iter()
        .find(|n| sizes.get(n).is_none() && !extra.contains(n))
    {
        let mut known: Vec<&str> = sizes.0.keys().map(String::as_str).collect();
        known.extend_from_slice(extra);
        return Err(format!(
            "'{}' uses '{n}', which is not a size ({})",
            e.text(),
            known.join(", ")
        ));
    }
    Ok(e)
}
