//! `multicooker status <task>` and `multicooker cancel <task>`.
//!
//! status.json says what the last writer saw; the run lock says whether anyone is still
//! writing. Together they tell the truth after a crash: a cook left `cooking` with nobody
//! holding its lock was interrupted, and its running cells are shown as such.
//!
//! `cancel` asks the process holding the cook's lock to stop, exactly as Ctrl-C in its terminal
//! would: cells that have not started never start, running ones are killed and removed, finished
//! ones keep their state, partial outputs stay in `work/`, and the cook ends `cancelled`. A cook
//! that nothing is running on is left as it is (a `reported` cook never becomes `cancelled`).

use std::time::Duration;

use serde_json::json;

use crate::cli::{CancelArgs, TaskArgs};
use crate::error::{ExitCode, UserError};
use crate::settings;
use crate::state::{CellState, CookPaths, CookState, Holder, Role, Status, holder, read_status};

/// States in which some process must be running.
fn in_progress(state: CookState) -> bool {
    matches!(
        state,
        CookState::Created
            | CookState::Preflighting
            | CookState::Building
            | CookState::Cooking
            | CookState::Verifying
            | CookState::Judging
    )
}

/// `multicooker lint <task>`: schema errors are the usual error (exit 2); findings exit 1.
pub(super) fn lint(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let (paths, loaded) = super::open_cook(&session, &args.task)?;
    let findings = crate::brief::lint::lint(paths.dir(), &loaded.brief);
    session.printer.json(&json!({
        "cook": paths.name(),
        "ok": findings.is_empty(),
        "findings": findings.iter().map(|f| json!({"file": f.file, "problem": f.problem, "fix": f.fix})).collect::<Vec<_>>(),
    }));
    if findings.is_empty() {
        session.printer.data(&format!("lint: {} ok", paths.name()));
        return Ok(ExitCode::Success);
    }
    session
        .printer
        .data(&format!("{}: {} issue(s):", paths.name(), findings.len()));
    for finding in &findings {
        session.printer.data(&format!("  - {finding}"));
    }
    Ok(ExitCode::NothingUsable)
}

/// The lint gate of `cook`: a cook that fails lint does not start.
pub(super) fn lint_gate(
    paths: &crate::state::CookPaths,
    brief: &crate::brief::Brief,
) -> anyhow::Result<()> {
    let findings = crate::brief::lint::lint(paths.dir(), brief);
    if findings.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = findings.iter().map(|f| format!("  - {f}")).collect();
    Err(UserError::new(
        format!(
            "`{}` fails lint, so it was not started:\n{}",
            paths.name(),
            lines.join("\n")
        ),
        format!(
            "fix each file as said, then check with `multicooker lint {}`",
            paths.name()
        ),
    )
    .into())
}

/// Cells of this cook still running past their deadline (none when it cannot be told).
async fn overdue(session: &settings::Session, paths: &crate::state::CookPaths) -> Vec<String> {
    let Ok((runtime, _)) = super::connect(session).await else {
        return Vec::new();
    };
    let selector = crate::runtime::Selector::cook(paths.name())
        .with(crate::runtime::LABEL_ROOT, &paths.root_id());
    runtime.overdue(&selector).await.unwrap_or_default()
}

/// Cells of this cook the engine still runs (a killed run's cells live until their deadline).
async fn still_running(
    session: &settings::Session,
    paths: &crate::state::CookPaths,
) -> anyhow::Result<Vec<String>> {
    let (runtime, _) = super::connect(session).await?;
    let selector = crate::runtime::Selector::cook(paths.name())
        .with(crate::runtime::LABEL_ROOT, &paths.root_id());
    Ok(runtime.running(&selector).await?)
}

pub(super) async fn status(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let paths = session.find_cook(&args.task)?;
    let running = holder(paths.dir());
    let Some(status) = read_status(&paths) else {
        return Ok(not_cooked(&session, &paths, running.as_ref()));
    };
    let interrupted = running.is_none() && in_progress(status.state);
    // After a crash, only the engine knows whether the run's cells still run.
    let alive = if interrupted {
        Some(still_running(&session, &paths).await)
    } else {
        None
    };
    // A cell still up past its deadline is one its init did not end: said as such.
    let overdue = match &alive {
        Some(Ok(names)) if !names.is_empty() => overdue(&session, &paths).await,
        _ => Vec::new(),
    };
    let mut document = serde_json::to_value(&status)?;
    if let Some(Ok(names)) = &alive {
        document["still_running"] = json!(names);
        document["overdue"] = json!(overdue);
    }
    document["running"] = running
        .as_ref()
        .map_or(serde_json::Value::Null, holder_json);
    document["interrupted"] = json!(interrupted);
    session.printer.json(&document);
    let printer = session.printer;
    printer.data(&format!(
        "{}: {} (phase {}, round {}), updated {}",
        paths.name(),
        state_word(status.state),
        serde_json::to_value(status.phase)?.as_str().unwrap_or("?"),
        status.round,
        status.updated_at
    ));
    match (&running, interrupted) {
        (Some(h), _) => printer.data(&format!(
            "running: `multicooker {}` (pid {}) since {}",
            h.command, h.pid, h.since
        )),
        (None, true) => printer.data(&interrupted_line(alive.as_ref(), &overdue, paths.name())),
        (None, false) => {}
    }
    cells(&status, interrupted, printer);
    printer.info(&format!(
        "next: {}",
        next_step(&status, interrupted, paths.name())
    ));
    Ok(ExitCode::Success)
}

/// The process holding the cook's lock, as JSON.
fn holder_json(h: &Holder) -> serde_json::Value {
    json!({"command": h.command, "pid": h.pid, "since": h.since})
}

/// `status` of a cook with no status.json yet.
fn not_cooked(
    session: &settings::Session,
    paths: &CookPaths,
    running: Option<&Holder>,
) -> ExitCode {
    session
        .printer
        .json(&json!({"cook": paths.name(), "state": null, "running": running.map(holder_json)}));
    session.printer.data(&format!(
        "{}: not cooked yet (no status.json)",
        paths.name()
    ));
    session
        .printer
        .info(&format!("next: multicooker cook {}", paths.name()));
    ExitCode::Success
}

/// What an interrupted cook's cells are doing, as far as the engine can tell (`alive`: the
/// names of its cells still running, or why the engine could not be asked).
fn interrupted_line(
    alive: Option<&anyhow::Result<Vec<String>>>,
    overdue: &[String],
    cook: &str,
) -> String {
    match alive {
        Some(Ok(names)) if names.is_empty() => "interrupted: no multicooker process runs on this cook any more, and none of its cells still runs".to_owned(),
        Some(Ok(_)) if !overdue.is_empty() => format!(
            "interrupted: no multicooker process runs on this cook any more, and {} of its cell(s) outlived their deadline (their init did not end them): {}; stop them now with `multicooker clean {cook}` (the next command on this cook removes them too)",
            overdue.len(),
            overdue.join(", "),
        ),
        Some(Ok(names)) => format!(
            "interrupted: no multicooker process runs on this cook any more, but {} of its cell(s) still run: {}; each ends at its deadline (its timeout and a grace), or stop them now with `multicooker clean {cook}`",
            names.len(),
            names.join(", "),
        ),
        Some(Err(e)) => format!(
            "interrupted: no multicooker process runs on this cook any more; whether its cells still run is unknown (the engine could not be asked: {e:#}); they end at their deadline, or `multicooker clean {cook}` stops them",
        ),
        None => String::new(),
    }
}

fn state_word(state: CookState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn cells(status: &Status, interrupted: bool, printer: crate::output::Printer) {
    for (name, cell) in &status.cells {
        let mut state = cell.state.as_str().to_owned();
        if interrupted && !cell.state.is_final() {
            state = format!("{state} (interrupted)");
        }
        let class = cell
            .exit_class
            .as_deref()
            .filter(|c| *c != cell.state.as_str())
            .map_or_else(String::new, |c| format!(" [{c}]"));
        let duration = cell
            .duration_s
            .map_or_else(String::new, |d| format!(" {d:.1}s"));
        printer.data(&format!(
            "  {:<11} {name:<20} {:<10} {state}{class}{duration}",
            cell.role.as_str(),
            cell.flavor
        ));
    }
}

/// The command to run next. After a failure that is `resume`, which re-runs exactly the cells
/// that did not end ok and keeps the rest (issue 17: it used to suggest `cook --participants`).
fn next_step(status: &Status, interrupted: bool, cook: &str) -> String {
    // A verifier's outcome belongs to the output it tested: `resume` re-runs participants.
    let retryable = status.cells.values().any(|c| {
        c.role != Role::Verifier
            && matches!(
                c.state,
                CellState::RateLimited
                    | CellState::TimedOut
                    | CellState::StartFailed
                    | CellState::NonZeroExit
                    | CellState::Cancelled
                    | CellState::NodeLost
            )
            || (interrupted && !c.state.is_final())
    });
    let for_good = status.cells.values().any(|c| {
        matches!(
            c.state,
            CellState::OomKilled
                | CellState::ArtifactMissing
                | CellState::BudgetExhausted
                | CellState::SpendImplausible
        )
    });
    match status.state {
        _ if interrupted || retryable => format!(
            "multicooker resume {cook} re-runs the cells that did not end ok and keeps the others"
        ),
        CookState::Sealed if for_good => format!(
            "multicooker judge {cook}, or `multicooker resume {cook} --force` to retry the cells that ran out of memory or budget or missed a required output"
        ),
        CookState::Sealed | CookState::Cancelled => format!("multicooker judge {cook}"),
        CookState::Judged => format!("multicooker report {cook}"),
        CookState::Reported => format!("read `{cook}/leaderboard.md`"),
        _ => format!("multicooker status {cook} again later"),
    }
}

pub(super) async fn cancel(args: &CancelArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.task.global)?;
    let paths = session.find_cook(&args.task.task)?;
    let Some(running) = holder(paths.dir()) else {
        let state =
            read_status(&paths).map_or_else(|| "not cooked".to_owned(), |s| state_word(s.state));
        session
            .printer
            .json(&json!({"cook": paths.name(), "cancelled": false, "state": state}));
        session.printer.info(&format!(
            "nothing is running on `{}`; it stays `{state}`",
            paths.name()
        ));
        return Ok(ExitCode::NothingUsable);
    };
    signal_stop(&running)?;
    session.printer.info(&format!(
        "asked `multicooker {}` (pid {}) to stop; cells that have not started will not start",
        running.command, running.pid
    ));
    if args.no_wait {
        session
            .printer
            .json(&json!({"cook": paths.name(), "cancelled": true, "state": null}));
        return Ok(ExitCode::Success);
    }
    wait_for_release(&paths, &running, args.wait_s).await?;
    let state = read_status(&paths).map_or_else(|| "?".to_owned(), |s| state_word(s.state));
    session
        .printer
        .json(&json!({"cook": paths.name(), "cancelled": true, "state": state}));
    session.printer.info(&format!(
        "stopped; `{}` is now `{state}` and its partial outputs are kept",
        paths.name()
    ));
    Ok(ExitCode::Success)
}

/// Sends SIGTERM to the process holding the cook's lock (as Ctrl-C in its terminal would).
fn signal_stop(running: &Holder) -> anyhow::Result<()> {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(running.pid)?);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).map_err(|e| {
        UserError::new(
            format!(
                "cannot stop `multicooker {}` (pid {}): {e}",
                running.command, running.pid
            ),
            "run `multicooker cancel` as the user that started it",
        )
    })?;
    Ok(())
}

/// Waits, at most `wait_s` seconds, until the stopping process releases the cook's lock.
async fn wait_for_release(paths: &CookPaths, running: &Holder, wait_s: u64) -> anyhow::Result<()> {
    // Wait on the lock itself (the kernel wakes us when the holder exits): no polling.
    let lock = crate::state::run_lock_path(paths.dir());
    let released = tokio::task::spawn_blocking(move || {
        std::fs::File::open(&lock).and_then(|f| f.lock_shared().map(|()| f))
    });
    if tokio::time::timeout(Duration::from_secs(wait_s), released)
        .await
        .is_err()
    {
        return Err(UserError::new(
            format!(
                "`multicooker {}` (pid {}) is still stopping after {wait_s}s",
                running.command, running.pid
            ),
            "wait, then check with `multicooker status`; `multicooker clean` removes what a killed run left",
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::next_step;
    use crate::state::Status;

    fn status(state: &str, cells: &[&str]) -> Status {
        let cells: serde_json::Map<String, serde_json::Value> = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                (
                    format!("p{i}"),
                    serde_json::json!({"role": "participant", "flavor": "dummy", "state": cell}),
                )
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "cook": "251122-x", "phase": "cook", "state": state,
            "round": 1, "updated_at": "2026-11-22T00:00:00+00:00", "cells": cells,
        }))
        .unwrap()
    }

    #[test]
    fn after_a_failure_status_suggests_resume() {
        let failed = status("sealed", &["ok", "timed_out"]);
        assert!(next_step(&failed, false, "x").starts_with("multicooker resume x "));
        let interrupted = status("cooking", &["ok", "running"]);
        assert!(next_step(&interrupted, true, "x").starts_with("multicooker resume x "));
        let oom = status("sealed", &["ok", "oom_killed"]);
        assert!(next_step(&oom, false, "x").contains("`multicooker resume x --force`"));
        let fine = status("sealed", &["ok", "ok"]);
        assert_eq!(next_step(&fine, false, "x"), "multicooker judge x");
    }
}
