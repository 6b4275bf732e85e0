//! A Harbor task's participants (docs/HARBOR.md): each works inside the task's own environment
//! (its `environment/Dockerfile`, built for this cook, with the cell's init on top), in the
//! task profile, in the task's `workdir`. When its program and everything it started have
//! ended, its file system is kept as an image labelled with the cook, which the task's verifier
//! then runs on (`verify::harbor`).
//!
//! The oracle (flavor [`ORACLE_FLAVOR`]) is the built-in participant: no CLI, the task's
//! `solution/solve.sh` at `/solution`, `[solution] env` added to its environment.

use std::sync::Arc;

use crate::brief::Actor;
use crate::cell::files::{HARBOR_SOLUTION, oracle_files};
use crate::cell::names::Names;
use crate::cell::plan::CellPlan;
use crate::cell::run::{CellOutcome, OutcomeByActor};
use crate::cell::{RunError, Venue, images};
use crate::harbor::Task;
use crate::runtime::{LABEL_ACTOR, TeardownFailure};
use crate::state::Role;

pub use crate::brief::ORACLE_FLAVOR;

/// One participant's run in the task's environment.
#[derive(Debug, Clone)]
pub struct TaskRun {
    /// The participant.
    pub participant: String,
    /// How its cell ended.
    pub outcome: CellOutcome,
    /// The image its final file system was kept as (`None` when it could not be kept).
    pub image: Option<String>,
}

/// What running the participants gave.
#[derive(Debug)]
pub struct TaskRuns {
    /// One run per participant, in brief order.
    pub runs: Vec<TaskRun>,
    /// The environment image's build error, if it did not build.
    pub build: Result<(), Arc<String>>,
    /// Objects teardown could not remove.
    pub leftovers: Vec<TeardownFailure>,
}

/// Runs `actors` (oracles: the caller refuses other flavors) inside `task`'s environment; the
/// task is the cook's `folder`.
pub async fn run_task(
    venue: Venue<'_>,
    task: &Task,
    folder: &str,
    actors: &[&Actor],
) -> Result<TaskRuns, RunError> {
    let paths = venue.paths;
    let run_id = venue.settings.run_id.clone();
    let names = Names::for_paths(paths);
    let environment = paths.dir().join(folder).join("environment");
    let env_images =
        images::task_images(paths, &names, &environment, &run_id, &venue.settings.images)?;
    let image = env_images.cook.tag.clone();
    let cast = venue.cast_images(Role::Participant, vec![env_images]);
    let context = cast.context();
    let config = &task.config;
    let plans: Vec<CellPlan> = actors
        .iter()
        .map(|actor| {
            let mut plan = context.base(actor, Role::Participant, &paths.logs(&actor.name));
            plan.in_task(
                image.clone(),
                config.environment.storage_mb,
                config.environment.workdir.as_deref(),
            );
            plan.spec.env.extend(config.solution_env.clone());
            plan.files = oracle_files(paths.harbor_solution(folder));
            plan.spec.program = Some(vec![
                "bash".to_owned(),
                format!("{HARBOR_SOLUTION}/solve.sh"),
            ]);
            let kept = images::final_images(paths, &names, &actor.name, &run_id).base;
            plan.commit = Some((kept.tag, kept.labels.with(LABEL_ACTOR, &actor.name)));
            plan
        })
        .collect();
    let tags: Vec<(String, String)> = plans
        .iter()
        .filter_map(|p| Some((p.actor.clone(), p.commit.as_ref()?.0.clone())))
        .collect();
    let run = cast.run(plans, Arc::new(OutcomeByActor)).await?;
    let runs = run
        .outputs
        .into_iter()
        .map(|(participant, outcome)| {
            let kept = outcome.started_at.is_some()
                && !outcome
                    .error
                    .as_deref()
                    .is_some_and(|e| e.starts_with("keeping its final file system failed"));
            let image = tags
                .iter()
                .find(|(p, _)| *p == participant)
                .filter(|_| kept)
                .map(|(_, tag)| tag.clone());
            TaskRun {
                participant,
                outcome,
                image,
            }
        })
        .collect();
    Ok(TaskRuns {
        runs,
        build: run.build,
        leftovers: run.leftovers,
    })
}
