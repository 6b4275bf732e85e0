//! The result files of a cook, one type each, used both to write and to read them:
//! `RUN_RESULT.json` and `REFINE_<N>_RESULT.json` ([`RoundResult`]) and `JUDGE_RESULT.json`
//! ([`JudgeRunResult`]). Reading is tolerant (a file the original multicooker wrote, or one cut
//! short, reads as far as it goes) and keeps every field it does not know, so a rewrite loses
//! nothing. A run that re-runs some cells merges with the file it finds through one helper,
//! [`merge_entries`]: entries it did not re-run stay as they were, in brief order.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::fsx;

/// Largest result file read.
const MAX_BYTES: u64 = 64 << 20;

/// One named entry of a result file (a participant's or a judge's), kept whole: the writer's
/// typed result serialized, or whatever an earlier writer put there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Entry(pub Map<String, Value>);

impl Entry {
    /// The entry of a typed result (a struct that serializes to a JSON object).
    pub fn of(value: &impl Serialize) -> Self {
        match serde_json::to_value(value) {
            Ok(Value::Object(map)) => Self(map),
            _ => Self::default(),
        }
    }

    /// Its `name`.
    pub fn name(&self) -> Option<&str> {
        self.0.get("name").and_then(Value::as_str)
    }

    /// A field.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
}

/// `RUN_RESULT.json` (round 1) and `REFINE_<N>_RESULT.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundResult {
    /// When the run ended.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// The refine round (refine files only, as the reference writes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_num: Option<u32>,
    /// The round.
    #[serde(default = "first_round")]
    pub round: u32,
    /// One entry per participant, in brief order.
    #[serde(default)]
    pub participants: Vec<Entry>,
    /// CLI version per flavor.
    #[serde(default)]
    pub cli_versions: BTreeMap<String, String>,
    /// The sandbox probe's report (`{"skipped": true}` when it did not run); round 1 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_check: Option<Value>,
    /// Fields this version does not know, kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn first_round() -> u32 {
    1
}

/// `JUDGE_RESULT.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgeRunResult {
    /// When the run ended.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// The anti-self-judging policy.
    #[serde(default)]
    pub policy: Option<Value>,
    /// `rubric` or `pairwise`.
    #[serde(default)]
    pub mode: Option<Value>,
    /// Judges also saw their own flavor (measured, never counted).
    #[serde(default)]
    pub self_preference: bool,
    /// Judges guessed each submission's vendor.
    #[serde(default)]
    pub blinding_probe: bool,
    /// The label shuffles' seed, as a string (a number above 2^53 loses digits in most JSON
    /// readers); a number written by an earlier version reads too.
    #[serde(default, with = "seed_text")]
    pub seed: Option<u64>,
    /// One entry per judge, in brief order.
    #[serde(default)]
    pub judges: Vec<Entry>,
    /// Fields this version does not know, kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

mod seed_text {
    use serde::{Deserialize, Deserializer, Serializer};

    #[expect(
        clippy::ref_option,
        reason = "serde's `with` passes the field by reference"
    )]
    pub(super) fn serialize<S: Serializer>(seed: &Option<u64>, out: S) -> Result<S::Ok, S::Error> {
        match seed {
            Some(seed) => out.serialize_str(&seed.to_string()),
            None => out.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        input: D,
    ) -> Result<Option<u64>, D::Error> {
        let value = Option::<serde_json::Value>::deserialize(input)?;
        Ok(value.and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        }))
    }
}

/// Reads a result file; `None` when it is missing, too large or not one.
pub fn read<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let bytes = fsx::read_capped(path, MAX_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes a result file atomically.
pub fn write(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    fsx::write_json_atomic(path, value)
}

/// This run's entries, then each earlier entry whose name this run did not re-run, sorted in
/// `order` (names not in `order` last, in the order found).
pub fn merge_entries(current: Vec<Entry>, earlier: Vec<Entry>, order: &[&str]) -> Vec<Entry> {
    let mut merged = current;
    for entry in earlier {
        if !merged
            .iter()
            .any(|e| e.name().is_some() && e.name() == entry.name())
        {
            merged.push(entry);
        }
    }
    let rank = |e: &Entry| {
        e.name()
            .and_then(|n| order.iter().position(|o| *o == n))
            .unwrap_or(usize::MAX)
    };
    merged.sort_by_key(rank);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, status: &str) -> Entry {
        Entry::of(&serde_json::json!({"name": name, "status": status}))
    }

    #[test]
    fn a_merge_keeps_what_was_not_rerun_in_brief_order() {
        let merged = merge_entries(
            vec![entry("b", "ok")],
            vec![entry("c", "ok"), entry("b", "timed_out"), entry("a", "ok")],
            &["a", "b", "c"],
        );
        let seen: Vec<(&str, &str)> = merged
            .iter()
            .map(|e| {
                (
                    e.name().unwrap(),
                    e.get("status").unwrap().as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(seen, [("a", "ok"), ("b", "ok"), ("c", "ok")]);
    }

    #[test]
    fn a_reference_file_reads_and_round_trips_with_its_unknown_fields() {
        let text = r#"{"finished_at": "x", "round": 1, "participants": [{"name": "a", "status": "ok", "worktree": "/w"}], "mode": "docker", "seed": 12}"#;
        let round: RoundResult = serde_json::from_str(text).unwrap();
        assert_eq!(round.participants[0].name(), Some("a"));
        assert_eq!(round.extra["mode"], "docker");
        let again: Value = serde_json::to_value(&round).unwrap();
        assert_eq!(again["participants"][0]["worktree"], "/w");
        let judged: JudgeRunResult =
            serde_json::from_str(r#"{"seed": 18446744073709551615, "judges": []}"#).unwrap();
        assert_eq!(judged.seed, Some(u64::MAX));
        assert_eq!(
            serde_json::to_value(&judged).unwrap()["seed"],
            "18446744073709551615",
            "written as a string"
        );
        let partial: RoundResult = serde_json::from_str("{}").unwrap();
        assert_eq!(partial.round, 1);
    }
}
