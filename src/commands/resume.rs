//! `multicooker resume <task> [--force]`: finishes the latest round of a cook whose run was cut
//! short. What runs again, and why, is `pipeline::resume`'s; this prints it and the outcome.

use serde_json::json;

use super::{Engine, cell_session, open_cook};
use crate::cli::ResumeArgs;
use crate::error::ExitCode;
use crate::output::Printer;
use crate::pipeline::CellsCooked;
use crate::pipeline::resume::{self, Plan, Target};
use crate::state::{CellState, CookPaths, CookState};

/// Runs the unfinished judges again; the others' scores and entries stay.
async fn resume_judging(
    session: &crate::settings::Session,
    cancel: tokio_util::sync::CancellationToken,
    (paths, brief): (&CookPaths, &crate::brief::Brief),
    judges: &[crate::brief::Actor],
) -> anyhow::Result<ExitCode> {
    let names: Vec<&str> = judges.iter().map(|j| j.name.as_str()).collect();
    session.printer.info(&format!(
        "resuming the judging of `{}`: {}",
        paths.name(),
        names.join(", ")
    ));
    let engine = Engine::connect(session, None).await?;
    let run = engine.run((paths, brief), &cancel);
    let outcome = resume::judges(&run, judges).await?;
    session
        .printer
        .json(&json!({"cook": paths.name(), "judges": outcome.results}));
    if outcome.state == CookState::Cancelled {
        return Ok(ExitCode::Cancelled);
    }
    if outcome.results.iter().any(|r| r.ok) {
        session
            .printer
            .info(&format!("next: multicooker report {}", paths.name()));
        Ok(ExitCode::Success)
    } else {
        Ok(ExitCode::NothingUsable)
    }
}

pub(super) async fn run(args: &ResumeArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let brief = &loaded.brief;
    super::status::lint_gate(&paths, brief)?;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "resume")?;
    let targets = match resume::plan(&paths, brief, args.force) {
        Plan::Cells(targets) => targets,
        Plan::Judges(judges) => {
            return resume_judging(&session, cancel, (&paths, brief), &judges).await;
        }
        Plan::Nothing => {
            nothing_to_resume(session.printer, &paths);
            return Ok(ExitCode::Success);
        }
    };
    if brief.harbor.is_some() {
        return Err(harbor_cells_refused("resume", paths.name()).into());
    }
    let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
    session.printer.info(&format!(
        "resuming `{}`: {}",
        paths.name(),
        targets
            .iter()
            .map(|Target { name, was }| format!("{name} (was {was})"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let engine = Engine::connect(&session, args.max_parallel).await?;
    let run = engine.run((&paths, brief), &cancel);
    let cooked = resume::cells(&run, &names).await?;
    Ok(print_resumed(session.printer, &paths, &cooked))
}

/// Nothing to run again: says so, and which cells `--force` would add.
fn nothing_to_resume(printer: Printer, paths: &CookPaths) {
    printer.json(&json!({"cook": paths.name(), "resumed": [], "state": null}));
    let others: Vec<String> = resume::forced_only(paths)
        .into_iter()
        .map(|(n, state)| format!("{n} ({})", state.as_str()))
        .collect();
    let hint = if others.is_empty() {
        String::new()
    } else {
        format!("; not retryable without --force: {}", others.join(", "))
    };
    printer.info(&format!(
        "nothing to resume in `{}`: every participant ended ok or for good{hint}",
        paths.name()
    ));
}

/// The resumed cells' JSON and rows, and what to do next; the exit code.
fn print_resumed(printer: Printer, paths: &CookPaths, cooked: &CellsCooked) -> ExitCode {
    let (outcome, verified) = (&cooked.outcome, cooked.verified.as_ref());
    super::verify::print_after_cook(printer, paths, verified);
    printer
        .json(&json!({"cook": paths.name(), "state": outcome.state, "resumed": outcome.results}));
    super::print_results(printer, &outcome.results);
    if cooked.cancelled() {
        return ExitCode::Cancelled;
    }
    if super::verify::could_not_run(printer, verified) {
        return ExitCode::NothingUsable;
    }
    if outcome.results.iter().any(|r| r.status == CellState::Ok) {
        printer.info(&format!("next: multicooker judge {}", paths.name()));
        ExitCode::Success
    } else {
        ExitCode::NothingUsable
    }
}

/// `resume` and `refine` re-run participants in their flavors' images; a cook made from a
/// Harbor task runs them in the task's environment, which only `cook` (and a night) does.
pub(super) fn harbor_cells_refused(command: &str, cook: &str) -> crate::error::UserError {
    crate::error::UserError::new(
        format!(
            "`{command}` cannot re-run participants of `{cook}`: it was made from a Harbor task, \
             whose participants work in the task's environment"
        ),
        format!(
            "run `multicooker cook {cook}` again (it re-runs the participants in the task's \
             environment and its verifier), then `judge` and `report`"
        ),
    )
}
