//! The store's Harbor task rewards (schema version 8): one row per participant and night,
//! pooled across tasks by [`crate::nightly::rewards`].

use rusqlite::{Connection, params};
use serde::Serialize;

/// Schema version 8: pooled task rewards.
pub(super) const MIGRATION: &str = "
CREATE TABLE task_rewards (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    participant TEXT NOT NULL,
    estimate REAL,
    lo REAL,
    hi REAL,
    passed INTEGER NOT NULL,
    trials INTEGER NOT NULL,
    missing INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    method TEXT NOT NULL,
    PRIMARY KEY (night_id, participant)
);
";

/// One participant's task reward of a night, pooled across tasks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRewardRecord {
    /// Participant.
    pub participant: String,
    /// Mean reward in percent (each task counted once); `None` when no trial has a reward.
    pub estimate: Option<f64>,
    /// Lower end of the interval, percent; `None` without one (a single trial).
    pub lo: Option<f64>,
    /// Upper end, percent.
    pub hi: Option<f64>,
    /// Trials with the full reward (1).
    pub passed: u64,
    /// Trials with a reward.
    pub trials: u64,
    /// Trials verified without a reward (no reward file, a malformed one, a timeout).
    pub missing: u64,
    /// Tasks with a reward.
    pub tasks: usize,
    /// `task_mean+t`, `wilson` or `trial_mean+t` (one task), `one_trial`, or `none`.
    pub method: String,
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Inserts a night's task rewards.
pub(super) fn put(
    tx: &Connection,
    night: i64,
    rewards: &[TaskRewardRecord],
) -> rusqlite::Result<()> {
    for r in rewards {
        tx.execute(
            "INSERT INTO task_rewards VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                night,
                r.participant,
                r.estimate,
                r.lo,
                r.hi,
                int(r.passed),
                int(r.trials),
                int(r.missing),
                int(r.tasks as u64),
                r.method
            ],
        )?;
    }
    Ok(())
}

/// A night's task rewards, in stored order.
pub(super) fn read(connection: &Connection, night: i64) -> rusqlite::Result<Vec<TaskRewardRecord>> {
    let mut statement = connection.prepare(
        "SELECT participant, estimate, lo, hi, passed, trials, missing, tasks, method FROM task_rewards WHERE night_id = ?1 ORDER BY rowid",
    )?;
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    statement
        .query_map(params![night], |r| {
            Ok(TaskRewardRecord {
                participant: r.get(0)?,
                estimate: r.get(1)?,
                lo: r.get(2)?,
                hi: r.get(3)?,
                passed: count(r.get(4)?),
                trials: count(r.get(5)?),
                missing: count(r.get(6)?),
                tasks: usize::try_from(r.get::<_, i64>(7)?).unwrap_or(0),
                method: r.get(8)?,
            })
        })?
        .collect()
}
