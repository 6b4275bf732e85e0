//! The pipeline: the steps `cook → verify → judge → report` as one domain module, so that a
//! command (`cook`, `refine`, `resume`, `verify`, `judge`, `rejudge`, `report`, `doctor <task>`)
//! and a night (`nightly`) run the same code (issue 24; docs/BEHAVIOR.md §2.3). What a resume
//! runs again is [`resume`]'s, what a refine round is [`refine`]'s, and a cook's cells as a
//! compose file (`compose`, nothing started) [`compose`]'s.
//!
//! A step takes a [`Run`]: the engine, the cook, its checked brief, a [`Resolve`] value that
//! turns the brief into run settings (the caller's; this module never reads the environment
//! nor sees the command line), a [`Show`] that makes progress displays and takes notes (this
//! module never prints), the cancel token and, at night, the night's budget pool. A step
//! returns a typed outcome; the caller prints it.
//!
//! A cook made from a Harbor task (`harbor:` in brief.yaml, docs/HARBOR.md) is cooked in the
//! task's environment and verified by the task's own verifier ([`task`]); every other cook by
//! the cook step of `crate::cook`, then the hidden tests when brief.yaml has `verify:`.

pub mod compose;
pub mod cook;
pub mod judge;
pub mod refine;
pub mod report;
pub mod resume;
pub mod task;
pub mod verify;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::brief::Brief;
use crate::cell::CellSettings;
use crate::cell::budget::Pool;
use crate::cook::RunSettings;
use crate::progress::Progress;
use crate::runtime::{SharedRuntime, TeardownFailure};
use crate::state::{CookPaths, Role};

pub use cook::{CellsCooked, Cooked, Round, cook};
pub use judge::{Judging, judge};
pub use report::{Reported, report};
pub use task::TaskCooked;
pub use verify::verify;

/// Turns a brief into the settings of a run of `cells` cells (the caller resolves flags and
/// environment once; `settings::run_settings` behind it).
pub trait Resolve: Send + Sync {
    /// The settings of `cells` cells of `brief`, cancelled by `cancel`.
    ///
    /// # Errors
    /// A setting that does not parse (named with its variable and fix).
    fn settings(
        &self,
        brief: &Brief,
        cells: usize,
        cancel: CancellationToken,
    ) -> anyhow::Result<RunSettings>;
}

/// Where a step's progress and notes go (the printer, for commands and nights).
pub trait Show: Send + Sync {
    /// A progress display for the cells `names` of `role` in phase `phase` (`cook`, `judge`…).
    fn progress(
        &self,
        phase: &'static str,
        role: Role,
        run: (&CookPaths, &Brief),
        names: &[String],
    ) -> Arc<dyn Progress>;
    /// A line for the user.
    fn info(&self, line: &str);
    /// Engine objects teardown could not remove.
    fn leftovers(&self, leftovers: &[TeardownFailure]);
}

/// One run of pipeline steps on one cook.
pub struct Run<'a> {
    /// The engine.
    pub runtime: &'a SharedRuntime,
    /// The cook.
    pub paths: &'a CookPaths,
    /// Its checked brief.
    pub brief: &'a Brief,
    /// How settings are resolved.
    pub resolve: &'a dyn Resolve,
    /// Where progress and notes go.
    pub show: &'a dyn Show,
    /// Ctrl-C (or the night's end).
    pub cancel: CancellationToken,
    /// The night's budget pool, which participant and judge cells count against too.
    pub night: Option<Arc<Pool>>,
}

impl Run<'_> {
    /// The settings of `cells` cells counted against the night's budget, if any.
    ///
    /// # Errors
    /// As [`Resolve::settings`].
    pub fn settings(&self, cells: usize) -> anyhow::Result<RunSettings> {
        let mut settings = self.unpooled(cells)?;
        settings.cells.budgets.pools.extend(self.night.clone());
        Ok(settings)
    }

    /// The settings of `cells` cells that spend nothing (verifiers): the night's pool left out.
    fn unpooled(&self, cells: usize) -> anyhow::Result<RunSettings> {
        self.resolve
            .settings(self.brief, cells, self.cancel.clone())
    }

    /// The cell engine's view of this run with `settings`.
    fn venue<'v>(
        &'v self,
        settings: &'v CellSettings,
        progress: &'v Arc<dyn Progress>,
    ) -> crate::cell::Venue<'v> {
        crate::cell::Venue {
            runtime: self.runtime,
            paths: self.paths,
            brief: self.brief,
            settings,
            progress,
        }
    }

    /// A progress display for `names` of `role`.
    fn progress(&self, phase: &'static str, role: Role, names: &[String]) -> Arc<dyn Progress> {
        self.show
            .progress(phase, role, (self.paths, self.brief), names)
    }
}
