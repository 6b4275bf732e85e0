//! What a resume is (`multicooker resume`, and a night run again): the latest round of a cook
//! whose run was cut short, finished (round 1, or a refine round, which reruns from that
//! round's prompts).
//!
//! Only the cells that did not finish are run again: those the last run classified as
//! retryable (`rate_limited`, `timed_out`, `start_failed`, `non_zero_exit`, `node_lost`), those
//! it never finished (cancelled, or left pending/running by a killed process), and participants
//! it never reached. `force` adds every other non-ok cell. A cell that ended ok is never run
//! again; its output, seal and result stay as they are, and the results are merged. When no
//! participant is left but the judge phase was cut short, its unfinished judges run again.

use super::{CellsCooked, Judging, Round, Run};
use crate::brief::{Actor, Brief};
use crate::cook::Refine;
use crate::judge::JudgeOutcome;
use crate::state::{CellState, CookPaths, Phase, Role, read_status};

/// A participant run again, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The participant.
    pub name: String,
    /// The state its cell was left in (`interrupted`, `never run`, or a cell state).
    pub was: String,
}

/// What a resume runs again.
#[derive(Debug, Clone)]
pub enum Plan {
    /// The participants that did not finish.
    Cells(Vec<Target>),
    /// No participant, but the judges of a judge phase that did not finish.
    Judges(Vec<Actor>),
    /// Nothing: every participant ended ok or for good, and no judging was cut short.
    Nothing,
}

/// What resuming the cook at `paths` runs again; `force` adds every non-ok participant.
#[must_use]
pub fn plan(paths: &CookPaths, brief: &Brief, force: bool) -> Plan {
    let targets = targets(paths, brief, force);
    if !targets.is_empty() {
        return Plan::Cells(targets);
    }
    unfinished_judges(paths, brief).map_or(Plan::Nothing, Plan::Judges)
}

/// Why each participant is (or is not) run again.
#[must_use]
pub fn targets(paths: &CookPaths, brief: &Brief, force: bool) -> Vec<Target> {
    let prior: crate::state::results::RoundResult =
        crate::state::results::read(&paths.run_result()).unwrap_or_default();
    let status = read_status(paths);
    brief
        .participants
        .iter()
        .filter_map(|p| {
            let recorded = prior
                .participants
                .iter()
                .find(|e| e.name() == Some(p.name.as_str()))
                .and_then(|e| e.get("status")?.as_str().map(str::to_owned));
            let cell = status.as_ref().and_then(|s| s.cells.get(&p.name));
            // The status cell is newer than RUN_RESULT.json when a run died before writing it.
            let state = match (cell, recorded) {
                (Some(cell), _) if !cell.state.is_final() => "interrupted".to_owned(),
                (Some(cell), _) => cell.state.as_str().to_owned(),
                (None, Some(recorded)) => recorded,
                (None, None) => "never run".to_owned(),
            };
            let retry = match state.as_str() {
                "ok" => false,
                "rate_limited" | "timed_out" | "start_failed" | "non_zero_exit" | "cancelled"
                | "node_lost" | "interrupted" | "never run" => true,
                _ => force,
            };
            retry.then(|| Target {
                name: p.name.clone(),
                was: state,
            })
        })
        .collect()
}

/// The participants a night's cook runs: every one for a new cook (`ran_before` false), else
/// those a resume would run again.
#[must_use]
pub fn unfinished(paths: &CookPaths, brief: &Brief, ran_before: bool) -> Vec<String> {
    if ran_before {
        targets(paths, brief, false)
            .into_iter()
            .map(|t| t.name)
            .collect()
    } else {
        brief.participants.iter().map(|p| p.name.clone()).collect()
    }
}

/// The participant cells that ended neither ok nor retryably, with their states: what `force`
/// would add.
#[must_use]
pub fn forced_only(paths: &CookPaths) -> Vec<(String, CellState)> {
    read_status(paths)
        .map(|s| {
            s.cells
                .into_iter()
                .filter(|(_, c)| c.state != CellState::Ok && c.role == Role::Participant)
                .map(|(n, c)| (n, c.state))
                .collect()
        })
        .unwrap_or_default()
}

/// Judges of an interrupted or cut-short judge phase that did not finish, if any.
fn unfinished_judges(paths: &CookPaths, brief: &Brief) -> Option<Vec<Actor>> {
    let status = read_status(paths)?;
    if status.phase != Phase::Judge {
        return None;
    }
    let judges: Vec<Actor> = brief
        .judges
        .iter()
        .filter(|j| {
            status.cells.get(&j.name).is_none_or(|c| {
                !c.state.is_final()
                    || matches!(
                        c.state,
                        CellState::Cancelled
                            | CellState::RateLimited
                            | CellState::TimedOut
                            | CellState::StartFailed
                    )
            })
        })
        .cloned()
        .collect();
    (!judges.is_empty()).then_some(judges)
}

/// Runs `judges` again with fresh label shuffles; the other judges' scores and entries stay.
///
/// # Errors
/// As [`super::judge()`].
pub async fn judges(run: &Run<'_>, judges: &[Actor]) -> anyhow::Result<JudgeOutcome> {
    let judging = Judging {
        seed: crate::judge::labels::random_seed(),
        resume: crate::judge::Resume::KeepFinished,
        again: false,
    };
    super::judge(run, judges, judging).await
}

/// Runs the participants `names` again in their flavors' images, merged with the others'
/// results; in a refine round, from that round's prompts.
///
/// # Errors
/// A round's prompt cannot be read; as [`super::cook::cells`].
pub async fn cells(run: &Run<'_>, names: &[String]) -> anyhow::Result<CellsCooked> {
    let round = Round {
        phase: "resume",
        merge: true,
        refine: refine_round(run.paths, names)?,
        ..Round::default()
    };
    super::cook::cells(run, names, round).await
}

/// In a refine round the cells run that round again, from their round's prompts.
fn refine_round(paths: &CookPaths, names: &[String]) -> std::io::Result<Option<Refine>> {
    let round = read_status(paths).map_or(1, |s| s.round);
    if round <= 1 {
        return Ok(None);
    }
    let prompts = names
        .iter()
        .map(|n| Ok((n.clone(), fs_err::read_to_string(paths.prompt(n))?)))
        .collect::<std::io::Result<_>>()?;
    Ok(Some(Refine { round, prompts }))
}
