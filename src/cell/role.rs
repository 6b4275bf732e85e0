//! The engine's one entry point for a role. A role (participant, judge, verifier, reviewer, the
//! chef as a participant, the next one) supplies only what differs: who runs, a plan per cell,
//! and its [`CellHooks`]. The engine owns what every role repeated: the spend recorded so far,
//! the images, the host logins (read and checked before anything is written, then given to each
//! cell in memory), the redactor, the flavors that run one at a time, and the phase itself.
//!
//! ```text
//! let cast = Venue { runtime, paths, brief, settings, progress }.cast(Role::Judge, &judges)?;
//! // … the role writes what its cells need (inboxes, prompts) …
//! let plans = judges.iter().map(|j| judge_plan(&cast.context(), j)).collect();
//! let run = cast.run(plans, hooks).await?;   // every object is gone when this returns
//! ```

use std::sync::Arc;

use super::images::{self, FlavorImages};
use super::names::Names;
use super::phase::{Cells, Gate, PhaseRun, run_phase};
use super::plan::{CellPlan, PlanContext};
use super::run::CellHooks;
use super::{CellSettings, RunError, spend};
use crate::brief::{Actor, Brief};
use crate::creds::Credentials;
use crate::progress::Progress;
use crate::runtime::SharedRuntime;
use crate::state::{CookPaths, Role};

/// Where a role's cells run: the engine, the cook, its brief, this run's settings and the
/// progress display.
#[derive(Clone, Copy)]
pub struct Venue<'a> {
    /// The engine.
    pub runtime: &'a SharedRuntime,
    /// The cook.
    pub paths: &'a CookPaths,
    /// Its brief.
    pub brief: &'a Brief,
    /// The run's cell settings.
    pub settings: &'a CellSettings,
    /// Where progress goes.
    pub progress: &'a Arc<dyn Progress>,
}

impl<'a> Venue<'a> {
    /// The cells of `role` for `actors`, checked before the role writes anything: the cook's
    /// spend so far is counted against its budget, every flavor has an image, and every login
    /// is read and outlives the longest timeout. An error here changes nothing.
    pub fn cast(self, role: Role, actors: &[&Actor]) -> Result<Cast<'a>, RunError> {
        spend::count_recorded(self.paths, &self.settings.budgets);
        let names = Names::for_paths(self.paths);
        let flavors: Vec<String> = actors.iter().map(|a| a.flavor.clone()).collect();
        let images = images::image_specs(
            self.paths,
            &names,
            &flavors,
            &self.settings.run_id,
            &self.settings.images,
        )?;
        let logins = snapshot_logins(self.brief, role, actors, &self.settings.logins)?;
        Ok(Cast {
            venue: self,
            settings: self.settings.clone(),
            role,
            names,
            images,
            serial: serial_flavors(&logins, &flavors),
            logins,
            on_built: Box::new(|| ()),
            gate: None,
        })
    }

    /// Cells that run images the role assembles itself and no CLI (the verifier): no login,
    /// nothing to redact, no budget counts them.
    pub fn cast_images(self, role: Role, images: Vec<FlavorImages>) -> Cast<'a> {
        Cast {
            venue: self,
            settings: CellSettings {
                budgets: super::budget::Budgets::default(),
                ..self.settings.clone()
            },
            role,
            names: Names::for_paths(self.paths),
            images,
            serial: Vec::new(),
            logins: Credentials::default(),
            on_built: Box::new(|| ()),
            gate: None,
        }
    }
}

/// A role's cells, checked and ready to plan and run.
pub struct Cast<'a> {
    venue: Venue<'a>,
    settings: CellSettings,
    role: Role,
    names: Names,
    images: Vec<FlavorImages>,
    logins: Credentials,
    serial: Vec<String>,
    on_built: Box<dyn FnOnce() + Send>,
    gate: Option<Gate>,
}

impl Cast<'_> {
    /// What a plan function needs: the cook, its engine names, the brief, identity, profile.
    pub fn context(&self) -> PlanContext<'_> {
        self.settings
            .plan_context(self.venue.paths, &self.names, self.venue.brief)
    }

    /// The images the cells run (the cook records which base each flavor ran).
    pub fn images(&self) -> &[FlavorImages] {
        &self.images
    }

    /// Adds images the role assembles itself (a CLI layered on a task's environment) after
    /// those of the flavors, which they may build on ([`FlavorImages::requires`]).
    #[must_use]
    pub fn with_images(mut self, images: Vec<FlavorImages>) -> Self {
        self.images.extend(images);
        self
    }

    /// Runs `then` (on a blocking thread) once every image is built.
    #[must_use]
    pub fn on_built(mut self, then: impl FnOnce() + Send + 'static) -> Self {
        self.on_built = Box::new(then);
        self
    }

    /// Checks the built images with `gate` before any cell is created ([`Gate`]).
    #[must_use]
    pub fn gate(mut self, gate: Gate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Gives each plan its own flavor's login (in memory, no other), runs every cell with the
    /// role's hooks, and tears everything down on every path. One cell's failure is its
    /// outcome, not an error; an image that did not build is in [`PhaseRun::build`].
    pub async fn run<H: CellHooks>(
        self,
        mut plans: Vec<CellPlan>,
        hooks: Arc<H>,
    ) -> Result<PhaseRun<H::Output>, RunError> {
        for plan in &mut plans {
            plan.files.login = self.logins.for_cell(&plan.flavor);
        }
        images::point_plans(&**self.venue.runtime, &self.images, &mut plans);
        let cells = Cells {
            role: self.role,
            images: self.images,
            plans,
            redactor: Arc::new(crate::redact::Redactor::new(&self.logins.secrets())),
            serial: self.serial,
            hooks,
            on_built: self.on_built,
            gate: self.gate,
        };
        let Venue {
            runtime,
            paths,
            progress,
            ..
        } = self.venue;
        run_phase(runtime, paths, cells, &self.settings, &**progress)
            .await
            .map_err(RunError::Engine)
    }
}

/// Reads the logins the cells' flavors need from the host and checks they outlive the cells.
/// Nothing is written: a missing or expiring login stops the command before it starts.
fn snapshot_logins(
    brief: &Brief,
    role: Role,
    actors: &[&Actor],
    sources: &crate::creds::LoginSources,
) -> Result<Credentials, RunError> {
    let mut flavors: Vec<(String, u64)> = Vec::new();
    for actor in actors {
        let timeout = brief.timeout_for(actor, role);
        match flavors.iter_mut().find(|(f, _)| *f == actor.flavor) {
            Some((_, longest)) => *longest = (*longest).max(timeout),
            None => flavors.push((actor.flavor.clone(), timeout)),
        }
    }
    Ok(Credentials::snapshot(
        &flavors,
        sources,
        &*sources.token_store(),
    )?)
}

/// Flavors whose cells must run one at a time.
fn serial_flavors(logins: &Credentials, flavors: &[String]) -> Vec<String> {
    let mut serial: Vec<String> = flavors
        .iter()
        .filter(|f| logins.serial(f))
        .cloned()
        .collect();
    serial.dedup();
    serial
}
