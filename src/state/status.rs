//! `status.json`: the cook's phase, state and one cell per participant and judge
//! (docs/BEHAVIOR.md §7.2). Every change is a read-modify-write under `.mc-lock`, written
//! atomically, so a concurrent reader always sees valid JSON and another process's change is
//! never lost.

use std::sync::Mutex;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::{CookPaths, StateError, now_iso};
use crate::fsx;

/// Which command last owned the cook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// `cook`.
    Cook,
    /// `judge`.
    Judge,
    /// `refine`.
    Refine,
    /// `resume`.
    Resume,
    /// `verify` (or the verification after `cook`).
    Verify,
    /// `report`.
    Report,
}

/// The cook's state. `sealed` and `judged` hand over to the next command; `reported`,
/// `cancelled` and `failed` are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CookState {
    /// status.json was just (re)created.
    Created,
    /// Checking inputs and the engine.
    Preflighting,
    /// Building images.
    Building,
    /// Participant cells are running.
    Cooking,
    /// Outputs are sealed; ready to judge.
    Sealed,
    /// Verifier cells are running (the state before them comes back when they end).
    Verifying,
    /// Judge cells are running.
    Judging,
    /// Judging finished; ready to report. (The reference stays in `judging`,
    /// docs/BEHAVIOR.md §10.7.)
    Judged,
    /// The report was written.
    Reported,
    /// Stopped by the user.
    Cancelled,
    /// Stopped by an error before any cell could run.
    Failed,
}

/// A cell's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A contestant.
    Participant,
    /// A judge.
    Judge,
    /// A `consult` reviewer of one candidate.
    Reviewer,
    /// Runs the hidden tests against one sealed output.
    Verifier,
}

impl Role {
    /// The role's name as used in labels and object names.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Participant => "participant",
            Self::Judge => "judge",
            Self::Reviewer => "reviewer",
            Self::Verifier => "verifier",
        }
    }
}

/// A cell's state: `pending`/`running`, then one of the reference's outcome classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellState {
    /// Not started yet.
    Pending,
    /// Being created and started.
    Starting,
    /// Running.
    Running,
    /// Exited 0 and produced what was required.
    Ok,
    /// The CLI reported a rate or usage limit.
    RateLimited,
    /// Killed at its timeout.
    TimedOut,
    /// Stopped by the user.
    Cancelled,
    /// Could not be created or started.
    StartFailed,
    /// Killed by its memory limit.
    OomKilled,
    /// Exited non-zero.
    NonZeroExit,
    /// Exited 0 but a required output is missing.
    ArtifactMissing,
    /// The cluster node it ran on was lost: an infrastructure failure, unscored (never 0) and
    /// run again by `resume` and the next `nightly --night`.
    NodeLost,
    /// Stopped when its own, the cook's or the night's budget was reached (or never started
    /// because it was): unscored (never 0), not run again unless forced.
    BudgetExhausted,
    /// Stopped because a line of its output claimed more spend than its flavor's turns could
    /// cost (docs/FLAVORS.md §8 item 9): flagged, unscored (never 0), its claim counted nowhere,
    /// not run again unless forced.
    SpendImplausible,
}

impl CellState {
    /// The state's name as written in status.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Starting => "starting",
            Self::Running => "running",
            Self::Ok => "ok",
            Self::RateLimited => "rate_limited",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::StartFailed => "start_failed",
            Self::OomKilled => "oom_killed",
            Self::NonZeroExit => "non_zero_exit",
            Self::ArtifactMissing => "artifact_missing",
            Self::NodeLost => "node_lost",
            Self::BudgetExhausted => "budget_exhausted",
            Self::SpendImplausible => "spend_implausible",
        }
    }

    /// True once the cell has ended.
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Pending | Self::Starting | Self::Running)
    }

    /// Whether a participant cell that ended in this state is judged on what it left (README,
    /// "Failed cells"). Judged as it is, as the original did: `ok`, and the participant's own
    /// failures (out of time, a non-zero exit, its memory limit, a missing required output, its
    /// CLI's rate limit), shown with the outcome beside the score. Unscored, never 0, because
    /// nothing of its own work was collected: it never started or the engine failed under it,
    /// its node was lost, the user cancelled it, a budget stopped it, or it claimed implausible
    /// spend. A judged state that left an empty `out/` is unscored too (nothing to judge).
    pub fn is_judged(self) -> bool {
        match self {
            Self::Ok
            | Self::TimedOut
            | Self::NonZeroExit
            | Self::OomKilled
            | Self::ArtifactMissing
            | Self::RateLimited => true,
            Self::StartFailed
            | Self::NodeLost
            | Self::Cancelled
            | Self::BudgetExhausted
            | Self::SpendImplausible
            | Self::Pending
            | Self::Starting
            | Self::Running => false,
        }
    }
}

/// One cell of status.json. Keys appear only once set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Participant or judge.
    pub role: Role,
    /// The flavor it runs.
    pub flavor: String,
    /// Where it is.
    pub state: CellState,
    /// When it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The outcome class (for judges: also `no_scores`, `invalid_json`, `malformed_schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_class: Option<String>,
    /// Wall time in seconds, one decimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Required outputs that were missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    /// Fields written by other tools, kept as they are.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Cell {
    /// A pending cell.
    pub fn pending(role: Role, flavor: &str) -> Self {
        Self {
            role,
            flavor: flavor.to_owned(),
            state: CellState::Pending,
            started_at: None,
            finished_at: None,
            exit_class: None,
            duration_s: None,
            missing: None,
            extra: serde_json::Map::new(),
        }
    }
}

/// The whole status.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// Always 1.
    pub schema_version: u32,
    /// The cook folder name.
    pub cook: String,
    /// The last command.
    pub phase: Phase,
    /// The cook's state.
    pub state: CookState,
    /// The round (1 for cook).
    pub round: u32,
    /// Refreshed on every write.
    pub updated_at: String,
    /// Cells by name: participants, then judges.
    #[serde(default)]
    pub cells: IndexMap<String, Cell>,
    /// Fields written by other tools, kept as they are.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Reads status.json; `None` when absent or unparseable (a reader never fails on it).
pub fn read_status(paths: &CookPaths) -> Option<Status> {
    let bytes = std::fs::read(paths.status()).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Owns status.json for one command. Every update re-reads the file under `.mc-lock`, applies
/// the change and writes atomically.
#[derive(Debug)]
pub struct StatusStore {
    paths: CookPaths,
    local: Mutex<()>,
}

impl StatusStore {
    /// Replaces status.json with a fresh one (a new cook run).
    pub fn create(
        paths: &CookPaths,
        phase: Phase,
        round: u32,
        cells: IndexMap<String, Cell>,
    ) -> Result<Self, StateError> {
        let store = Self {
            paths: paths.clone(),
            local: Mutex::new(()),
        };
        store.write_locked(|_| Status {
            schema_version: 1,
            cook: paths.name().to_owned(),
            phase,
            state: CookState::Created,
            round,
            updated_at: String::new(),
            cells,
            extra: serde_json::Map::new(),
        })?;
        Ok(store)
    }

    /// Continues the existing status.json (judge, report), creating it if absent.
    pub fn open(paths: &CookPaths) -> Self {
        Self {
            paths: paths.clone(),
            local: Mutex::new(()),
        }
    }

    /// Applies `change` to the current status and writes it.
    pub fn update(&self, change: impl FnOnce(&mut Status)) -> Result<Status, StateError> {
        let cook = self.paths.name().to_owned();
        self.write_locked(|current| {
            let mut status = current.unwrap_or_else(|| Status {
                schema_version: 1,
                cook,
                phase: Phase::Cook,
                state: CookState::Created,
                round: 1,
                updated_at: String::new(),
                cells: IndexMap::new(),
                extra: serde_json::Map::new(),
            });
            change(&mut status);
            status
        })
    }

    /// Sets the cook's phase and state.
    pub fn set_state(&self, phase: Phase, state: CookState) -> Result<Status, StateError> {
        self.update(|status| {
            status.phase = phase;
            status.state = state;
        })
    }

    /// Applies `change` to one cell (created pending if absent).
    pub fn update_cell(
        &self,
        name: &str,
        role: Role,
        flavor: &str,
        change: impl FnOnce(&mut Cell),
    ) -> Result<(), StateError> {
        self.update(|status| {
            let cell = status
                .cells
                .entry(name.to_owned())
                .or_insert_with(|| Cell::pending(role, flavor));
            change(cell);
        })
        .map(drop)
    }

    fn write_locked(
        &self,
        make: impl FnOnce(Option<Status>) -> Status,
    ) -> Result<Status, StateError> {
        let _local = self
            .local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let lock_path = self.paths.lock();
        let lock = fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(StateError::io("open", &lock_path))?;
        lock.file()
            .lock()
            .map_err(StateError::io("lock", &lock_path))?;
        let mut status = make(read_status(&self.paths));
        status.updated_at = now_iso();
        let path = self.paths.status();
        fsx::write_json_atomic(&path, &status).map_err(StateError::io("write", &path))?;
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// README's "Failed cells" table, state by state.
    #[test]
    fn the_failed_cell_policy_judges_own_failures_and_leaves_the_rest_unscored() {
        use CellState as S;
        let judged = [
            S::Ok,
            S::TimedOut,
            S::NonZeroExit,
            S::OomKilled,
            S::ArtifactMissing,
            S::RateLimited,
        ];
        let unscored = [
            S::StartFailed,
            S::NodeLost,
            S::Cancelled,
            S::BudgetExhausted,
            S::SpendImplausible,
        ];
        assert!(judged.iter().all(|s| s.is_judged()));
        assert!(unscored.iter().all(|s| !s.is_judged()));
        assert!(unscored.iter().chain(&judged).all(|s| s.is_final()));
    }

    #[test]
    fn python_status_with_unknown_fields_round_trips() {
        let text = r#"{"schema_version": 1, "cook": "x", "phase": "judge", "state": "judging", "round": 1,
            "updated_at": "2026-05-27T18:20:00.123456+00:00", "host": "box",
            "cells": {"a": {"role": "participant", "flavor": "dummy", "state": "ok", "exit_class": "ok",
                            "duration_s": 1.5, "note": 3}}}"#;
        let status: Status = serde_json::from_str(text).unwrap();
        assert_eq!(status.cells["a"].state, CellState::Ok);
        let back = serde_json::to_value(&status).unwrap();
        assert_eq!(back["host"], "box");
        assert_eq!(back["cells"]["a"]["note"], 3);
        assert!(
            back["cells"]["a"].get("started_at").is_none(),
            "unset keys are omitted"
        );
    }

    #[test]
    fn updates_keep_other_writers_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(tmp.path().join("251122-x"));
        fs_err::create_dir_all(paths.dir()).unwrap();
        let store = StatusStore::create(&paths, Phase::Cook, 1, IndexMap::new()).unwrap();
        // Another process changes the file between our updates.
        let mut other = read_status(&paths).unwrap();
        other.extra.insert("cancel_requested".into(), true.into());
        fsx::write_json_atomic(&paths.status(), &other).unwrap();
        store
            .update_cell("a", Role::Participant, "dummy", |cell| {
                cell.state = CellState::Running;
            })
            .unwrap();
        let now = read_status(&paths).unwrap();
        assert_eq!(now.extra["cancel_requested"], true);
        assert_eq!(now.cells["a"].state, CellState::Running);
    }

    #[test]
    fn a_concurrent_reader_always_sees_valid_json() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(tmp.path().join("251122-x"));
        fs_err::create_dir_all(paths.dir()).unwrap();
        let store = StatusStore::create(&paths, Phase::Cook, 1, IndexMap::new()).unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (path, done) = (paths.status(), done.clone());
            std::thread::spawn(move || {
                let mut reads = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    let bytes = std::fs::read(&path).unwrap();
                    serde_json::from_slice::<serde_json::Value>(&bytes)
                        .unwrap_or_else(|e| panic!("read {reads}: not JSON ({e})"));
                    reads += 1;
                }
                reads
            })
        };
        for i in 0..300 {
            store
                .update_cell(&format!("cell{}", i % 7), Role::Participant, "dummy", |c| {
                    c.duration_s = Some(f64::from(i));
                })
                .unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let reads = reader.join().unwrap();
        assert!(reads > 0, "the reader ran");
    }
}
