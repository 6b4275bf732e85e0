//! The history store: one `SQLite` file (rusqlite, bundled), schema versioned with
//! `PRAGMA user_version` and migrated forward when opened. A store written by a newer
//! multicooker is refused, never rewritten. Storing a night again (a resumed night) replaces
//! that night's rows in one transaction.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension as _, params};
use serde::Serialize;

mod pass_rates;
mod task_rewards;

pub use pass_rates::PassRateRecord;
pub use task_rewards::TaskRewardRecord;

/// The schema this build writes.
pub const SCHEMA_VERSION: i64 = 8;

/// Each migration takes the store from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE nights (
    id INTEGER PRIMARY KEY,
    config TEXT NOT NULL,
    night TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    seed INTEGER NOT NULL,
    method TEXT NOT NULL,
    comparable INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    tied_groups TEXT,
    UNIQUE (config, night)
);
CREATE TABLE arms (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    participant TEXT NOT NULL,
    flavor TEXT NOT NULL,
    model TEXT,
    models_reported TEXT NOT NULL,
    cli_version TEXT,
    image TEXT,
    limits TEXT NOT NULL,
    egress TEXT,
    web_tools INTEGER NOT NULL,
    PRIMARY KEY (night_id, participant)
);
CREATE TABLE briefs (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    brief TEXT NOT NULL,
    brief_sha256 TEXT NOT NULL,
    brief_md_sha256 TEXT NOT NULL,
    judge_brief_sha256 TEXT NOT NULL,
    PRIMARY KEY (night_id, brief)
);
CREATE TABLE cells (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    cook TEXT NOT NULL,
    brief TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    participant TEXT NOT NULL,
    run_status TEXT,
    score REAL,
    PRIMARY KEY (night_id, cook, participant)
);
CREATE TABLE estimates (
    night_id INTEGER NOT NULL REFERENCES nights(id) ON DELETE CASCADE,
    participant TEXT NOT NULL,
    estimate REAL,
    lo REAL,
    hi REAL,
    clusters INTEGER NOT NULL,
    scored_cells INTEGER NOT NULL,
    cells INTEGER NOT NULL,
    PRIMARY KEY (night_id, participant)
);
",
    "
ALTER TABLE cells ADD COLUMN output_bytes INTEGER;
ALTER TABLE estimates ADD COLUMN rank INTEGER;
ALTER TABLE estimates ADD COLUMN rank_worst INTEGER;
ALTER TABLE estimates ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0;
ALTER TABLE estimates ADD COLUMN plain REAL;
ALTER TABLE estimates ADD COLUMN length_controlled REAL;
",
    "
ALTER TABLE nights ADD COLUMN failures TEXT NOT NULL DEFAULT '[]';
",
    "
ALTER TABLE arms ADD COLUMN backend TEXT;
ALTER TABLE arms ADD COLUMN nodes TEXT NOT NULL DEFAULT '[]';
",
    pass_rates::MIGRATION,
    crate::nightly::budget::MIGRATION,
    // Score order (docs/RANKING.md §6): `rank` is the group's competition rank, `rank_best`
    // and `rank_worst` what the participant's own tests allow, `rank_single` whether the group
    // has no separated members. NULL in older rows: their `rank` was the best rank.
    "
ALTER TABLE estimates ADD COLUMN rank_best INTEGER;
ALTER TABLE estimates ADD COLUMN rank_single INTEGER;
",
    task_rewards::MIGRATION,
];

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `SQLite` failed.
    #[error("history store `{}`: {source}", .path.display())]
    Sqlite {
        /// The store.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// Written by a newer multicooker.
    #[error("history store `{}` has schema version {found}, newer than this multicooker's {SCHEMA_VERSION}", .path.display())]
    TooNew {
        /// The store.
        path: PathBuf,
        /// Its version.
        found: i64,
    },
}

crate::hint_source!(StoreError);

impl crate::error::Hint for StoreError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::TooNew { .. } => {
                Some("upgrade multicooker, or point `history:` at another file".into())
            }
            Self::Sqlite { .. } => Some("check the file's permissions and free disk space".into()),
        }
    }
}

/// One arm's provenance for a night.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmRecord {
    /// Participant.
    pub participant: String,
    /// Flavor.
    pub flavor: String,
    /// Model as configured.
    pub model: Option<String>,
    /// Models the CLI reported using.
    pub models_reported: Vec<String>,
    /// CLI version from the image label.
    pub cli_version: Option<String>,
    /// Image id or digest.
    pub image: Option<String>,
    /// Timeouts and resources, as JSON.
    pub limits: String,
    /// Egress mode.
    pub egress: Option<String>,
    /// Server-side web tools on.
    pub web_tools: bool,
    /// The backend its cells ran on (`docker`, `swarm`); `None` before schema 4.
    pub backend: Option<String>,
    /// The nodes its cells ran on, sorted and unique (empty on one engine).
    pub nodes: Vec<String>,
}

/// One cell's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellRecord {
    /// Cook folder name.
    pub cook: String,
    /// Brief (template folder name).
    pub brief: String,
    /// Repeat number, from 1.
    pub repeat: u32,
    /// Participant.
    pub participant: String,
    /// Its run status.
    pub run_status: Option<String>,
    /// Its score in that cook (leniency-adjusted, or Bradley–Terry percent), if scored.
    pub score: Option<f64>,
    /// Size of its sealed output in that cook.
    pub output_bytes: Option<u64>,
}

/// One participant's pooled estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimateRecord {
    /// Participant.
    pub participant: String,
    /// Percent.
    pub estimate: Option<f64>,
    /// Interval.
    pub lo: Option<f64>,
    /// Interval.
    pub hi: Option<f64>,
    /// Briefs contributing.
    pub clusters: usize,
    /// Cells with a score.
    pub scored_cells: usize,
    /// Cells run.
    pub cells: usize,
    /// Competition rank of its group (docs/RANKING.md §6), from the paired tests over briefs.
    pub rank: Option<usize>,
    /// Best rank its paired tests allow (`None` in rows stored before this field: `rank` was
    /// the best rank then).
    pub rank_best: Option<usize>,
    /// `rank` is a true competition rank: its group has no separated members (`None` in
    /// older rows).
    pub rank_single: Option<bool>,
    /// Worst rank the tests allow.
    pub rank_worst: Option<usize>,
    /// Some cell has no score: the model accounts for the missing brief, but say so.
    pub incomplete: bool,
    /// Mean over briefs of its cell scores, without brief or judge effects (for comparison).
    pub plain: Option<f64>,
    /// The estimate at the night's mean output size, the size slope fitted within briefs.
    pub length_controlled: Option<f64>,
}

/// A brief's hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BriefRecord {
    /// Template folder name.
    pub brief: String,
    /// SHA-256 of brief.yaml.
    pub brief_sha256: String,
    /// SHA-256 of BRIEF.md.
    pub brief_md_sha256: String,
    /// SHA-256 of `JUDGE_BRIEF.md`.
    pub judge_brief_sha256: String,
}

/// Everything stored for one night.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NightRecord {
    /// Row id (0 until stored).
    pub id: i64,
    /// Config name.
    pub config: String,
    /// Night id (`YYYY-MM-DD` by default).
    pub night: String,
    /// Start time.
    pub started_at: String,
    /// End time.
    pub finished_at: Option<String>,
    /// `ok`, `partial`, `failed`.
    pub status: String,
    /// Seed.
    pub seed: u64,
    /// Statistics method.
    pub method: String,
    /// Arms equal where they should be.
    pub comparable: bool,
    /// Why not comparable.
    pub reasons: Vec<String>,
    /// Tied groups, best first.
    pub tied_groups: Option<Vec<Vec<String>>>,
    /// Why the night failed or is partial: one line per cook that failed, and what was left
    /// unscored (schema 2; empty for an ok night).
    pub failures: Vec<String>,
    /// Arms.
    pub arms: Vec<ArmRecord>,
    /// Briefs.
    pub briefs: Vec<BriefRecord>,
    /// Cells.
    pub cells: Vec<CellRecord>,
    /// Pooled estimates, ranked.
    pub estimates: Vec<EstimateRecord>,
    /// Hidden-test pass rates pooled across briefs (briefs with `verify:` only).
    pub pass_rates: Vec<PassRateRecord>,
    /// Spend against budget: the night's row, then one per arm (schema 6).
    pub spend: Vec<crate::nightly::budget::SpendRecord>,
    /// Harbor task rewards pooled across tasks (tasks only; schema 8).
    pub task_rewards: Vec<TaskRewardRecord>,
}

/// An open store.
pub struct Store {
    path: PathBuf,
    connection: Connection,
}

impl Store {
    /// Opens (creating it and its folder if needed) and migrates the store.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            let _ = fs_err::create_dir_all(parent);
        }
        let mut connection = Connection::open(path).map_err(sqlite)?;
        connection
            .execute_batch(
                "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;",
            )
            .map_err(sqlite)?;
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sqlite)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: version,
            });
        }
        let transaction = connection.transaction().map_err(sqlite)?;
        for (index, migration) in MIGRATIONS
            .iter()
            .enumerate()
            .skip(usize::try_from(version).unwrap_or(0))
        {
            transaction.execute_batch(migration).map_err(sqlite)?;
            transaction
                .execute_batch(&format!("PRAGMA user_version = {}", index + 1))
                .map_err(sqlite)?;
        }
        transaction.commit().map_err(sqlite)?;
        Ok(Self {
            path: path.to_path_buf(),
            connection,
        })
    }

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Stores a night, replacing an earlier record of the same config and night.
    pub fn put(&mut self, night: &NightRecord) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let sqlite = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.connection.transaction().map_err(sqlite)?;
        tx.execute(
            "DELETE FROM nights WHERE config = ?1 AND night = ?2",
            params![night.config, night.night],
        )
        .map_err(sqlite)?;
        tx.execute(
            "INSERT INTO nights (config, night, started_at, finished_at, status, seed, method, comparable, reasons, tied_groups, failures) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                night.config,
                night.night,
                night.started_at,
                night.finished_at,
                night.status,
                i64::from_ne_bytes(night.seed.to_ne_bytes()),
                night.method,
                night.comparable,
                serde_json::to_string(&night.reasons).unwrap_or_default(),
                night.tied_groups.as_ref().map(|g| serde_json::to_string(g).unwrap_or_default()),
                serde_json::to_string(&night.failures).unwrap_or_default(),
            ],
        )
        .map_err(sqlite)?;
        let id = tx.last_insert_rowid();
        put_arms(&tx, id, &night.arms).map_err(sqlite)?;
        for b in &night.briefs {
            tx.execute(
                "INSERT INTO briefs VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    id,
                    b.brief,
                    b.brief_sha256,
                    b.brief_md_sha256,
                    b.judge_brief_sha256
                ],
            )
            .map_err(sqlite)?;
        }
        for c in &night.cells {
            tx.execute(
                "INSERT INTO cells (night_id, cook, brief, repeat, participant, run_status, score, output_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    id,
                    c.cook,
                    c.brief,
                    c.repeat,
                    c.participant,
                    c.run_status,
                    c.score,
                    c.output_bytes.and_then(|b| i64::try_from(b).ok())
                ],
            )
            .map_err(sqlite)?;
        }
        for e in &night.estimates {
            tx.execute(
                "INSERT INTO estimates (night_id, participant, estimate, lo, hi, clusters, scored_cells, cells, rank, rank_worst, incomplete, plain, length_controlled, rank_best, rank_single) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                params![
                    id,
                    e.participant,
                    e.estimate,
                    e.lo,
                    e.hi,
                    i64::try_from(e.clusters).unwrap_or(i64::MAX),
                    i64::try_from(e.scored_cells).unwrap_or(i64::MAX),
                    i64::try_from(e.cells).unwrap_or(i64::MAX),
                    e.rank.and_then(|r| i64::try_from(r).ok()),
                    e.rank_worst.and_then(|r| i64::try_from(r).ok()),
                    e.incomplete,
                    e.plain,
                    e.length_controlled,
                    e.rank_best.and_then(|r| i64::try_from(r).ok()),
                    e.rank_single
                ],
            )
            .map_err(sqlite)?;
        }
        pass_rates::put(&tx, id, &night.pass_rates).map_err(sqlite)?;
        task_rewards::put(&tx, id, &night.task_rewards).map_err(sqlite)?;
        crate::nightly::budget::put(&tx, id, &night.spend).map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        Ok(id)
    }

    /// The nights of a config, oldest first; the last `last` only when given.
    pub fn nights(
        &self,
        config: &str,
        last: Option<usize>,
    ) -> Result<Vec<NightRecord>, StoreError> {
        let mut statement = self
            .connection
            .prepare("SELECT id, night, started_at, finished_at, status, seed, method, comparable, reasons, tied_groups, failures FROM nights WHERE config = ?1 ORDER BY night, id")
            .map_err(|e| self.sqlite(e))?;
        let rows = statement
            .query_map(params![config], |r| {
                let reasons: String = r.get(8)?;
                let groups: Option<String> = r.get(9)?;
                let failures: String = r.get(10)?;
                let seed: i64 = r.get(5)?;
                Ok(NightRecord {
                    id: r.get(0)?,
                    config: config.to_owned(),
                    night: r.get(1)?,
                    started_at: r.get(2)?,
                    finished_at: r.get(3)?,
                    status: r.get(4)?,
                    seed: u64::from_ne_bytes(seed.to_ne_bytes()),
                    method: r.get(6)?,
                    comparable: r.get(7)?,
                    reasons: serde_json::from_str(&reasons).unwrap_or_default(),
                    tied_groups: groups.and_then(|g| serde_json::from_str(&g).ok()),
                    failures: serde_json::from_str(&failures).unwrap_or_default(),
                    arms: Vec::new(),
                    briefs: Vec::new(),
                    cells: Vec::new(),
                    estimates: Vec::new(),
                    pass_rates: Vec::new(),
                    spend: Vec::new(),
                    task_rewards: Vec::new(),
                })
            })
            .map_err(|e| self.sqlite(e))?;
        let mut nights: Vec<NightRecord> =
            rows.collect::<Result<_, _>>().map_err(|e| self.sqlite(e))?;
        if let Some(last) = last {
            let skip = nights.len().saturating_sub(last);
            nights.drain(..skip);
        }
        for night in &mut nights {
            self.fill(night)?;
        }
        Ok(nights)
    }

    fn fill(&self, night: &mut NightRecord) -> Result<(), StoreError> {
        let sqlite = |e| self.sqlite(e);
        let mut arms = self.connection.prepare("SELECT participant, flavor, model, models_reported, cli_version, image, limits, egress, web_tools, backend, nodes FROM arms WHERE night_id = ?1 ORDER BY rowid").map_err(sqlite)?;
        night.arms = arms
            .query_map(params![night.id], |r| {
                let models: String = r.get(3)?;
                let nodes: String = r.get(10)?;
                Ok(ArmRecord {
                    participant: r.get(0)?,
                    flavor: r.get(1)?,
                    model: r.get(2)?,
                    models_reported: serde_json::from_str(&models).unwrap_or_default(),
                    cli_version: r.get(4)?,
                    image: r.get(5)?,
                    limits: r.get(6)?,
                    egress: r.get(7)?,
                    web_tools: r.get(8)?,
                    backend: r.get(9)?,
                    nodes: serde_json::from_str(&nodes).unwrap_or_default(),
                })
            })
            .map_err(sqlite)?
            .collect::<Result<_, _>>()
            .map_err(sqlite)?;
        let mut briefs = self.connection.prepare("SELECT brief, brief_sha256, brief_md_sha256, judge_brief_sha256 FROM briefs WHERE night_id = ?1 ORDER BY brief").map_err(sqlite)?;
        night.briefs = briefs
            .query_map(params![night.id], |r| {
                Ok(BriefRecord {
                    brief: r.get(0)?,
                    brief_sha256: r.get(1)?,
                    brief_md_sha256: r.get(2)?,
                    judge_brief_sha256: r.get(3)?,
                })
            })
            .map_err(sqlite)?
            .collect::<Result<_, _>>()
            .map_err(sqlite)?;
        let mut cells = self.connection.prepare("SELECT cook, brief, repeat, participant, run_status, score, output_bytes FROM cells WHERE night_id = ?1 ORDER BY rowid").map_err(sqlite)?;
        night.cells = cells
            .query_map(params![night.id], |r| {
                Ok(CellRecord {
                    cook: r.get(0)?,
                    brief: r.get(1)?,
                    repeat: r.get(2)?,
                    participant: r.get(3)?,
                    run_status: r.get(4)?,
                    score: r.get(5)?,
                    output_bytes: r
                        .get::<_, Option<i64>>(6)?
                        .and_then(|b| u64::try_from(b).ok()),
                })
            })
            .map_err(sqlite)?
            .collect::<Result<_, _>>()
            .map_err(sqlite)?;
        let mut estimates = self.connection.prepare("SELECT participant, estimate, lo, hi, clusters, scored_cells, cells, rank, rank_worst, incomplete, plain, length_controlled, rank_best, rank_single FROM estimates WHERE night_id = ?1 ORDER BY rowid").map_err(sqlite)?;
        night.estimates = estimates
            .query_map(params![night.id], |r| {
                Ok(EstimateRecord {
                    participant: r.get(0)?,
                    estimate: r.get(1)?,
                    lo: r.get(2)?,
                    hi: r.get(3)?,
                    clusters: usize::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                    scored_cells: usize::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
                    cells: usize::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
                    rank: r
                        .get::<_, Option<i64>>(7)?
                        .and_then(|x| usize::try_from(x).ok()),
                    rank_worst: r
                        .get::<_, Option<i64>>(8)?
                        .and_then(|x| usize::try_from(x).ok()),
                    incomplete: r.get(9)?,
                    plain: r.get(10)?,
                    length_controlled: r.get(11)?,
                    rank_best: r
                        .get::<_, Option<i64>>(12)?
                        .and_then(|x| usize::try_from(x).ok()),
                    rank_single: r.get(13)?,
                })
            })
            .map_err(sqlite)?
            .collect::<Result<_, _>>()
            .map_err(sqlite)?;
        night.pass_rates = pass_rates::read(&self.connection, night.id).map_err(sqlite)?;
        night.task_rewards = task_rewards::read(&self.connection, night.id).map_err(sqlite)?;
        night.spend = crate::nightly::budget::read(&self.connection, night.id).map_err(sqlite)?;
        Ok(())
    }

    /// The schema version of the open store.
    pub fn version(&self) -> Result<i64, StoreError> {
        self.connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(|e| self.sqlite(e))
    }
}

/// The arms of night `id`.
fn put_arms(tx: &rusqlite::Transaction<'_>, id: i64, arms: &[ArmRecord]) -> rusqlite::Result<()> {
    for a in arms {
        tx.execute(
            "INSERT INTO arms (night_id, participant, flavor, model, models_reported, cli_version, image, limits, egress, web_tools, backend, nodes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                id,
                a.participant,
                a.flavor,
                a.model,
                serde_json::to_string(&a.models_reported).unwrap_or_default(),
                a.cli_version,
                a.image,
                a.limits,
                a.egress,
                a.web_tools,
                a.backend,
                serde_json::to_string(&a.nodes).unwrap_or_default()
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
