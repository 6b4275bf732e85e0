//! The printing of `cook` on a cook made from a Harbor task (docs/HARBOR.md), and
//! `doctor <task folder>`: the pipeline's task path (`pipeline::task`) on the oracle alone.

use serde_json::json;

use super::Engine;
use crate::cook::harbor::ORACLE_FLAVOR;
use crate::error::ExitCode;
use crate::output::Printer;
use crate::pipeline::{self, TaskCooked};
use crate::settings::Session;
use crate::state::CookPaths;
use crate::verify::harbor::TaskVerdict;

/// One JSON document and one row per participant (its cell's end and its reward), where the
/// rewards are; the exit code.
pub(super) fn print_task(printer: Printer, paths: &CookPaths, cooked: &TaskCooked) -> ExitCode {
    let verdict_of = |participant: &str| {
        cooked
            .verification
            .verdicts
            .iter()
            .find(|v| v.participant == participant)
    };
    let rows: Vec<serde_json::Value> = cooked
        .runs
        .runs
        .iter()
        .map(|run| {
            json!({
                "name": run.participant,
                "status": run.outcome.state.as_str(),
                "exit_code": run.outcome.exit_code,
                "duration_s": run.outcome.duration_s,
                "error": run.outcome.error,
                "verification": verdict_of(&run.participant),
            })
        })
        .collect();
    printer
        .json(&json!({"cook": paths.name(), "harbor_task": cooked.harbor, "participants": rows}));
    for run in &cooked.runs.runs {
        printer.result_row(&format!(
            "{:<20} {:<16} {:.1}s  {}",
            run.participant,
            run.outcome.state.as_str(),
            run.outcome.duration_s,
            reward_text(verdict_of(&run.participant))
        ));
    }
    if cooked.cancelled {
        return ExitCode::Cancelled;
    }
    printer.info(&format!(
        "rewards in `{}/<participant>/{}`",
        paths.verification().display(),
        crate::verify::harbor::REWARD_FILE
    ));
    if cooked.unrewarded() {
        ExitCode::NothingUsable
    } else {
        ExitCode::Success
    }
}

/// `reward 0.5`, or why there is none.
fn reward_text(verdict: Option<&TaskVerdict>) -> String {
    match verdict {
        Some(v) => v.reward.map_or_else(
            || format!("no reward: {}", v.error.as_deref().unwrap_or("unknown")),
            |r| format!("reward {r}"),
        ),
        None => "not verified".to_owned(),
    }
}

/// `doctor <task folder>`: whether the task's reference solution reaches reward 1 through the
/// task's own verifier, in a cook of its own made in a temporary root (removed after), which
/// is how a task author checks a task.
pub(super) async fn doctor(session: &Session, dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    let scratch = tempfile::Builder::new()
        .prefix("mc-doctor-task-")
        .tempdir()?;
    let name = format!("{}-oracle", jiff::Zoned::now().strftime("%y%m%d"));
    let paths = session.cook_paths(scratch.path().join(&name));
    fs_err::create_dir_all(paths.dir())?;
    let oracle = format!("  - {{name: oracle, flavor: {ORACLE_FLAVOR}}}\n");
    let task = crate::brief::harbor::write_cook(dir, paths.dir(), &name, &oracle)?;
    let brief = crate::brief::load(&paths.brief_yaml())?.brief;
    let actors: Vec<&crate::brief::Actor> = brief.participants.iter().collect();
    pipeline::task::runnable(&paths, &task, &actors)?;
    let engine = Engine::connect(session, None).await?;
    let cancel = crate::settings::cancel_on_signals(session.printer);
    let run = engine.run((&paths, &brief), &cancel);
    let harbor = crate::brief::HarborRef {
        task: crate::harbor::COOK_TASK_DIR.to_owned(),
        hash: task.hash().to_owned(),
    };
    let oracle = ["oracle".to_owned()];
    let cooked = pipeline::task::cook(&run, &harbor, &oracle, ("doctor", false)).await?;
    Ok(print_doctor(session.printer, (dir, &task), &cooked))
}

/// Whether the oracle reached 1, and what to do when it did not.
fn print_doctor(
    printer: Printer,
    (dir, task): (&std::path::Path, &crate::harbor::Task),
    cooked: &TaskCooked,
) -> ExitCode {
    let verdict = cooked.verification.verdicts.first();
    printer.json(&json!({"task": task.name, "task_hash": task.hash(), "oracle": cooked.runs.runs.first().map(|r| r.outcome.state.as_str()), "verification": verdict}));
    match verdict.and_then(|v| v.reward) {
        Some(reward) if (reward - 1.0).abs() < f64::EPSILON => {
            printer.data(&format!(
                "doctor: the oracle reaches reward 1 on `{}` (task hash {})",
                task.name,
                task.hash()
            ));
            ExitCode::Success
        }
        reward => {
            let why = reward.map_or_else(
                || {
                    format!(
                        "no reward: {}",
                        verdict
                            .and_then(|v| v.error.as_deref())
                            .unwrap_or("the verifier did not run")
                    )
                },
                |r| format!("reward {r}"),
            );
            printer.data(&format!(
                "doctor: the oracle does not reach reward 1 on `{}` ({why}): the task is broken; its oracle's logs were in the temporary cook, run `multicooker new <name> --from {} --oracle` and `cook` to keep them",
                task.name,
                dir.display()
            ));
            ExitCode::NothingUsable
        }
    }
}
