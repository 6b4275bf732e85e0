//! What happens around each judge cell: status and events, then collecting its outbox into
//! `judging/<judge>/`, reading scores.json and reverse-mapping it with this judge's mapping.
//! A judge that did not end `ok` (crash, timeout, rate limit) has its output kept for
//! inspection but its scores are not used.

use std::sync::Arc;

use serde_json::json;

use super::JudgeResult;
use super::inbox::Assignment;
use super::inbox::Comparison;
use super::scores::{self, MAX_SCORES_BYTES, Rejected, Unusable};
use super::verdicts;
use crate::brief::{Actor, Brief, JudgingMode};
use crate::cell::plan::{CellPlan, OUTBOX_BYTES};
use crate::cell::record::done_phase;
use crate::cell::run::{CellHooks, CellOutcome};
use crate::fsx;
use crate::progress::{CellPhase, Progress};
use crate::state::{CellState, CookPaths, EventLog, Phase, Role, StatusStore};

pub(super) struct JudgeHooks {
    paths: CookPaths,
    brief: Brief,
    strict: bool,
    assignments: Vec<Assignment>,
    status: Arc<StatusStore>,
    events: EventLog,
    progress: Arc<dyn Progress>,
}

impl JudgeHooks {
    pub(super) fn new(
        paths: &CookPaths,
        brief: &Brief,
        assignments: &[Assignment],
        status: Arc<StatusStore>,
        progress: Arc<dyn Progress>,
    ) -> Self {
        Self {
            paths: paths.clone(),
            brief: brief.clone(),
            strict: brief.judging.strict_schema,
            assignments: assignments.to_vec(),
            status,
            events: EventLog::new(paths),
            progress,
        }
    }

    fn assignment(&self, judge: &str) -> Option<&Assignment> {
        self.assignments.iter().find(|a| a.judge == judge)
    }

    fn note_error(&self, result: Result<(), impl std::fmt::Display>) {
        if let Err(e) = result {
            self.progress.note(&format!("warning: {e}"));
        }
    }

    /// The result of a judge that had no submission to score.
    pub(super) fn never_ran(&self, judge: &Actor, excluded: Vec<String>) -> JudgeResult {
        let result = JudgeResult {
            name: judge.name.clone(),
            flavor: judge.flavor.clone(),
            ok: false,
            status: "no_submissions".into(),
            reason: Some("no sealed submission it may judge (same flavor or none sealed)".into()),
            count: None,
            exit_code: None,
            duration_s: 0.0,
            stdout: String::new(),
            stderr: String::new(),
            usage: None,
            submissions: 0,
            excluded,
            rejected: Vec::new(),
            egress: serde_json::Value::Null,
            spend: None,
            budget: judge.budget,
            over_budget: None,
            token_shapes: Vec::new(),
        };
        self.note_error(
            self.status
                .update_cell(&judge.name, Role::Judge, &judge.flavor, |c| {
                    c.exit_class = Some("no_submissions".into());
                }),
        );
        self.progress.cell(
            Role::Judge,
            &judge.name,
            CellPhase::Done {
                state: "no_submissions".into(),
                detail: "nothing to judge".into(),
                ok: false,
            },
        );
        result
    }

    /// Reads the scores from the collected outbox (`judging/<judge>/`).
    fn collect(
        &self,
        plan: &CellPlan,
        outcome: &CellOutcome,
    ) -> Result<(usize, Vec<Rejected>), Unusable> {
        let dest = self.paths.judge_dir(&plan.actor);
        let skipped = outcome
            .collected
            .iter()
            .flat_map(|(_, report)| report.copy.skipped.iter());
        for skipped in skipped {
            if ["scores.json", "verdicts.json"].contains(&skipped.path.as_str()) {
                return Err(Unusable::InvalidJson(match &skipped.skip {
                    fsx::Skip::SizeCap => format!(
                        "outbox/{} is larger than the {} MiB an outbox may hold",
                        skipped.path,
                        OUTBOX_BYTES >> 20
                    ),
                    other => format!("outbox/{} was not read: {other:?}", skipped.path),
                }));
            }
        }
        let assignment = self.assignment(&plan.actor);
        let mapping = assignment.map(|a| a.mapping.clone()).unwrap_or_default();
        if self.brief.judging.blinding_probe {
            self.collect_guesses(&dest, &mapping);
        }
        if self.brief.judging.mode == JudgingMode::Pairwise {
            let comparisons = assignment
                .map(|a| a.comparisons.clone())
                .unwrap_or_default();
            return collect_verdicts(&dest, &comparisons);
        }
        let scores_path = dest.join("scores.json");
        if !scores_path.is_file() {
            return Err(Unusable::NoScores(
                "the judge wrote no outbox/scores.json".into(),
            ));
        }
        let bytes = fsx::read_capped(&scores_path, MAX_SCORES_BYTES)
            .map_err(|e| Unusable::InvalidJson(e.to_string()))?;
        let entries = scores::parse(&bytes, self.strict)?;
        let result = scores::deanonymize(entries, &mapping);
        if result.scores.is_empty() {
            return Err(Unusable::NoScores(
                "scores.json has no entry for any submitted label".into(),
            ));
        }
        fsx::write_json_atomic(&dest.join("scores_deanon.json"), &result.scores)
            .map_err(|e| Unusable::NoScores(format!("cannot write scores_deanon.json: {e}")))?;
        Ok((result.scores.len(), result.rejected))
    }

    /// Reads the blinding probe's guesses into `guesses_deanon.json` (host side), each with the
    /// true flavor. A judge that wrote none simply has no guesses: the probe never fails a judge.
    fn collect_guesses(&self, dest: &std::path::Path, mapping: &[(String, String)]) {
        let path = dest.join("guesses.json");
        let Ok(bytes) = fsx::read_capped(&path, MAX_SCORES_BYTES) else {
            return;
        };
        let record = match verdicts::parse_guesses(&bytes, mapping) {
            Ok(guesses) => {
                let entries: Vec<serde_json::Value> = guesses
                    .iter()
                    .map(|g| {
                        let flavor = self
                            .brief
                            .participant(&g.participant)
                            .map_or("", |p| p.flavor.as_str());
                        json!({"submission": g.submission, "participant": g.participant, "guess": g.guess, "flavor": flavor, "hit": g.guess == flavor})
                    })
                    .collect();
                json!({"vendors": super::probe_vendors(&self.brief), "guesses": entries})
            }
            Err(reason) => {
                json!({"vendors": super::probe_vendors(&self.brief), "guesses": [], "error": reason})
            }
        };
        self.note_error(fsx::write_json_atomic(
            &dest.join("guesses_deanon.json"),
            &record,
        ));
    }
}

/// Reads a pairwise judge's verdicts into `verdicts_deanon.json`.
fn collect_verdicts(
    dest: &std::path::Path,
    comparisons: &[Comparison],
) -> Result<(usize, Vec<Rejected>), Unusable> {
    let path = dest.join("verdicts.json");
    if !path.is_file() {
        return Err(Unusable::NoScores(
            "the judge wrote no outbox/verdicts.json".into(),
        ));
    }
    let bytes = fsx::read_capped(&path, MAX_SCORES_BYTES)
        .map_err(|e| Unusable::InvalidJson(e.to_string()))?;
    let (verdicts, rejected) = verdicts::parse_verdicts(&bytes, comparisons)?;
    if verdicts.is_empty() {
        return Err(Unusable::NoScores(
            "verdicts.json has no usable verdict for any comparison given".into(),
        ));
    }
    fsx::write_json_atomic(&dest.join("verdicts_deanon.json"), &verdicts)
        .map_err(|e| Unusable::NoScores(format!("cannot write verdicts_deanon.json: {e}")))?;
    Ok((verdicts.len(), rejected))
}

impl CellHooks for JudgeHooks {
    type Output = JudgeResult;

    fn starting(&self, plan: &CellPlan) {
        self.progress
            .cell(Role::Judge, &plan.actor, CellPhase::Starting);
        self.note_error(
            self.status
                .update_cell(&plan.actor, Role::Judge, &plan.flavor, |c| {
                    c.state = CellState::Starting;
                }),
        );
    }

    fn started(&self, plan: &CellPlan, started_at: &str) {
        self.progress
            .cell(Role::Judge, &plan.actor, CellPhase::Running);
        self.note_error(
            self.status
                .update_cell(&plan.actor, Role::Judge, &plan.flavor, |c| {
                    c.state = CellState::Running;
                    c.started_at = Some(started_at.to_owned());
                }),
        );
        self.note_error(self.events.cell(
            "judge.started",
            Phase::Judge,
            &plan.actor,
            json!({"flavor": plan.flavor}),
        ));
    }

    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> JudgeResult {
        let assignment = self.assignment(&plan.actor);
        // Whatever it wrote was collected for inspection; only an ok judge's is used.
        let collected = (outcome.state == CellState::Ok).then(|| self.collect(plan, &outcome));
        let (ok, status, reason, count, rejected) = match &collected {
            Some(Ok((count, rejected))) => {
                (true, "ok".to_owned(), None, Some(*count), rejected.clone())
            }
            Some(Err(unusable)) => (
                false,
                unusable.status().to_owned(),
                Some(unusable.reason().to_owned()),
                None,
                Vec::new(),
            ),
            None => (
                false,
                outcome.state.as_str().to_owned(),
                outcome
                    .error
                    .clone()
                    .or_else(|| outcome.rate_limit.as_ref().map(|r| r.evidence.clone())),
                None,
                Vec::new(),
            ),
        };
        let judge_model = plan
            .spec
            .env
            .iter()
            .find(|(k, _)| k == "MULTICOOKER_MODEL")
            .map(|(_, v)| v.clone());
        let relative = |p: &std::path::Path| {
            p.strip_prefix(self.paths.dir())
                .unwrap_or(p)
                .to_string_lossy()
                .into_owned()
        };
        let result = JudgeResult {
            name: plan.actor.clone(),
            flavor: plan.flavor.clone(),
            ok,
            status,
            reason,
            count,
            exit_code: outcome.exit_code,
            duration_s: outcome.duration_s,
            stdout: relative(&plan.stdout_log),
            stderr: relative(&plan.stderr_log),
            usage: crate::cell::record::cell_usage(
                plan,
                &relative(&plan.stdout_log),
                judge_model.as_deref(),
            ),
            submissions: assignment.map_or(0, |a| a.mapping.len()),
            excluded: assignment.map(|a| a.excluded.clone()).unwrap_or_default(),
            rejected,
            egress: crate::cell::record::egress_record(plan, outcome.canary.as_ref()),
            spend: outcome.spend,
            budget: plan.budget,
            over_budget: outcome.over_budget.clone(),
            token_shapes: if outcome.collected.is_empty() {
                Vec::new()
            } else {
                self.token_shapes(plan)
            },
        };
        // Kept per judge, so a run killed before JUDGE_RESULT.json can be resumed; written
        // before the status says the judge finished, so a kill between the two never leaves a
        // finished judge without its result (resume would skip it and lose its scores).
        let kept = self
            .paths
            .judging()
            .join("_results")
            .join(format!("{}.json", plan.actor));
        self.note_error(
            fs_err::create_dir_all(kept.parent().unwrap_or(&kept))
                .and_then(|()| fsx::write_json_atomic(&kept, &result)),
        );
        self.record(plan, &outcome, &result);
        result
    }
}

impl JudgeHooks {
    /// Scans what a judge wrote (its collected outbox: reviews, scores) for token-shaped
    /// strings and warns about each, as for a participant's output.
    fn token_shapes(&self, plan: &CellPlan) -> Vec<crate::redact::TokenShape> {
        crate::cell::collect::warn_token_shapes(
            &*self.progress,
            &format!("judge `{}`", plan.actor),
            &self.paths.judge_dir(&plan.actor),
        )
    }

    fn record(&self, plan: &CellPlan, outcome: &CellOutcome, result: &JudgeResult) {
        // A judge that ran fine but produced nothing usable is `non_zero_exit` with the
        // reason as its exit class, as in the reference.
        let cell_state = if outcome.state == CellState::Ok && !result.ok {
            CellState::NonZeroExit
        } else {
            outcome.state
        };
        self.note_error(
            self.status
                .update_cell(&plan.actor, Role::Judge, &plan.flavor, |c| {
                    c.state = cell_state;
                    c.exit_class = Some(result.status.clone());
                    c.finished_at = Some(outcome.finished_at.clone());
                    c.duration_s = Some(outcome.duration_s);
                    c.extra.insert(
                        "egress".into(),
                        crate::cell::record::egress_summary(&result.egress),
                    );
                }),
        );
        let payload = if result.ok {
            json!({"ok": true, "count": result.count})
        } else {
            json!({"ok": false, "status": result.status})
        };
        self.note_error(
            self.events
                .cell("judge.finished", Phase::Judge, &plan.actor, payload),
        );
        let mut phase = done_phase(
            cell_state,
            outcome.exit_code,
            outcome.duration_s,
            result.reason.as_deref(),
        );
        if let CellPhase::Done { state, ok, .. } = &mut phase {
            state.clone_from(&result.status);
            *ok = result.ok;
        }
        self.progress.cell(Role::Judge, &plan.actor, phase);
    }
}
