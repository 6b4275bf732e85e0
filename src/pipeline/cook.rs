//! The cook step: the selected participants of a cook, then (for a cook with `verify:`) the
//! hidden tests on what they sealed. A cook made from a Harbor task goes to [`super::task`]:
//! the participants work in the task's environment and the task's verifier gives the rewards.

use super::Run;
use super::task::{self, TaskCooked};
use crate::cook::{CookOutcome, Refine};
use crate::state::{CookState, Role};
use crate::verify::VerifyOutcome;

/// Which round a cook step runs and how.
#[derive(Debug, Clone)]
pub struct Round {
    /// The progress display's phase: `cook`, `refine`, `resume` or `doctor`.
    pub phase: &'static str,
    /// Run the sandbox probe beside the cells.
    pub sandbox_check: bool,
    /// Keep the other participants' cells and results (resume, a night run again).
    pub merge: bool,
    /// A refine round's prompts.
    pub refine: Option<Refine>,
    /// Run the hidden tests after the cells (`verify:` of brief.yaml); a night runs them as a
    /// step of its own over every participant.
    pub verify: bool,
}

impl Default for Round {
    fn default() -> Self {
        Self {
            phase: "cook",
            sandbox_check: true,
            merge: false,
            refine: None,
            verify: true,
        }
    }
}

/// What a cook step gave.
#[derive(Debug)]
pub enum Cooked {
    /// A cook of cells in their flavors' images, and its hidden tests if any ran.
    Cells(CellsCooked),
    /// A Harbor task's participants and their rewards.
    Task(Box<TaskCooked>),
}

/// What cooking in the flavors' images gave.
#[derive(Debug)]
pub struct CellsCooked {
    /// The participants' cells.
    pub outcome: CookOutcome,
    /// The hidden tests' results (`None`: no `verify:`, or cancelled).
    pub verified: Option<VerifyOutcome>,
}

impl CellsCooked {
    /// Whether Ctrl-C cut the cells or the hidden tests after them short.
    #[must_use]
    pub fn cancelled(&self) -> bool {
        self.outcome.state == CookState::Cancelled
            || self.verified.as_ref().is_some_and(|v| v.cancelled)
    }
}

/// Cooks `selected` participants of the run's cook: in the task's environment for a cook made
/// from a Harbor task, else in their flavors' images ([`cells`]).
///
/// # Errors
/// A setting, the cook folder, the engine, or (for a Harbor task) a task this build cannot run.
pub async fn cook(run: &Run<'_>, selected: &[String], round: Round) -> anyhow::Result<Cooked> {
    match &run.brief.harbor {
        Some(harbor) => task::cook(run, harbor, selected, (round.phase, round.merge))
            .await
            .map(|task| Cooked::Task(Box::new(task))),
        None => cells(run, selected, round).await.map(Cooked::Cells),
    }
}

/// Cooks `selected` participants in their flavors' images (a refine round or a resume runs
/// this whatever the cook), then the hidden tests on what they sealed when `round.verify`.
///
/// # Errors
/// A setting, the cook folder or the engine.
pub async fn cells(
    run: &Run<'_>,
    selected: &[String],
    round: Round,
) -> anyhow::Result<CellsCooked> {
    let mut settings = run.settings(selected.len())?;
    settings.sandbox_check = round.sandbox_check;
    settings.merge = round.merge;
    settings.refine = round.refine;
    let progress = run.progress(round.phase, Role::Participant, selected);
    let outcome = crate::cook::cook(
        run.runtime,
        run.paths,
        run.brief,
        selected,
        &settings,
        progress,
    )
    .await?;
    run.show.leftovers(&outcome.leftovers);
    let verified = if round.verify && outcome.state != CookState::Cancelled {
        super::verify::after_cook(run, selected, &settings.cells).await?
    } else {
        None
    };
    Ok(CellsCooked { outcome, verified })
}
