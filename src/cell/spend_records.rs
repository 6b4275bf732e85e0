//! What each arm (a participant or judge name across a night's cooks, or the whole night) spent
//! against its cap, read from the result entries a cook's roles wrote: shared by the report of
//! one cook and the nightly history, so it lives below both.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::brief::Budget;
use crate::flavor::meter::Spend;

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
