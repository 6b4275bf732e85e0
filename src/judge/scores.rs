//! Reading a judge's `scores.json`: size cap, JSON, the canonical shape (strict) or the
//! reference's tolerant repair, then reverse-mapping labels to participants on the host.
//! Labels the judge was not given are rejected, never passed through (docs/BEHAVIOR.md §10.3).
//! Whether values fit the rubric is the report's check, made in one place for every cook.

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// Largest scores.json read; a bigger one is refused, not parsed.
pub const MAX_SCORES_BYTES: u64 = 8 << 20;

/// Why a judge's scores are unusable as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// No scores.json.
    NoScores(String),
    /// Not JSON, or too large.
    InvalidJson(String),
    /// JSON, but not the expected shape.
    MalformedSchema(String),
}

impl Unusable {
    /// The status word recorded for the judge.
    pub fn status(&self) -> &'static str {
        match self {
            Self::NoScores(_) => "no_scores",
            Self::InvalidJson(_) => "invalid_json",
            Self::MalformedSchema(_) => "malformed_schema",
        }
    }
    /// The reason recorded for the judge.
    pub fn reason(&self) -> &str {
        match self {
            Self::NoScores(r) | Self::InvalidJson(r) | Self::MalformedSchema(r) => r,
        }
    }
}

/// One entry that was dropped while reverse-mapping.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejected {
    /// The participant, or `(label X)` for a label that was never given.
    pub participant: String,
    /// Why.
    pub reason: String,
}

/// Scores keyed by participant, plus what was dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Deanonymized {
    /// `{participant: {"dimensions": {...}, "total"?: n}}` in label order.
    pub scores: IndexMap<String, Value>,
    /// Dropped entries and unscored submissions.
    pub rejected: Vec<Rejected>,
}

/// Parses scores.json bytes into label → entry (canonical shape).
pub fn parse(bytes: &[u8], strict: bool) -> Result<IndexMap<String, Value>, Unusable> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| Unusable::InvalidJson(format!("scores.json is not valid JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(Unusable::MalformedSchema(
            "scores.json must be a JSON object keyed by label".into(),
        ));
    };
    if strict {
        strict_shape(top)
    } else {
        Ok(tolerant_shape(top))
    }
}

/// Only `{"A": {"dimensions": {"dim": int, ...}, "total"?: int}}` is accepted.
fn strict_shape(top: Map<String, Value>) -> Result<IndexMap<String, Value>, Unusable> {
    let bad = |label: &str, what: &str| {
        Err(Unusable::MalformedSchema(format!(
            "entry {}: {what} (judging.strict_schema is on)",
            crate::sanitize::code(label)
        )))
    };
    if top.is_empty() {
        return Err(Unusable::MalformedSchema("scores.json is empty".into()));
    }
    let mut entries = IndexMap::new();
    for (label, entry) in top {
        let Some(map) = entry.as_object() else {
            return bad(&label, "is not an object");
        };
        let Some(dims) = map
            .get("dimensions")
            .and_then(Value::as_object)
            .filter(|d| !d.is_empty())
        else {
            return bad(&label, "has no non-empty `dimensions` object");
        };
        if dims.values().any(|v| !v.is_i64() && !v.is_u64()) {
            return bad(&label, "has a dimension that is not an integer");
        }
        if map.keys().any(|k| k != "dimensions" && k != "total")
            || map.get("total").is_some_and(|t| !t.is_i64())
        {
            return bad(
                &label,
                "has fields other than `dimensions` and an integer `total`",
            );
        }
        entries.insert(label, entry);
    }
    Ok(entries)
}

/// The reference's repair: a `scores` wrapper, `totals`, and flat entries.
fn tolerant_shape(mut top: Map<String, Value>) -> IndexMap<String, Value> {
    let totals = top
        .get("totals")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(inner)) = top.remove("scores") {
        top = inner;
    } else {
        top.remove("totals");
    }
    let mut entries = IndexMap::new();
    for (label, entry) in top {
        let Value::Object(mut map) = entry else {
            continue;
        };
        let total = map
            .get("total")
            .cloned()
            .or_else(|| totals.get(&label).filter(|t| t.is_number()).cloned());
        let dimensions = match map.remove("dimensions") {
            Some(Value::Object(dims)) => dims,
            _ => map
                .into_iter()
                // Booleans are kept so that a rubric dimension given as `true` is named as
                // not a number, instead of as missing (they never count as numbers).
                .filter(|(k, v)| k != "total" && (v.is_number() || v.is_boolean()))
                .collect(),
        };
        let mut canonical = Map::new();
        canonical.insert("dimensions".into(), Value::Object(dimensions));
        if let Some(total) = total {
            canonical.insert("total".into(), total);
        }
        entries.insert(label, Value::Object(canonical));
    }
    entries
}

/// Maps labels back to participants using this judge's own mapping.
pub fn deanonymize(entries: IndexMap<String, Value>, mapping: &[(String, String)]) -> Deanonymized {
    let mut scores = IndexMap::new();
    let mut rejected = Vec::new();
    for (label, entry) in entries {
        match mapping.iter().find(|(l, _)| *l == label) {
            Some((_, participant)) => {
                scores.insert(participant.clone(), entry);
            }
            None => rejected.push(Rejected {
                participant: format!("(label {})", crate::sanitize::code(&label)),
                reason: format!(
                    "label {} was not among the submissions this judge was given",
                    crate::sanitize::code(&label)
                ),
            }),
        }
    }
    for (label, participant) in mapping {
        if !scores.contains_key(participant) {
            rejected.push(Rejected {
                participant: participant.clone(),
                reason: format!("the judge wrote no score for its submission `{label}`"),
            });
        }
    }
    Deanonymized { scores, rejected }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mapping() -> Vec<(String, String)> {
        vec![("A".into(), "bravo".into()), ("B".into(), "alpha".into())]
    }

    #[test]
    fn canonical_scores_reverse_map_to_participants() {
        let entries = parse(
            br#"{"A": {"dimensions": {"q": 4}}, "B": {"dimensions": {"q": 2}}}"#,
            true,
        )
        .unwrap();
        let result = deanonymize(entries, &mapping());
        assert_eq!(result.scores["bravo"], json!({"dimensions": {"q": 4}}));
        assert_eq!(result.scores["alpha"], json!({"dimensions": {"q": 2}}));
        assert!(result.rejected.is_empty());
    }

    #[test]
    fn unknown_labels_are_rejected_and_missing_ones_reported() {
        let entries = parse(
            br#"{"A": {"dimensions": {"q": 4}}, "ZZ": {"dimensions": {"q": 5}}}"#,
            false,
        )
        .unwrap();
        let result = deanonymize(entries, &mapping());
        assert_eq!(result.scores.keys().collect::<Vec<_>>(), ["bravo"]);
        assert_eq!(result.rejected[0].participant, "(label `ZZ`)");
        assert_eq!(result.rejected[1].participant, "alpha");
    }

    #[test]
    fn tolerant_mode_repairs_the_reference_shapes() {
        let entries = parse(
            br#"{"scores": {"A": {"q": 3, "note": "x", "total": 60}}, "totals": {"A": 61}}"#,
            false,
        )
        .unwrap();
        assert_eq!(entries["A"], json!({"dimensions": {"q": 3}, "total": 60}));
        let entries = parse(
            br#"{"A": {"dimensions": {"q": 3}}, "totals": {"A": 61}, "B": 7}"#,
            false,
        )
        .unwrap();
        assert_eq!(entries["A"], json!({"dimensions": {"q": 3}, "total": 61}));
        assert!(!entries.contains_key("B"));
    }

    /// Issue 25: a flat entry's boolean dimension was dropped, so a rubric dimension given as
    /// `true` read as "missing dimension"; it is kept, and scoring names it as not a number
    /// (`report::score`'s tests: booleans never count).
    #[test]
    fn a_flat_boolean_dimension_is_kept_for_scoring_to_name_it() {
        let entries = parse(br#"{"A": {"correctness": 4, "passed": true}}"#, false).unwrap();
        assert_eq!(
            entries["A"],
            json!({"dimensions": {"correctness": 4, "passed": true}})
        );
    }

    #[test]
    fn strict_mode_refuses_anything_else() {
        assert!(matches!(
            parse(br#"{"A": {"q": 3}}"#, true),
            Err(Unusable::MalformedSchema(_))
        ));
        assert!(matches!(
            parse(br#"{"A": {"dimensions": {"q": 3}, "total": 60.0}}"#, true),
            Err(Unusable::MalformedSchema(_))
        ));
        assert!(matches!(
            parse(b"[1, 2]", false),
            Err(Unusable::MalformedSchema(_))
        ));
        assert!(matches!(
            parse(b"{\"A\": {", false),
            Err(Unusable::InvalidJson(_))
        ));
    }
}
