//! The cook folder as state: its paths, `status.json` (atomic, at every transition),
//! `events.jsonl` (append-only) and the result files. Formats follow docs/BEHAVIOR.md §7 so that a
//! cook written by the Python tool stays readable.
//!
//! This module never talks to the engine and never decides outcomes; it records them.

mod events;
pub mod folders;
mod lock;
mod paths;
pub mod results;
pub mod rounds;
mod status;
pub mod verification;

use std::path::PathBuf;

pub use events::{Event, EventLog};
pub use lock::{Holder, LockError, RunLock, holder, run_lock_path};
pub use paths::{
    CookPaths, Hidden, Shareable, VERIFY_DIR, check_namespace, check_task_name, date_prefix,
    find_cook, has_date_prefix, resolve_root, root_id, root_id_in, undated,
};
pub use status::{Cell, CellState, CookState, Phase, Role, Status, StatusStore, read_status};

use crate::error::Hint;

/// The null participant's key in mappings and scores (`judging.null_participant`): a name no
/// participant can take (names start with a letter or a digit).
pub const NULL_PARTICIPANT: &str = "_null";

/// Errors reading or writing cook state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// No cook folder for the task.
    #[error("no cook folder `{}` (task `{task}`)", .dir.display())]
    NoCook {
        /// Where it was looked for.
        dir: PathBuf,
        /// The task as given.
        task: String,
        /// The closest existing cook name, if one is close (a typo).
        suggestion: Option<String>,
    },
    /// The task name is not a single folder name.
    #[error("task name `{task}` {problem}")]
    BadTaskName {
        /// The task as given.
        task: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A state file could not be read or written.
    #[error("cannot {action} `{}`", .path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A state file exists but is not what multicooker expects.
    #[error("`{}` is not valid: {problem}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

crate::hint_source!(StateError);

impl Hint for StateError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::NoCook {
                suggestion: Some(suggestion),
                ..
            } => Some(format!("did you mean `{suggestion}`?")),
            Self::NoCook { task, .. } => Some(format!(
                "create it with `multicooker new {task}`, or pass `--root` to point at the folder that holds your cooks"
            )),
            Self::BadTaskName { .. } => {
                Some("name the cook folder with letters, digits, `-` and `_`".into())
            }
            Self::Io { .. } | Self::Invalid { .. } => None,
        }
    }
}

impl StateError {
    /// Wraps an I/O error with the file it concerns.
    pub fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

/// The current time as the reference writes it: `2026-05-27T18:20:00.123456+00:00`.
pub fn now_iso() -> String {
    iso(jiff::Timestamp::now())
}

/// A timestamp in the reference's format (UTC, microseconds, `+00:00`).
pub fn iso(timestamp: jiff::Timestamp) -> String {
    let zoned = timestamp.to_zoned(jiff::tz::TimeZone::UTC);
    zoned.strftime("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string()
}
