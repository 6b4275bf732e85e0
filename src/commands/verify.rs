//! `multicooker verify <task>`, and the verification `cook`, `resume` and `refine` run when
//! brief.yaml has `verify:`.

use serde_json::json;

use super::{Engine, cell_session, open_cook, select};
use crate::cli::VerifyArgs;
use crate::error::ExitCode;
use crate::output::Printer;
use crate::pipeline;
use crate::state::CookPaths;
use crate::verify::{Rerun, VerifyOutcome};

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
    let engine = Engine::connect(&session, args.max_parallel).await?;
    let rerun = if args.all { Rerun::All } else { Rerun::Pending };
    let run = engine.run((&paths, brief), &cancel);
    let outcome = pipeline::verify(&run, &selected, rerun).await?;
    print_rows(session.printer, &paths, &outcome);
    session
        .printer
        .json(&json!({"cook": paths.name(), "ran": outcome.ran, "verifications": outcome.results}));
    Ok(exit_code(&outcome))
}

/// One line per participant verified, and where the results are.
fn print_rows(printer: Printer, paths: &CookPaths, outcome: &VerifyOutcome) {
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
}

/// After `cook`, `refine` or `resume`: the rows of the hidden tests that ran, if any.
pub(super) fn print_after_cook(
    printer: Printer,
    paths: &CookPaths,
    verified: Option<&VerifyOutcome>,
) {
    if let Some(outcome) = verified {
        print_rows(printer, paths, outcome);
    }
}

/// After `cook`, `refine` or `resume`: whether hidden tests that brief.yaml asks for could not
/// run for some output (the verifier's image did not build, or its cell did not start); says
/// which and how to retry. The command then exits 1 (issue 25: `cook` exited 0 and a cron user
/// never learned that verification was skipped).
pub(super) fn could_not_run(printer: Printer, verified: Option<&VerifyOutcome>) -> bool {
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
