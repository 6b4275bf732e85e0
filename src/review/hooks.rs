//! What happens around each reviewer cell: progress at every transition and, once it ends, its
//! review read from the collected outbox (`consult/_work-<reviewer>/outbox/review.md`).

use std::sync::Arc;

use super::Review;
use crate::cell::plan::CellPlan;
use crate::cell::run::{CellHooks, CellOutcome};
use crate::fsx;
use crate::progress::{CellPhase, Progress};
use crate::state::{CellState, CookPaths, Role};

/// Hooks of the reviewers' phase.
pub(super) struct ReviewHooks {
    pub(super) paths: CookPaths,
    pub(super) progress: Arc<dyn Progress>,
}

impl CellHooks for ReviewHooks {
    type Output = Review;

    fn starting(&self, plan: &CellPlan) {
        self.progress
            .cell(Role::Reviewer, &plan.actor, CellPhase::Starting);
    }

    fn started(&self, plan: &CellPlan, _started_at: &str) {
        self.progress
            .cell(Role::Reviewer, &plan.actor, CellPhase::Running);
    }

    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> Review {
        // The outbox was collected (checked, never through a link) into the reviewer's folder.
        let path = self
            .paths
            .consult_work(&plan.actor)
            .join("outbox/review.md");
        let review = fsx::read_capped(&path, 4 << 20)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
            .filter(|t| !t.is_empty());
        let ok = outcome.state == CellState::Ok && review.is_some();
        let status = match (outcome.state, &review) {
            (CellState::Ok, Some(_)) => "ok".to_owned(),
            (CellState::Ok, None) => "no_review".to_owned(),
            (state, _) => state.as_str().to_owned(),
        };
        self.progress.cell(
            Role::Reviewer,
            &plan.actor,
            CellPhase::Done {
                state: status.clone(),
                detail: format!("{:.1}s", outcome.duration_s),
                ok,
            },
        );
        Review {
            name: plan.actor.clone(),
            flavor: plan.flavor.clone(),
            ok,
            status,
            exit_code: outcome.exit_code,
            duration_s: outcome.duration_s,
            text: review.filter(|_| ok),
        }
    }
}
