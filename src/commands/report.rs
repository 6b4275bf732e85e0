//! `multicooker report <task>`: leaderboard.md and summary.json from the judges' scores.

use serde_json::json;

use super::open_cook;
use crate::cli::TaskArgs;
use crate::error::ExitCode;
use crate::report;
use crate::settings;
use crate::state::{CookState, EventLog, Phase, StatusStore};

/// Lines of the leaderboard echoed to the terminal.
const ECHO_LINES: usize = 20;

pub(super) fn run(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let (paths, loaded) = open_cook(&session, &args.task)?;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "report")?;
    let brief = &loaded.brief;
    let input = report::load(&paths, brief)?;
    let printer = session.printer;
    for warning in &input.warnings {
        printer.warn(warning);
    }
    for skipped in &input.skipped {
        printer.warn(&format!(
            "judge `{}` skipped: {}",
            skipped.judge, skipped.reason
        ));
    }
    let report = report::aggregate(&input, brief);
    let written = report::write(&paths, &report)?;
    printer.json(&report::render_summary(&report));
    if written.no_scores {
        printer.info(&format!(
            "no judge produced usable scores; see `{}`",
            written.summary.display()
        ));
        return Ok(ExitCode::NothingUsable);
    }
    EventLog::new(&paths).cook(
        "report.written",
        Phase::Report,
        Some(json!({"round": report.round})),
    )?;
    StatusStore::open(&paths).update(|s| {
        s.phase = Phase::Report;
        s.state = CookState::Reported;
        s.round = report.round;
    })?;
    let leaderboard = report::render_leaderboard(&report);
    for line in leaderboard.lines().take(ECHO_LINES) {
        printer.data(line);
    }
    if let Some(path) = &written.leaderboard {
        printer.info(&format!("\nleaderboard: {}", path.display()));
    }
    printer.info(&format!("summary:     {}", written.summary.display()));
    printer.info(&format!("html:        {}", written.html.display()));
    Ok(ExitCode::Success)
}
