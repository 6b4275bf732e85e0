//! Hidden verification: one verifier cell per sealed output runs the cook's hidden tests
//! (`verify/`) against a read-only copy of that output, hardened like every cell, and its
//! report becomes `verification/<participant>/result.json` (BEHAVIOR: issue 14).
//!
//! Hidden material reaches a verifier cell only: it is a [`Hidden`](crate::state::Hidden),
//! which no other role's files accept. Results are kept per participant; running again moves
//! the earlier ones to `verification/_previous/<time>/`. A result whose output has not changed
//! since and that was scored is not run again unless asked. This module never prints.

pub mod formats;
pub mod harbor;
mod hooks;
pub mod plan;
pub use crate::state::verification as result;

#[cfg(test)]
mod boundary_tests;

use std::sync::Arc;

use serde_json::json;

pub use hooks::status_key;
pub use result::{Outcome, PassCount, Verification, pass_counts};

use crate::brief::VerifierImage;
use crate::cell::names::Names;
use crate::cell::{RunError, Venue};
use crate::runtime::TeardownFailure;
use crate::state::{Cell, CookPaths, CookState, EventLog, Phase, Role, StatusStore};

/// Why verification could not start.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// brief.yaml has no `verify:`.
    #[error("`{}` has no `verify:` section", .path.display())]
    NotConfigured {
        /// brief.yaml.
        path: std::path::PathBuf,
    },
    /// The hidden folder (or its Dockerfile) is missing.
    #[error("`{}` is missing", .path.display())]
    Missing {
        /// The folder or file.
        path: std::path::PathBuf,
        /// What it is for.
        what: &'static str,
    },
    /// The dummy runner's spec does not say how many tests exist.
    #[error("`{}`: {problem}", .path.display())]
    Spec {
        /// `verify/tests.json`.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// `verify.tests` is unset and no spec counts the tests.
    #[error("`{}`: field `verify.tests` is missing", .path.display())]
    Uncounted {
        /// brief.yaml.
        path: std::path::PathBuf,
    },
    /// The run failed outside any one cell.
    #[error(transparent)]
    Run(#[from] RunError),
}

crate::hint_source!(VerifyError);

impl crate::error::Hint for VerifyError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::NotConfigured { .. } => Some(
                "add `verify: {image: dockerfile}` and a `verify/` folder with the hidden tests and their Dockerfile (README, \"Hidden verification\")".into(),
            ),
            Self::Missing { what, .. } => Some(format!("add {what}")),
            Self::Spec { .. } => Some(
                "give `verify/tests.json` a `tests` list (at most 100,000 entries), or set `verify.tests`".into(),
            ),
            Self::Uncounted { .. } => Some(
                "add `tests: N` under `verify:` (how many tests the runner runs): a report listing more, or planning another number, is then caught as tampering".into(),
            ),
            Self::Run(e) => e.hint(),
        }
    }
}

/// Which outputs run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rerun {
    /// Those without a scored result for their current output (a resumed or first run).
    Pending,
    /// Every selected output; earlier results are kept under `_previous/`.
    All,
}

/// What a verification run produced.
#[derive(Debug)]
pub struct VerifyOutcome {
    /// One result per selected participant, in brief order (kept ones included).
    pub results: Vec<Verification>,
    /// Participants whose verifier ran now.
    pub ran: Vec<String>,
    /// Objects teardown could not remove.
    pub leftovers: Vec<TeardownFailure>,
    /// Ctrl-C stopped it.
    pub cancelled: bool,
}

/// Verifies the sealed outputs of `selected` participants.
pub async fn verify(
    venue: Venue<'_>,
    selected: &[String],
    rerun: Rerun,
) -> Result<VerifyOutcome, VerifyError> {
    let Venue {
        paths,
        brief,
        settings,
        progress,
        ..
    } = venue;
    let verify = brief
        .verify
        .as_ref()
        .ok_or_else(|| VerifyError::NotConfigured {
            path: paths.brief_yaml(),
        })?;
    check_hidden(paths, verify.image)?;
    let expected = expected_tests(paths, verify)?;
    // Checked before anything is written: an image that cannot be assembled changes nothing.
    let (images, image) = plan::verifier_images(
        paths,
        &Names::for_paths(paths),
        verify,
        &settings.run_id,
        &settings.images,
    )
    .map_err(|e| VerifyError::Run(e.into()))?;
    // Verifiers run the outputs' own tests, no CLI: no login, no budget stops or blocks them.
    let cast = venue.cast_images(Role::Verifier, images);
    let digests = digests(paths, selected);
    let status = Arc::new(StatusStore::open(paths));
    let events = EventLog::new(paths);
    let hooks = Arc::new(hooks::VerifyHooks {
        paths: paths.clone(),
        status: status.clone(),
        events: events.clone(),
        progress: progress.clone(),
        image: verify.image.as_str().to_owned(),
        digests: digests.clone(),
        expected,
    });
    let to_run = select_runs(paths, &hooks, &digests, rerun)?;
    let before = crate::state::read_status(paths)
        .map(|s| s.state)
        .filter(|s| *s != CookState::Verifying)
        .unwrap_or(CookState::Sealed);
    let context = cast.context();
    let plans: Vec<_> = to_run
        .iter()
        .map(|p| plan::verifier_plan(&context, verify, p, &image))
        .collect();
    open_phase(&status, &events, &to_run)?;
    let run = match cast.run(plans, hooks.clone()).await {
        Ok(run) => run,
        Err(e) => {
            status
                .set_state(Phase::Verify, before)
                .map_err(RunError::from)?;
            return Err(e.into());
        }
    };
    let mut ran = run.outputs;
    if let Err(message) = &run.build {
        // No runner ran: every output is unscored, with the build's reason, never a 0.
        for result in &mut ran {
            *result = hooks.unscored(
                &result.participant,
                Outcome::BuildFailed,
                format!("the verifier's image did not build: {message}"),
            );
            hooks.record(result);
        }
    }
    status
        .set_state(Phase::Verify, before)
        .map_err(RunError::from)?;
    events
        .cook(
            "phase.finished",
            Phase::Verify,
            Some(json!({"ran": to_run.len()})),
        )
        .map_err(RunError::from)?;
    let results = selected
        .iter()
        .filter_map(|p| {
            ran.iter()
                .find(|r| r.participant == *p)
                .cloned()
                .or_else(|| Verification::read(paths, p))
        })
        .collect();
    Ok(VerifyOutcome {
        results,
        ran: to_run,
        leftovers: run.leftovers,
        cancelled: settings.cancel.is_cancelled(),
    })
}

/// Each participant's sealed output digest; `None` without a sealed output.
fn digests(paths: &CookPaths, selected: &[String]) -> Vec<(String, Option<String>)> {
    selected
        .iter()
        .map(|p| {
            let out = paths.sealed(p).join("out");
            let digest = out.is_dir().then(|| plan::output_digest(&out).ok());
            (p.clone(), digest.flatten())
        })
        .collect()
}

/// status.json says `verifying`, with a pending cell per verifier; the phase's first event.
fn open_phase(status: &StatusStore, events: &EventLog, to_run: &[String]) -> Result<(), RunError> {
    status.update(|s| {
        s.phase = Phase::Verify;
        s.state = CookState::Verifying;
        for p in to_run {
            s.cells.insert(
                status_key(p),
                Cell::pending(Role::Verifier, plan::VERIFY_FLAVOR),
            );
        }
    })?;
    events.cook(
        "phase.started",
        Phase::Verify,
        Some(json!({"targets": to_run})),
    )?;
    Ok(())
}

/// The participants whose verifier runs now; earlier results of those move to `_previous/`,
/// and an output that was never sealed gets its unscored result at once.
fn select_runs(
    paths: &CookPaths,
    hooks: &hooks::VerifyHooks,
    digests: &[(String, Option<String>)],
    rerun: Rerun,
) -> Result<Vec<String>, RunError> {
    let prepare = |path: std::path::PathBuf| move |source| RunError::Prepare { path, source };
    let mut to_run = Vec::new();
    for (participant, digest) in digests {
        let earlier = Verification::read(paths, participant);
        let done = earlier
            .as_ref()
            .is_some_and(|r| r.outcome.scored() && r.output_sha256 == *digest);
        if done && rerun == Rerun::Pending {
            continue;
        }
        if earlier.is_some() || paths.verification_of(participant).exists() {
            keep_previous(paths, participant)
                .map_err(prepare(paths.verification_of(participant)))?;
        }
        fs_err::create_dir_all(paths.verification_of(participant).join("logs"))
            .map_err(prepare(paths.verification_of(participant)))?;
        if digest.is_none() {
            let reason = "the participant has no sealed output (see `multicooker status`)";
            hooks.record(&hooks.unscored(participant, Outcome::NoOutput, reason.into()));
        } else {
            to_run.push(participant.clone());
        }
    }
    Ok(to_run)
}

/// The hidden folder (and, for `dockerfile`, its Dockerfile) must exist.
fn check_hidden(paths: &CookPaths, image: VerifierImage) -> Result<(), VerifyError> {
    let dir = paths.verify_dir();
    if !fs_err::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return Err(VerifyError::Missing {
            path: dir,
            what: "the hidden tests' folder `verify/` next to brief.yaml (a real folder, not a link)",
        });
    }
    let needed = match image {
        VerifierImage::Dockerfile => (
            "Dockerfile",
            "`verify/Dockerfile`, the image that runs the tests",
        ),
        VerifierImage::Dummy => ("tests.json", "`verify/tests.json`, the dummy runner's spec"),
    };
    let path = dir.join(needed.0);
    if !fs_err::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return Err(VerifyError::Missing {
            path,
            what: needed.1,
        });
    }
    Ok(())
}

/// How many tests exist, fixed before any runner runs: `verify.tests`, else the number of
/// entries of the dummy runner's spec. Never what a run reports.
fn expected_tests(paths: &CookPaths, verify: &crate::brief::Verify) -> Result<u64, VerifyError> {
    if let Some(tests) = verify.tests {
        return Ok(tests);
    }
    if verify.image != VerifierImage::Dummy {
        return Err(VerifyError::Uncounted {
            path: paths.brief_yaml(),
        });
    }
    let path = paths.verify_dir().join("tests.json");
    let problem = |problem: String| VerifyError::Spec {
        path: path.clone(),
        problem,
    };
    let bytes = crate::fsx::read_capped(&path, 16 << 20).map_err(|e| problem(e.to_string()))?;
    let spec: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| problem(format!("not JSON: {e}")))?;
    match spec.get("tests").and_then(serde_json::Value::as_array) {
        Some(tests) if !tests.is_empty() && tests.len() <= 100_000 => Ok(tests.len() as u64),
        Some(tests) => Err(problem(format!(
            "lists {} tests; between 1 and 100,000 are needed",
            tests.len()
        ))),
        None => Err(problem("has no `tests` list".into())),
    }
}

/// Moves `verification/<participant>/` to `verification/_previous/<time>/<participant>/`.
fn keep_previous(paths: &CookPaths, participant: &str) -> std::io::Result<()> {
    let from = paths.verification_of(participant);
    if !from.exists() {
        return Ok(());
    }
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let mut to = paths.verification_previous().join(&stamp).join(participant);
    let mut n = 1;
    while to.exists() {
        n += 1;
        to = paths
            .verification_previous()
            .join(format!("{stamp}-{n}"))
            .join(participant);
    }
    if let Some(parent) = to.parent() {
        fs_err::create_dir_all(parent)?;
    }
    fs_err::rename(&from, &to)
}
