//! `multicooker verify <task>`, and the verification `cook`, `resume` and `refine` run when
//! brief.yaml has `verify:`.

use std::sync::Arc;

use serde_json::json;

use super::{cell_session, connect, open_cook, report_leftovers, select};
use crate::brief::Brief;
use crate::cell::CellSettings;
use crate::cli::VerifyArgs;
use crate::error::ExitCode;
use crate::runtime::SharedRuntime;
use crate::settings::{Session, run_settings};
use crate::state::CookPaths;
use crate::verify::{self, Rerun, VerifyOutcome};

pub(super) async fn run(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let brief = &loaded.brief;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "verify")?;
    let names = brief.participants.iter().map(|p| p.name.as_str());
    let selected = select(
        "participant",
        &names,
        &args.participants,
        &paths.brief_yaml(),
    )?;
    let (runtime, engine) = connect(&session).await?;
    let settings = run_settings(
        &session,
        brief,
        &engine,
        args.max_parallel,
        selected.len(),
        cancel,
    )?;
    let rerun = if args.all { Rerun::All } else { Rerun::Pending };
    let outcome = run_verify(
        &session,
        &runtime,
        (&paths, brief),
        (&selected, rerun),
        &settings.cells,
    )
    .await?;
    session
        .printer
        .json(&json!({"cook": paths.name(), "ran": outcome.ran, "verifications": outcome.results}));
    Ok(exit_code(&outcome))
}

/// Runs the verifiers and prints one line per participant (the caller prints the JSON).
pub(super) async fn run_verify(
    session: &Session,
    runtime: &SharedRuntime,
    (paths, brief): (&CookPaths, &Brief),
    (selected, rerun): (&[String], Rerun),
    settings: &CellSettings,
) -> anyhow::Result<VerifyOutcome> {
    session.printer.info(&format!(
        "verifying `{}`: {} output(s) against the hidden tests",
        paths.name(),
        selected.len()
    ));
    let progress: Arc<dyn crate::progress::Progress> = Arc::new(session.printer.progress(
        "verify",
        super::overview(paths, brief, crate::state::Role::Verifier, selected),
    ));
    let venue = crate::cell::Venue {
        runtime,
        paths,
        brief,
        settings,
        progress: &progress,
    };
    let outcome = verify::verify(venue, selected, rerun).await?;
    report_leftovers(session, &outcome.leftovers);
    let printer = session.printer;
    for result in &outcome.results {
        let t = result.totals;
        let kept = if outcome.ran.contains(&result.participant) {
            ""
        } else {
            " (kept)"
        };
        printer.data(&format!(
            "{:<20} {:<13} passed={} failed={} errors={} skipped={} {:.1}s{kept}",
            result.participant,
            result.outcome.as_str(),
            t.passed,
            t.failed,
            t.errors,
            t.skipped,
            result.duration_s
        ));
    }
    if !outcome.cancelled {
        printer.info(&format!("results in `{}`", paths.verification().display()));
    }
    Ok(outcome)
}

/// After `cook` (or `resume`, `refine`): verify the participants that just ran, when the brief
/// asks for it and the cook was not cancelled. A verification that cannot start is reported and leaves the cook as it is.
pub(super) async fn after_cook(
    session: &Session,
    runtime: &SharedRuntime,
    (paths, brief, cooked): (&CookPaths, &Brief, crate::state::CookState),
    selected: &[String],
    settings: &CellSettings,
) -> anyhow::Result<Option<VerifyOutcome>> {
    if brief.verify.is_none()
        || settings.cancel.is_cancelled()
        || cooked == crate::state::CookState::Cancelled
    {
        return Ok(None);
    }
    run_verify(
        session,
        runtime,
        (paths, brief),
        (selected, Rerun::Pending),
        settings,
    )
    .await
    .map(Some)
}

/// After `cook`, `refine` or `resume`: whether hidden tests that brief.yaml asks for could not
/// run for some output (the verifier's image did not build, or its cell did not start); says
/// which and how to retry. The command then exits 1 (issue 25: `cook` exited 0 and a cron user
/// never learned that verification was skipped).
pub(super) fn could_not_run(
    printer: crate::output::Printer,
    verified: Option<&VerifyOutcome>,
) -> bool {
    use crate::verify::Outcome;
    let failed: Vec<&crate::verify::Verification> = verified
        .map(|v| {
            v.results
                .iter()
                .filter(|r| matches!(r.outcome, Outcome::BuildFailed | Outcome::StartFailed))
                .collect()
        })
        .unwrap_or_default();
    for result in &failed {
        printer.warn(&format!(
            "the hidden tests could not run for `{}` ({}): {}",
            result.participant,
            result.outcome.as_str(),
            result.reason.as_deref().unwrap_or("no reason recorded")
        ));
    }
    if let Some(first) = failed.first() {
        printer.info(&format!(
            "its output is sealed but unverified; fix the verifier, then `multicooker verify` retries (results in `verification/{}/`)",
            first.participant
        ));
    }
    !failed.is_empty()
}

/// 130 after Ctrl-C; 1 when some verification could not run (unscored); else 0.
pub(super) fn exit_code(outcome: &VerifyOutcome) -> ExitCode {
    if outcome.cancelled {
        ExitCode::Cancelled
    } else if outcome.results.iter().any(|r| !r.outcome.scored()) {
        ExitCode::NothingUsable
    } else {
        ExitCode::Success
    }
}
