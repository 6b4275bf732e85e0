//! Declared schemas of the YAML files users write (`brief.yaml`, nightly configs): each section
//! is a table of [`Field`]s (key, [`Kind`], and the fix when a required one is missing), and one
//! walker checks a parsed document against it. The walker reports every problem at once with its
//! field path (`participants[1].timeout_s`), what is wrong and the fix, and hands back the
//! document with every bad value taken out, so that the owner deserializes it with serde into
//! typed structs that cannot fail and then checks only what a table cannot say (names unique
//! across lists, weights that add up, combinations of options).
//!
//! The texts are the ones users have read since the first release: `unknown field (allowed: …)`
//! with `did you mean …?`, `must be a positive integer, not `0``, `unknown mode `x``. An empty
//! value (`key:` or `key: null`) is the same as a missing key.
//!
//! A leaf module: it knows nothing of briefs or nights.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

#[cfg(test)]
mod tests;

/// One key of a mapping.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The key.
    pub key: &'static str,
    /// What its value must be.
    pub kind: Kind,
    /// The fix when the key is missing, for a required key (empty: none to give).
    pub required: Option<&'static str>,
    /// When the value itself is wrong: what it must be and the fix, instead of the kind's own
    /// words ("must be a positive whole number of tokens, not `-5`").
    pub explain: Option<(&'static str, &'static str)>,
}

impl Field {
    /// An optional key.
    pub const fn new(key: &'static str, kind: Kind) -> Self {
        Self {
            key,
            kind,
            required: None,
            explain: None,
        }
    }

    /// A required key with no fix to give beyond adding it.
    pub const fn needed(key: &'static str, kind: Kind) -> Self {
        Self::required(key, kind, "")
    }

    #[must_use]
    /// This key, whose wrong value is told as "must be `what`, not …" with `fix`.
    pub const fn explained(self, what: &'static str, fix: &'static str) -> Self {
        Self {
            explain: Some((what, fix)),
            ..self
        }
    }

    /// A required key; `fix` says what to add.
    pub const fn required(key: &'static str, kind: Kind, fix: &'static str) -> Self {
        Self {
            key,
            kind,
            required: Some(fix),
            explain: None,
        }
    }
}

/// What a value must be.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Anything: the owner checks it (or keeps it as it is).
    Any,
    /// A string.
    Str,
    /// `true` or `false`.
    Bool,
    /// A whole number above zero.
    PosInt,
    /// A whole number, zero included.
    Count,
    /// A number above zero (not a string).
    Number,
    /// A whole number in `min..=max`, described as `what` ("a whole number from 1 to 100").
    Range {
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
        /// How the message describes the range.
        what: &'static str,
    },
    /// A number above zero, written as a number or a string (`1.5`, `"0.5"`); `example` is the
    /// fix.
    Positive {
        /// The fix, for example "for example `cpus: 1.5`".
        example: &'static str,
    },
    /// A size: `512m`, `1.5g` or a byte count (powers of 1024).
    Size,
    /// One of `names`; a wrong word is an "unknown `noun`".
    Choice {
        /// What a value is called in the message ("mode", "policy").
        noun: &'static str,
        /// The allowed words.
        names: &'static [&'static str],
    },
    /// A list whose items are all `item`.
    List(&'static Kind),
    /// A mapping with exactly these keys.
    Map(&'static [Field]),
    /// A word of `Choice` or a mapping (`network: none` or `network: {mode: none}`).
    ChoiceOrMap {
        /// What a word is called in the message.
        noun: &'static str,
        /// The allowed words.
        names: &'static [&'static str],
        /// The mapping's keys.
        fields: &'static [Field],
    },
    /// A value only the owner's function can judge: `Err((problem, fix))` when it is wrong.
    Check(fn(&Value) -> Result<(), Wrong>),
}

/// What is wrong with a value and, where one exists, the fix.
pub type Wrong = (String, Option<String>);

/// One problem: where, what, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field, as a path: `participants[1].name`; `(top level)` for the document itself.
    pub path: String,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: Option<String>,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, problem: impl Into<String>, fix: Option<String>) -> Self {
        Self {
            path: path.into(),
            problem: problem.into(),
            fix,
        }
    }
}

/// A document checked against its schema.
#[derive(Debug)]
pub struct Checked {
    /// The document without its bad values (a bad list item becomes `null`, so later indexes
    /// stay right); deserializes into the owner's typed structs.
    pub value: Value,
    /// Every problem found, in the order of the tables.
    pub problems: Vec<Problem>,
}

impl Checked {
    /// The document as `T`; a mismatch between a table and `T` is the owner's bug, reported as
    /// a problem of the whole document rather than a panic.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, Problem> {
        serde_json::from_value(self.value.clone()).map_err(|e| {
            Problem::new(
                TOP_LEVEL,
                format!("could not be read after checking ({e})"),
                None,
            )
        })
    }
}

/// The path of the document itself.
pub const TOP_LEVEL: &str = "(top level)";
/// The problem of a missing required key (its fix says what to add).
pub const REQUIRED: &str = "is required";
/// How the problem of an unknown key starts (`unknown field (allowed: …)`).
pub const UNKNOWN_FIELD: &str = "unknown field";

/// Checks `document` against `kind` (usually a [`Kind::Map`] of the top-level keys).
pub fn check(document: &Value, kind: &Kind) -> Checked {
    let mut problems = Vec::new();
    let value = walk(document, kind, "", &mut problems).unwrap_or(Value::Null);
    Checked { value, problems }
}

/// Checks a mapping against `fields` that are not a `'static` table (a caller's extra keys).
pub fn check_fields(document: &Value, fields: &[Field]) -> Checked {
    let mut problems = Vec::new();
    let value = if let Some(map) = document.as_object() {
        Value::Object(mapping(map, fields, "", &mut problems))
    } else {
        let problem = format!("must be a mapping, not {}", kind_of(document));
        problems.push(Problem::new(TOP_LEVEL, problem, None));
        Value::Null
    };
    Checked { value, problems }
}

/// Where `path` comes in the order of `kind`'s tables, for sorting problems found by code
/// among the schema's: at each level an unknown key comes first (as the walker reports them),
/// then the declared keys in table order, list items by index; a field comes before what is
/// under it.
pub fn rank(kind: &Kind, path: &str) -> Vec<usize> {
    let mut rank = Vec::new();
    let mut kind = Some(kind);
    for segment in path.split('.').filter(|s| !s.is_empty() && *s != TOP_LEVEL) {
        let (key, indexes) = segment.split_once('[').unwrap_or((segment, ""));
        let fields = match kind {
            Some(Kind::Map(fields) | Kind::ChoiceOrMap { fields, .. }) => *fields,
            _ => &[],
        };
        let found = fields.iter().position(|f| f.key == key);
        rank.push(found.map_or(0, |i| i + 1));
        kind = found.map(|i| &fields[i].kind);
        let indexes = indexes.split('[').filter(|i| !i.is_empty());
        for index in indexes.map(|i| i.trim_end_matches(']')) {
            rank.push(index.parse().unwrap_or(0));
            kind = match kind {
                Some(Kind::List(item)) => Some(item),
                _ => None,
            };
        }
    }
    rank
}

/// Checks `value` at `path`; `None` when it is bad (its problem pushed).
fn walk(value: &Value, kind: &Kind, path: &str, problems: &mut Vec<Problem>) -> Option<Value> {
    let shown = if path.is_empty() { TOP_LEVEL } else { path };
    let wrong = |problem: String, fix: Option<String>| Problem::new(shown, problem, fix);
    let verdict = match kind {
        Kind::Any => Ok(value.clone()),
        Kind::Map(fields) => {
            if let Some(map) = value.as_object() {
                return Some(Value::Object(mapping(map, fields, path, problems)));
            }
            Err((format!("must be a mapping, not {}", kind_of(value)), None))
        }
        Kind::List(item) => {
            let Some(items) = value.as_array() else {
                problems.push(wrong(
                    format!("must be a list, not {}", kind_of(value)),
                    None,
                ));
                return None;
            };
            let items = items.iter().enumerate().map(|(i, v)| {
                walk(v, item, &format!("{path}[{i}]"), problems).unwrap_or(Value::Null)
            });
            return Some(Value::Array(items.collect()));
        }
        Kind::ChoiceOrMap {
            noun,
            names,
            fields,
        } => {
            if value.is_object() {
                return walk(value, &Kind::Map(fields), path, problems);
            }
            choice(value, noun, names)
        }
        scalar => scalar_value(value, scalar),
    };
    match verdict {
        Ok(value) => Some(value),
        Err((problem, fix)) => {
            problems.push(wrong(problem, fix));
            None
        }
    }
}

/// The known keys of `map` that are good, after reporting unknown and missing ones.
fn mapping(
    map: &Map<String, Value>,
    fields: &[Field],
    path: &str,
    problems: &mut Vec<Problem>,
) -> Map<String, Value> {
    let keys: Vec<&str> = fields.iter().map(|f| f.key).collect();
    for key in map.keys().filter(|k| !keys.contains(&k.as_str())) {
        problems.push(unknown_key(&join(path, key), key, &keys));
    }
    let mut kept = Map::new();
    for field in fields {
        let at = join(path, field.key);
        match map.get(field.key).filter(|v| !v.is_null()) {
            None => {
                if let Some(fix) = field.required {
                    let fix = (!fix.is_empty()).then(|| fix.to_owned());
                    problems.push(Problem::new(at, REQUIRED, fix));
                }
            }
            Some(value) => {
                let before = problems.len();
                match walk(value, &field.kind, &at, problems) {
                    Some(good) => {
                        kept.insert(field.key.to_owned(), good);
                    }
                    None => explain(field, &at, value, &problems[before..]).map_or((), |p| {
                        problems.truncate(before);
                        problems.push(p);
                    }),
                }
            }
        }
    }
    kept
}

/// The field's own words for its wrong `value`, when the one problem found is the value's own.
fn explain(field: &Field, at: &str, value: &Value, found: &[Problem]) -> Option<Problem> {
    let (what, fix) = field.explain?;
    let [only] = found else { return None };
    (only.path == at).then(|| {
        Problem::new(
            only.path.clone(),
            format!("must be {what}, not {}", show(value)),
            (!fix.is_empty()).then(|| fix.to_owned()),
        )
    })
}

/// The problem of an unknown `key` at `path` among `allowed`.
pub fn unknown_key(path: &str, key: &str, allowed: &[&str]) -> Problem {
    let fix = crate::error::suggest(key, allowed.iter().copied()).map_or_else(
        || format!("remove `{key}`"),
        |s| format!("did you mean `{s}`?"),
    );
    Problem::new(
        path,
        format!("{UNKNOWN_FIELD} (allowed: {})", allowed.join(", ")),
        Some(fix),
    )
}

type Verdict = Result<Value, Wrong>;

fn scalar_value(value: &Value, kind: &Kind) -> Verdict {
    let good = || Ok(value.clone());
    let must = |what: &str| Err((format!("must be {what}, not {}", show(value)), None));
    match *kind {
        Kind::Str => match value {
            Value::String(_) => good(),
            _ => Err((format!("must be a string, not {}", kind_of(value)), None)),
        },
        Kind::Bool => match value {
            Value::Bool(_) => good(),
            _ => must("true or false"),
        },
        Kind::PosInt => match value.as_u64() {
            Some(n) if n > 0 => good(),
            _ => must("a positive integer"),
        },
        Kind::Count => match value.as_u64() {
            Some(_) => good(),
            _ => must("a whole number"),
        },
        Kind::Range { min, max, what } => match value.as_u64() {
            Some(n) if (min..=max).contains(&n) => good(),
            _ => must(what),
        },
        Kind::Number => match value.as_f64() {
            Some(n) if n.is_finite() && n > 0.0 => good(),
            _ => must("a positive number"),
        },
        Kind::Positive { example } => match positive(value) {
            Some(n) => Ok(Value::from(n)),
            None => Err((
                format!("must be a positive number, not {}", show(value)),
                Some(example.to_owned()),
            )),
        },
        Kind::Size => match size(value) {
            Some(n) => Ok(Value::from(n)),
            None => must("a size such as `2g`, `512m` or a byte count"),
        },
        Kind::Choice { noun, names } => choice(value, noun, names),
        Kind::Check(check) => check(value).map(|()| value.clone()),
        Kind::Any | Kind::List(_) | Kind::Map(_) | Kind::ChoiceOrMap { .. } => good(),
    }
}

fn choice(value: &Value, noun: &str, names: &[&str]) -> Verdict {
    match value.as_str() {
        Some(word) if names.contains(&word) => Ok(value.clone()),
        Some(word) => Err((
            format!("unknown {noun} `{word}`"),
            Some(format!("use one of: {}", names.join(", "))),
        )),
        None => Err((format!("must be a string, not {}", kind_of(value)), None)),
    }
}

/// A number above zero, from a number or a string.
fn positive(value: &Value) -> Option<f64> {
    let number = match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    number.filter(|n| n.is_finite() && *n > 0.0)
}

/// A size in bytes, from a byte count or a string such as `512m`.
fn size(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().filter(|n| *n > 0),
        Value::String(s) => parse_bytes(s),
        _ => None,
    }
}

/// Parses `512m`, `1.5g`, `1024` (docker's size units, powers of 1024).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (number, unit) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => text.split_at(i),
        None => (text.as_str(), ""),
    };
    let multiplier: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        _ => return None,
    };
    let value: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)?;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "sizes are far below 2^52"
    )]
    let bytes = (value * multiplier as f64).round() as u64;
    (bytes > 0).then_some(bytes)
}

/// `prefix.key`, or `key` at the top.
pub fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

/// What kind of value `value` is, for messages ("a mapping").
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// `value` quoted for a message, cut at 40 characters.
pub fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        format!("`{}…`", text.chars().take(40).collect::<String>())
    } else {
        format!("`{text}`")
    }
}
