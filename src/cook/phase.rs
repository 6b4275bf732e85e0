//! One phase of cells, shared by cook and judge: remove what a killed earlier run of the same
//! role left, build the images while cells create their networks, run every cell, wait for the
//! build to settle, and tear everything down on every path.

use std::sync::Arc;

use super::RunSettings;
use super::cell::{CellHooks, RunOptions, run_cells};
use super::images::{self, FlavorImages};
use super::plan::CellPlan;
use super::stale::sweep_engine;
use crate::progress::Progress;
use crate::runtime::{Ledger, Runtime, RuntimeError, TeardownFailure};
use crate::state::{CookPaths, Role};

/// What a phase produced.
#[derive(Debug)]
pub struct PhaseRun<T> {
    /// The hooks' outputs, in plan order.
    pub outputs: Vec<T>,
    /// The image build's result (an error means no cell could start).
    pub build: Result<(), Arc<String>>,
    /// Objects teardown could not remove.
    pub leftovers: Vec<TeardownFailure>,
}

/// The cells of one phase, and what to do once images are built.
pub struct Cells<H: CellHooks> {
    /// Participant or judge.
    pub role: Role,
    /// The images the cells run.
    pub images: Vec<FlavorImages>,
    /// One plan per cell.
    pub plans: Vec<CellPlan>,
    /// What happens around each cell.
    pub hooks: Arc<H>,
    /// Runs (on a blocking thread) once every image is built.
    pub on_built: Box<dyn FnOnce() + Send>,
}

/// Runs a phase to the end; teardown has run when this returns.
pub async fn run_phase<R: Runtime, H: CellHooks>(
    runtime: &Arc<R>,
    paths: &CookPaths,
    phase: Cells<H>,
    settings: &RunSettings,
    progress: &dyn Progress,
) -> Result<PhaseRun<H::Output>, RuntimeError> {
    let swept = sweep_engine(&**runtime, paths, phase.role).await?;
    if swept > 0 {
        progress.note(&format!(
            "removed {swept} engine object(s) a killed earlier run left behind"
        ));
    }
    let ledger = Arc::new(Ledger::new(settings.keep));
    let ready = images::start_builds(runtime, &ledger, phase.images);
    let when_ready = ready.clone();
    let on_built = phase.on_built;
    let watcher = tokio::spawn(async move {
        if when_ready.await.is_ok() {
            let _ = tokio::task::spawn_blocking(on_built).await;
        }
    });
    let options = RunOptions {
        cancel: settings.cancel.clone(),
        max_parallel: settings.max_parallel,
        images: ready.clone(),
    };
    let outputs = run_cells(runtime, &ledger, &phase.hooks, phase.plans, &options).await;
    let build = ready.await;
    let _ = watcher.await;
    let leftovers = ledger.teardown(&**runtime).await;
    Ok(PhaseRun {
        outputs,
        build,
        leftovers,
    })
}
