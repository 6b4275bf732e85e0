//! A Harbor task's participants (docs/HARBOR.md): each works inside the task's own environment
//! (its `environment/Dockerfile`, built for this cook, with the cell's init on top), in the
//! task profile, in the task's `workdir`. When its program and everything it started have
//! ended, its file system is kept as an image labelled with the cook, which the task's verifier
//! then runs on (`verify::harbor`).
//!
//! The oracle (flavor [`ORACLE_FLAVOR`]) is the built-in participant: no CLI, the task's
//! `solution/solve.sh` at `/solution`, `[solution] env` added to its environment. A CLI
//! flavor works layered on the environment (`flavor::task_layer`), with `instruction.md` as
//! its prompt, its own login and egress as in any cook; the dummy is the init itself.
//!
//! Who test.sh runs as (`[verifier] user`, else the environment image's configured `USER`, as
//! Harbor runs it) is resolved in the environment image once it is built, before any
//! participant's cell is created ([`crate::harbor::users`]).

use std::sync::Arc;

use futures_util::FutureExt;

use crate::brief::Actor;
use crate::cell::files::{
    HARBOR_PROMPT_AREA, HARBOR_SOLUTION, oracle_files, task_participant_files,
};
use crate::cell::images::FlavorImages;
use crate::cell::names::Names;
use crate::cell::phase::Gate;
use crate::cell::plan::CellPlan;
use crate::cell::role::Cast;
use crate::cell::run::{CellOutcome, OutcomeByActor};
use crate::cell::{RunError, Venue, images};
use crate::flavor::task_layer::{INIT_FLAVOR, task_layer};
use crate::harbor::Task;
use crate::harbor::users::{self, Source, TaskUser, Unresolved, Wanted};
use crate::runtime::{
    LABEL_ACTOR, LABEL_FLAVOR, LABEL_ROOT, LABEL_RUN, Labels, ObjectRef, TeardownFailure,
};
use crate::state::Role;

pub use crate::brief::ORACLE_FLAVOR;

/// Where a participant's workdir is collected as the image had it (`work/<p>/<this>`).
pub const WORKDIR_BEFORE: &str = "workdir-before";
/// Where a participant's workdir is collected as it left it (`work/<p>/<this>`).
pub const WORKDIR_AFTER: &str = "workdir-after";

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

/// The images a task's CLI participants run: each layered flavor's on the environment, and a
/// function from a flavor to the tag its cells name (the environment's own for the oracle and
/// the dummy).
fn layered_images(
    cast: &Cast<'_>,
    (paths, names): (&crate::state::CookPaths, &Names),
    environment: &FlavorImages,
    clis: &[&Actor],
    run_id: &str,
) -> Result<(Vec<FlavorImages>, impl Fn(&str) -> String + use<>), RunError> {
    let mut layered = Vec::new();
    let mut tags: Vec<(String, String)> = Vec::new();
    for actor in clis {
        if tags.iter().any(|(f, _)| *f == actor.flavor) {
            continue;
        }
        let Some(layer) = task_layer(&actor.flavor) else {
            continue;
        };
        let Some(flavor) = cast
            .images()
            .iter()
            .find(|i| i.base.labels.get(LABEL_FLAVOR) == Some(actor.flavor.as_str()))
        else {
            continue;
        };
        let images = images::task_cli_images(paths, names, (environment, flavor), layer, run_id)?;
        tags.push((actor.flavor.clone(), images.cook.tag.clone()));
        layered.push(images);
    }
    let own = environment.cook.tag.clone();
    let image_of = move |flavor: &str| {
        tags.iter()
            .find(|(f, _)| f == flavor)
            .map_or_else(|| own.clone(), |(_, tag)| tag.clone())
    };
    Ok((layered, image_of))
}

/// Makes `plan` a cell of the task: its image, the task profile and workdir, and what it runs
/// (the oracle: the solution; the dummy: the init's own dummy; a CLI: the flavor's entrypoint,
/// with the instruction as its prompt and the task's workdir as its own).
fn task_plan(
    plan: &mut CellPlan,
    (task, folder, paths): (&Task, &str, &crate::state::CookPaths),
    actor: &Actor,
    image: String,
) {
    let config = &task.config;
    let workdir = config.environment.workdir.as_deref();
    plan.in_task(image, config.environment.storage_mb, workdir);
    let start = task.start_dir().filter(|d| d != "/");
    let collected = start.as_deref().map(|dir| {
        (
            dir,
            paths.work(&actor.name).join(WORKDIR_BEFORE),
            paths.work(&actor.name).join(WORKDIR_AFTER),
        )
    });
    if actor.flavor == ORACLE_FLAVOR {
        plan.spec.env.extend(config.solution_env.clone());
        plan.files = oracle_files(paths.harbor_solution(folder), collected);
        plan.spec.program = Some(vec![
            "bash".to_owned(),
            format!("{HARBOR_SOLUTION}/solve.sh"),
        ]);
        return;
    }
    plan.files = task_participant_files(Some(paths.share_brief_md()), collected);
    plan.spec.env.extend([
        (
            "MULTICOOKER_PROMPT".to_owned(),
            format!("{HARBOR_PROMPT_AREA}/PROMPT.txt"),
        ),
        (
            "MULTICOOKER_WORKDIR".to_owned(),
            workdir.unwrap_or(".").to_owned(),
        ),
    ]);
    let init = crate::runtime::INIT_PATH.to_owned();
    plan.spec.program = Some(if actor.flavor == INIT_FLAVOR {
        vec![init, "dummy".to_owned()]
    } else {
        vec![init, "run".to_owned(), actor.flavor.clone()]
    });
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
    /// Who test.sh runs as (`[verifier] user`, else the environment image's configured user),
    /// resolved in the environment image before any cell started: `None` when it was not (the
    /// image did not build), `Some(Ok(None))` for root, an error when the image has no such
    /// user (then no cell started).
    pub verifier_user: Option<Result<Option<TaskUser>, Unresolved>>,
}

/// What the verifier user's resolution left for the caller.
type Resolved = Arc<std::sync::Mutex<Option<Result<Option<TaskUser>, Unresolved>>>>;

/// The most an environment image's `/etc/passwd` or `/etc/group` may hold.
const USERS_CAP: u64 = 4 << 20;

/// Who test.sh runs as, in the environment image `image`: `wanted` (a named user, or the image's
/// configured one when `[verifier] user` is unset, read through the engine), resolved in a cell
/// made from the image and never started, which gives its `/etc/passwd` and `/etc/group`
/// ([`users`]: never a participant's final file system, which it wrote). Root needs no cell.
async fn resolve_in_image(
    runtime: &crate::runtime::SharedRuntime,
    ledger: &crate::runtime::Ledger,
    (wanted, image): (Option<String>, &str),
    (cell, labels): (&str, &Labels),
) -> Result<Option<TaskUser>, Unresolved> {
    let (user, source) = if let Some(user) = wanted {
        (user, Source::Verifier)
    } else {
        let user = runtime.image_user(image).await.map_err(|e| Unresolved {
            user: String::new(),
            source: Source::Image,
            message: format!("cannot read the environment image's configured user: {e}"),
        })?;
        match users::needs_image(Some(&user)) {
            Some(named) => (named.to_owned(), Source::Image),
            None => return Ok(None),
        }
    };
    let unresolved = |message: String| Unresolved {
        user: user.clone(),
        source,
        message,
    };
    ledger.record(ObjectRef::cell(cell));
    let files = [users::PASSWD, users::GROUP];
    let read = runtime
        .read_image_files(image, (cell, labels), &files, USERS_CAP)
        .await
        .map_err(|e| unresolved(format!("cannot read the environment image's users: {e}")))?;
    let text = |i: usize| {
        read.get(i)
            .and_then(Option::as_deref)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    users::resolve(&user, &text(0), &text(1)).map_err(unresolved)
}

/// Resolves who test.sh runs as ([`resolve_in_image`]) once the environment image `image` is
/// built and before any participant's cell is created. A user the image does not have stops
/// every cell.
fn verifier_user_gate(
    (wanted, image): (Option<String>, String),
    (cell, labels): (String, Labels),
    resolved: Resolved,
) -> Gate {
    Box::new(move |runtime, ledger| {
        async move {
            let result =
                resolve_in_image(&runtime, &ledger, (wanted, &image), (&cell, &labels)).await;
            let gate = match &result {
                Ok(_) => Ok(()),
                Err(e) if e.source == Source::Image => Err(format!(
                    "the environment image's `USER {}`: {}",
                    e.user, e.message
                )),
                Err(e) => Err(format!("`[verifier] user = \"{}\"`: {}", e.user, e.message)),
            };
            *resolved
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
            gate
        }
        .boxed()
    })
}

/// `cast`, gated on who `task`'s test.sh runs as in its environment image `environment`
/// ([`verifier_user_gate`]): its `[verifier] user`, else the image's configured user; only
/// `[verifier] user = "root"` (or `0`) needs no look at the image.
fn with_verifier_user<'a>(
    cast: Cast<'a>,
    task: &Task,
    (paths, names, run_id): (&crate::state::CookPaths, &Names, &str),
    environment: &FlavorImages,
) -> (Cast<'a>, Resolved) {
    let resolved: Resolved = Arc::default();
    let wanted = match users::wanted(task.config.verifier.user.as_deref()) {
        Wanted::Root => {
            *resolved
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Ok(None));
            return (cast, resolved);
        }
        Wanted::Named(user) => Some(user.to_owned()),
        Wanted::ImageUser => None,
    };
    // Not a name a participant can have (`.`), swept with the participants' cells.
    let cell = names.cell(Role::Participant, "_environment.users");
    let labels = Labels::new(paths.name(), Role::Participant.as_str())
        .with(LABEL_ROOT, &paths.root_id())
        .with(LABEL_RUN, run_id);
    let gate = verifier_user_gate(
        (wanted, environment.base.tag.clone()),
        (cell, labels),
        resolved.clone(),
    );
    (cast.gate(gate), resolved)
}

/// Runs `actors` inside `task`'s environment; the task is the cook's `folder`. Oracles run
/// the task's solution; a CLI flavor runs layered on the environment (the dummy is the init
/// itself); the caller refuses flavors that cannot ([`task_layer`]).
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
    let env_images = images::task_images(
        paths,
        &names,
        (
            &environment,
            task.config.environment.docker_image.as_deref(),
        ),
        &run_id,
        &venue.settings.images,
    )?;
    let clis: Vec<&Actor> = actors
        .iter()
        .filter(|a| a.flavor != ORACLE_FLAVOR)
        .copied()
        .collect();
    let cast = if clis.is_empty() {
        venue.cast_images(Role::Participant, Vec::new())
    } else {
        venue.cast(Role::Participant, &clis)?
    };
    let (layered, image_of) = layered_images(&cast, (paths, &names), &env_images, &clis, &run_id)?;
    let (cast, resolved) = with_verifier_user(cast, task, (paths, &names, &run_id), &env_images);
    let cast = cast.with_images(std::iter::once(env_images).chain(layered).collect());
    let context = cast.context();
    let plans: Vec<CellPlan> = actors
        .iter()
        .map(|actor| {
            let mut plan = context.base(actor, Role::Participant, &paths.logs(&actor.name));
            let image = image_of(&actor.flavor);
            task_plan(&mut plan, (task, folder, paths), actor, image);
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
    let runs: Vec<TaskRun> = run
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
    if let Some(workdir) = task.start_dir().filter(|d| d != "/") {
        for run in runs.iter().filter(|r| r.outcome.started_at.is_some()) {
            let flavor = actors
                .iter()
                .find(|a| a.name == run.participant)
                .map_or("", |a| a.flavor.as_str());
            seal_changes(paths, (&workdir, flavor), run).map_err(|source| RunError::Prepare {
                path: paths.sealed(&run.participant),
                source,
            })?;
        }
    }
    let verifier_user = resolved
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    Ok(TaskRuns {
        runs,
        build: run.build,
        leftovers: run.leftovers,
        verifier_user,
    })
}

/// The file of a sealed Harbor output that lists what the participant changed.
pub const CHANGES_MD: &str = "CHANGES.md";
/// The file of a sealed Harbor output that holds the bounded unified diff.
pub const CHANGES_DIFF: &str = "changes.diff";
/// The file of a sealed Harbor output that holds what the agent said when it stopped (a CLI
/// that said nothing, like the dummy or the oracle, has none).
pub const FINAL_MESSAGE_MD: &str = "FINAL_MESSAGE.md";

/// `FINAL_MESSAGE.md`: the message under a heading that says what it is and is not.
fn final_message_md(said: &str) -> String {
    format!(
        "# The participant's final message\n\nWhat its CLI reported when the run ended, as it \
         said it: a claim, not evidence. What it changed is in {CHANGES_MD} and {CHANGES_DIFF}.\n\n\
         ---\n\n{said}\n"
    )
}

/// What the jury sees of a participant of a task: `CHANGES.md` and `changes.diff` (what it
/// changed in `workdir`, from the host's two collected copies) in its `out/`, sealed as any
/// participant's output is.
fn seal_changes(
    paths: &crate::state::CookPaths,
    (workdir, flavor): (&str, &str),
    run: &TaskRun,
) -> std::io::Result<()> {
    let work = paths.work(&run.participant);
    let changes =
        crate::harbor::changes::between(&work.join(WORKDIR_BEFORE), &work.join(WORKDIR_AFTER));
    let out = paths.out(&run.participant);
    crate::fsx::remove_tree(&out)?;
    fs_err::create_dir_all(&out)?;
    fs_err::write(
        out.join(CHANGES_MD),
        crate::harbor::changes::changes_md(&changes, workdir, CHANGES_DIFF),
    )?;
    fs_err::write(out.join(CHANGES_DIFF), &changes.diff)?;
    // What the agent said when it stopped, from its CLI's (redacted) stdout log.
    let log = paths
        .logs(&run.participant)
        .join(format!("{flavor}.stdout.log"));
    let said = crate::fsx::read_capped(&log, 64 << 20)
        .ok()
        .and_then(|bytes| {
            crate::flavor::final_message::final_message(flavor, &String::from_utf8_lossy(&bytes))
        });
    if let Some(said) = said {
        fs_err::write(out.join(FINAL_MESSAGE_MD), final_message_md(&said))?;
    }
    super::seal::seal(
        paths,
        &run.participant,
        run.outcome.state.as_str(),
        1,
        super::seal::DEFAULT_SEAL_MAX_BYTES,
    )
    .map(drop)
}
