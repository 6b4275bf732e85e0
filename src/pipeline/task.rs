//! A cook made from a Harbor task (docs/HARBOR.md): the participants work inside the task's
//! environment (`cook::harbor`), then the task's own verifier decides each one's reward on the
//! file system it left (`verify::harbor`). `cook` of such a cook, a night over tasks and
//! `doctor <task>` (the oracle alone) all come here.

use super::Run;
use crate::brief::{Actor, HarborRef};
use crate::cook::harbor::{ORACLE_FLAVOR, TaskRuns};
use crate::error::UserError;
use crate::harbor::Task;
use crate::harbor::users::{Source, Unresolved};
use crate::state::{CookPaths, Role};
use crate::verify::harbor::TaskVerification;

/// What cooking a Harbor task gave.
#[derive(Debug)]
pub struct TaskCooked {
    /// Where the task is in the cook, and its hash.
    pub harbor: HarborRef,
    /// The task, as kept in the cook.
    pub task: Task,
    /// Each participant's run in the task's environment.
    pub runs: TaskRuns,
    /// The task verifier's verdict on each.
    pub verification: TaskVerification,
    /// Ctrl-C cut it short.
    pub cancelled: bool,
}

impl TaskCooked {
    /// Whether some participant got no reward (its verifier failed or did not run).
    #[must_use]
    pub fn unrewarded(&self) -> bool {
        self.verification
            .verdicts
            .iter()
            .any(|v| v.reward.is_none())
    }
}

/// Runs `selected` participants of the Harbor cook `harbor`, then the task's verifier on each.
///
/// # Errors
/// The task was edited in the cook, a participant or a verifier this build cannot run, the
/// task's environment did not build, or the engine failed.
pub async fn cook(
    run: &Run<'_>,
    harbor: &HarborRef,
    selected: &[String],
    (phase, merge): (&'static str, bool),
) -> anyhow::Result<TaskCooked> {
    let paths = run.paths;
    let task = crate::harbor::in_cook(paths.dir(), &harbor.task, &harbor.hash)?;
    let actors: Vec<&Actor> = run
        .brief
        .participants
        .iter()
        .filter(|p| selected.contains(&p.name))
        .collect();
    runnable(paths, &task, &actors)?;
    run.show.info(&format!(
        "cooking `{}` in the environment of the Harbor task `{}` (task hash {}): {} participant(s)",
        paths.name(),
        task.name,
        task.hash(),
        actors.len()
    ));
    let settings = run.settings(selected.len())?;
    let progress = run.progress(phase, Role::Participant, selected);
    let venue = run.venue(&settings.cells, &progress);
    let runs = crate::cook::harbor::run_task(venue, &task, &harbor.task, &actors).await?;
    run.show.leftovers(&runs.leftovers);
    let verifier_user = match &runs.verifier_user {
        Some(Ok(user)) => user.clone(),
        Some(Err(unresolved)) => return Err(unknown_user(&task, unresolved).into()),
        // Not resolved: the environment image did not build (so nothing ran).
        None => {
            let message = runs
                .build
                .as_ref()
                .err()
                .map_or("who runs its test.sh was not resolved in it", |m| {
                    m.as_str()
                });
            return Err(unbuilt(&task, message).into());
        }
    };
    if let Err(message) = &runs.build {
        return Err(unbuilt(&task, message).into());
    }
    let finals: Vec<(String, Option<String>)> = runs
        .runs
        .iter()
        .map(|r| (r.participant.clone(), r.image.clone()))
        .collect();
    record(run, harbor, &runs, merge)?;
    let verification = crate::verify::harbor::verify_task(
        venue,
        (&task, verifier_user.as_ref()),
        &harbor.task,
        &finals,
    )
    .await?;
    run.show.leftovers(&verification.leftovers);
    Ok(TaskCooked {
        harbor: harbor.clone(),
        task,
        runs,
        verification,
        cancelled: settings.cells.cancel.is_cancelled(),
    })
}

/// `RUN_RESULT.json`: how each participant's cell ended and the task that ran, by its hash, as
/// a cook of cells records it (a night folds it; `merge` keeps the entries of participants
/// not run this time).
fn record(
    run: &Run<'_>,
    harbor: &HarborRef,
    runs: &TaskRuns,
    merge: bool,
) -> Result<(), crate::state::StateError> {
    use crate::state::results::{self, Entry, RoundResult};
    let path = run.paths.run_result();
    let current: Vec<Entry> = runs
        .runs
        .iter()
        .map(|r| {
            let o = &r.outcome;
            let actor = run
                .brief
                .participants
                .iter()
                .find(|p| p.name == r.participant);
            let (flavor, model) = (
                actor.map(|a| &a.flavor),
                actor.and_then(|a| a.model.as_ref()),
            );
            Entry::of(&serde_json::json!({
                "name": r.participant, "flavor": flavor, "status": o.state,
                "exit_code": o.exit_code, "duration_s": o.duration_s, "started_at": o.started_at,
                "finished_at": o.finished_at, "timed_out": o.timed_out, "oom_killed": o.oom_killed,
                "error": o.error, "model": model,
                "usage": flavor.and_then(|f| usage(run.paths, &r.participant, f, model)),
            }))
        })
        .collect();
    let mut file = RoundResult {
        finished_at: Some(crate::state::now_iso()),
        round: 1,
        participants: current,
        ..RoundResult::default()
    };
    file.extra
        .insert("harbor_task".into(), serde_json::json!(harbor));
    if merge {
        let order: Vec<&str> = run
            .brief
            .participants
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        let prior: RoundResult = results::read(&path).unwrap_or_default();
        file.participants = results::merge_entries(file.participants, prior.participants, &order);
    }
    results::write(&path, &file).map_err(crate::state::StateError::io("write", path))
}

/// The task's environment did not build: where to look, by how the task names it.
fn unbuilt(task: &Task, message: &str) -> UserError {
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
    UserError::new(
        format!("the task's environment did not build: {message}"),
        fix,
    )
}

/// A participant's usage from its CLI's (redacted) stdout log, as a cook of cells records it
/// (`None` for the dummy, the oracle and a CLI that reported none).
fn usage(
    paths: &CookPaths,
    participant: &str,
    flavor: &str,
    model: Option<&String>,
) -> Option<serde_json::Value> {
    let relative = format!("logs/{participant}/{flavor}.stdout.log");
    let text = crate::fsx::read_capped(&paths.dir().join(&relative), 64 << 20).ok()?;
    let mut usage = crate::flavor::usage_from_output(
        flavor,
        &String::from_utf8_lossy(&text),
        model.map(String::as_str),
    )?;
    if let Some(fields) = usage.as_object_mut() {
        fields.insert("source_path".into(), relative.into());
    }
    Some(usage)
}

/// The user test.sh would run as (`[verifier] user`, else the environment image's configured
/// `USER`) is not a user of the task's environment image (no cell ran).
fn unknown_user(task: &Task, unresolved: &Unresolved) -> UserError {
    let Unresolved {
        user,
        source,
        message,
    } = unresolved;
    let toml = task.dir.join(crate::harbor::TASK_TOML);
    let dockerfile = task.dir.join(crate::harbor::DOCKERFILE);
    let as_root = format!(
        "set `[verifier] user = \"root\"` in `{}` to run test.sh as root",
        toml.display()
    );
    if *source == Source::Verifier {
        return UserError::new(
            format!(
                "`{}`: `[verifier] user = \"{user}\"` cannot run test.sh: {message}",
                toml.display(),
            ),
            format!(
                "name a user the task's environment image has (create it in `{}`, e.g. `RUN useradd -m {user}`), give `uid:gid`, or {as_root}",
                dockerfile.display()
            ),
        );
    }
    let unset = "task.toml sets no `[verifier] user`, so test.sh runs as the environment image's user, as Harbor runs it";
    let named = if user.is_empty() {
        "its configured user".to_owned()
    } else {
        format!("`USER {user}`")
    };
    let (whose, fix) = match &task.config.environment.docker_image {
        Some(image) => (
            format!(
                "`{}`: the image `{image}` (`[environment] docker_image`)",
                toml.display()
            ),
            format!(
                "use an image whose `USER` it has, name a user it has in `[verifier] user`, or {as_root}"
            ),
        ),
        None => (
            format!("`{}`", dockerfile.display()),
            format!(
                "create the user in `{}` before its `USER` line (e.g. `RUN useradd -m {user}`) or name one the image has there, name a user it has in `[verifier] user`, or {as_root}",
                dockerfile.display()
            ),
        ),
    };
    UserError::new(
        format!("{whose}: {named} cannot run test.sh ({unset}): {message}"),
        fix,
    )
}

/// What this build can run of a task: the oracle (with a solution) and the flavors that can
/// work inside the environment (the verifier's user is resolved in the environment image once
/// it is built, before any cell: `cook::harbor`).
///
/// # Errors
/// The first of those that does not hold, with its fix.
pub fn runnable(paths: &CookPaths, task: &Task, actors: &[&Actor]) -> Result<(), UserError> {
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
        ));
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
        ));
    }
    Ok(())
}

/// Whether participants of `flavor` can work inside a task's environment.
fn can_work(flavor: &str) -> bool {
    flavor == ORACLE_FLAVOR
        || flavor == crate::flavor::task_layer::INIT_FLAVOR
        || crate::flavor::task_layer::task_layer(flavor).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actor(name: &str, flavor: &str) -> Actor {
        Actor {
            name: name.to_owned(),
            flavor: flavor.to_owned(),
            timeout_s: None,
            model: None,
            resources: crate::brief::Resources::default(),
            network: None,
            budget: None,
        }
    }

    /// A copy of the suite's fizzbuzz task, without its solution when `solution` is false.
    fn fizzbuzz(dir: &std::path::Path, solution: bool) -> Task {
        let from =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harbor/fizzbuzz");
        let to = dir.join("fizzbuzz");
        for entry in walkdir::WalkDir::new(&from).into_iter().flatten() {
            let rel = entry.path().strip_prefix(&from).unwrap();
            if !solution && rel.starts_with("solution") {
                continue;
            }
            if entry.file_type().is_dir() {
                fs_err::create_dir_all(to.join(rel)).unwrap();
            } else {
                fs_err::copy(entry.path(), to.join(rel)).unwrap();
            }
        }
        crate::harbor::load(&to).unwrap()
    }

    /// What a task cook may run is decided before any cell: the oracle (with a solution), the
    /// dummy and the layered CLIs; another flavor is refused by name with the ones that can.
    #[test]
    fn only_flavors_that_can_work_in_a_task_and_an_oracle_with_a_solution_run() {
        let dir = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(dir.path().join("cook"));
        let task = fizzbuzz(dir.path(), true);
        let (oracle, dummy, agy, grok, triad) = (
            actor("oracle", ORACLE_FLAVOR),
            actor("a", "dummy"),
            actor("g", "agy"),
            actor("k", "grok"),
            actor("t", "triad"),
        );
        assert!(runnable(&paths, &task, &[&oracle, &dummy, &agy, &grok]).is_ok());
        let refused = runnable(&paths, &task, &[&dummy, &triad])
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains(
                "participant `t` (triad) cannot work inside a Harbor task's environment yet: the flavors that can are dummy, claude, codex, agy, grok and the oracle"
            ),
            "{refused}"
        );
        let bare = fizzbuzz(&dir.path().join("bare"), false);
        let refused = runnable(&paths, &bare, &[&oracle]).unwrap_err().to_string();
        assert!(
            refused.contains("so the oracle has nothing to run"),
            "{refused}"
        );
        assert!(runnable(&paths, &bare, &[&dummy]).is_ok());
    }
}
