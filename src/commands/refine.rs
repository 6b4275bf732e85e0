//! `multicooker refine <task>`: round N+1 on top of each participant's previous output, with
//! shared feedback (`FEEDBACK.md` or `--feedback`) and personal feedback. What a round is (the
//! snapshot of round N, the prompts, `REFINE_<N>.json`) is `pipeline::refine`'s; this selects
//! the participants, takes the run lock and prints the outcome.

use serde_json::json;

use super::{Engine, cell_session, open_cook, select};
use crate::cli::RefineArgs;
use crate::error::{ExitCode, UserError};
use crate::output::Printer;
use crate::pipeline::{CellsCooked, refine};
use crate::state::{CellState, CookPaths};

pub(super) async fn run(args: &RefineArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let brief = &loaded.brief;
    super::status::lint_gate(&paths, brief)?;
    if brief.harbor.is_some() {
        return Err(super::resume::harbor_cells_refused("refine", paths.name()).into());
    }
    let names = brief.participants.iter().map(|p| p.name.as_str());
    let selected = select(
        "participant",
        &names,
        &args.participants,
        &paths.brief_yaml(),
    )?;
    let Some(previous) = crate::state::rounds::latest(&paths) else {
        return Err(UserError::new(
            format!("`{}` has no round to refine", paths.name()),
            format!("run `multicooker cook {}` first", paths.name()),
        )
        .into());
    };
    let shared = refine::shared_feedback(&paths, args.feedback.as_deref())?;
    if let Some(missing) = &shared.missing {
        session.printer.warn(&format!(
            "`{}` is missing: refining with no shared feedback",
            missing.display()
        ));
    }
    let _lock = crate::state::RunLock::acquire(paths.dir(), "refine")?;
    let round = refine::prepare(&paths, brief, &selected, previous, &shared.text)?;
    session.printer.info(&format!(
        "refining `{}`: round {} for {} (round {previous} kept in rounds/{previous}/)",
        paths.name(),
        round.round,
        selected.join(", ")
    ));
    let engine = Engine::connect(&session, args.max_parallel).await?;
    let run = engine.run((&paths, brief), &cancel);
    let next = round.round;
    let cooked = refine::cells(&run, &selected, round).await?;
    Ok(print_refined(
        session.printer,
        &paths,
        (previous, next),
        &cooked,
    ))
}

/// The round's JSON and rows, and what to do next; the exit code.
fn print_refined(
    printer: Printer,
    paths: &CookPaths,
    (previous, round): (u32, u32),
    cooked: &CellsCooked,
) -> ExitCode {
    let (outcome, verified) = (&cooked.outcome, cooked.verified.as_ref());
    super::verify::print_after_cook(printer, paths, verified);
    printer.json(&json!({"cook": paths.name(), "round": round, "state": outcome.state, "participants": outcome.results}));
    super::print_results(printer, &outcome.results);
    if cooked.cancelled() {
        return ExitCode::Cancelled;
    }
    if super::verify::could_not_run(printer, verified) {
        return ExitCode::NothingUsable;
    }
    if outcome.results.iter().any(|r| r.status == CellState::Ok) {
        printer.info(&format!(
            "next: multicooker judge {name}; multicooker diff {name} --from {previous} --to {round}",
            name = paths.name()
        ));
        ExitCode::Success
    } else {
        ExitCode::NothingUsable
    }
}
