//! `multicooker judge <task>`.

use serde_json::json;

use super::{Engine, cell_session, open_cook, select};
use crate::brief::Brief;
use crate::cli::JudgeArgs;
use crate::error::{ExitCode, UserError};
use crate::judge;
use crate::output::Printer;
use crate::pipeline::{self, Judging};
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
    let sealed = ready(&paths, brief)?;
    let names = brief.judges.iter().map(|j| j.name.as_str());
    let selected = select("judge", &names, &args.judges, &paths.brief_yaml())?;
    let judges: Vec<_> = brief
        .judges
        .iter()
        .filter(|j| selected.contains(&j.name))
        .cloned()
        .collect();
    let engine = Engine::connect(&session, args.max_parallel).await?;
    let seed = args.seed.unwrap_or_else(judge::labels::random_seed);
    session.printer.info(&format!(
        "judging `{}`: {} judge(s) over {sealed} sealed output(s), policy {}",
        paths.name(),
        judges.len(),
        brief.judging.policy
    ));
    let judging = Judging {
        seed,
        resume: judge::Resume::Fresh,
        again,
    };
    let run = engine.run((&paths, brief), &cancel);
    let outcome = pipeline::judge(&run, &judges, judging).await?;
    Ok(print_judged(session.printer, &paths, &outcome))
}

/// What judging needs: judges, `BRIEF.md` and `JUDGE_BRIEF.md`, and some sealed output (how
/// many).
fn ready(paths: &CookPaths, brief: &Brief) -> Result<usize, UserError> {
    if brief.judges.is_empty() {
        return Err(UserError::new(
            format!("`{}` lists no judges", paths.brief_yaml().display()),
            "add a `judges:` list, e.g. `judges: [{name: judge, flavor: dummy}]`",
        ));
    }
    for required in [paths.brief_md(), paths.judge_brief_md()] {
        if !required.is_file() {
            return Err(UserError::new(
                format!("`{}` is missing", required.display()),
                "judges need BRIEF.md (the task) and JUDGE_BRIEF.md (how to score)",
            ));
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
        ));
    }
    Ok(sealed)
}

/// The judges' JSON and rows, and what to do next; the exit code.
fn print_judged(printer: Printer, paths: &CookPaths, outcome: &judge::JudgeOutcome) -> ExitCode {
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
        return ExitCode::Cancelled;
    }
    if outcome.results.iter().any(|r| r.ok) {
        printer.info(&format!("next: multicooker report {}", paths.name()));
        ExitCode::Success
    } else {
        printer.info("no judge produced usable scores");
        ExitCode::NothingUsable
    }
}
