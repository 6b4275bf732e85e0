//! `cook` on a cook made from a Harbor task (docs/HARBOR.md): the participants work inside the
//! task's environment, then the task's own verifier decides each one's reward.

use std::sync::Arc;

use serde_json::json;

use super::report_leftovers;
use crate::brief::{Actor, Brief, HarborRef};
use crate::cell::{CellSettings, Venue};
use crate::cook::harbor::ORACLE_FLAVOR;
use crate::error::{ExitCode, UserError};
use crate::progress::Progress;
use crate::runtime::SharedRuntime;
use crate::settings::Session;
use crate::state::{CookPaths, Role};

/// Runs `selected` participants of a Harbor cook, then the task's verifier on each.
pub(super) async fn cook(
    session: &Session,
    runtime: &SharedRuntime,
    (paths, brief, harbor): (&CookPaths, &Brief, &HarborRef),
    selected: &[String],
    cells: &CellSettings,
) -> anyhow::Result<ExitCode> {
    let task = crate::harbor::in_cook(paths.dir(), &harbor.task, &harbor.hash)?;
    let actors: Vec<&Actor> = brief
        .participants
        .iter()
        .filter(|p| selected.contains(&p.name))
        .collect();
    runnable(paths, &task, &actors)?;
    session.printer.info(&format!(
        "cooking `{}` in the environment of the Harbor task `{}` (task hash {}): {} participant(s)",
        paths.name(),
        task.name,
        task.hash(),
        actors.len()
    ));
    let overview = super::overview(paths, brief, Role::Participant, selected);
    let progress: Arc<dyn Progress> = Arc::new(session.printer.progress("cook", overview));
    let venue = Venue {
        runtime,
        paths,
        brief,
        settings: cells,
        progress: &progress,
    };
    let (runs, verification) = trial(session, venue, &task, &harbor.task, &actors).await?;
    let printer = session.printer;
    print_runs(printer, (paths, harbor), &runs.runs, &verification.verdicts);
    if cells.cancel.is_cancelled() {
        return Ok(ExitCode::Cancelled);
    }
    printer.info(&format!(
        "rewards in `{}/<participant>/{}`",
        paths.verification().display(),
        crate::verify::harbor::REWARD_FILE
    ));
    if verification.verdicts.iter().any(|v| v.reward.is_none()) {
        return Ok(ExitCode::NothingUsable);
    }
    Ok(ExitCode::Success)
}

/// What this build can run of a task: a verifier as root, the oracle
/// (with a solution), and the flavors that can work inside the environment.
fn runnable(
    paths: &CookPaths,
    task: &crate::harbor::Task,
    actors: &[&Actor],
) -> anyhow::Result<()> {
    if let Some(user) = crate::verify::harbor::non_root_verifier(task) {
        // /tests and /logs/verifier are staged for root (the cell user's group); another user
        // could not read the tests or write the reward, and would get an error, not a run.
        return Err(UserError::new(
            format!(
                "`{}`: `[verifier] user = \"{user}\"` is not run yet (test.sh runs as root only)",
                task.dir.join(crate::harbor::TASK_TOML).display()
            ),
            "run test.sh as root (leave `[verifier] user` out, or set it to \"root\"); test.sh may still start the code under test as another user with `runuser`",
        )
        .into());
    }
    let can_work = |flavor: &str| {
        flavor == ORACLE_FLAVOR
            || flavor == crate::flavor::task_layer::INIT_FLAVOR
            || crate::flavor::task_layer::task_layer(flavor).is_some()
    };
    if let Some(actor) = actors.iter().find(|a| !can_work(&a.flavor)) {
        return Err(UserError::new(
            format!(
                "participant `{}` ({}) cannot work inside a Harbor task's environment yet: the flavors that can are {} and the oracle (flavor `{ORACLE_FLAVOR}`)",
                actor.name,
                actor.flavor,
                crate::flavor::task_layer::task_flavors().join(", ")
            ),
            format!(
                "give `{}` one of those flavors in `{}`, or leave it out of this run (`multicooker cook {} --participants <names>`)",
                actor.name,
                paths.brief_yaml().display(),
                paths.name()
            ),
        )
        .into());
    }
    let oracle = actors.iter().any(|a| a.flavor == ORACLE_FLAVOR);
    if oracle && !task.has_solution() {
        return Err(UserError::new(
            format!(
                "`{}` has no `{}`, so the oracle has nothing to run",
                task.dir.display(),
                crate::harbor::SOLVE_SH
            ),
            "add the task's reference solution, or remove the oracle from brief.yaml",
        )
        .into());
    }
    Ok(())
}

/// One JSON document and one row per participant: its cell's end and its reward.
fn print_runs(
    printer: crate::output::Printer,
    (paths, harbor): (&CookPaths, &HarborRef),
    runs: &[crate::cook::harbor::TaskRun],
    verdicts: &[crate::verify::harbor::TaskVerdict],
) {
    let rows: Vec<serde_json::Value> = runs
        .iter()
        .map(|run| {
            let verdict = verdicts.iter().find(|v| v.participant == run.participant);
            json!({
                "name": run.participant,
                "status": run.outcome.state.as_str(),
                "exit_code": run.outcome.exit_code,
                "duration_s": run.outcome.duration_s,
                "error": run.outcome.error,
                "verification": verdict,
            })
        })
        .collect();
    printer.json(&json!({"cook": paths.name(), "harbor_task": harbor, "participants": rows}));
    for run in runs {
        let verdict = verdicts.iter().find(|v| v.participant == run.participant);
        let reward = match verdict {
            Some(v) => v.reward.map_or_else(
                || format!("no reward: {}", v.error.as_deref().unwrap_or("unknown")),
                |r| format!("reward {r}"),
            ),
            None => "not verified".to_owned(),
        };
        printer.result_row(&format!(
            "{:<20} {:<16} {:.1}s  {reward}",
            run.participant,
            run.outcome.state.as_str(),
            run.outcome.duration_s
        ));
    }
}

/// The participants in the task's environment, then the task's verifier on each one's final
/// file system.
async fn trial(
    session: &Session,
    venue: Venue<'_>,
    task: &crate::harbor::Task,
    folder: &str,
    actors: &[&Actor],
) -> anyhow::Result<(
    crate::cook::harbor::TaskRuns,
    crate::verify::harbor::TaskVerification,
)> {
    let runs = crate::cook::harbor::run_task(venue, task, folder, actors).await?;
    report_leftovers(session, &runs.leftovers);
    if let Err(message) = &runs.build {
        let fix = match &task.config.environment.docker_image {
            Some(image) => format!(
                "`{}` names the prebuilt image `{image}` (`environment.docker_image`): it must exist on this engine or be reachable from it",
                task.dir.join(crate::harbor::TASK_TOML).display()
            ),
            None => format!(
                "fix `{}` (its `FROM` image must exist on this engine or be reachable)",
                task.dir.join(crate::harbor::DOCKERFILE).display()
            ),
        };
        return Err(UserError::new(
            format!("the task's environment did not build: {message}"),
            fix,
        )
        .into());
    }
    let finals: Vec<(String, Option<String>)> = runs
        .runs
        .iter()
        .map(|r| (r.participant.clone(), r.image.clone()))
        .collect();
    let verification = crate::verify::harbor::verify_task(venue, task, folder, &finals).await?;
    report_leftovers(session, &verification.leftovers);
    Ok((runs, verification))
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
    runnable(
        &paths,
        &task,
        &brief.participants.iter().collect::<Vec<_>>(),
    )?;
    let (runtime, engine) = super::connect(session).await?;
    let cancel = crate::settings::cancel_on_signals(session.printer);
    let settings = crate::settings::run_settings(session, &brief, &engine, None, 1, cancel)?;
    let overview = super::overview(&paths, &brief, Role::Participant, &["oracle".to_owned()]);
    let progress: Arc<dyn Progress> = Arc::new(session.printer.progress("doctor", overview));
    let venue = Venue {
        runtime: &runtime,
        paths: &paths,
        brief: &brief,
        settings: &settings.cells,
        progress: &progress,
    };
    let actors: Vec<&Actor> = brief.participants.iter().collect();
    let folder = crate::harbor::COOK_TASK_DIR;
    let (runs, verification) = trial(session, venue, &task, folder, &actors).await?;
    let verdict = verification.verdicts.first();
    let printer = session.printer;
    printer.json(&json!({"task": task.name, "task_hash": task.hash(), "oracle": runs.runs.first().map(|r| r.outcome.state.as_str()), "verification": verdict}));
    match verdict.and_then(|v| v.reward) {
        Some(reward) if (reward - 1.0).abs() < f64::EPSILON => {
            printer.data(&format!(
                "doctor: the oracle reaches reward 1 on `{}` (task hash {})",
                task.name,
                task.hash()
            ));
            Ok(ExitCode::Success)
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
            Ok(ExitCode::NothingUsable)
        }
    }
}
