//! `multicooker resume <task> [--force]`: finishes the latest round of a cook whose run was cut
//! short (round 1, or a refine round, which reruns from that round's prompts).
//!
//! Only the cells that did not finish are run again: those the last run classified as
//! retryable (`rate_limited`, `timed_out`, `start_failed`, `non_zero_exit`), those it never
//! finished (cancelled, or left pending/running by a killed process), and participants it
//! never reached. `--force` adds every other non-ok cell. A cell that ended ok is never run
//! again; its output, seal and result stay as they are, and the results are merged.

use serde_json::json;

use super::{Engine, cell_session, open_cook};
use crate::cli::ResumeArgs;
use crate::cook::Refine;
use crate::error::ExitCode;
use crate::output::Printer;
use crate::pipeline::{self, CellsCooked, Judging, Round};
use crate::state::{CellState, CookPaths, CookState, read_status};

/// Why each participant is (or is not) run again.
pub(super) fn targets(
    paths: &CookPaths,
    brief: &crate::brief::Brief,
    force: bool,
) -> Vec<(String, String)> {
    let prior: crate::state::results::RoundResult =
        crate::state::results::read(&paths.run_result()).unwrap_or_default();
    let status = read_status(paths);
    brief
        .participants
        .iter()
        .filter_map(|p| {
            let recorded = prior
                .participants
                .iter()
                .find(|e| e.name() == Some(p.name.as_str()))
                .and_then(|e| e.get("status")?.as_str().map(str::to_owned));
            let cell = status.as_ref().and_then(|s| s.cells.get(&p.name));
            // The status cell is newer than RUN_RESULT.json when a run died before writing it.
            let state = match (cell, recorded) {
                (Some(cell), _) if !cell.state.is_final() => "interrupted".to_owned(),
                (Some(cell), _) => cell.state.as_str().to_owned(),
                (None, Some(recorded)) => recorded,
                (None, None) => "never run".to_owned(),
            };
            let retry = match state.as_str() {
                "ok" => false,
                "rate_limited" | "timed_out" | "start_failed" | "non_zero_exit" | "cancelled"
                | "node_lost" | "interrupted" | "never run" => true,
                _ => force,
            };
            retry.then(|| (p.name.clone(), state))
        })
        .collect()
}

/// Judges of an interrupted or cut-short judge phase that did not finish, if any.
fn unfinished_judges(
    paths: &CookPaths,
    brief: &crate::brief::Brief,
) -> Option<Vec<crate::brief::Actor>> {
    let status = read_status(paths)?;
    if status.phase != crate::state::Phase::Judge {
        return None;
    }
    let judges: Vec<crate::brief::Actor> = brief
        .judges
        .iter()
        .filter(|j| {
            status.cells.get(&j.name).is_none_or(|c| {
                !c.state.is_final()
                    || matches!(
                        c.state,
                        CellState::Cancelled
                            | CellState::RateLimited
                            | CellState::TimedOut
                            | CellState::StartFailed
                    )
            })
        })
        .cloned()
        .collect();
    (!judges.is_empty()).then_some(judges)
}

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
    let judging = Judging {
        seed: crate::judge::labels::random_seed(),
        resume: crate::judge::Resume::KeepFinished,
        again: false,
    };
    let run = engine.run((paths, brief), &cancel);
    let outcome = pipeline::judge(&run, judges, judging).await?;
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
    let targets = targets(&paths, brief, args.force);
    if targets.is_empty()
        && let Some(judges) = unfinished_judges(&paths, brief)
    {
        return resume_judging(&session, cancel, (&paths, brief), &judges).await;
    }
    if !targets.is_empty() && brief.harbor.is_some() {
        return Err(harbor_cells_refused("resume", paths.name()).into());
    }
    if targets.is_empty() {
        nothing_to_resume(session.printer, &paths);
        return Ok(ExitCode::Success);
    }
    let names: Vec<String> = targets.iter().map(|(n, _)| n.clone()).collect();
    session.printer.info(&format!(
        "resuming `{}`: {}",
        paths.name(),
        targets
            .iter()
            .map(|(n, s)| format!("{n} (was {s})"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let engine = Engine::connect(&session, args.max_parallel).await?;
    let round = Round {
        phase: "resume",
        merge: true,
        refine: refine_round(&paths, &names)?,
        ..Round::default()
    };
    let run = engine.run((&paths, brief), &cancel);
    let cooked = pipeline::cook::cells(&run, &names, round).await?;
    Ok(print_resumed(session.printer, &paths, &cooked))
}

/// Nothing to run again: says so, and which cells `--force` would add.
fn nothing_to_resume(printer: Printer, paths: &CookPaths) {
    printer.json(&json!({"cook": paths.name(), "resumed": [], "state": null}));
    let others: Vec<String> = read_status(paths)
        .map(|s| {
            s.cells
                .iter()
                .filter(|(_, c)| {
                    c.state != CellState::Ok && c.role == crate::state::Role::Participant
                })
                .map(|(n, c)| format!("{n} ({})", c.state.as_str()))
                .collect()
        })
        .unwrap_or_default();
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

/// In a refine round the cells run that round again, from their round's prompts.
fn refine_round(paths: &CookPaths, names: &[String]) -> std::io::Result<Option<Refine>> {
    let round = read_status(paths).map_or(1, |s| s.round);
    if round <= 1 {
        return Ok(None);
    }
    let prompts = names
        .iter()
        .map(|n| Ok((n.clone(), fs_err::read_to_string(paths.prompt(n))?)))
        .collect::<std::io::Result<_>>()?;
    Ok(Some(Refine { round, prompts }))
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
