//! Running cells in parallel: create, start, stage the cell's files through the engine, let
//! its init start the program, stream logs to files, learn the program's end from init's exit
//! record (or the cell's own end) under a timeout, collect the writable areas through the
//! engine, kill, remove, and classify. Never a sleep or a poll on the host. One cell's failure
//! never stops another. Used by every role; what happens around a cell (status, sealing,
//! scores) is the caller's [`CellHooks`].

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::{BoxFuture, FutureExt, Shared};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::budget::CellSpend;
use super::collect::{Bounds, Collected};
use super::egress::{self, EgressContext};
use super::logs::{self, ExitRecord};
use super::plan::{CellPlan, CellUser, Egress};
use super::serial::{host_lock, lock_dir};
use super::stage;
use crate::flavor::{RateLimit, detect_login_failure, detect_rate_limit};
use crate::redact::Redactor;
use crate::runtime::{Ledger, ObjectRef, Runtime};
use crate::state::{CellState, now_iso};

/// How much of each log's end the rate-limit scan reads.
const SCAN_TAIL_BYTES: u64 = 64 << 10;
/// How long to wait for the log stream to drain after a cell exits.
const LOG_DRAIN: Duration = Duration::from_secs(5);
/// How long the host waits past a program's timeout for init's record before killing the cell
/// itself (init kills the program at the timeout; this is the backstop).
const BACKSTOP: Duration = Duration::from_secs(30);

/// How a cell ended, before caller-specific checks (required outputs, score collection).
#[derive(Debug, Clone, PartialEq)]
pub struct CellOutcome {
    /// The outcome class.
    pub state: CellState,
    /// The exit code, if the program ran.
    pub exit_code: Option<i64>,
    /// Seconds from start to exit, one decimal.
    pub duration_s: f64,
    /// When it started, if it did.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: String,
    /// Killed at its timeout.
    pub timed_out: bool,
    /// Killed by its memory limit.
    pub oom_killed: bool,
    /// A rate or usage limit found in its output.
    pub rate_limit: Option<RateLimit>,
    /// The CLI's words when its login failed (expired or revoked token), for a cell that
    /// ended non-zero: logging in again on the host fixes it, no retry does.
    pub login_failure: Option<String>,
    /// Why it could not start, or an engine error while it ran.
    pub error: Option<String>,
    /// The egress canary's report, for cells behind a proxy.
    pub canary: Option<serde_json::Value>,
    /// Output files in which a credential was found and redacted.
    pub redacted: Vec<crate::redact::Redaction>,
    /// What each writable area gave back (area path in the cell, report).
    pub collected: Vec<(String, Collected)>,
    /// Host entries of its inputs that were left out (links, specials).
    pub input_skipped: Vec<crate::fsx::Skipped>,
    /// The cluster node it ran on (`None` on a single engine), for provenance.
    pub node: Option<String>,
    /// What it spent, read live from its output (flavors that report usage).
    pub spend: Option<crate::flavor::meter::Spend>,
    /// Why it finished its turn over a budget (a flavor that reports its usage only at the end
    /// of its turn); judged or not by `judging.over_budget`.
    pub over_budget: Option<String>,
}

/// What the caller does around each cell. `finished` runs on a blocking thread (it may copy
/// files) and its result is returned by [`run_cells`] in plan order.
pub trait CellHooks: Send + Sync + 'static {
    /// What `finished` produces.
    type Output: Send + 'static;
    /// The cell is about to be created.
    fn starting(&self, plan: &CellPlan);
    /// The cell started.
    fn started(&self, plan: &CellPlan, started_at: &str);
    /// The cell ended and was removed.
    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> Self::Output;
}

/// Hooks of a role that needs nothing around its cells but each one's outcome, by actor (the
/// Harbor participant and verifier).
pub struct OutcomeByActor;

impl CellHooks for OutcomeByActor {
    type Output = (String, CellOutcome);
    fn starting(&self, _: &CellPlan) {}
    fn started(&self, _: &CellPlan, _: &str) {}
    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> Self::Output {
        (plan.actor.clone(), outcome)
    }
}

/// One image's build, shared by the cells that run it: resolves once it is built (or failed).
pub type ImageBuild = Shared<BoxFuture<'static, Result<(), Arc<String>>>>;

/// The builds a phase's cells wait on, one per image tag. A cell waits on its own image's build
/// alone, so another flavor's failed build never stops it (issue 25: healthy cells were
/// `start_failed` with another flavor's build error).
#[derive(Clone, Default)]
pub struct ImagesReady {
    builds: Arc<std::collections::BTreeMap<String, ImageBuild>>,
    /// A check every cell also waits for, once the builds are done (`phase::Gate`).
    gate: Option<ImageBuild>,
}

impl ImagesReady {
    /// The builds of these image tags.
    pub fn new(builds: std::collections::BTreeMap<String, ImageBuild>) -> Self {
        Self {
            builds: Arc::new(builds),
            gate: None,
        }
    }

    /// These builds, then `gate`, which every cell waits for too.
    #[must_use]
    pub fn gated(self, gate: ImageBuild) -> Self {
        Self {
            gate: Some(gate),
            ..self
        }
    }

    /// The build of `image` (ready at once when nothing builds it here), then the gate.
    pub fn of(&self, image: &str) -> ImageBuild {
        let build = self.builds.get(image).cloned();
        match (build, self.gate.clone()) {
            (Some(build), Some(gate)) => async move {
                build.await?;
                gate.await
            }
            .boxed()
            .shared(),
            (Some(build), None) => build,
            (None, Some(gate)) => gate,
            (None, None) => futures_util::future::ready(Ok(())).boxed().shared(),
        }
    }

    /// Every build settled, then the gate: the first failure (in tag order), else ok.
    pub async fn all(&self) -> Result<(), Arc<String>> {
        let results = futures_util::future::join_all(self.builds.values().cloned()).await;
        results
            .into_iter()
            .find_map(Result::err)
            .map_or(Ok(()), Err)?;
        match &self.gate {
            Some(gate) => gate.clone().await,
            None => Ok(()),
        }
    }
}

/// Images that are ready now (tests, or nothing to build).
pub fn images_ready_now() -> ImagesReady {
    ImagesReady::default()
}

/// Options of one parallel run.
#[derive(Clone)]
pub struct RunOptions {
    /// Cancelled on Ctrl-C: running cells are killed, unstarted ones never start.
    pub cancel: CancellationToken,
    /// Cells running at once.
    pub max_parallel: usize,
    /// Cells create their networks while images build, then wait for their own image's.
    pub images: ImagesReady,
    /// Proxy image and egress network, when some cell runs behind a proxy.
    pub egress: Option<Arc<EgressContext>>,
    /// Secret strings never written to a log.
    pub redactor: Arc<Redactor>,
    /// Flavors whose cells run one at a time (their login ships a refresh token).
    pub serial: Vec<String>,
    /// The identity cells run as (owner of their writable areas).
    pub user: CellUser,
    /// The host home, under which host-wide flavor locks live.
    pub home: std::path::PathBuf,
    /// The shared budgets cells count against.
    pub budgets: super::budget::Budgets,
}

/// Runs every plan and returns the hooks' outputs in plan order.
pub async fn run_cells<H: CellHooks>(
    runtime: &crate::runtime::SharedRuntime,
    ledger: &Arc<Ledger>,
    hooks: &Arc<H>,
    plans: Vec<CellPlan>,
    options: &RunOptions,
) -> Vec<H::Output> {
    let semaphore = Arc::new(Semaphore::new(options.max_parallel.max(1)));
    // One extra permit pool per serial flavor: its cells run one at a time.
    let serial: std::collections::HashMap<String, Arc<Semaphore>> = options
        .serial
        .iter()
        .map(|f| (f.clone(), Arc::new(Semaphore::new(1))))
        .collect();
    let mut set = JoinSet::new();
    let count = plans.len();
    for (index, plan) in plans.into_iter().enumerate() {
        let flavor_permit = serial.get(&plan.flavor).cloned();
        let (runtime, ledger, hooks, semaphore, options) = (
            runtime.clone(),
            ledger.clone(),
            hooks.clone(),
            semaphore.clone(),
            options.clone(),
        );
        set.spawn(async move {
            let outcome = {
                let _flavor_permit = match &flavor_permit {
                    Some(permits) => tokio::select! {
                        permit = permits.clone().acquire_owned() => permit.ok(),
                        () = options.cancel.cancelled() => None,
                    },
                    None => None,
                };
                // Other multicooker processes (a judge, a parallel nightly run) hand the same
                // refresh token to their cells too: one host-wide lock per serial flavor.
                let _host_lock = match &flavor_permit {
                    Some(_) => {
                        host_lock(&lock_dir(&options.home), &plan.flavor, &options.cancel).await
                    }
                    None => None,
                };
                let _permit = tokio::select! {
                    permit = semaphore.acquire_owned() => permit.ok(),
                    () = options.cancel.cancelled() => None,
                };
                let outcome = run_one(&*runtime, &ledger, &hooks, &plan, &options).await;
                // Whatever happened, the cell (with its areas), its proxy and its network are
                // gone before we report (the proxy before the network it is attached to).
                for object in cell_objects(&plan, options.egress.as_deref()) {
                    let _ = ledger.release(&*runtime, &object).await;
                }
                outcome
            };
            let output = tokio::task::spawn_blocking(move || hooks.finished(&plan, outcome)).await;
            (index, output)
        });
    }
    let mut outputs: Vec<Option<H::Output>> = (0..count).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((index, Ok(output))) => outputs[index] = Some(output),
            // A hook panicked: the invariant it broke is a bug, not a cell outcome.
            Ok((_, Err(e))) | Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    outputs
        .into_iter()
        .map(|o| o.expect("every spawned cell reports exactly once"))
        .collect()
}

/// Runs one cell from network creation to exit; the caller removes what it created.
async fn run_one<H: CellHooks>(
    runtime: &dyn Runtime,
    ledger: &Ledger,
    hooks: &Arc<H>,
    plan: &CellPlan,
    options: &RunOptions,
) -> CellOutcome {
    let mut pending = Vec::new();
    let outcome = run_until_exit(runtime, ledger, hooks, plan, options, &mut pending).await;
    for handle in pending {
        let _ = handle.await;
    }
    outcome
}

async fn run_until_exit<H: CellHooks>(
    runtime: &dyn Runtime,
    ledger: &Ledger,
    hooks: &Arc<H>,
    plan: &CellPlan,
    options: &RunOptions,
    pending: &mut Vec<tokio::task::JoinHandle<()>>,
) -> CellOutcome {
    if options.cancel.is_cancelled() {
        return not_started(CellState::Cancelled, None);
    }
    if let Some(why) = options.budgets.blocked() {
        return not_started(
            CellState::BudgetExhausted,
            Some(format!("not started: {why}")),
        );
    }
    in_background(pending, hooks, plan, CellHooks::starting);
    let launched = match launch(runtime, ledger, plan, options).await {
        Ok(launched) => launched,
        Err(outcome) => return *outcome,
    };
    let name = launched.spec.name.as_str();
    let spend = CellSpend::new(&plan.flavor, plan.budget, &options.budgets);
    let (log_task, record) = logs::pump(
        runtime.cell_logs(name),
        (plan.stdout_log.clone(), plan.stderr_log.clone()),
        options.redactor.clone(),
        Some(spend.clone()),
    );
    // What the image holds where the program will work, before anything of it runs.
    let before_error = collect_before(runtime, plan, &options.redactor).await;
    if let Err(outcome) = stage_all(runtime, name, launched.archives, &options.cancel).await {
        return *outcome;
    }
    let started = Instant::now();
    let started_at = now_iso();
    let at = started_at.clone();
    in_background(pending, hooks, plan, move |hooks, plan| {
        hooks.started(plan, &at);
    });
    let node = runtime.placement_of(name).await.ok().flatten();
    let ended = wait_for_program(runtime, plan, (&options.cancel, &spend), record).await;
    let duration_s = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let (collected, lost_in_collect) = if ended.how == Ending::Cancelled || ended.record.is_none() {
        (Vec::new(), None)
    } else {
        collect_all(runtime, plan, &options.redactor).await
    };
    let oom = oom_of(runtime, name, &ended).await;
    if ended.how == Ending::Recorded {
        // A holding cell has given its areas back: it ends now, not at its deadline.
        let _ = runtime.kill_cell(name).await;
    }
    // Init ended every process of the cell before its record: what is kept is a file system
    // and nothing running (a fresh cell from it starts with only its own init).
    let commit_error = match &plan.commit {
        Some((tag, labels)) if ended.how != Ending::Cancelled => runtime
            .commit_cell(name, tag, labels)
            .await
            .err()
            .map(|e| format!("keeping its final file system failed: {e}")),
        _ => None,
    };
    if tokio::time::timeout(LOG_DRAIN, log_task).await.is_err() {
        // The stream did not end although the cell did; the file has what arrived.
    }
    let output = read_output_tails(&plan.stdout_log, &plan.stderr_log).await;
    let rate_limit = detect_rate_limit(&plan.flavor, &output);
    let (mut state, mut error) = classify(&ended, oom, rate_limit.is_some());
    let node = lost_while_collecting(lost_in_collect, (&mut state, &mut error), node);
    if let Some(why) = spend.implausible() {
        // Flagged whatever else happened: its claims are not believed.
        (state, error) = (CellState::SpendImplausible, Some(why));
    }
    let over_budget = spend
        .over_budget()
        .filter(|_| state != CellState::SpendImplausible);
    (state, error) = over_budget_state(plan, state, error, over_budget.as_deref());
    let login_failure = (state == CellState::NonZeroExit)
        .then(|| detect_login_failure(&plan.flavor, &output))
        .flatten();
    let (collected, collect_error) = split_reports(collected);
    CellOutcome {
        state,
        exit_code: ended.exit_code(),
        duration_s,
        started_at: Some(started_at),
        finished_at: now_iso(),
        timed_out: ended.how == Ending::TimedOut || ended.record.is_some_and(|r| r.timed_out),
        oom_killed: oom,
        rate_limit,
        error: error
            .or(collect_error)
            .or(before_error)
            .or(commit_error)
            .or_else(|| login_failure.as_ref().map(|l| login_error(&plan.flavor, l))),
        login_failure,
        canary: launched.canary,
        redacted: collected
            .iter()
            .flat_map(|(_, report)| report.redacted.iter().cloned())
            .collect(),
        collected,
        input_skipped: launched.skipped,
        node,
        spend: crate::flavor::meter::reports(&plan.flavor)
            .tokens
            .then(|| spend.spend()),
        over_budget,
    }
}

/// A created and started cell, waiting for its files.
struct Launched {
    spec: crate::runtime::CellSpec,
    archives: Vec<(String, crate::runtime::Archive)>,
    skipped: Vec<crate::fsx::Skipped>,
    canary: Option<serde_json::Value>,
}

/// Builds the cell's tars, creates its network, waits for the images, starts its egress guard,
/// creates and starts the cell. Every step checks for Ctrl-C: a cell created when it came is
/// never started.
async fn launch(
    runtime: &dyn Runtime,
    ledger: &Ledger,
    plan: &CellPlan,
    options: &RunOptions,
) -> Result<Launched, Box<CellOutcome>> {
    let cancel = &options.cancel;
    let failed = |error: String| Box::new(not_started(CellState::StartFailed, Some(error)));
    let cancelled = || Box::new(not_started(CellState::Cancelled, None));
    // The tars are built from host files while the network is created.
    let user = plan.user.unwrap_or(options.user);
    let (files, control) = (plan.files.clone(), plan.spec.init.launch);
    let staging = tokio::task::spawn_blocking(move || stage::prepare(&files, user, control));
    if let Some(network) = &plan.network {
        ledger.record(ObjectRef::network(&network.name));
        runtime
            .create_network(network)
            .await
            .map_err(|e| failed(e.to_string()))?;
    }
    let staging = match staging.await {
        Ok(Ok(staging)) => staging,
        Ok(Err(e)) => return Err(failed(format!("cannot stage its files: {e}"))),
        Err(e) => return Err(failed(e.to_string())),
    };
    let images = tokio::select! {
        built = options.images.of(&plan.spec.image) => built,
        () = cancel.cancelled() => return Err(cancelled()),
    };
    images.map_err(|e| failed(format!("image build failed: {e}")))?;
    if let Some(why) = options.budgets.blocked() {
        return Err(Box::new(not_started(
            CellState::BudgetExhausted,
            Some(format!("not started: {why}")),
        )));
    }
    let canary = guard_egress(runtime, ledger, plan, options).await?;
    let mut spec = plan.spec.clone();
    spec.areas = staging.areas;
    spec.init.hold = !plan.files.writable.is_empty();
    spec.init.go_dir = plan.files.input_area;
    ledger.record(ObjectRef::cell(&spec.name));
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    runtime
        .create_cell(&spec)
        .await
        .map_err(|e| failed(e.to_string()))?;
    // A Ctrl-C between create and start must not start the cell.
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    runtime
        .start_cell(&spec.name)
        .await
        .map_err(|e| failed(e.to_string()))?;
    Ok(Launched {
        spec,
        archives: staging.archives,
        skipped: staging.skipped,
        canary,
    })
}

/// Stages inputs, seeds and the login, the go file last (then init starts the program).
async fn stage_all(
    runtime: &dyn Runtime,
    name: &str,
    archives: Vec<(String, crate::runtime::Archive)>,
    cancel: &CancellationToken,
) -> Result<(), Box<CellOutcome>> {
    for (target, archive) in archives {
        let staged = tokio::select! {
            staged = runtime.stage(name, &target, archive) => staged,
            () = cancel.cancelled() => {
                let _ = runtime.kill_cell(name).await;
                return Err(Box::new(not_started(CellState::Cancelled, None)));
            }
        };
        if let Err(e) = staged {
            let _ = runtime.kill_cell(name).await;
            // A lost node is an infrastructure failure, not the cell's.
            let state = match engine_ending(&e) {
                Ending::NodeLost => CellState::NodeLost,
                _ => CellState::StartFailed,
            };
            let mut outcome = not_started(state, Some(format!("staging failed: {e}")));
            if let crate::runtime::RuntimeError::NodeLost { node } = e {
                outcome.node = Some(node);
            }
            return Err(Box::new(outcome));
        }
    }
    Ok(())
}

/// The areas that came back, and the first collection that failed, as an error line.
fn split_reports(
    reports: Vec<(String, std::io::Result<Collected>)>,
) -> (Vec<(String, Collected)>, Option<String>) {
    let mut collected = Vec::new();
    let mut error = None;
    for (target, report) in reports {
        match report {
            Ok(report) => collected.push((target, report)),
            Err(e) => {
                error.get_or_insert_with(|| format!("collecting `{target}` failed: {e}"));
            }
        }
    }
    (collected, error)
}

/// A node lost while the cell's output was collected: the program ended, but what it left
/// never fully came back, an infrastructure failure like any other loss of its node
/// (unscored, never sealed, run again). Returns the cell's node.
fn lost_while_collecting(
    lost: Option<String>,
    (state, error): (&mut CellState, &mut Option<String>),
    node: Option<String>,
) -> Option<String> {
    let Some(lost) = lost else {
        return node;
    };
    *state = CellState::NodeLost;
    *error = Some(format!(
        "node `{lost}` was lost while the cell's output was collected"
    ));
    Some(lost)
}

/// Collects every writable area to its host folder (replacing what was there); with the
/// node that was lost while it did, if one was (the rest is not asked for then).
/// Whether the memory limit killed a process: init reads the cell's own counter; the engine's
/// flag covers a cell that ended.
async fn oom_of(runtime: &dyn Runtime, name: &str, ended: &Ended) -> bool {
    match ended.record {
        Some(record) => record.oom,
        None => ended.how == Ending::CellExited && runtime.oom_killed(name).await.unwrap_or(false),
    }
}

/// Collects the folders the plan wants as they are before the program starts
/// ([`crate::cell::files::Writable::before_to`]); the first failure, as the cell's error.
async fn collect_before(
    runtime: &dyn Runtime,
    plan: &CellPlan,
    redactor: &Arc<Redactor>,
) -> Option<String> {
    for writable in &plan.files.writable {
        let Some(dest) = &writable.before_to else {
            continue;
        };
        let target = writable.target();
        let (report, _) =
            collect_one(runtime, plan, (&target, dest, writable.cap_bytes), redactor).await;
        if let Err(error) = report {
            return Some(format!(
                "collecting {target} before the program started failed: {error}"
            ));
        }
    }
    None
}

/// Collects one folder of the cell to `dest` (replaced), in `cap` bytes; the node lost
/// meanwhile, if any.
async fn collect_one(
    runtime: &dyn Runtime,
    plan: &CellPlan,
    (target, dest, cap): (&str, &std::path::Path, u64),
    redactor: &Arc<Redactor>,
) -> (std::io::Result<Collected>, Option<String>) {
    let lost = Arc::new(std::sync::Mutex::new(None::<String>));
    let stream = runtime.collect(&plan.spec.name, target);
    let dest = dest.to_path_buf();
    let bounds = Bounds::with_max_bytes(cap);
    let redactor = redactor.clone();
    let seen = lost.clone();
    let reader =
        tokio_util::io::StreamReader::new(futures_util::StreamExt::map(stream, move |item| {
            item.map_err(|e| {
                if let crate::runtime::RuntimeError::NodeLost { node } = &e {
                    *seen
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(node.clone());
                }
                std::io::Error::other(e)
            })
        }));
    let bridge = tokio_util::io::SyncIoBridge::new(reader);
    let report = tokio::task::spawn_blocking(move || {
        crate::fsx::remove_tree(&dest)?;
        if let Some(parent) = dest.parent() {
            fs_err::create_dir_all(parent)?;
        }
        super::collect::unpack(bridge, &dest, bounds, &redactor)
    })
    .await
    .unwrap_or_else(|e| Err(std::io::Error::other(e)));
    let lost = lost
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    (report, lost)
}

async fn collect_all(
    runtime: &dyn Runtime,
    plan: &CellPlan,
    redactor: &Arc<Redactor>,
) -> (Vec<(String, std::io::Result<Collected>)>, Option<String>) {
    let mut reports = Vec::new();
    for writable in &plan.files.writable {
        let target = writable.target();
        let folder = (
            target.as_str(),
            writable.collect_to.as_path(),
            writable.cap_bytes,
        );
        let (report, lost) = collect_one(runtime, plan, folder, redactor).await;
        reports.push((target, report));
        if lost.is_some() {
            return (reports, lost);
        }
    }
    (reports, None)
}

/// For a cell behind a proxy: starts the proxy and runs the canary before the cell's clock
/// starts. A failure stops the cell with the reason, as `start_failed`.
async fn guard_egress(
    runtime: &dyn Runtime,
    ledger: &Ledger,
    plan: &CellPlan,
    options: &RunOptions,
) -> Result<Option<serde_json::Value>, Box<CellOutcome>> {
    if !matches!(plan.egress, Egress::Proxy { .. }) {
        return Ok(None);
    }
    let fail = |why: String, canary: Option<serde_json::Value>| {
        let mut outcome = not_started(CellState::StartFailed, Some(why));
        outcome.canary = canary;
        Box::new(outcome)
    };
    let Some(context) = &options.egress else {
        return Err(fail(
            "no egress proxy is available for this run".into(),
            None,
        ));
    };
    egress::start_proxy(runtime, &options.redactor, ledger, plan, context)
        .await
        .map_err(|e| fail(format!("egress proxy failed: {e}"), None))?;
    let canary = egress::run_canary(runtime, ledger, plan, context).await;
    if canary.passed {
        Ok(Some(canary.report))
    } else {
        Err(fail(
            format!("egress canary failed: {}", egress::failure_reason(&canary)),
            Some(canary.report),
        ))
    }
}

/// Everything a cell may have created, in removal order.
fn cell_objects(plan: &CellPlan, egress: Option<&EgressContext>) -> Vec<ObjectRef> {
    let mut objects = vec![ObjectRef::cell(&plan.spec.name)];
    if matches!(plan.egress, Egress::Proxy { .. }) {
        objects.push(ObjectRef::cell(&egress::canary_name(&plan.spec.name)));
        objects.push(ObjectRef::cell(&super::plan::proxy_name(&plan.spec.name)));
        if egress.is_some_and(|e| e.network.is_none()) {
            objects.push(ObjectRef::network(&egress::own_egress_network(
                &plan.spec.name,
            )));
        }
    }
    objects.extend(plan.network.as_ref().map(|n| ObjectRef::network(&n.name)));
    objects
}

/// Runs a state-writing hook on a blocking thread: its fsyncs must not stall the engine calls
/// of other cells on the async workers. Order is kept: `finished` runs after both.
fn in_background<H: CellHooks>(
    pending: &mut Vec<tokio::task::JoinHandle<()>>,
    hooks: &Arc<H>,
    plan: &CellPlan,
    hook: impl FnOnce(&H, &CellPlan) + Send + 'static,
) {
    let (hooks, plan) = (hooks.clone(), plan.clone());
    pending.push(tokio::task::spawn_blocking(move || hook(&hooks, &plan)));
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Init printed the program's exit record (the cell still holds its areas).
    Recorded,
    /// The cell itself ended without a record (its init died, or it had nothing to hold).
    CellExited,
    /// No record by the host's backstop: the host killed the cell.
    TimedOut,
    Cancelled,
    EngineError,
    /// The cluster node it ran on was lost.
    NodeLost,
    /// Its budget (or a shared one that stops running cells) was reached: the host killed it.
    BudgetExhausted,
}

#[derive(Debug)]
struct Ended {
    how: Ending,
    record: Option<ExitRecord>,
    /// The cell's own exit code, when it exited without a record.
    cell_code: Option<i64>,
    error: Option<String>,
}

impl Ended {
    fn exit_code(&self) -> Option<i64> {
        match self.record {
            Some(record) => record
                .code
                .or_else(|| record.signal.map(|signal| 128 + signal)),
            None => self.cell_code,
        }
    }
}

/// Waits for the program's end: init's exit record, or the cell's own end (never a poll); the
/// host's backstop past the timeout, or Ctrl-C, kills the cell.
async fn wait_for_program(
    runtime: &dyn Runtime,
    plan: &CellPlan,
    (cancel, spend): (&CancellationToken, &CellSpend),
    record: tokio::sync::oneshot::Receiver<ExitRecord>,
) -> Ended {
    let name = plan.spec.name.as_str();
    let mut record = record;
    // Biased: a program that has ended keeps its outcome even if its last line crossed a
    // budget (it spends nothing more); a budget stops only a program still running.
    let how = tokio::select! {
        biased;
        got = &mut record => match got {
            Ok(record) => return Ended { how: Ending::Recorded, record: Some(record), cell_code: None, error: None },
            // The log stream ended without a record: the cell is gone; wait for its code.
            Err(_) => match tokio::time::timeout(LOG_DRAIN, runtime.wait_cell(name)).await {
                Ok(Ok(exit)) => return Ended { how: Ending::CellExited, record: None, cell_code: Some(exit.code), error: None },
                Ok(Err(e)) => return Ended { how: engine_ending(&e), record: None, cell_code: None, error: Some(e.to_string()) },
                Err(_) => Ending::TimedOut,
            },
        },
        waited = tokio::time::timeout(plan.timeout + BACKSTOP, runtime.wait_cell(name)) => match waited {
            Ok(Ok(exit)) => {
                // The record and the cell's end race: a record already printed wins.
                let late = tokio::time::timeout(LOG_DRAIN, record).await.ok().and_then(Result::ok);
                return Ended { how: if late.is_some() { Ending::Recorded } else { Ending::CellExited }, record: late, cell_code: Some(exit.code), error: None };
            }
            Ok(Err(e)) => return Ended { how: engine_ending(&e), record: None, cell_code: None, error: Some(e.to_string()) },
            Err(_) => Ending::TimedOut,
        },
        () = cancel.cancelled() => Ending::Cancelled,
        why = spend.exhausted() => {
            let killed = runtime.kill_cell(name).await;
            let error = match killed {
                Ok(()) => why,
                Err(e) => format!("stopped because {why}, but: {e}"),
            };
            return Ended { how: Ending::BudgetExhausted, record: None, cell_code: None, error: Some(error) };
        }
    };
    let killed = runtime.kill_cell(name).await;
    Ended {
        how,
        record: None,
        cell_code: None,
        error: killed.err().map(|e| e.to_string()),
    }
}

/// An engine error that ended a wait: a lost node is an infrastructure failure of its own.
fn engine_ending(error: &crate::runtime::RuntimeError) -> Ending {
    if matches!(error, crate::runtime::RuntimeError::NodeLost { .. }) {
        Ending::NodeLost
    } else {
        Ending::EngineError
    }
}

/// The reference's order: oom, rate limit, timeout, then exit code (docs/BEHAVIOR.md §4.5). A cell
/// stopped by the user is `cancelled` whatever it printed.
fn classify(ended: &Ended, oom: bool, rate_limited: bool) -> (CellState, Option<String>) {
    let timed_out = ended.how == Ending::TimedOut || ended.record.is_some_and(|r| r.timed_out);
    let state = match ended.how {
        Ending::Cancelled => CellState::Cancelled,
        Ending::EngineError => CellState::StartFailed,
        Ending::NodeLost => CellState::NodeLost,
        Ending::BudgetExhausted => CellState::BudgetExhausted,
        _ if oom => CellState::OomKilled,
        _ if rate_limited => CellState::RateLimited,
        _ if timed_out => CellState::TimedOut,
        _ if ended.exit_code() == Some(0) => CellState::Ok,
        _ => CellState::NonZeroExit,
    };
    (state, ended.error.clone())
}

fn not_started(state: CellState, error: Option<String>) -> CellOutcome {
    CellOutcome {
        state,
        exit_code: None,
        duration_s: 0.0,
        started_at: None,
        finished_at: now_iso(),
        timed_out: false,
        oom_killed: false,
        rate_limit: None,
        login_failure: None,
        error,
        canary: None,
        redacted: Vec::new(),
        collected: Vec::new(),
        input_skipped: Vec::new(),
        node: None,
        spend: None,
        over_budget: None,
    }
}

/// A cell that finished its turn over a budget: judged under `judging.over_budget: score`,
/// else `budget_exhausted` (its work done and collected, kept in the cook folder).
fn over_budget_state(
    plan: &CellPlan,
    state: CellState,
    error: Option<String>,
    why: Option<&str>,
) -> (CellState, Option<String>) {
    let Some(why) = why.filter(|_| !plan.score_over_budget && state.is_judged()) else {
        return (state, error);
    };
    (
        CellState::BudgetExhausted,
        Some(format!(
            "{why}; its output is kept in the cook folder, not judged (`judging.over_budget: score` in brief.yaml judges it)"
        )),
    )
}

/// The record's reason for a cell whose login failed, with the fix.
fn login_error(flavor: &str, evidence: &str) -> String {
    format!(
        "login failed: {evidence} (log in again on the host with {})",
        crate::creds::login_advice(flavor)
    )
}

/// The ends of a cell's logs, which the limit and login scans read.
async fn read_output_tails(stdout: &Path, stderr: &Path) -> String {
    let mut text = String::new();
    for path in [stdout, stderr] {
        if let Ok(bytes) = read_tail(path, SCAN_TAIL_BYTES).await {
            text.push_str(&String::from_utf8_lossy(&bytes));
            text.push('\n');
        }
    }
    text
}

async fn read_tail(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut file = tokio::fs::File::open(path).await?;
    let len = file.metadata().await?.len();
    file.seek(std::io::SeekFrom::Start(len.saturating_sub(limit)))
        .await?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).await?;
    Ok(bytes)
}

#[cfg(test)]
mod tests;
