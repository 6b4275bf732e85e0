//! The report: reads the judges' de-anonymized scores, aggregates them into a ranking, and
//! writes `leaderboard.md` and `summary.json` (docs/BEHAVIOR.md §6.1–§6.6, file formats kept).
//!
//! The score math fixes the reference's weaknesses (docs/BEHAVIOR.md §10.16): bad or missing
//! dimensions reject a score with a reason instead of being renormalized or clamped, the scale's
//! lower bound counts, and a participant nobody scored is unscored rather than ranked as 0.
//! Everything between [`load`] and [`write()`] is pure, and the output is byte-identical for the
//! same cook folder: no hash-map order, no current time. This module never touches the engine or
//! the mapping.

mod aggregate;
pub mod calibration;
mod format;
pub mod html;
mod html_history;
mod html_ranking;
mod html_sections;
mod html_trend;
pub mod injection;
mod input;
pub mod jury;
mod jury_render;
mod leaderboard;
mod model;
mod probes;
mod ranking;
pub mod rewards;
mod score;
mod spend;
mod summary;
pub mod verdict;
pub mod verification;

use std::path::{Path, PathBuf};

pub use aggregate::aggregate;
pub use input::{
    JudgeResult, JudgeRun, JudgeScores, MAX_INPUT_BYTES, ReportInput, RunEntry, SkippedJudge,
    Usage, load,
};
pub use leaderboard::render_leaderboard;
pub use model::{
    ExcludedPair, JudgeMetrics, JudgeSection, PairScore, RejectedPair, Report, Standing,
};
pub(crate) use ranking::{NIGHT_CONDITIONING, by_score, few_clusters_caveat, on_scale, rank_words};
pub use summary::render_summary;

use crate::error::Hint;
use crate::fsx;
use crate::state::CookPaths;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The cook has no `judging/` folder: nothing was judged yet.
    #[error("no judging output at `{}`", .path.display())]
    NoJudging {
        /// The missing folder.
        path: PathBuf,
    },
    /// A file or folder could not be read or written.
    #[error("cannot {action} `{}`", .path.display())]
    Io {
        /// `read`, `list`, `write` or `remove`.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

crate::hint_source!(ReportError);

impl Hint for ReportError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::NoJudging { path } => {
                let cook = path
                    .parent()
                    .and_then(Path::file_name)
                    .map_or_else(|| "<task>".into(), |n| n.to_string_lossy());
                Some(format!("run `multicooker judge {cook}` first"))
            }
            Self::Io { .. } => None,
        }
    }
}

/// What [`write()`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `leaderboard.md`, unless this is the no-scores case.
    pub leaderboard: Option<PathBuf>,
    /// `summary.json`, always.
    pub summary: PathBuf,
    /// `leaderboard.html`, always (an honest "no scores" page in the no-scores case).
    pub html: PathBuf,
    /// No participant has an accepted score: the command exits 1.
    pub no_scores: bool,
}

/// Writes `summary.json`, `leaderboard.html` and, when some score was accepted,
/// `leaderboard.md`, each atomically.
/// In the no-scores case an earlier leaderboard.md is removed: it would show a ranking that
/// summary.json and the page no longer stand behind (issue 25; the original left it).
pub fn write(paths: &CookPaths, report: &Report) -> Result<Written, ReportError> {
    let no_scores = !report.has_scores();
    let leaderboard = if no_scores {
        match std::fs::remove_file(paths.leaderboard()) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                return Err(ReportError::Io {
                    action: "remove",
                    path: paths.leaderboard(),
                    source,
                });
            }
            _ => None,
        }
    } else {
        let path = paths.leaderboard();
        write_file(&path, render_leaderboard(report).as_bytes())?;
        Some(path)
    };
    let summary = paths.summary();
    let data = render_summary(report);
    write_file(&summary, &fsx::to_json_pretty(&data))?;
    let html = paths.dir().join("leaderboard.html");
    write_file(&html, html::render_leaderboard_html(&data).as_bytes())?;
    Ok(Written {
        leaderboard,
        summary,
        html,
        no_scores,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    fsx::write_atomic(path, bytes).map_err(|source| ReportError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod scripted_tests;
