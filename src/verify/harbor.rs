//! A Harbor task's verifier as a role (docs/HARBOR.md §4): one fresh cell per participant, from
//! the image its final file system was kept as, so nothing it left running survives. The
//! task's `tests/` are staged at `/tests` (never shown to a participant), `/logs/verifier` is a
//! fresh area whatever the participant left at that path (a planted reward is not seen), and
//! `bash /tests/test.sh` runs from the task's `workdir` under its timeout: as root, or as the
//! task's `[verifier] user` (else its environment image's own `USER`) resolved in its
//! environment image (never in the participant's file system), with no capability, `/tests`
//! readable by its group and `/logs/verifier` its own.
//! The reward is `reward.txt` (a number) or `reward.json` (`reward` plus named components);
//! no reward file, a malformed one or a timeout is an error: never 0, never a pass.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::brief::{Actor, Brief};
use crate::cell::files::{HARBOR_TESTS, HARBOR_VERIFIER_LOGS, HarborVerifierFiles};
use crate::cell::names::Names;
use crate::cell::plan::{CellPlan, CellUser};
use crate::cell::run::{CellOutcome, OutcomeByActor};
use crate::cell::{RunError, Venue, images};
use crate::harbor::Task;
use crate::harbor::users::TaskUser;
use crate::runtime::TeardownFailure;
use crate::state::{CellState, CookPaths, Role};

/// Cap on what test.sh may leave in `/logs/verifier`.
pub const LOGS_CAP: u64 = 16 << 20;
/// The most a reward file may hold.
const REWARD_BYTES: u64 = 64 << 10;

pub use crate::state::verification::{REWARD_FILE, TaskVerdict};

/// What verifying gave.
#[derive(Debug)]
pub struct TaskVerification {
    /// One verdict per participant verified, in the order given.
    pub verdicts: Vec<TaskVerdict>,
    /// Objects teardown could not remove.
    pub leftovers: Vec<TeardownFailure>,
}

/// Runs `task`'s verifier (the cook's `folder`) on each `(participant, kept image)`, as root
/// or as `user` (its `[verifier] user`, else the environment image's `USER`, resolved in the
/// task's environment image); a participant whose file system was not kept gets its verdict
/// (an error) without a cell.
pub async fn verify_task(
    venue: Venue<'_>,
    (task, user): (&Task, Option<&TaskUser>),
    folder: &str,
    finals: &[(String, Option<String>)],
) -> Result<TaskVerification, RunError> {
    let paths = venue.paths;
    let run_id = venue.settings.run_id.clone();
    let names = Names::for_paths(paths);
    let mut verdicts = Vec::new();
    let mut to_run = Vec::new();
    for (participant, image) in finals {
        let dir = paths.verification_of(participant);
        crate::fsx::remove_tree(&dir).map_err(prepare(&dir))?;
        fs_err::create_dir_all(&dir).map_err(prepare(&dir))?;
        match image {
            Some(_) => to_run.push(participant.clone()),
            None => verdicts.push(verdict(
                task,
                participant,
                Err(
                    "its final file system was not kept, so the task's verifier did not run".into(),
                ),
            )),
        }
    }
    let images: Vec<_> = to_run
        .iter()
        .map(|p| images::final_images(paths, &names, p, &run_id))
        .collect();
    let tags: Vec<String> = images.iter().map(|i| i.cook.tag.clone()).collect();
    let cast = venue.cast_images(Role::Verifier, images);
    let context = cast.context();
    let plans: Vec<CellPlan> = to_run
        .iter()
        .zip(tags)
        .map(|(participant, image)| {
            let actor = verifier_actor(venue.brief, task, participant);
            let mut plan =
                context.base(&actor, Role::Verifier, &paths.verification_of(participant));
            let environment = &task.config.environment;
            plan.in_task(
                image,
                environment.storage_mb,
                environment.workdir.as_deref(),
            );
            if let Some(user) = user {
                let identity = CellUser {
                    uid: user.uid,
                    gid: user.gid,
                };
                plan.in_task_as(identity, user.home.as_deref());
            }
            plan.spec.env.extend(task.config.verifier.env.clone());
            plan.files = HarborVerifierFiles {
                tests: paths.harbor_tests(folder),
                logs_cap: LOGS_CAP,
            }
            .files(logs_dir(paths, participant));
            plan.spec.program = Some(test_command());
            plan
        })
        .collect();
    let run = cast.run(plans, Arc::new(OutcomeByActor)).await?;
    for (participant, outcome) in run.outputs {
        let reward = match &run.build {
            Err(message) => Err(format!("the verifier's image did not build: {message}")),
            Ok(()) => reward_of(&outcome, &logs_dir(paths, &participant), task),
        };
        verdicts.push(verdict(task, &participant, reward));
    }
    for verdict in &verdicts {
        let path = paths
            .verification_of(&verdict.participant)
            .join(REWARD_FILE);
        let text = serde_json::to_string_pretty(verdict).unwrap_or_default();
        crate::fsx::write_atomic(&path, text.as_bytes()).map_err(prepare(&path))?;
    }
    verdicts.sort_by_key(|v| finals.iter().position(|(p, _)| *p == v.participant));
    Ok(TaskVerification {
        verdicts,
        leftovers: run.leftovers,
    })
}

fn prepare(path: &Path) -> impl FnOnce(std::io::Error) -> RunError {
    let path = path.to_owned();
    move |source| RunError::Prepare { path, source }
}

/// Where `/logs/verifier` is collected to.
fn logs_dir(paths: &CookPaths, participant: &str) -> std::path::PathBuf {
    paths.verification_of(participant).join("logs")
}

/// The verifier's cell is named after the participant it verifies; its timeout and network
/// are the task's.
fn verifier_actor(brief: &Brief, task: &Task, participant: &str) -> Actor {
    Actor {
        name: participant.to_owned(),
        flavor: "task-verifier".to_owned(),
        timeout_s: Some(task.config.verifier.timeout.as_secs().max(1)),
        model: None,
        resources: brief.resources,
        network: Some(brief.network.clone()),
        budget: None,
    }
}

/// `bash /tests/test.sh`, as root (the task profile's program) or as the task's
/// `[verifier] user` (else its environment image's `USER`).
fn test_command() -> Vec<String> {
    vec!["bash".to_owned(), format!("{HARBOR_TESTS}/test.sh")]
}

fn verdict(task: &Task, participant: &str, reward: Result<Reward, String>) -> TaskVerdict {
    let (reward, components, error) = match reward {
        Ok(r) => (Some(r.reward), r.components, None),
        Err(e) => (None, BTreeMap::new(), Some(e)),
    };
    TaskVerdict {
        participant: participant.to_owned(),
        reward,
        components,
        error,
        task_hash: task.hash().to_owned(),
    }
}

/// The reward of one verifier cell: its outcome first (a timeout or a cell that did not run
/// has none, whatever file is there), then the reward file it wrote.
fn reward_of(outcome: &CellOutcome, logs: &Path, task: &Task) -> Result<Reward, String> {
    if outcome.timed_out || outcome.state == CellState::TimedOut {
        return Err(format!(
            "test.sh ran out of time ({} s, `[verifier] timeout_sec`)",
            task.config.verifier.timeout.as_secs()
        ));
    }
    if outcome.started_at.is_none() || outcome.exit_code.is_none() {
        return Err(outcome
            .error
            .clone()
            .unwrap_or_else(|| format!("the verifier cell ended {:?}", outcome.state)));
    }
    if let Some(error) = outcome
        .error
        .as_deref()
        .filter(|e| e.starts_with("collecting"))
    {
        return Err(error.to_owned());
    }
    read_reward(logs)
}

/// A reward and its named components.
#[derive(Debug, Clone, PartialEq)]
pub struct Reward {
    /// The reward.
    pub reward: f64,
    /// `reward.json`'s other numeric members.
    pub components: BTreeMap<String, f64>,
}

/// Reads what test.sh wrote: `reward.txt` (one number), else `reward.json`.
pub fn read_reward(logs: &Path) -> Result<Reward, String> {
    let txt_path = logs.join("reward.txt");
    let json_path = logs.join("reward.json");
    let read = |path: &Path| {
        crate::fsx::read_capped(path, REWARD_BYTES).map_err(|e| {
            format!(
                "cannot read {HARBOR_VERIFIER_LOGS}/{}: {e}",
                file_name(path)
            )
        })
    };
    if txt_path.is_file() {
        let bytes = read(&txt_path)?;
        let text = String::from_utf8_lossy(&bytes);
        let reward = number(text.trim()).ok_or_else(|| {
            format!(
                "{HARBOR_VERIFIER_LOGS}/reward.txt holds `{}`, not one number",
                crate::sanitize::one_line(&text.trim().chars().take(80).collect::<String>())
            )
        })?;
        return Ok(Reward {
            reward,
            components: BTreeMap::new(),
        });
    }
    if json_path.is_file() {
        let bytes = read(&json_path)?;
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{HARBOR_VERIFIER_LOGS}/reward.json is not JSON: {e}"))?;
        let object = value
            .as_object()
            .ok_or_else(|| format!("{HARBOR_VERIFIER_LOGS}/reward.json is not an object"))?;
        let reward = object
            .get("reward")
            .and_then(serde_json::Value::as_f64)
            .filter(|r| r.is_finite())
            .ok_or_else(|| format!("{HARBOR_VERIFIER_LOGS}/reward.json has no number `reward`"))?;
        let components = object
            .iter()
            .filter(|(k, _)| *k != "reward")
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64().filter(|v| v.is_finite())?)))
            .collect();
        return Ok(Reward { reward, components });
    }
    Err(format!(
        "test.sh wrote neither {HARBOR_VERIFIER_LOGS}/reward.txt nor reward.json"
    ))
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            fs_err::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_reward_is_read_from_reward_txt_or_reward_json() {
        let txt = logs(&[("reward.txt", "1\n")]);
        assert!((read_reward(txt.path()).unwrap().reward - 1.0).abs() < f64::EPSILON);
        let partial = logs(&[(
            "reward.json",
            r#"{"reward": 0.75, "lines": 1, "words": 1, "longest": 0.0, "unique": 1, "note": "x"}"#,
        )]);
        let reward = read_reward(partial.path()).unwrap();
        assert!((reward.reward - 0.75).abs() < f64::EPSILON);
        assert_eq!(
            reward.components.keys().collect::<Vec<_>>(),
            ["lines", "longest", "unique", "words"]
        );
    }

    #[test]
    fn no_reward_or_a_malformed_one_is_an_error_never_zero() {
        for (files, said) in [
            (vec![], "wrote neither"),
            (vec![("reward.txt", "")], "not one number"),
            (vec![("reward.txt", "pass")], "not one number"),
            (vec![("reward.txt", "NaN")], "not one number"),
            (vec![("reward.txt", "1 1")], "not one number"),
            (vec![("reward.json", "{")], "not JSON"),
            (vec![("reward.json", "[1]")], "not an object"),
            (
                vec![("reward.json", r#"{"score": 1}"#)],
                "no number `reward`",
            ),
            (
                vec![("reward.json", r#"{"reward": "1"}"#)],
                "no number `reward`",
            ),
        ] {
            let dir = logs(&files);
            let error = read_reward(dir.path()).unwrap_err();
            assert!(error.contains(said), "{files:?}: {error}");
        }
    }

    #[test]
    fn test_sh_runs_as_root_from_the_tests_folder() {
        assert_eq!(test_command(), ["bash", "/tests/test.sh"]);
    }
}
