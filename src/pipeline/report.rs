//! The report step: leaderboard.md, leaderboard.html and summary.json from the judges' scores
//! (and a Harbor task's rewards, the hidden tests' results), then the cook's status and event.

use serde_json::json;

use crate::brief::Brief;
use crate::report::{self, Report, Written};
use crate::state::{CookPaths, CookState, EventLog, Phase, StatusStore};

/// What the report step gave.
#[derive(Debug)]
pub struct Reported {
    /// What the report's input had to say (a judge skipped, a file unread).
    pub warnings: Vec<String>,
    /// The report.
    pub report: Report,
    /// The files written.
    pub written: Written,
}

/// Reports the cook: writes its files and, when some score was accepted, marks it reported.
///
/// # Errors
/// The cook's files could not be read or written.
pub fn report(paths: &CookPaths, brief: &Brief) -> anyhow::Result<Reported> {
    let input = report::load(paths, brief)?;
    let mut warnings = input.warnings.clone();
    warnings.extend(
        input
            .skipped
            .iter()
            .map(|s| format!("judge `{}` skipped: {}", s.judge, s.reason)),
    );
    let report = report::aggregate(&input, brief);
    let written = report::write(paths, &report)?;
    if !written.no_scores {
        EventLog::new(paths).cook(
            "report.written",
            Phase::Report,
            Some(json!({"round": report.round})),
        )?;
        StatusStore::open(paths).update(|s| {
            s.phase = Phase::Report;
            s.state = CookState::Reported;
            s.round = report.round;
        })?;
    }
    Ok(Reported {
        warnings,
        report,
        written,
    })
}
