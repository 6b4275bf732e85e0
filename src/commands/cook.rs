//! `multicooker cook <task>`.

use std::sync::Arc;

use serde_json::json;

use super::{cell_session, connect, open_cook, report_leftovers, select};
use crate::cli::CookArgs;
use crate::cook;
use crate::error::ExitCode;
use crate::settings::run_settings;
use crate::state::{CellState, CookState, Role};

pub(super) async fn run(args: &CookArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let brief = &loaded.brief;
    super::status::lint_gate(&paths, brief)?;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "cook")?;
    let names = brief.participants.iter().map(|p| p.name.as_str());
    let selected = select(
        "participant",
        &names,
        &args.participants,
        &paths.brief_yaml(),
    )?;
    let (runtime, engine) = connect(&session).await?;
    let mut settings = run_settings(
        &session,
        brief,
        &engine,
        args.max_parallel,
        selected.len(),
        cancel,
    )?;
    if let Some(harbor) = &brief.harbor {
        let cook = (&paths, brief, harbor);
        return super::harbor::cook(&session, &runtime, cook, &selected, &settings.cells).await;
    }
    settings.sandbox_check = !args.skip_sandbox_check;
    session.printer.info(&format!(
        "cooking `{}`: {} participant(s), timeout {}s",
        paths.name(),
        selected.len(),
        brief.timeout_s
    ));
    let overview = super::overview(&paths, brief, Role::Participant, &selected);
    let progress = Arc::new(session.printer.progress("cook", overview));
    let outcome = cook::cook(&runtime, &paths, brief, &selected, &settings, progress).await?;
    report_leftovers(&session, &outcome.leftovers);
    let verified = super::verify::after_cook(
        &session,
        &runtime,
        (&paths, brief, outcome.state),
        &selected,
        &settings.cells,
    )
    .await?;

    let printer = session.printer;
    printer.json(&json!({"cook": paths.name(), "state": outcome.state, "participants": outcome.results, "verifications": verified.as_ref().map(|v| &v.results)}));
    for result in &outcome.results {
        let exit = result
            .exit_code
            .map_or_else(|| "-".to_owned(), |c| c.to_string());
        printer.result_row(&format!(
            "{:<20} {:<16} exit={exit:<4} {:.1}s",
            result.name,
            result.status.as_str(),
            result.duration_s
        ));
    }
    let any_ok = outcome.results.iter().any(|r| r.status == CellState::Ok);
    if outcome.state == CookState::Cancelled || verified.as_ref().is_some_and(|v| v.cancelled) {
        printer.info(&format!(
            "cancelled; partial outputs are kept in `{}`",
            paths.dir().join("work").display()
        ));
        return Ok(ExitCode::Cancelled);
    }
    printer.info(&format!("sealed outputs in `{}`", paths.inbox().display()));
    if super::verify::could_not_run(printer, verified.as_ref()) {
        return Ok(ExitCode::NothingUsable);
    }
    if any_ok {
        printer.info(&format!("next: multicooker judge {}", paths.name()));
        Ok(ExitCode::Success)
    } else {
        printer.info(&format!(
            "no participant ended ok; see the logs under `{}`",
            paths.dir().join("logs").display()
        ));
        Ok(ExitCode::NothingUsable)
    }
}
