//! A night's budget (`budget: {tokens, usd, on_exhausted}` in the nightly config) and what each
//! arm spent against its own cap, folded from the cooks' result files and kept in the history
//! store (schema version 6, table `spend`).

use std::path::Path;

use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::Value;

use crate::brief::{Budget, check_budget};
use crate::flavor::meter::Spend;

/// Schema version 6: spend against budget per arm and for the whole night.
pub const MIGRATION: &str = "
CREATE TABLE spend (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    arm TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    usd REAL NOT NULL,
    budget_tokens INTEGER,
    budget_usd REAL,
    exhausted INTEGER NOT NULL,
    PRIMARY KEY (night_id, role, arm)
);
";

/// What a night does with its running cells once its budget is reached (no new cell starts
/// either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnExhausted {
    /// Let them finish (the default): their spend may pass the cap.
    #[default]
    Finish,
    /// Stop them at once (`budget_exhausted`, unscored).
    Cancel,
}

/// `budget:` of a nightly config.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NightBudget {
    /// The cap over every cell of the night.
    pub cap: Budget,
    /// What happens to running cells once it is reached.
    pub on_exhausted: OnExhausted,
}

/// Reads a config's `budget:` (problems as the config reports them: field, what, fix).
pub fn parse_night(value: &Value, problems: &mut Vec<String>) -> Option<NightBudget> {
    let on_exhausted = match value.get("on_exhausted") {
        None => Some(OnExhausted::Finish),
        Some(Value::String(s)) if s == "finish" => Some(OnExhausted::Finish),
        Some(Value::String(s)) if s == "cancel" => Some(OnExhausted::Cancel),
        Some(other) => {
            problems.push(format!(
                "`budget.on_exhausted`: must be `finish` or `cancel`, not {other} (`finish` lets running cells end, `cancel` stops them)"
            ));
            None
        }
    };
    let cap = parse_cap("budget", value, &["on_exhausted"], problems)?;
    Some(NightBudget {
        cap,
        on_exhausted: on_exhausted?,
    })
}

/// Reads a `budget:` mapping at `field`, with the config's problem format.
pub fn parse_cap(
    field: &str,
    value: &Value,
    extra: &[&str],
    problems: &mut Vec<String>,
) -> Option<Budget> {
    match check_budget(value, extra) {
        Ok(cap) => Some(cap),
        Err(found) => {
            for p in found {
                let at = if p.key.is_empty() {
                    field.to_owned()
                } else {
                    format!("{field}.{}", p.key)
                };
                problems.push(format!("`{at}`: {} ({})", p.problem, p.hint));
            }
            None
        }
    }
}

/// What one arm (or the whole night: role `night`, arm empty) spent, against its cap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpendRecord {
    /// `participant`, `judge` or `night`.
    pub role: String,
    /// The arm's name (empty for the night).
    pub arm: String,
    /// What its cells spent, as read live from their output.
    pub spent: Spend,
    /// Its cells' caps, summed (the night's or the cook's cap for the whole).
    pub budget: Option<Budget>,
    /// Cells stopped (or never started) at a budget.
    pub exhausted: u64,
}

impl SpendRecord {
    /// `spent 12 340 / 50 000 tokens` against the cap, else `spent 12 340 tokens`.
    pub fn describe(&self) -> String {
        match self.budget {
            Some(cap) => cap.describe(self.spent),
            None if self.spent.usd > 0.0 => format!(
                "spent {} tokens, ${:.2}",
                crate::brief::grouped(self.spent.tokens),
                self.spent.usd
            ),
            None => format!("spent {} tokens", crate::brief::grouped(self.spent.tokens)),
        }
    }
}

/// Adds one cook's result entries (`RUN_RESULT.json` participants, `JUDGE_RESULT.json` judges)
/// to the arms' records.
pub fn add_cook(records: &mut Vec<SpendRecord>, cook: &Path) {
    for (file, list, role) in [
        ("RUN_RESULT.json", "participants", "participant"),
        ("JUDGE_RESULT.json", "judges", "judge"),
    ] {
        let Some(text) = fs_err::read_to_string(cook.join(file)).ok() else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for entry in value[list].as_array().into_iter().flatten() {
            let (Some(name), Some(map)) = (entry["name"].as_str(), entry.as_object()) else {
                continue;
            };
            let spent = crate::cell::spend::entry_spend(map);
            let budget = serde_json::from_value::<BudgetFile>(entry["budget"].clone())
                .ok()
                .map(|b| Budget {
                    tokens: b.tokens,
                    usd: b.usd,
                });
            let exhausted = u64::from(entry["status"] == "budget_exhausted");
            match records.iter_mut().find(|r| r.role == role && r.arm == name) {
                Some(record) => {
                    record.spent = record.spent.plus(spent);
                    record.exhausted += exhausted;
                    record.budget = add_caps(record.budget, budget);
                }
                None => records.push(SpendRecord {
                    role: role.to_owned(),
                    arm: name.to_owned(),
                    spent,
                    budget,
                    exhausted,
                }),
            }
        }
    }
}

/// An arm's caps over several cells: each cell's cap, summed (so an arm capped at 5 000 tokens
/// per cell over two cells reads `spent … / 10 000 tokens`).
fn add_caps(a: Option<Budget>, b: Option<Budget>) -> Option<Budget> {
    let sum_u = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        (x, y) => x.or(y),
    };
    let sum_f = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => Some(x + y),
        (x, y) => x.or(y),
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(Budget {
            tokens: sum_u(a.tokens, b.tokens),
            usd: sum_f(a.usd, b.usd),
        }),
        (a, b) => a.or(b),
    }
}

#[derive(serde::Deserialize)]
struct BudgetFile {
    tokens: Option<u64>,
    usd: Option<f64>,
}

/// The night's own row: every arm's spend against the night's cap.
pub fn night_record(records: &[SpendRecord], cap: Option<Budget>) -> SpendRecord {
    SpendRecord {
        role: "night".into(),
        arm: String::new(),
        spent: records
            .iter()
            .map(|r| r.spent)
            .fold(Spend::default(), Spend::plus),
        budget: cap,
        exhausted: records.iter().map(|r| r.exhausted).sum(),
    }
}

/// Stores a night's spend rows.
pub(super) fn put(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
    records: &[SpendRecord],
) -> rusqlite::Result<()> {
    for r in records {
        tx.execute(
            "INSERT INTO spend (night_id, role, arm, tokens, usd, budget_tokens, budget_usd, exhausted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                id,
                r.role,
                r.arm,
                i64::try_from(r.spent.tokens).unwrap_or(i64::MAX),
                r.spent.usd,
                r.budget.and_then(|b| b.tokens).and_then(|t| i64::try_from(t).ok()),
                r.budget.and_then(|b| b.usd),
                i64::try_from(r.exhausted).unwrap_or(i64::MAX),
            ],
        )?;
    }
    Ok(())
}

/// Reads a night's spend rows (night first, then arms in stored order).
pub(super) fn read(connection: &Connection, id: i64) -> rusqlite::Result<Vec<SpendRecord>> {
    let mut statement = connection.prepare("SELECT role, arm, tokens, usd, budget_tokens, budget_usd, exhausted FROM spend WHERE night_id = ?1 ORDER BY role = 'night' DESC, rowid")?;
    statement
        .query_map(params![id], |r| {
            let tokens: Option<i64> = r.get(4)?;
            let usd: Option<f64> = r.get(5)?;
            let budget = (tokens.is_some() || usd.is_some()).then(|| Budget {
                tokens: tokens.and_then(|t| u64::try_from(t).ok()),
                usd,
            });
            Ok(SpendRecord {
                role: r.get(0)?,
                arm: r.get(1)?,
                spent: Spend {
                    tokens: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    usd: r.get(3)?,
                },
                budget,
                exhausted: u64::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
            })
        })?
        .collect()
}

/// The spend rows as history JSON, each with its `spent … / …` text.
pub fn spend_json(records: &[SpendRecord]) -> Value {
    Value::Array(
        records
            .iter()
            .map(|r| {
                serde_json::json!({
                    "role": r.role, "arm": r.arm, "tokens": r.spent.tokens, "usd": r.spent.usd,
                    "budget": r.budget, "exhausted": r.exhausted, "text": r.describe(),
                })
            })
            .collect(),
    )
}

/// `    spend: night spent 12 340 / 50 000 tokens; a (participant) spent …` lines, only when
/// something was spent or capped.
pub fn spend_lines(spend: &Value) -> Vec<String> {
    let rows: Vec<String> = spend
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["tokens"].as_u64().unwrap_or(0) > 0 || !r["budget"].is_null())
        .map(|r| {
            let who = match r["role"].as_str() {
                Some("night") => "night".to_owned(),
                role => format!(
                    "{} ({})",
                    r["arm"].as_str().unwrap_or("?"),
                    role.unwrap_or("?")
                ),
            };
            let stopped = match r["exhausted"].as_u64().unwrap_or(0) {
                0 => String::new(),
                n => format!(", {n} cell(s) budget_exhausted"),
            };
            format!("    {who}: {}{stopped}", r["text"].as_str().unwrap_or("?"))
        })
        .collect();
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let brief = dir.path().join("brief-a");
        fs_err::create_dir_all(&brief).unwrap();
        fs_err::write(brief.join("brief.yaml"), "name: a\n").unwrap();
        let file = dir.path().join("nightly.yaml");
        fs_err::write(
            &file,
            format!("name: n\nbriefs: [brief-a]\nparticipants:\n  - {{name: a, flavor: dummy, budget: {{tokens: 500}}}}\njudges:\n  - {{name: j, flavor: dummy}}\n{extra}"),
        )
        .unwrap();
        (dir, file)
    }

    #[test]
    fn a_nights_budget_and_its_arms_caps_are_read() {
        let (_dir, file) = config("budget: {tokens: 100000, usd: 3, on_exhausted: cancel}\n");
        let nightly = crate::nightly::config::load(&file).unwrap();
        assert_eq!(
            nightly.budget,
            Some(NightBudget {
                cap: Budget {
                    tokens: Some(100_000),
                    usd: Some(3.0)
                },
                on_exhausted: OnExhausted::Cancel,
            })
        );
        assert_eq!(
            nightly.participants[0].budget.and_then(|b| b.tokens),
            Some(500)
        );
        let (_dir, file) = config("budget: {tokens: 10}\n");
        let nightly = crate::nightly::config::load(&file).unwrap();
        assert_eq!(
            nightly.budget.map(|b| b.on_exhausted),
            Some(OnExhausted::Finish)
        );
        let (_dir, file) = config("");
        assert_eq!(crate::nightly::config::load(&file).unwrap().budget, None);
    }

    #[test]
    fn a_bad_nightly_budget_names_the_file_the_field_and_the_fix() {
        let (_dir, file) = config("budget: {tokens: 0, on_exhausted: stop, cost: 3}\n");
        let error = crate::nightly::config::load(&file).unwrap_err().to_string();
        for expected in [
            "`budget.on_exhausted`: must be `finish` or `cancel`, not \"stop\"",
            "`budget.tokens`: must be a positive whole number of tokens, not `0`",
            "`budget.cost`: unknown field (allowed: tokens, usd, on_exhausted) (remove `cost`)",
        ] {
            assert!(error.contains(expected), "`{expected}` in:\n{error}");
        }
        assert!(error.starts_with(&format!("`{}` is invalid", file.display())));
    }
}
