//! Running cells in parallel: create, start, stream logs to files, wait through the engine's
//! wait API under a timeout (never a sleep or a poll), kill on timeout or cancel, remove, and
//! classify. One cell's failure never stops another. Used by cook and judge alike; what happens
//! after a cell ends (sealing, score collection) is the caller's [`CellHooks`].

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::{BoxFuture, FutureExt, Shared};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::egress::{self, EgressContext};
use super::plan::{CellPlan, Egress};
use crate::flavor::{RateLimit, detect_rate_limit};
use crate::redact::Redactor;
use crate::runtime::{CellExit, Ledger, LogChunk, ObjectRef, Runtime};
use crate::state::{CellState, now_iso};

/// Largest log kept per stream; the rest is dropped with a marker.
pub const LOG_CAP_BYTES: u64 = 64 << 20;
/// How much of each log's end the rate-limit scan reads.
const SCAN_TAIL_BYTES: u64 = 64 << 10;
/// How long to wait for the log stream to drain after a cell exits.
const LOG_DRAIN: Duration = Duration::from_secs(5);

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
    /// Why it could not start, or an engine error while it ran.
    pub error: Option<String>,
    /// The egress canary's report, for cells behind a proxy.
    pub canary: Option<serde_json::Value>,
    /// Output files in which a credential was found and redacted (or removed).
    pub redacted: Vec<crate::redact::Redaction>,
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

/// Resolves once the images the cells need are built (or failed to build).
pub type ImagesReady = Shared<BoxFuture<'static, Result<(), Arc<String>>>>;

/// Images that are ready now (tests, or nothing to build).
pub fn images_ready_now() -> ImagesReady {
    futures_util::future::ready(Ok(())).boxed().shared()
}

/// Options of one parallel run.
#[derive(Clone)]
pub struct RunOptions {
    /// Cancelled on Ctrl-C: running cells are killed, unstarted ones never start.
    pub cancel: CancellationToken,
    /// Cells running at once.
    pub max_parallel: usize,
    /// Cells create their networks while images build, then wait for this.
    pub images: ImagesReady,
    /// Proxy image and egress network, when some cell runs behind a proxy.
    pub egress: Option<Arc<EgressContext>>,
    /// Secret strings never written to a log.
    pub redactor: Arc<Redactor>,
    /// Flavors whose cells run one at a time (their login ships a refresh token).
    pub serial: Vec<String>,
}

/// Runs every plan (networks must exist already) and returns the hooks' outputs in plan order.
pub async fn run_cells<R: Runtime, H: CellHooks>(
    runtime: &Arc<R>,
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
                    Some(_) => host_lock(&lock_dir(), &plan.flavor, &options.cancel).await,
                    None => None,
                };
                let _permit = tokio::select! {
                    permit = semaphore.acquire_owned() => permit.ok(),
                    () = options.cancel.cancelled() => None,
                };
                let outcome = run_one(&*runtime, &ledger, &hooks, &plan, &options).await;
                // Whatever happened, the cell, its proxy and its network are gone before we
                // report (the proxy before the network it is attached to).
                for object in cell_objects(&plan) {
                    let _ = ledger.release(&*runtime, &object).await;
                }
                // Its login snapshot lives no longer than the cell.
                for mount in plan
                    .spec
                    .mounts
                    .iter()
                    .filter(|m| m.target == crate::creds::STAGING_TARGET)
                {
                    let _ = crate::fsx::remove_tree(&mount.source);
                }
                options.redactor.file(&plan.stdout_log);
                options.redactor.file(&plan.stderr_log);
                // Nothing of a login leaves the cell, not even through its own output.
                let writable: Vec<std::path::PathBuf> = plan
                    .spec
                    .mounts
                    .iter()
                    .filter(|m| !m.read_only)
                    .map(|m| m.source.clone())
                    .collect();
                let redactor = options.redactor.clone();
                let redacted = tokio::task::spawn_blocking(move || {
                    writable.iter().flat_map(|dir| redactor.tree(dir)).collect()
                })
                .await
                .unwrap_or_default();
                CellOutcome {
                    redacted,
                    ..outcome
                }
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
async fn run_one<R: Runtime, H: CellHooks>(
    runtime: &R,
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

async fn run_until_exit<R: Runtime, H: CellHooks>(
    runtime: &R,
    ledger: &Ledger,
    hooks: &Arc<H>,
    plan: &CellPlan,
    options: &RunOptions,
    pending: &mut Vec<tokio::task::JoinHandle<()>>,
) -> CellOutcome {
    let cancel = &options.cancel;
    if cancel.is_cancelled() {
        return not_started(CellState::Cancelled, None);
    }
    in_background(pending, hooks, plan, CellHooks::starting);
    if let Some(network) = &plan.network {
        ledger.record(ObjectRef::network(&network.name));
        if let Err(e) = runtime.create_network(network).await {
            return not_started(CellState::StartFailed, Some(e.to_string()));
        }
    }
    let images = tokio::select! {
        built = options.images.clone() => built,
        () = cancel.cancelled() => return not_started(CellState::Cancelled, None),
    };
    if let Err(e) = images {
        return not_started(
            CellState::StartFailed,
            Some(format!("image build failed: {e}")),
        );
    }
    let canary = match guard_egress(runtime, ledger, plan, options).await {
        Ok(canary) => canary,
        Err(outcome) => return *outcome,
    };
    ledger.record(ObjectRef::cell(&plan.spec.name));
    if cancel.is_cancelled() {
        return not_started(CellState::Cancelled, None);
    }
    if let Err(e) = runtime.create_cell(&plan.spec).await {
        return not_started(CellState::StartFailed, Some(e.to_string()));
    }
    if cancel.is_cancelled() {
        return not_started(CellState::Cancelled, None);
    }
    let started = Instant::now();
    let started_at = now_iso();
    if let Err(e) = runtime.start_cell(&plan.spec.name).await {
        return not_started(CellState::StartFailed, Some(e.to_string()));
    }
    let at = started_at.clone();
    in_background(pending, hooks, plan, move |hooks, plan| {
        hooks.started(plan, &at);
    });
    let logs = tokio::spawn(pump_logs(
        runtime.cell_logs(&plan.spec.name),
        plan.stdout_log.clone(),
        plan.stderr_log.clone(),
        options.redactor.clone(),
    ));
    let ended = wait_or_kill(runtime, plan, cancel).await;
    let duration_s = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    if tokio::time::timeout(LOG_DRAIN, logs).await.is_err() {
        // The stream did not end although the cell did; the file has what arrived.
    }
    let rate_limit = scan_for_limits(&plan.flavor, &plan.stdout_log, &plan.stderr_log).await;
    let (state, error) = classify(&ended, rate_limit.is_some());
    CellOutcome {
        state,
        exit_code: ended.exit.map(|e| e.code),
        duration_s,
        started_at: Some(started_at),
        finished_at: now_iso(),
        timed_out: ended.how == Ending::TimedOut,
        oom_killed: ended.exit.is_some_and(|e| e.oom_killed),
        rate_limit,
        error,
        canary,
        redacted: Vec::new(),
    }
}

/// For a cell behind a proxy: starts the proxy and runs the canary before the cell's clock
/// starts. A failure stops the cell with the reason, as `start_failed`.
async fn guard_egress<R: Runtime>(
    runtime: &R,
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
    egress::start_proxy(runtime, ledger, plan, context)
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
fn cell_objects(plan: &CellPlan) -> Vec<ObjectRef> {
    let mut objects = vec![ObjectRef::cell(&plan.spec.name)];
    if matches!(plan.egress, Egress::Proxy { .. }) {
        objects.push(ObjectRef::cell(&egress::canary_name(&plan.spec.name)));
        objects.push(ObjectRef::cell(&super::plan::proxy_name(&plan.spec.name)));
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
    Exited,
    TimedOut,
    Cancelled,
    EngineError,
}

#[derive(Debug)]
struct Ended {
    how: Ending,
    exit: Option<CellExit>,
    error: Option<String>,
}

async fn wait_or_kill<R: Runtime>(
    runtime: &R,
    plan: &CellPlan,
    cancel: &CancellationToken,
) -> Ended {
    let name = plan.spec.name.as_str();
    let how = tokio::select! {
        waited = tokio::time::timeout(plan.timeout, runtime.wait_cell(name)) => match waited {
            Ok(Ok(exit)) => return Ended { how: Ending::Exited, exit: Some(exit), error: None },
            Ok(Err(e)) => return Ended { how: Ending::EngineError, exit: None, error: Some(e.to_string()) },
            Err(_) => Ending::TimedOut,
        },
        () = cancel.cancelled() => Ending::Cancelled,
    };
    let killed = runtime.kill_cell(name).await;
    let exit = match killed {
        Ok(()) => tokio::time::timeout(Duration::from_secs(10), runtime.wait_cell(name))
            .await
            .ok()
            .and_then(Result::ok),
        Err(_) => None,
    };
    Ended {
        how,
        exit,
        error: killed.err().map(|e| e.to_string()),
    }
}

/// The reference's order: oom, rate limit, timeout, then exit code (BEHAVIOR.md §4.5). A cell
/// stopped by the user is `cancelled` whatever it printed.
fn classify(ended: &Ended, rate_limited: bool) -> (CellState, Option<String>) {
    let oom = ended.exit.is_some_and(|e| e.oom_killed);
    let state = match ended.how {
        Ending::Cancelled => CellState::Cancelled,
        Ending::EngineError => CellState::StartFailed,
        _ if oom => CellState::OomKilled,
        _ if rate_limited => CellState::RateLimited,
        Ending::TimedOut => CellState::TimedOut,
        Ending::Exited if ended.exit.is_some_and(|e| e.code == 0) => CellState::Ok,
        Ending::Exited => CellState::NonZeroExit,
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
        error,
        canary: None,
        redacted: Vec::new(),
    }
}

/// Writes the cell's output into its two log files as it arrives.
async fn pump_logs(
    mut stream: futures_util::stream::BoxStream<
        'static,
        Result<LogChunk, crate::runtime::RuntimeError>,
    >,
    stdout: std::path::PathBuf,
    stderr: std::path::PathBuf,
    redactor: Arc<Redactor>,
) -> std::io::Result<()> {
    let mut out = CappedLog::create(&stdout).await?;
    let mut err = CappedLog::create(&stderr).await?;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(LogChunk::Stdout(bytes)) => out.write(&redactor.bytes(&bytes)).await?,
            Ok(LogChunk::Stderr(bytes)) => err.write(&redactor.bytes(&bytes)).await?,
            Err(e) => {
                err.write(format!("\n[multicooker: log stream failed: {e}]\n").as_bytes())
                    .await?;
                break;
            }
        }
    }
    out.file.flush().await?;
    err.file.flush().await
}

/// Where host-wide flavor locks live: per user, beside the token store.
fn lock_dir() -> std::path::PathBuf {
    crate::creds::host_home().join(".cache/multicooker/locks")
}

/// Takes the host-wide lock of a serial flavor, waiting while another process holds it (or
/// until cancelled). `None` when no lock file can be made: the in-process lock still holds.
async fn host_lock(
    dir: &std::path::Path,
    flavor: &str,
    cancel: &CancellationToken,
) -> Option<std::fs::File> {
    std::fs::create_dir_all(dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!("{flavor}.lock")))
        .ok()?;
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(_)) => return None,
        }
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_millis(250)) => {}
            () = cancel.cancelled() => return None,
        }
    }
}

struct CappedLog {
    file: tokio::fs::File,
    written: u64,
}

impl CappedLog {
    async fn create(path: &Path) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await?;
        }
        Ok(Self {
            file: tokio::fs::File::create(path).await?,
            written: 0,
        })
    }

    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.written >= LOG_CAP_BYTES {
            return Ok(());
        }
        let room = usize::try_from(LOG_CAP_BYTES - self.written).unwrap_or(usize::MAX);
        let part = &bytes[..bytes.len().min(room)];
        self.file.write_all(part).await?;
        self.written += part.len() as u64;
        if self.written >= LOG_CAP_BYTES {
            self.file
                .write_all(b"\n[multicooker: log truncated at the cap]\n")
                .await?;
        }
        Ok(())
    }
}

async fn scan_for_limits(flavor: &str, stdout: &Path, stderr: &Path) -> Option<RateLimit> {
    let mut text = String::new();
    for path in [stdout, stderr] {
        if let Ok(bytes) = read_tail(path, SCAN_TAIL_BYTES).await {
            text.push_str(&String::from_utf8_lossy(&bytes));
            text.push('\n');
        }
    }
    detect_rate_limit(flavor, &text)
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
