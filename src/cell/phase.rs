//! One phase of cells, shared by every role: remove what a killed earlier run of the same
//! role left, build the images while cells create their networks, run every cell, wait for the
//! build to settle, and tear everything down on every path.

use std::sync::Arc;

use super::CellSettings;
use super::egress::EgressContext;
use super::images::{self, FlavorImages};
use super::names::Names;
use super::plan::{CellPlan, Egress};
use super::run::{CellHooks, RunOptions, run_cells};
use super::stale::sweep_engine;
use crate::progress::Progress;
use crate::runtime::{
    LABEL_ROOT, Labels, Ledger, NetworkSpec, ObjectRef, RuntimeError, SharedRuntime,
    TeardownFailure,
};
use crate::state::{CookPaths, Role};

/// What a phase produced.
#[derive(Debug)]
pub struct PhaseRun<T> {
    /// The hooks' outputs, in plan order.
    pub outputs: Vec<T>,
    /// The image builds' result: the first image that did not build (its cells are
    /// `start_failed` with its error; cells of the other images ran).
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
    /// Secret strings never written to a log.
    pub redactor: Arc<crate::redact::Redactor>,
    /// Flavors whose cells run one at a time.
    pub serial: Vec<String>,
    /// Runs (on a blocking thread) once every image is built.
    pub on_built: Box<dyn FnOnce() + Send>,
    /// Checked once every image is built and before any cell is created.
    pub gate: Option<Gate>,
}

/// A check of the built images that every cell of the phase waits for (a Harbor task's
/// verifier user, read from its environment image): it gets the engine and the phase's ledger
/// (which records what it creates), and its error stops every cell before it is created, as an
/// image that did not build does ([`PhaseRun::build`]).
pub type Gate = Box<
    dyn FnOnce(
            SharedRuntime,
            Arc<Ledger>,
        ) -> futures_util::future::BoxFuture<'static, Result<(), String>>
        + Send,
>;

/// Runs a phase to the end; teardown has run when this returns.
pub async fn run_phase<H: CellHooks>(
    runtime: &SharedRuntime,
    paths: &CookPaths,
    phase: Cells<H>,
    settings: &CellSettings,
    progress: &dyn Progress,
) -> Result<PhaseRun<H::Output>, RuntimeError> {
    let swept = sweep_engine(&**runtime, paths, phase.role, &settings.run_id).await?;
    if swept > 0 {
        progress.note(&format!(
            "removed {swept} engine object(s) a killed earlier run left behind"
        ));
    }
    let ledger = Arc::new(Ledger::new(settings.keep));
    let egress = match prepare_egress(runtime, &ledger, paths, &phase.plans, settings).await {
        Ok(egress) => egress,
        Err(error) => {
            let _ = ledger.teardown(&**runtime).await;
            return Err(error);
        }
    };
    let ready = images::start_builds(runtime, &ledger, phase.images);
    let ready = match phase.gate {
        Some(gate) => {
            use futures_util::FutureExt;
            let (built, engine, records) = (ready.clone(), runtime.clone(), ledger.clone());
            let checked = async move {
                built.all().await?;
                gate(engine, records).await.map_err(Arc::new)
            }
            .boxed()
            .shared();
            tokio::spawn(checked.clone());
            ready.gated(checked)
        }
        None => ready,
    };
    let when_ready = ready.clone();
    let on_built = phase.on_built;
    let watcher = tokio::spawn(async move {
        if when_ready.all().await.is_ok() {
            let _ = tokio::task::spawn_blocking(on_built).await;
        }
    });
    let options = RunOptions {
        cancel: settings.cancel.clone(),
        max_parallel: settings.max_parallel,
        images: ready.clone(),
        egress,
        redactor: phase.redactor,
        serial: phase.serial,
        user: settings.user,
        home: settings.logins.home.clone(),
        budgets: settings.budgets.clone(),
    };
    let outputs = run_cells(runtime, &ledger, &phase.hooks, phase.plans, &options).await;
    let build = ready.all().await;
    let _ = watcher.await;
    let leftovers = ledger.teardown(&**runtime).await;
    Ok(PhaseRun {
        outputs,
        build,
        leftovers,
    })
}

/// When some cell runs behind a proxy: the proxy image (built once, like any base image) and
/// the cook's egress network, whose members cannot reach each other.
async fn prepare_egress(
    runtime: &SharedRuntime,
    ledger: &Ledger,
    paths: &CookPaths,
    plans: &[CellPlan],
    settings: &CellSettings,
) -> Result<Option<Arc<EgressContext>>, RuntimeError> {
    if !plans
        .iter()
        .any(|p| matches!(p.egress, Egress::Proxy { .. }))
    {
        return Ok(None);
    }
    let tools = images::base_specs(&["dummy".to_owned()], None, &settings.images)
        .map_err(|e| RuntimeError::Build {
            image: "multicooker-base-dummy".into(),
            message: e.to_string(),
        })?
        .remove(0);
    images::ensure_base(&**runtime, &tools).await?;
    // The operator may name an existing egress network (e.g. one with a corporate route).
    let name = if let Some(existing) = &settings.egress.network {
        Some(existing.clone())
    } else if !runtime.isolates_network_members() {
        // Members of one network would reach each other: one egress network per proxy.
        None
    } else {
        let name = format!("{}-egress", Names::for_paths(paths).project());
        let labels = Labels::new(paths.name(), "network").with(LABEL_ROOT, &paths.root_id());
        ledger.record(ObjectRef::network(&name));
        let spec = NetworkSpec {
            name: name.clone(),
            labels,
            internal: false,
            isolated: true,
        };
        runtime.create_network(&spec).await?;
        Some(name)
    };
    Ok(Some(Arc::new(EgressContext {
        tools_image: tools.tag,
        network: name,
        direct: settings.egress.canary_direct.clone(),
    })))
}
