//! A spec's `[tune]` table: the kernel's own parameters, each a list of whole numbers
//! (`ELEMS = [1, 2, 4, 8]`), and `restrict`, the constraints a configuration must meet
//! (`restrict = ["TILE * TILE <= block"]`), checked before anything compiles.
//!
//! Each parameter reaches every API's compiler as a define (`-DELEMS=4`: NVRTC, OpenCL and the
//! GLSL compiler alike, docs/kernels.md says why) and every expression of the spec as a name.

use std::collections::BTreeMap;
use std::fmt;

use super::decl::Sizes;
use super::expr::Expr;

/// The parameters and their constraints, as declared.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneDecl {
    /// Each parameter's name and values, in name order (TOML tables are unordered).
    pub params: Vec<(String, Vec<u64>)>,
    pub restrict: Vec<Constraint>,
}

impl TuneDecl {
    /// Every combination of the parameters' values, the first parameter slowest, each as a
    /// `Sizes` of the parameters alone.
    pub fn combinations(&self) -> Vec<Sizes> {
        let mut out = vec![Sizes::default()];
        for (name, values) in &self.params {
            out = out
                .into_iter()
                .flat_map(|s| {
                    values.iter().map(move |v| {
                        let mut s = s.clone();
                        s.0.insert(name.clone(), *v);
                        s
                    })
                })
                .collect();
        }
        out
    }

    /// The parameters at their first values: the configuration a plain run uses.
    pub fn first(&self) -> Sizes {
        Sizes(self.params.iter().map(|(n, v)| (n.clone(), v[0])).collect())
    }

    /// The first constraint `lookup` breaks, in words with the values it saw; `None` when all
    /// hold. A constraint that cannot be evaluated (a division by zero) counts as broken.
    pub fn broken(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> Option<String> {
        self.restrict.iter().find_map(|c| match c.holds(lookup) {
            Ok(true) => None,
            Ok(false) => Some(format!("restrict: {} ({})", c.text, c.values(lookup))),
            Err(e) => Some(format!("restrict: {e}")),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
    Ne,
}

/// One `restrict` entry: two expressions and a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub text: String,
    left: Expr,
    cmp: Cmp,
    right: Expr,
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Constraint {
    /// Parses "A <= B" (`<=`, `<`, `>=`, `>`, `==`, `!=`); every name must be in `known`.
    pub fn parse(text: &str, known: &[&str]) -> Result<Constraint, String> {
        const OPS: [(&str, Cmp); 6] = [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ];
        let (at, op, cmp) = OPS
            .iter()
            .find_map(|(op, c)| text.find(op).map(|i| (i, *op, *c)))
            .ok_or_else(|| {
                format!("'{text}' has no comparison (<=, <, >=, >, ==, !=): e.g. \"TILE * TILE <= block\"")
            })?;
        let left = Expr::parse(&text[..at])?;
        let right = Expr::parse(&text[at + op.len()..])?;
        for n in left.names().into_iter().chain(right.names()) {
            if !known.contains(&n) {
                return Err(format!(
                    "'{text}' uses '{n}', which is neither a parameter, a size nor a block name ({})",
                    known.join(", ")
                ));
            }
        }
        Ok(Constraint {
            text: text.trim().to_string(),
            left,
            cmp,
            right,
        })
    }

    pub fn holds(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<bool, String> {
        let (a, b) = (self.left.eval(lookup)?, self.right.eval(lookup)?);
        Ok(match self.cmp {
            Cmp::Le => a <= b,
            Cmp::Lt => a < b,
            Cmp::Ge => a >= b,
            Cmp::Gt => a > b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        })
    }

    /// Whether it names the block (and so is checked per block, not per parameter set).
    pub fn uses_block(&self) -> bool {
        self.names()
            .iter()
            .any(|n| super::load::BLOCK_NAMES.contains(n))
    }

    fn names(&self) -> Vec<&str> {
        let mut n = self.left.names();
        n.extend(self.right.names());
        n
    }

    /// "TILE = 32, block = 256": the values a verdict was made from.
    fn values(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for n in self.names() {
            if !seen.contains(&n) {
                seen.push(n);
            }
        }
        seen.iter()
            .map(|n| match lookup(n) {
                Some(v) => format!("{n} = {v}"),
                None => format!("{n} unknown"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads `[tune]`: every key but `restrict` a parameter with a non-empty list of distinct
/// whole numbers. Errors are (key, message).
pub(crate) fn parse_tune(
    raw: &BTreeMap<String, toml::Value>,
    sizes: &Sizes,
) -> Result<TuneDecl, (String, String)> {
    let mut params = Vec::new();
    for (name, v) in raw.iter().filter(|(k, _)| k.as_str() != "restrict") {
        let key = name.clone();
        let reserved = super::load::BLOCK_NAMES.contains(&name.as_str())
            || ["ceil_div", "min", "max"].contains(&name.as_str());
        if reserved || sizes.get(name).is_some() {
            return Err((
                key,
                "is a size or a reserved name: a parameter needs its own".into(),
            ));
        }
        if Expr::parse(name).ok().map(|e| e.names() == [name.as_str()]) != Some(true) {
            return Err((key, "is not a name (letters, digits, _)".into()));
        }
        let list = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
            (
                key.clone(),
                "is a list of whole numbers, e.g. [1, 2, 4, 8]".to_string(),
            )
        })?;
        // A list of strings is a restrict under another name ("restrcit"): say so.
        if list.iter().all(toml::Value::is_str) {
            return Err((
                key,
                "is a list of strings, which only `restrict` takes; a parameter is a list of \
                 whole numbers (a misspelt restrict?)"
                    .into(),
            ));
        }
        let mut values = Vec::new();
        for x in list {
            let n = x
                .as_integer()
                .filter(|i| *i >= 0)
                .ok_or_else(|| (key.clone(), format!("'{x}' is not a whole number >= 0")))?;
            if values.contains(&(n as u64)) {
                return Err((key, format!("{n} is listed twice")));
            }
            values.push(n as u64);
        }
        params.push((name.clone(), values));
    }
    if params.is_empty() {
        return Err((
            String::new(),
            "names no parameter (e.g. ELEMS = [1, 2, 4])".into(),
        ));
    }
    let mut known: Vec<&str> = sizes.0.keys().map(String::as_str).collect();
    known.extend(params.iter().map(|(n, _)| n.as_str()));
    known.extend(super::load::BLOCK_NAMES);
    let mut restrict = Vec::new();
    if let Some(r) = raw.get("restrict") {
        let list = r.as_array().ok_or_else(|| {
            (
                "restrict".to_string(),
                "is a list of strings, e.g. [\"TILE * TILE <= block\"]".to_string(),
            )
        })?;
        for (i, c) in list.iter().enumerate() {
            let key = format!("restrict[{i}]");
            let text = c
                .as_str()
                .ok_or_else(|| (key.clone(), "is not a string".to_string()))?;
            restrict.push(Constraint::parse(text, &known).map_err(|m| (key, m))?);
        }
    }
    Ok(TuneDecl { params, restrict })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(text: &str) -> Result<TuneDecl, (String, String)> {
        let raw: BTreeMap<String, toml::Value> = toml::from_str(text).unwrap();
        let sizes = Sizes([("n".to_string(), 64)].into_iter().collect());
        parse_tune(&raw, &sizes)
    }

    #[test]
    fn combinations_cover_the_space_in_order() {
        let t = decl("TILE = [8, 16]\nELEMS = [1, 2, 4]").unwrap();
        let all = t.combinations();
        assert_eq!(all.len(), 6);
        // Name order: ELEMS first (slowest), then TILE.
        assert_eq!(all[0].to_string(), "ELEMS=1,TILE=8");
        assert_eq!(all[1].to_string(), "ELEMS=1,TILE=16");
        assert_eq!(all[5].to_string(), "ELEMS=4,TILE=16");
        assert_eq!(t.first().to_string(), "ELEMS=1,TILE=8");
    }

    /// A misspelt `restrict` read as a parameter said "'\"R <= 3\"' is not a whole number",
    /// which did not point at the typo (a new user's trial).
    #[test]
    fn a_list_of_strings_is_taken_for_a_misspelt_restrict() {
        let (key, why) = decl("R = [1, 2]\nrestrcit = [\"R <= 3\"]").unwrap_err();
        assert_eq!(key, "restrcit");
        assert!(
            why.contains("only `restrict` takes") && why.contains("misspelt"),
            "{why}"
        );
    }

    #[test]
    fn constraints_name_what_broke_them() {
        let t = decl("TILE = [8, 32]\nrestrict = [\"TILE * TILE <= block\"]").unwrap();
        assert!(t.restrict[0].uses_block());
        let at = |tile: u64, block: u64| {
            move |n: &str| match n {
                "TILE" => Some(tile),
                "block" => Some(block),
                _ => None,
            }
        };
        assert_eq!(t.broken(&at(8, 64)), None);
        assert_eq!(
            t.broken(&at(32, 256)).unwrap(),
            "restrict: TILE * TILE <= block (TILE = 32, block = 256)"
        );
    }

    #[test]
    fn bad_tables_are_refused_with_their_key() {
        assert_eq!(decl("n = [1]").unwrap_err().0, "n");
        assert_eq!(decl("E = []").unwrap_err().0, "E");
        assert!(decl("E = [1, 1]").unwrap_err().1.contains("twice"));
        assert!(decl("E = [-1]").unwrap_err().1.contains("whole number"));
        let e = decl("E = [1]\nrestrict = [\"E * 2\"]").unwrap_err();
        assert_eq!(e.0, "restrict[0]");
        assert!(e.1.contains("no comparison"));
        let e = decl("E = [1]\nrestrict = [\"F <= 2\"]").unwrap_err();
        assert!(e.1.contains("'F'"), "{}", e.1);
        assert!(decl("restrict = []").is_err());
    }
}
