//! `multicooker judge <task>`.

use std::sync::Arc;

use serde_json::json;

use super::{cell_session, connect, open_cook, report_leftovers, select};
use crate::brief::{Actor, Brief};
use crate::cli::JudgeArgs;
use crate::cook::RunSettings;
use crate::error::{ExitCode, UserError};
use crate::judge;
use crate::progress::Progress;
use crate::runtime::SharedRuntime;
use crate::settings::{Session, run_settings};
use crate::state::{CookPaths, CookState};

pub(super) async fn run(args: &JudgeArgs) -> anyhow::Result<ExitCode> {
    judge_or_rejudge(args, false).await
}

/// `multicooker rejudge <task>`: every earlier judging (each judge's outputs, the judge run's
/// result, the report's files) moves to `judging/_previous/<stamp>/`, then the judges run again
/// with a fresh mapping, e.g. after editing `JUDGE_BRIEF.md`.
pub(super) async fn rejudge(args: &JudgeArgs) -> anyhow::Result<ExitCode> {
    judge_or_rejudge(args, true).await
}

async fn judge_or_rejudge(args: &JudgeArgs, again: bool) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let _lock =
        crate::state::RunLock::acquire(paths.dir(), if again { "rejudge" } else { "judge" })?;
    let brief = &loaded.brief;
    if brief.judges.is_empty() {
        return Err(UserError::new(
            format!("`{}` lists no judges", paths.brief_yaml().display()),
            "add a `judges:` list, e.g. `judges: [{name: judge, flavor: dummy}]`",
        )
        .into());
    }
    for required in [paths.brief_md(), paths.judge_brief_md()] {
        if !required.is_file() {
            return Err(UserError::new(
                format!("`{}` is missing", required.display()),
                "judges need BRIEF.md (the task) and JUDGE_BRIEF.md (how to score)",
            )
            .into());
        }
    }
    let sealed = brief
        .participants
        .iter()
        .filter(|p| paths.sealed(&p.name).join("out").is_dir())
        .count();
    if sealed == 0 {
        return Err(UserError::new(
            format!("no sealed outputs in `{}`", paths.inbox().display()),
            format!("run `multicooker cook {}` first", paths.name()),
        )
        .into());
    }
    let names = brief.judges.iter().map(|j| j.name.as_str());
    let selected = select("judge", &names, &args.judges, &paths.brief_yaml())?;
    let judges: Vec<_> = brief
        .judges
        .iter()
        .filter(|j| selected.contains(&j.name))
        .cloned()
        .collect();
    let (runtime, engine) = connect(&session).await?;
    let settings = run_settings(
        &session,
        brief,
        &engine,
        args.max_parallel,
        judges.len(),
        cancel,
    )?;
    let seed = args.seed.unwrap_or_else(judge::labels::random_seed);
    session.printer.info(&format!(
        "judging `{}`: {} judge(s) over {sealed} sealed output(s), policy {}",
        paths.name(),
        judges.len(),
        brief.judging.policy
    ));
    let names: Vec<String> = judges.iter().map(|j| j.name.clone()).collect();
    let overview = super::overview(&paths, brief, crate::state::Role::Judge, &names);
    let progress = Arc::new(session.printer.progress("judge", overview));
    let outcome = judge_keeping(
        &session,
        (&runtime, &paths, brief),
        &judges,
        seed,
        (&settings, progress),
        again,
    )
    .await?;
    report_leftovers(&session, &outcome.leftovers);

    let printer = session.printer;
    printer.json(&json!({"cook": paths.name(), "state": outcome.state, "judges": outcome.results}));
    for result in &outcome.results {
        let detail = result.count.map_or_else(
            || result.reason.clone().unwrap_or_default(),
            |n| format!("{n} scored"),
        );
        printer.result_row(&format!(
            "{:<20} {:<16} {detail}",
            result.name, result.status
        ));
    }
    if outcome.state == CookState::Cancelled {
        return Ok(ExitCode::Cancelled);
    }
    if outcome.results.iter().any(|r| r.ok) {
        printer.info(&format!("next: multicooker report {}", paths.name()));
        Ok(ExitCode::Success)
    } else {
        printer.info("no judge produced usable scores");
        Ok(ExitCode::NothingUsable)
    }
}

/// Runs the judges; for `rejudge`, moves every earlier judging aside first and puts it back when
/// the new judging fails before its judges have run (issue 25).
async fn judge_keeping(
    session: &Session,
    (runtime, paths, brief): (&SharedRuntime, &CookPaths, &Brief),
    judges: &[Actor],
    seed: u64,
    (settings, progress): (&RunSettings, Arc<dyn Progress>),
    again: bool,
) -> anyhow::Result<judge::JudgeOutcome> {
    let mut moved = judge::inbox::Moved::default();
    if again {
        let stamp = crate::state::now_iso().replace(':', "-");
        if let Some(kept) = judge::inbox::archive_judging(paths, &stamp, &mut moved)? {
            session
                .printer
                .info(&format!("earlier judging kept in `{}`", kept.display()));
        }
    }
    let venue = crate::cell::Venue {
        runtime,
        paths,
        brief,
        settings: &settings.cells,
        progress: &progress,
    };
    judge::judge(venue, judges, seed, judge::Resume::Fresh)
        .await
        .map_err(|cause| moved.restore(cause).into())
}
