//! `multicooker resume <task> [--force]`: finishes the latest round of a cook whose run was cut
//! short (round 1, or a refine round, which reruns from that round's prompts).
//!
//! Only the cells that did not finish are run again: those the last run classified as
//! retryable (`rate_limited`, `timed_out`, `start_failed`, `non_zero_exit`), those it never
//! finished (cancelled, or left pending/running by a killed process), and participants it
//! never reached. `--force` adds every other non-ok cell. A cell that ended ok is never run
//! again; its output, seal and result stay as they are, and the results are merged.

use std::sync::Arc;

use serde_json::json;

use super::{cell_session, connect, open_cook, report_leftovers};
use crate::cli::ResumeArgs;
use crate::cook;
use crate::error::ExitCode;
use crate::settings::run_settings;
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
    paths: &CookPaths,
    brief: &crate::brief::Brief,
    judges: &[crate::brief::Actor],
) -> anyhow::Result<ExitCode> {
    let names: Vec<&str> = judges.iter().map(|j| j.name.as_str()).collect();
    session.printer.info(&format!(
        "resuming the judging of `{}`: {}",
        paths.name(),
        names.join(", ")
    ));
    let (runtime, engine) = connect(session).await?;
    let settings = run_settings(session, brief, &engine, None, judges.len(), cancel)?;
    let names: Vec<String> = judges.iter().map(|j| j.name.clone()).collect();
    let overview = super::overview(paths, brief, crate::state::Role::Judge, &names);
    let progress: Arc<dyn crate::progress::Progress> =
        Arc::new(session.printer.progress("judge", overview));
    let seed = crate::judge::labels::random_seed();
    let venue = crate::cell::Venue {
        runtime: &runtime,
        paths,
        brief,
        settings: &settings.cells,
        progress: &progress,
    };
    let outcome =
        crate::judge::judge(venue, judges, seed, crate::judge::Resume::KeepFinished).await?;
    report_leftovers(session, &outcome.leftovers);
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
        return resume_judging(&session, cancel, &paths, brief, &judges).await;
    }
    if targets.is_empty() {
        session
            .printer
            .json(&json!({"cook": paths.name(), "resumed": [], "state": null}));
        let others: Vec<String> = read_status(&paths)
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
        session.printer.info(&format!(
            "nothing to resume in `{}`: every participant ended ok or for good{hint}",
            paths.name()
        ));
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
    let (runtime, engine) = connect(&session).await?;
    let mut settings = run_settings(
        &session,
        brief,
        &engine,
        args.max_parallel,
        names.len(),
        cancel,
    )?;
    settings.merge = true;
    // In a refine round the cells run that round again, from their round's prompt.
    let round = read_status(&paths).map_or(1, |s| s.round);
    if round > 1 {
        let prompts = names
            .iter()
            .map(|n| Ok((n.clone(), fs_err::read_to_string(paths.prompt(n))?)))
            .collect::<std::io::Result<_>>()?;
        settings.refine = Some(cook::Refine { round, prompts });
    }
    let overview = super::overview(&paths, brief, crate::state::Role::Participant, &names);
    let progress = Arc::new(session.printer.progress("resume", overview));
    let outcome = cook::cook(&runtime, &paths, brief, &names, &settings, progress).await?;
    report_leftovers(&session, &outcome.leftovers);
    let verified = super::verify::after_cook(
        &session,
        &runtime,
        (&paths, brief, outcome.state),
        &names,
        &settings.cells,
    )
    .await?;
    let printer = session.printer;
    printer
        .json(&json!({"cook": paths.name(), "state": outcome.state, "resumed": outcome.results}));
    super::print_results(printer, &outcome.results);
    if outcome.state == CookState::Cancelled || verified.as_ref().is_some_and(|v| v.cancelled) {
        return Ok(ExitCode::Cancelled);
    }
    if super::verify::could_not_run(printer, verified.as_ref()) {
        return Ok(ExitCode::NothingUsable);
    }
    if outcome.results.iter().any(|r| r.status == CellState::Ok) {
        printer.info(&format!("next: multicooker judge {}", paths.name()));
        Ok(ExitCode::Success)
    } else {
        Ok(ExitCode::NothingUsable)
    }
}
