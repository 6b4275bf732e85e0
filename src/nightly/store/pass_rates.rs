//! The store's hidden-test pass rates (schema version 3): one row per participant and night,
//! pooled across briefs by [`crate::nightly::pass_rates`].

use rusqlite::{Connection, params};
use serde::Serialize;

/// Schema version 3: pooled pass rates.
pub(super) const MIGRATION: &str = "
CREATE TABLE pass_rates (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    participant TEXT NOT NULL,
    estimate REAL NOT NULL,
    lo REAL NOT NULL,
    hi REAL NOT NULL,
    passed INTEGER NOT NULL,
    counted INTEGER NOT NULL,
    briefs INTEGER NOT NULL,
    method TEXT NOT NULL,
    PRIMARY KEY (night_id, participant)
);
";

/// One participant's pooled pass rate of a night.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassRateRecord {
    /// Participant.
    pub participant: String,
    /// Percent.
    pub estimate: f64,
    /// Lower end of the interval, percent.
    pub lo: f64,
    /// Upper end, percent.
    pub hi: f64,
    /// Tests passed over the night.
    pub passed: u64,
    /// Tests counted over the night.
    pub counted: u64,
    /// Briefs with a scored verification.
    pub briefs: usize,
    /// `wilson` (one brief) or `brief_mean+t`.
    pub method: String,
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Inserts a night's pass rates.
pub(super) fn put(tx: &Connection, night: i64, rates: &[PassRateRecord]) -> rusqlite::Result<()> {
    for r in rates {
        tx.execute(
            "INSERT INTO pass_rates VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                night,
                r.participant,
                r.estimate,
                r.lo,
                r.hi,
                int(r.passed),
                int(r.counted),
                int(r.briefs as u64),
                r.method
            ],
        )?;
    }
    Ok(())
}

/// A night's pass rates, in stored order.
pub(super) fn read(connection: &Connection, night: i64) -> rusqlite::Result<Vec<PassRateRecord>> {
    let mut statement = connection.prepare(
        "SELECT participant, estimate, lo, hi, passed, counted, briefs, method FROM pass_rates WHERE night_id = ?1 ORDER BY rowid",
    )?;
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    statement
        .query_map(params![night], |r| {
            Ok(PassRateRecord {
                participant: r.get(0)?,
                estimate: r.get(1)?,
                lo: r.get(2)?,
                hi: r.get(3)?,
                passed: count(r.get(4)?),
                counted: count(r.get(5)?),
                briefs: usize::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
                method: r.get(7)?,
            })
        })?
        .collect()
}
