//! `multicooker cook <task>`: the pipeline's cook step (with the hidden tests after it, or a
//! Harbor task's environment and verifier), printed.

use serde_json::json;

use super::{Engine, cell_session, open_cook, select};
use crate::cli::CookArgs;
use crate::error::ExitCode;
use crate::output::Printer;
use crate::pipeline::{self, CellsCooked, Cooked, Round};
use crate::state::{CellState, CookPaths};

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
    let engine = Engine::connect(&session, args.max_parallel).await?;
    if brief.harbor.is_none() {
        session.printer.info(&format!(
            "cooking `{}`: {} participant(s), timeout {}s",
            paths.name(),
            selected.len(),
            brief.timeout_s
        ));
    }
    let round = Round {
        sandbox_check: !args.skip_sandbox_check,
        ..Round::default()
    };
    let run = engine.run((&paths, brief), &cancel);
    match pipeline::cook(&run, &selected, round).await? {
        Cooked::Task(task) => Ok(super::harbor::print_task(session.printer, &paths, &task)),
        Cooked::Cells(cooked) => Ok(print_cook(session.printer, &paths, &cooked)),
    }
}

/// The cook's JSON and rows, then what to do next; the exit code.
fn print_cook(printer: Printer, paths: &CookPaths, cooked: &CellsCooked) -> ExitCode {
    let (outcome, verified) = (&cooked.outcome, cooked.verified.as_ref());
    super::verify::print_after_cook(printer, paths, verified);
    printer.json(&json!({"cook": paths.name(), "state": outcome.state, "participants": outcome.results, "verifications": verified.map(|v| &v.results)}));
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
    if cooked.cancelled() {
        printer.info(&format!(
            "cancelled; partial outputs are kept in `{}`",
            paths.dir().join("work").display()
        ));
        return ExitCode::Cancelled;
    }
    printer.info(&format!("sealed outputs in `{}`", paths.inbox().display()));
    if super::verify::could_not_run(printer, verified) {
        return ExitCode::NothingUsable;
    }
    if outcome.results.iter().any(|r| r.status == CellState::Ok) {
        printer.info(&format!("next: multicooker judge {}", paths.name()));
        ExitCode::Success
    } else {
        printer.info(&format!(
            "no participant ended ok; see the logs under `{}`",
            paths.dir().join("logs").display()
        ));
        ExitCode::NothingUsable
    }
}
