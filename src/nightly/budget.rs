//! A night's budget (`budget: {tokens, usd, on_exhausted}` in the nightly config) and what each
//! arm spent against its own cap, folded from the cooks' result files and kept in the history
//! store (schema version 6, table `spend`).

use rusqlite::{Connection, params};
use serde::Serialize;
use serde_json::Value;

use crate::brief::{Budget, check_budget};
pub use crate::cell::spend_records::{
    SpendRecord, add_cook, night_record, spend_json, spend_lines,
};
use crate::flavor::meter::Spend;
use crate::schema::{Field, Kind, Problem, Wrong, join};

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

/// `budget:` of a nightly config: a brief's `budget:` keys (judged by [`check_budget`], which
/// briefs share) and `on_exhausted`.
pub const NIGHT_BUDGET: Kind = Kind::Map(&[
    Field::new("tokens", Kind::Any),
    Field::new("usd", Kind::Any),
    Field::new("on_exhausted", Kind::Check(on_exhausted)),
]);

fn on_exhausted(value: &Value) -> Result<(), Wrong> {
    match value.as_str() {
        Some("finish" | "cancel") => Ok(()),
        _ => Err((
            format!("must be `finish` or `cancel`, not {value}"),
            Some("`finish` lets running cells end, `cancel` stops them".into()),
        )),
    }
}

/// Reads a config's `budget:` once [`NIGHT_BUDGET`] checked its shape (`value` is what the
/// check kept; `reported` says it already reported a key of it, so a budget left without a
/// cap is no news).
pub fn parse_night(
    value: &Value,
    reported: bool,
    problems: &mut Vec<Problem>,
) -> Option<NightBudget> {
    let on_exhausted = match value.get("on_exhausted").and_then(Value::as_str) {
        Some("cancel") => OnExhausted::Cancel,
        _ => OnExhausted::Finish,
    };
    let mut found = Vec::new();
    let cap = parse_cap("budget", value, &["on_exhausted"], &mut found);
    // The budget's only problem as a whole, once a mapping: it sets no cap.
    problems.extend(
        found
            .into_iter()
            .filter(|p| !(reported && p.path == "budget")),
    );
    cap.map(|cap| NightBudget { cap, on_exhausted })
}

/// Reads a `budget:` mapping at `field`, reporting each problem at its field with its fix.
pub fn parse_cap(
    field: &str,
    value: &Value,
    extra: &[&'static str],
    problems: &mut Vec<Problem>,
) -> Option<Budget> {
    match check_budget(value, extra) {
        Ok(cap) => Some(cap),
        Err(found) => {
            for p in found {
                let at = if p.key.is_empty() {
                    field.to_owned()
                } else {
                    join(field, &p.key)
                };
                problems.push(Problem::new(at, p.problem, Some(p.hint)));
            }
            None
        }
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
        let nightly =
            crate::nightly::config::load(&file, std::path::Path::new("/home/mc-test")).unwrap();
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
        let nightly =
            crate::nightly::config::load(&file, std::path::Path::new("/home/mc-test")).unwrap();
        assert_eq!(
            nightly.budget.map(|b| b.on_exhausted),
            Some(OnExhausted::Finish)
        );
        let (_dir, file) = config("");
        assert_eq!(
            crate::nightly::config::load(&file, std::path::Path::new("/home/mc-test"))
                .unwrap()
                .budget,
            None
        );
    }

    #[test]
    fn a_bad_nightly_budget_names_the_file_the_field_and_the_fix() {
        let (_dir, file) = config("budget: {tokens: 0, on_exhausted: stop, cost: 3}\n");
        let error = crate::nightly::config::load(&file, std::path::Path::new("/home/mc-test"))
            .unwrap_err()
            .to_string();
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
