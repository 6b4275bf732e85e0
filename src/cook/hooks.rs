//! What happens around each participant cell: status and events at every transition, and,
//! once it ends, sealing, the required-outputs check, trace.json and the `RUN_RESULT` entry.

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;

use super::seal::{missing_outputs, seal};
use crate::brief::Brief;
use crate::cell::plan::CellPlan;
use crate::cell::record::{cell_usage, done_phase, egress_record, egress_summary};
use crate::cell::run::{CellHooks, CellOutcome};
use crate::fsx::{self, CopyReport};
use crate::progress::{CellPhase, Progress};
use crate::state::{CellState, CookPaths, EventLog, Phase, Role, StatusStore};

/// One participant's entry in `RUN_RESULT.json` (the reference's fields, then ours).
#[derive(Debug, Clone, Serialize)]
pub struct ParticipantResult {
    /// Participant name.
    pub name: String,
    /// Flavor.
    pub flavor: String,
    /// Outcome class.
    pub status: CellState,
    /// Exit code, if the program ran.
    pub exit_code: Option<i64>,
    /// Seconds, one decimal.
    pub duration_s: f64,
    /// Text around a detected limit.
    pub rate_limit_evidence: Option<String>,
    /// Seconds until a retry may work.
    pub retry_after_s: Option<u64>,
    /// Standard output log, relative to the cook folder.
    pub stdout: String,
    /// Standard error log, relative to the cook folder.
    pub stderr: String,
    /// Required outputs that were missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_outputs: Option<Vec<String>>,
    /// Token usage, cost and model ids from the CLI's structured output (none for the dummy).
    pub usage: Option<serde_json::Value>,
    /// Which limit was hit, when one was: `rate_limited` (retryable) or `usage_exhausted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_kind: Option<crate::flavor::LimitKind>,
    /// The CLI's words when its login failed (the cell stays `non_zero_exit`; `multicooker
    /// login <flavor>` fixes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub login_failure: Option<String>,
    /// The model asked for.
    pub model: Option<String>,
    /// When it started.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: String,
    /// Killed at its timeout.
    pub timed_out: bool,
    /// Killed by its memory limit.
    pub oom_killed: bool,
    /// Why it could not start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What came back from the cell's `out/` and what was refused (links, specials, too deep,
    /// too long, over the cap), recorded on the host only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collect: Option<crate::cell::collect::Collected>,
    /// Host entries of its inputs that were not staged (links and specials in raw/).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input_skipped: Vec<crate::fsx::Skipped>,
    /// What sealing copied and skipped.
    pub seal: Option<CopyReport>,
    /// Egress mode, allowed targets and the canary's report.
    pub egress: serde_json::Value,
    /// Output files in which a credential was found and redacted (or removed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted_outputs: Vec<crate::redact::Redaction>,
    /// Token-shaped strings left in its sealed output (no secret of this run: flagged for the
    /// operator to look at before publishing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_shapes: Vec<crate::redact::TokenShape>,
    /// The CLI version its image records (`io.multicooker.cli-version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// The image it ran (its tag names the build context's digest), for provenance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The backend it ran on (`docker`, `swarm`), for provenance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The cluster node it ran on, for provenance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// What it spent, read live from its output (flavors that report usage).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spend: Option<crate::flavor::meter::Spend>,
    /// Its own cap, when its brief entry sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::brief::Budget>,
    /// Why it finished its turn over a budget (its flavor reports usage only at the end of its
    /// turn): its output is kept; judged only under `judging.over_budget: score`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<String>,
}

/// Hooks of the cook phase.
pub(super) struct CookHooks {
    paths: CookPaths,
    brief: Brief,
    status: Arc<StatusStore>,
    events: EventLog,
    progress: Arc<dyn Progress>,
    seal_max_bytes: u64,
    /// The round these cells run (1 for `cook`, N for `refine`).
    round: u32,
}

impl CookHooks {
    pub(super) fn new(
        paths: &CookPaths,
        brief: &Brief,
        status: Arc<StatusStore>,
        progress: Arc<dyn Progress>,
        seal_max_bytes: u64,
        round: u32,
    ) -> Self {
        Self {
            paths: paths.clone(),
            brief: brief.clone(),
            status,
            events: EventLog::new(paths),
            progress,
            seal_max_bytes,
            round,
        }
    }

    fn warn_state(&self, result: Result<(), crate::state::StateError>) {
        if let Err(e) = result {
            self.progress.note(&format!("warning: {e}"));
        }
    }

    fn relative(&self, path: &std::path::Path) -> String {
        path.strip_prefix(self.paths.dir())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

impl CellHooks for CookHooks {
    type Output = ParticipantResult;

    fn starting(&self, plan: &CellPlan) {
        self.progress
            .cell(Role::Participant, &plan.actor, CellPhase::Starting);
        self.warn_state(self.status.update_cell(
            &plan.actor,
            Role::Participant,
            &plan.flavor,
            |c| c.state = CellState::Starting,
        ));
    }

    fn started(&self, plan: &CellPlan, started_at: &str) {
        self.progress
            .cell(Role::Participant, &plan.actor, CellPhase::Running);
        self.warn_state(self.status.update_cell(
            &plan.actor,
            Role::Participant,
            &plan.flavor,
            |c| {
                c.state = CellState::Running;
                c.started_at = Some(started_at.to_owned());
            },
        ));
        self.warn_state(self.events.cell(
            "cell.started",
            Phase::Cook,
            &plan.actor,
            json!({"flavor": plan.flavor, "round": self.round}),
        ));
    }

    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> ParticipantResult {
        let mut state = outcome.state;
        let started = outcome.started_at.is_some();
        // A cell that never started, was cancelled, stopped at a budget or for forged spend, or
        // whose node was lost, is unscored (never 0): nothing of it goes to the judges (an
        // earlier round's seal goes too). `CellState::is_judged` states the policy.
        let withheld = !state.is_judged();
        if withheld {
            let _ = fsx::remove_tree(&self.paths.sealed(&plan.actor));
        }
        let seal_report = if started && !withheld {
            self.seal_unless_empty(plan, state)
        } else {
            None
        };
        let missing = if state == CellState::Ok && !self.brief.outputs.required.is_empty() {
            let missing = missing_outputs(
                &self.paths.sealed(&plan.actor).join("out"),
                &self.brief.outputs.required,
            );
            if !missing.is_empty() {
                state = CellState::ArtifactMissing;
                // The seal's meta must tell judges the same class.
                let _ = seal(
                    &self.paths,
                    &plan.actor,
                    state.as_str(),
                    self.round,
                    self.seal_max_bytes,
                );
            }
            Some(missing).filter(|m| !m.is_empty())
        } else {
            None
        };
        let model = self
            .brief
            .participant(&plan.actor)
            .and_then(|a| a.model.clone());
        let token_shapes = self.token_shapes(plan, seal_report.is_some());
        let result = ParticipantResult {
            name: plan.actor.clone(),
            flavor: plan.flavor.clone(),
            status: state,
            exit_code: outcome.exit_code,
            duration_s: outcome.duration_s,
            rate_limit_evidence: outcome.rate_limit.as_ref().map(|r| r.evidence.clone()),
            retry_after_s: outcome.rate_limit.as_ref().map(|r| r.retry_after_s),
            stdout: self.relative(&plan.stdout_log),
            stderr: self.relative(&plan.stderr_log),
            missing_outputs: missing.clone(),
            usage: cell_usage(plan, &self.relative(&plan.stdout_log), model.as_deref()),
            limit_kind: outcome.rate_limit.as_ref().map(|r| r.kind),
            login_failure: outcome.login_failure.clone(),
            model,
            started_at: outcome.started_at.clone(),
            finished_at: outcome.finished_at.clone(),
            timed_out: outcome.timed_out,
            oom_killed: outcome.oom_killed,
            error: outcome.error.clone(),
            collect: outcome.collected.first().map(|(_, report)| report.clone()),
            input_skipped: outcome.input_skipped.clone(),
            seal: seal_report,
            egress: egress_record(plan, outcome.canary.as_ref()),
            redacted_outputs: outcome.redacted.clone(),
            token_shapes,
            cli_version: None,
            image: None,
            backend: None,
            node: outcome.node.clone(),
            spend: outcome.spend,
            budget: plan.budget,
            over_budget: outcome.over_budget.clone(),
        };
        self.record(plan, &result);
        result
    }
}

impl CookHooks {
    /// Seals what the cell left. A cell that failed and left an empty `out/` is not sealed:
    /// there is nothing of it to judge, so it is unscored rather than scored on nothing (issue
    /// 27: one that crashed at start was scored 8.4 on an empty submission).
    fn seal_unless_empty(&self, plan: &CellPlan, state: CellState) -> Option<CopyReport> {
        if state != CellState::Ok && dir_is_empty(&self.paths.out(&plan.actor)) {
            let _ = fsx::remove_tree(&self.paths.sealed(&plan.actor));
            return None;
        }
        match seal(
            &self.paths,
            &plan.actor,
            state.as_str(),
            self.round,
            self.seal_max_bytes,
        ) {
            Ok(report) => Some(report),
            Err(e) => {
                self.progress
                    .note(&format!("warning: sealing `{}` failed: {e}", plan.actor));
                None
            }
        }
    }

    /// Scans a sealed output for token-shaped strings and warns about each.
    fn token_shapes(&self, plan: &CellPlan, sealed: bool) -> Vec<crate::redact::TokenShape> {
        if !sealed {
            return Vec::new();
        }
        crate::cell::collect::warn_token_shapes(
            &*self.progress,
            &format!("`{}`", plan.actor),
            &self.paths.sealed(&plan.actor).join("out"),
        )
    }

    /// trace.json, the status cell, events and progress for a finished participant.
    fn record(&self, plan: &CellPlan, result: &ParticipantResult) {
        let mut trace = serde_json::to_value(result).unwrap_or_default();
        if let Some(map) = trace.as_object_mut() {
            let mode = if self.round > 1 { "refine" } else { "cook" };
            map.insert("mode".into(), json!(mode));
            map.insert("round_num".into(), json!(self.round));
            map.insert(
                "rate_limited".into(),
                json!(result.status == CellState::RateLimited),
            );
        }
        if let Err(e) = fsx::write_json_atomic(&self.paths.trace(&plan.actor), &trace) {
            self.progress.note(&format!(
                "warning: cannot write trace of `{}`: {e}",
                plan.actor
            ));
        }
        self.warn_state(self.status.update_cell(
            &plan.actor,
            Role::Participant,
            &plan.flavor,
            |c| {
                c.state = result.status;
                c.exit_class = Some(result.status.as_str().to_owned());
                c.finished_at = Some(result.finished_at.clone());
                c.duration_s = Some(result.duration_s);
                c.missing.clone_from(&result.missing_outputs);
                c.extra.insert("exit_code".into(), json!(result.exit_code));
                c.extra
                    .insert("egress".into(), egress_summary(&result.egress));
            },
        ));
        if let Some(retry) = result
            .retry_after_s
            .filter(|_| result.status == CellState::RateLimited)
        {
            self.warn_state(self.events.cell(
                "cell.rate_limited",
                Phase::Cook,
                &plan.actor,
                json!({"retry_after_s": retry}),
            ));
        }
        let mut payload = json!({"exit_class": result.status, "duration_s": result.duration_s});
        if let Some(missing) = &result.missing_outputs {
            payload["missing_outputs"] = json!(missing);
        }
        if let Some(error) = &result.error {
            payload["error"] = json!(error);
        }
        self.warn_state(
            self.events
                .cell("cell.exited", Phase::Cook, &plan.actor, payload),
        );
        self.progress.cell(
            Role::Participant,
            &plan.actor,
            done_phase(
                result.status,
                result.exit_code,
                result.duration_s,
                result.error.as_deref(),
            ),
        );
    }
}

/// True when `dir` is missing or holds nothing.
fn dir_is_empty(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none())
}
