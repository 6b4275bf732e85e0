//! Judging: each judge gets copies of the sealed outputs it may see (never its own flavor's,
//! under the default policy), labelled by its own seeded shuffle; it runs in its own cell with
//! only BRIEF.md, `JUDGE_BRIEF.md`, RUBRIC.json, raw/, its inbox (read-only) and its outbox; its
//! scores are validated and reverse-mapped on the host (docs/BEHAVIOR.md §5).
//!
//! The mapping never enters a folder a cell mounts. This module never prints.

pub mod chef_input;
mod error;
mod hooks;
pub mod inbox;
pub mod labels;
pub mod scores;
mod submissions;
pub mod verdicts;

use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::json;

use crate::brief::{Actor, Brief, JudgingMode, JudgingPolicy};
use crate::cell::files::JudgeFiles;
use crate::cell::plan::{CellPlan, OUTBOX_BYTES, PlanContext};
use crate::cell::{RunError, Venue};
use crate::fsx;
use crate::runtime::TeardownFailure;
use crate::state::results::{self, Entry, JudgeRunResult};
use crate::state::{
    Cell, CookPaths, CookState, EventLog, Phase, Role, StateError, StatusStore, now_iso,
};
pub use error::JudgeError;
use inbox::Assignment;
use labels::Shuffler;
use scores::Rejected;
pub use submissions::NULL_PARTICIPANT;
use submissions::{available_outputs, test_summaries};

/// One judge's entry in `JUDGE_RESULT.json`.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeResult {
    /// Judge name.
    pub name: String,
    /// Flavor.
    pub flavor: String,
    /// Its scores were collected.
    pub ok: bool,
    /// `ok`, `no_scores`, `invalid_json`, `malformed_schema`, `no_submissions`, or the cell's
    /// outcome class (`timed_out`, `rate_limited`, …).
    pub status: String,
    /// Why it is not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Participants scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// Exit code, if it ran.
    pub exit_code: Option<i64>,
    /// Seconds, one decimal.
    pub duration_s: f64,
    /// Standard output log, relative to the cook folder.
    pub stdout: String,
    /// Standard error log, relative to the cook folder.
    pub stderr: String,
    /// Token usage (none for the dummy flavor).
    pub usage: Option<serde_json::Value>,
    /// Submissions it was given.
    pub submissions: usize,
    /// Participants withheld from it (same flavor).
    pub excluded: Vec<String>,
    /// Entries dropped while reverse-mapping.
    pub rejected: Vec<Rejected>,
    /// Egress mode, allowed targets and the canary's report.
    pub egress: serde_json::Value,
    /// What it spent, read live from its output (flavors that report usage).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spend: Option<crate::flavor::meter::Spend>,
    /// Its own cap, when its brief entry sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::brief::Budget>,
    /// Why it finished its turn over a budget (its flavor reports usage only at the end of its
    /// turn), as `RUN_RESULT.json` says of a participant: its scores count only under
    /// `judging.over_budget: score`, and this marks them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<String>,
    /// Token-shaped strings in what it wrote (reviews, scores): no secret of this run (those
    /// are redacted), flagged for the operator to look at before publishing (issue 21).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_shapes: Vec<crate::redact::TokenShape>,
}

/// What a judge run produced.
#[derive(Debug)]
pub struct JudgeOutcome {
    /// One result per selected judge, in brief order.
    pub results: Vec<JudgeResult>,
    /// `judged` or `cancelled`.
    pub state: CookState,
    /// The seed of the label shuffles.
    pub seed: u64,
    /// Objects teardown could not remove.
    pub leftovers: Vec<TeardownFailure>,
}

/// Who each judge may see, with fresh labels: one label per submission (rubric mode), or one
/// comparison per ordered pair, both orders, each with its own A/B labels (pairwise mode).
pub fn assign(brief: &Brief, judges: &[Actor], available: &[String], seed: u64) -> Vec<Assignment> {
    let mut shuffler = Shuffler::new(seed);
    let flavor_of = |p: &String| brief.participant(p).map_or("", |a| a.flavor.as_str());
    judges
        .iter()
        .map(|judge| {
            // A vendor's judge never sees its own vendor's work; the dummy is no vendor.
            let own = |p: &String| {
                flavor_of(p) == judge.flavor && crate::flavor::is_vendor(&judge.flavor)
            };
            let distinct = brief.judging.policy == JudgingPolicy::RequireDistinctFlavor;
            let (eligible, excluded): (Vec<String>, Vec<String>) = available
                .iter()
                .cloned()
                .partition(|p| !distinct || !own(p) || brief.judging.self_preference);
            let self_judged = if distinct && brief.judging.self_preference {
                eligible.iter().filter(|p| own(p)).cloned().collect()
            } else {
                Vec::new()
            };
            let (mapping, comparisons) = match brief.judging.mode {
                JudgingMode::Rubric => (shuffler.assign(&eligible), Vec::new()),
                JudgingMode::Pairwise => pairwise(&mut shuffler, &eligible),
            };
            Assignment {
                judge: judge.name.clone(),
                flavor: judge.flavor.clone(),
                mapping,
                comparisons,
                excluded,
                self_judged,
            }
        })
        .collect()
}

#[cfg(test)]
mod assign_tests;

/// Every ordered pair of `eligible` in a random order, numbered `01`, `02` …: the first of the
/// pair is `<id>/A`, the second `<id>/B`.
fn pairwise(
    shuffler: &mut Shuffler,
    eligible: &[String],
) -> (Vec<(String, String)>, Vec<inbox::Comparison>) {
    let mut pairs: Vec<(String, String)> = eligible
        .iter()
        .flat_map(|a| {
            eligible
                .iter()
                .filter(move |b| *b != a)
                .map(move |b| (a.clone(), b.clone()))
        })
        .collect();
    shuffler.shuffle(&mut pairs);
    let width = pairs.len().to_string().len().max(2);
    let comparisons: Vec<inbox::Comparison> = pairs
        .into_iter()
        .enumerate()
        .map(|(i, (first, second))| inbox::Comparison {
            id: format!("{:0width$}", i + 1),
            first,
            second,
        })
        .collect();
    let mapping = comparisons
        .iter()
        .flat_map(|c| {
            [
                (format!("{}/A", c.id), c.first.clone()),
                (format!("{}/B", c.id), c.second.clone()),
            ]
        })
        .collect();
    (mapping, comparisons)
}

/// Whether a judging run starts afresh or completes an earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// Every selected judge runs; earlier results are replaced.
    Fresh,
    /// Only these judges run again; the others keep their results and labels.
    KeepFinished,
}

/// Runs the selected judges over the sealed outputs.
pub async fn judge(
    venue: Venue<'_>,
    judges: &[Actor],
    seed: u64,
    resume: Resume,
) -> Result<JudgeOutcome, JudgeError> {
    let Venue {
        paths,
        brief,
        settings,
        progress,
        ..
    } = venue;
    let available = available_outputs(paths, brief)?;
    let assignments = assign(brief, judges, &available, seed);
    let running: Vec<&Actor> = judges
        .iter()
        .filter(|j| {
            assignments
                .iter()
                .any(|a| a.judge == j.name && !a.mapping.is_empty())
        })
        .collect();
    // Checked before anything is written: a flavor without an image or login changes nothing.
    let cast = venue.cast(Role::Judge, &running)?;
    // Until the judges have run, a failure puts the earlier judging back (issue 25).
    let mut undo = Undo::new(paths);
    if let Err(error) = prepare_inboxes(paths, brief, &assignments, (seed, resume), &mut undo.moved)
    {
        return Err(undo.fail(paths, error.into()));
    }
    let status = Arc::new(StatusStore::open(paths));
    let events = EventLog::new(paths);
    status.update(|s| {
        s.phase = Phase::Judge;
        s.state = CookState::Judging;
        for judge in judges {
            s.cells.insert(
                judge.name.clone(),
                Cell::pending(Role::Judge, &judge.flavor),
            );
        }
    })?;
    events.cook("phase.started", Phase::Judge, None)?;
    let context = cast.context();
    let plans: Vec<_> = running.iter().map(|j| judge_plan(&context, j)).collect();
    let hooks = Arc::new(hooks::JudgeHooks::new(
        paths,
        brief,
        &assignments,
        status.clone(),
        progress.clone(),
    ));
    let run = match cast.run(plans, hooks.clone()).await {
        Ok(run) => run,
        Err(error) => return Err(undo.fail(paths, error.into())),
    };
    let (ran, leftovers) = (run.outputs, run.leftovers);
    if let Err(message) = run.build {
        status.set_state(Phase::Judge, CookState::Failed)?;
        return Err(undo.fail(paths, RunError::Build(message.to_string()).into()));
    }
    let results = merge_results(judges, &assignments, ran, &hooks);
    let judge_result = JudgeRunResult {
        finished_at: Some(now_iso()),
        policy: Some(json!(brief.judging.policy)),
        mode: Some(json!(brief.judging.mode)),
        self_preference: brief.judging.self_preference,
        blinding_probe: brief.judging.blinding_probe,
        seed: Some(seed),
        judges: result_entries(paths, brief, &results, resume),
        extra: serde_json::Map::new(),
    };
    results::write(&paths.judge_result(), &judge_result)
        .map_err(StateError::io("write", paths.judge_result()))?;
    let state = if settings.cancel.is_cancelled() {
        CookState::Cancelled
    } else {
        CookState::Judged
    };
    status.set_state(Phase::Judge, state)?;
    if state == CookState::Cancelled {
        events.cook("cook.cancelled", Phase::Judge, None)?;
    }
    Ok(JudgeOutcome {
        results,
        state,
        seed,
        leftovers,
    })
}

/// What a judging changes before its judges run, so that a failure can put it back: the
/// earlier judges' folders it moved aside and the mapping it rewrote.
struct Undo {
    moved: inbox::Moved,
    mapping: Option<Vec<u8>>,
}

impl Undo {
    fn new(paths: &CookPaths) -> Self {
        Self {
            moved: inbox::Moved::default(),
            mapping: std::fs::read(paths.mapping()).ok(),
        }
    }

    /// Puts everything back and returns `cause`, saying so when there was something to keep.
    fn fail(self, paths: &CookPaths, cause: JudgeError) -> JudgeError {
        let _ = match &self.mapping {
            Some(bytes) => fsx::write_atomic(&paths.mapping(), bytes),
            None => std::fs::remove_file(paths.mapping()),
        };
        self.moved.restore(cause)
    }
}

/// `JUDGE_RESULT.json` entries; when resuming, the judges not run again keep theirs (from the
/// file, or from `judging/_results/<judge>.json` when a killed run never wrote it).
fn result_entries(
    paths: &CookPaths,
    brief: &Brief,
    ran: &[JudgeResult],
    resume: Resume,
) -> Vec<Entry> {
    let current: Vec<Entry> = ran.iter().map(Entry::of).collect();
    if resume == Resume::Fresh {
        return current;
    }
    let mut earlier = results::read::<JudgeRunResult>(&paths.judge_result())
        .unwrap_or_default()
        .judges;
    for judge in &brief.judges {
        let kept = paths
            .judging()
            .join("_results")
            .join(format!("{}.json", judge.name));
        if !earlier
            .iter()
            .any(|e| e.name() == Some(judge.name.as_str()))
            && let Some(entry) = results::read::<Entry>(&kept)
        {
            earlier.push(entry);
        }
    }
    let order: Vec<&str> = brief.judges.iter().map(|j| j.name.as_str()).collect();
    results::merge_entries(current, earlier, &order)
}

/// Keeps earlier judge outputs aside, normalizes each sealed output once (recording what was
/// stripped), writes the mapping (host only) and every inbox.
fn prepare_inboxes(
    paths: &CookPaths,
    brief: &Brief,
    assignments: &[Assignment],
    (seed, resume): (u64, Resume),
    moved: &mut inbox::Moved,
) -> Result<(), RunError> {
    let prepare = |source| RunError::Prepare {
        path: paths.judging(),
        source,
    };
    let names: Vec<String> = assignments.iter().map(|a| a.judge.clone()).collect();
    inbox::archive_previous(paths, &names, &now_iso().replace(':', "-"), moved).map_err(prepare)?;
    let prior_mapping: serde_json::Value = fsx::read_capped(&paths.mapping(), 64 << 20)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    inbox::write_mapping(&paths.mapping(), seed, assignments).map_err(prepare)?;
    if resume == Resume::KeepFinished
        && let Some(prior) = prior_mapping["judges"].as_object()
    {
        // Resuming: the other judges' labels stay on record (host only).
        let mut mapping: serde_json::Value = fsx::read_capped(&paths.mapping(), 64 << 20)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if let Some(current) = mapping["judges"].as_object_mut() {
            for (name, entry) in prior {
                current.entry(name.clone()).or_insert_with(|| entry.clone());
            }
        }
        fsx::write_json_atomic(&paths.mapping(), &mapping).map_err(prepare)?;
    }
    let normalized = paths.judging().join("_normalized");
    fsx::remove_tree(&normalized).map_err(prepare)?;
    let mut participants: Vec<&String> = assignments
        .iter()
        .flat_map(|a| a.mapping.iter().map(|(_, p)| p))
        .collect();
    participants.sort();
    participants.dedup();
    let mut stripped = serde_json::Map::new();
    for participant in participants {
        let items = crate::cell::normalize::normalized_copy(
            &paths.sealed(participant),
            &normalized.join(participant),
        )
        .map_err(prepare)?;
        stripped.insert(participant.clone(), json!(items));
    }
    fsx::write_json_atomic(&paths.judging().join("_normalized.json"), &stripped)
        .map_err(prepare)?;
    let vendors = probe_vendors(brief);
    let tests = test_summaries(paths, brief);
    let asks = inbox::Asks {
        pairwise: brief.judging.mode == JudgingMode::Pairwise,
        vendors: brief.judging.blinding_probe.then_some(vendors.as_slice()),
        tests: tests.as_deref(),
    };
    for assignment in assignments.iter().filter(|a| !a.mapping.is_empty()) {
        inbox::build_work(paths, brief, assignment, &normalized, asks).map_err(prepare)?;
    }
    Ok(())
}

/// The vendors a blinding-probe guess may name: the participants' flavors, sorted.
pub fn probe_vendors(brief: &Brief) -> Vec<String> {
    let mut vendors: Vec<String> = brief
        .participants
        .iter()
        .map(|p| p.flavor.clone())
        .collect();
    vendors.sort();
    vendors.dedup();
    vendors
}

/// A judge's cell: the briefs, rubric, raw/ and its labelled inbox to read, its outbox to write;
/// never the mapping ([`JudgeFiles`] has no place for it).
pub fn judge_plan(context: &PlanContext<'_>, judge: &Actor) -> CellPlan {
    let paths = context.paths;
    let mut plan = context.base(judge, Role::Judge, &paths.judge_logs(&judge.name));
    plan.spec
        .env
        .push(("MULTICOOKER_JUDGE".to_owned(), judge.name.clone()));
    plan.files = JudgeFiles {
        outbox_cap: OUTBOX_BYTES,
        probe: context.brief.judging.blinding_probe,
    }
    .files(paths, &judge.name);
    plan
}

/// Results in brief order, including judges that had nothing to score and never ran.
fn merge_results(
    judges: &[Actor],
    assignments: &[Assignment],
    ran: Vec<JudgeResult>,
    hooks: &hooks::JudgeHooks,
) -> Vec<JudgeResult> {
    let mut ran: IndexMap<String, JudgeResult> =
        ran.into_iter().map(|r| (r.name.clone(), r)).collect();
    judges
        .iter()
        .map(|judge| {
            ran.shift_remove(&judge.name).unwrap_or_else(|| {
                let excluded = assignments
                    .iter()
                    .find(|a| a.judge == judge.name)
                    .map(|a| a.excluded.clone())
                    .unwrap_or_default();
                hooks.never_ran(judge, excluded)
            })
        })
        .collect()
}
