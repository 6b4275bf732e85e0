//! Cooking: one cell per selected participant, each on its own network, all in parallel; then
//! classification, sealing and the cook's result files (docs/BEHAVIOR.md §4.1).
//!
//! Teardown of every engine object runs on every path. This module never prints (progress goes
//! through [`Progress`]) and never reads command-line arguments.

pub mod harbor;
mod hooks;
pub mod plan;
pub mod seal;
pub mod stale;

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub use hooks::ParticipantResult;

use crate::brief::{Actor, Brief, NetworkMode};
pub use crate::cell::RunError;
use crate::cell::names::Names;
use crate::cell::plan::{CellPlan, Egress};
use crate::cell::{CellSettings, Venue, images, sandbox};
use crate::fsx;
use crate::progress::Progress;
use crate::runtime::{Runtime, RuntimeError, SharedRuntime, TeardownFailure};
use crate::state::results::{self, Entry, RoundResult};
use crate::state::{
    Cell, CookPaths, CookState, EventLog, Phase, Role, StateError, StatusStore, now_iso,
};
use plan::{participant_plan, participant_prompt};

/// Settings of a cook run: the cell settings every role shares, and the cook's own modes.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// What every run of cells needs.
    pub cells: CellSettings,
    /// Cap on a sealed output, in bytes.
    pub seal_max_bytes: u64,
    /// Run the sandbox probe beside the cells (`cook --skip-sandbox-check` turns it off).
    pub sandbox_check: bool,
    /// Resume: keep the other participants' cells and results, replace only these.
    pub merge: bool,
    /// Refine: run round N on top of the previous outputs, with these prompts.
    pub refine: Option<Refine>,
    /// Chef: one synthesis participant over anonymized prior outputs.
    pub chef: Option<Chef>,
}

/// A refine round: the participants edit their previous `out/` with feedback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refine {
    /// The round being run (2 or more).
    pub round: u32,
    /// Each participant's prompt.
    pub prompts: std::collections::BTreeMap<String, String>,
}

/// A chef run: its prompt; its read-only input is `chef/<chef>/input/` (`/work/chef-input`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chef {
    /// The chef participant.
    pub name: String,
    /// Its prompt.
    pub prompt: String,
}

/// What a cook run produced.
#[derive(Debug)]
pub struct CookOutcome {
    /// One result per selected participant, in brief order.
    pub results: Vec<ParticipantResult>,
    /// The state written last: `sealed` or `cancelled`.
    pub state: CookState,
    /// Objects teardown could not remove.
    pub leftovers: Vec<TeardownFailure>,
}

/// What each result ran: CLI version, backend, image (tag and the id the engine built).
async fn provenance(
    runtime: &dyn Runtime,
    results: &mut [ParticipantResult],
    versions: &std::collections::BTreeMap<String, String>,
    bases: &[(String, String)],
) {
    for result in results {
        result.cli_version = versions.get(&result.flavor).cloned();
        result.backend = Some(runtime.backend().to_owned());
        if let Some((_, tag)) = bases.iter().find(|(flavor, _)| *flavor == result.flavor) {
            // The tag names the build context's digest; the id names what the engine built.
            let id = runtime.image_id(tag).await.ok().flatten();
            result.image = Some(id.map_or_else(|| tag.clone(), |id| format!("{tag}@{id}")));
        }
    }
}

/// Runs the selected participants of a checked brief.
pub async fn cook(
    runtime: &SharedRuntime,
    paths: &CookPaths,
    brief: &Brief,
    selected: &[String],
    settings: &RunSettings,
    progress: Arc<dyn Progress>,
) -> Result<CookOutcome, RunError> {
    let actors: Vec<&Actor> = brief
        .participants
        .iter()
        .filter(|p| selected.contains(&p.name))
        .collect();
    let cells = &settings.cells;
    // The sandbox probe runs beside the cells; if a property does not hold it stops them.
    let phase_settings = CellSettings {
        cancel: cells.cancel.child_token(),
        ..cells.clone()
    };
    let venue = Venue {
        runtime,
        paths,
        brief,
        settings: &phase_settings,
        progress: &progress,
    };
    // Checked before anything is written: a flavor without an image or login changes nothing.
    let cast = venue.cast(Role::Participant, &actors)?;
    let bases = images::base_tags(cast.images());
    let round = settings.refine.as_ref().map_or(1, |r| r.round);
    let prompts = prepare_folder(paths, &actors, settings)?;
    let (status, events) = open_run(paths, brief, &actors, settings.merge, round)?;
    let context = cast.context();
    let plans: Vec<CellPlan> = actors
        .iter()
        .zip(prompts)
        .map(|(actor, prompt)| participant_plan(&context, actor, prompt, settings))
        .collect();
    status.set_state(Phase::Cook, CookState::Building)?;
    events.cook("image.build.started", Phase::Cook, None)?;
    let (built_status, built_events) = (status.clone(), events.clone());
    let cast = cast.on_built(move || {
        let _ = built_events.cook("image.build.finished", Phase::Cook, None);
        let _ = built_status.set_state(Phase::Cook, CookState::Cooking);
    });
    let hooks = hooks::CookHooks::new(
        paths,
        brief,
        status.clone(),
        progress.clone(),
        settings.seal_max_bytes,
        round,
    );
    let probe = settings.sandbox_check.then(|| {
        spawn_probe(
            runtime,
            probe_settings(paths, brief, &actors, cells),
            phase_settings.cancel.clone(),
        )
    });
    let run = cast.run(plans, Arc::new(hooks)).await;
    // The probe is settled on every path, so it never outlives the run (nor its objects).
    let sandbox = match probe {
        Some(handle) => {
            if !matches!(&run, Ok(run) if run.build.is_ok()) {
                phase_settings.cancel.cancel();
            }
            Some(settle_probe(handle).await)
        }
        None => None,
    };
    // After Ctrl-C the probe was stopped with the cells: it has no verdict to give.
    let sandbox = sandbox.filter(|_| !cells.cancel.is_cancelled());
    let run = run?;
    let (mut results, leftovers) = (run.outputs, run.leftovers);
    if let Err(message) = run.build {
        fail(&status, &events, &format!("build failed: {message}"))?;
        return Err(RunError::Build(message.to_string()));
    }
    let versions = images::cli_versions(&**runtime, &bases).await;
    provenance(&**runtime, &mut results, &versions, &bases).await;
    write_round_result(
        paths,
        brief,
        &results,
        &versions,
        sandbox.as_ref(),
        settings,
        round,
    )?;
    record_sandbox(&status, &events, sandbox.as_ref())?;
    let state = finish(&status, &events, cells.cancel.is_cancelled())?;
    Ok(CookOutcome {
        results,
        state,
        leftovers,
    })
}

/// Keeps earlier outputs aside and writes every participant's PROMPT.txt (the record of what
/// it was asked); returns the prompts in `actors` order.
fn prepare_folder(
    paths: &CookPaths,
    actors: &[&Actor],
    settings: &RunSettings,
) -> Result<Vec<String>, RunError> {
    let prepare = |path: std::path::PathBuf| move |source| RunError::Prepare { path, source };
    let brief_md = fs_err::read_to_string(paths.brief_md()).map_err(prepare(paths.brief_md()))?;
    if !settings.merge && settings.refine.is_none() && settings.chef.is_none() {
        stale::set_aside_rounds(paths).map_err(prepare(paths.dir().join("rounds")))?;
    }
    let prompt = participant_prompt(&brief_md);
    let mut prompts = Vec::new();
    for actor in actors {
        // A refine round edits the previous out/ (rounds/ holds its snapshot): it is the seed.
        let prompt = if let Some(refine) = &settings.refine {
            fsx::remove_tree(&paths.sealed(&actor.name))
                .map_err(prepare(paths.sealed(&actor.name)))?;
            refine.prompts.get(&actor.name).cloned().unwrap_or_default()
        } else {
            stale::set_aside_previous_output(paths, &actor.name)
                .map_err(prepare(paths.work(&actor.name)))?;
            match &settings.chef {
                Some(chef) if chef.name == actor.name => chef.prompt.clone(),
                _ => prompt.clone(),
            }
        };
        fs_err::create_dir_all(paths.work(&actor.name))
            .map_err(prepare(paths.work(&actor.name)))?;
        fsx::write_synced(&paths.prompt(&actor.name), prompt.as_bytes())
            .map_err(prepare(paths.prompt(&actor.name)))?;
        prompts.push(prompt);
    }
    fs_err::create_dir_all(paths.raw()).map_err(prepare(paths.raw()))?;
    Ok(prompts)
}

/// RUN.json, a fresh status.json (resume: the same one, with these cells reset) and the opening
/// events.
fn open_run(
    paths: &CookPaths,
    brief: &Brief,
    actors: &[&Actor],
    merge: bool,
    round: u32,
) -> Result<(Arc<StatusStore>, EventLog), StateError> {
    let names: Vec<&str> = actors.iter().map(|a| a.name.as_str()).collect();
    let run_json = json!({"started_at": now_iso(), "participants": names, "timeout_s": brief.timeout_s, "host": hostname(), "mode": "docker", "resumed": merge});
    fsx::write_json_atomic(&paths.run_json(), &run_json)
        .map_err(StateError::io("write", paths.run_json()))?;
    let cells: IndexMap<String, Cell> = actors
        .iter()
        .map(|a| (a.name.clone(), Cell::pending(Role::Participant, &a.flavor)))
        .collect();
    let events = EventLog::new(paths);
    let status = if (merge || round > 1) && crate::state::read_status(paths).is_some() {
        // Resume and refine keep the other participants' cells (docs/BEHAVIOR.md §10.19).
        let phase = if round > 1 {
            Phase::Refine
        } else {
            Phase::Resume
        };
        let status = Arc::new(StatusStore::open(paths));
        status.update(|s| {
            s.phase = phase;
            s.round = round;
            for (name, cell) in &cells {
                s.cells.insert(name.clone(), cell.clone());
            }
        })?;
        events.cook(
            "phase.started",
            phase,
            Some(json!({"round": round, "targets": names})),
        )?;
        status.set_state(phase, CookState::Preflighting)?;
        return Ok((status, events));
    } else {
        Arc::new(StatusStore::create(paths, Phase::Cook, 1, cells)?)
    };
    events.cook(
        "cook.created",
        Phase::Cook,
        Some(json!({"participants": names})),
    )?;
    events.cook("phase.started", Phase::Cook, None)?;
    status.set_state(Phase::Cook, CookState::Preflighting)?;
    Ok((status, events))
}

/// The final state: `sealed`, or `cancelled` after Ctrl-C.
fn finish(
    status: &StatusStore,
    events: &EventLog,
    cancelled: bool,
) -> Result<CookState, StateError> {
    let state = if cancelled {
        CookState::Cancelled
    } else {
        CookState::Sealed
    };
    status.set_state(Phase::Cook, state)?;
    let event = if cancelled {
        "cook.cancelled"
    } else {
        "seal.finished"
    };
    events.cook(event, Phase::Cook, None)?;
    Ok(state)
}

fn fail(status: &StatusStore, events: &EventLog, reason: &str) -> Result<(), StateError> {
    status.set_state(Phase::Cook, CookState::Failed)?;
    events.cook("cook.failed", Phase::Cook, Some(json!({"reason": reason})))
}

/// The sandbox probe's verdict in status.json; a failed check fails the run.
fn record_sandbox(
    status: &StatusStore,
    events: &EventLog,
    sandbox: Option<&sandbox::SandboxReport>,
) -> Result<(), RunError> {
    if let Some(report) = sandbox {
        status.update(|s| {
            s.extra.insert(
                "sandbox_check".into(),
                json!({"passed": report.passed, "failures": report.failures()}),
            );
        })?;
    }
    if let Some(report) = sandbox.filter(|r| !r.passed) {
        let failures = report.failures();
        fail(
            status,
            events,
            &format!("sandbox check failed: {}", failures.join("; ")),
        )?;
        return Err(RunError::Sandbox(failures));
    }
    Ok(())
}

/// `RUN_RESULT.json` (round 1) or `REFINE_<N>_RESULT.json`; a resumed run merges with the
/// file it finds (entries of participants not re-run stay as they were).
fn write_round_result(
    paths: &CookPaths,
    brief: &Brief,
    results: &[ParticipantResult],
    versions: &std::collections::BTreeMap<String, String>,
    sandbox: Option<&sandbox::SandboxReport>,
    settings: &RunSettings,
    round: u32,
) -> Result<(), StateError> {
    let path = if round == 1 {
        paths.run_result()
    } else {
        paths.dir().join(format!("REFINE_{round}_RESULT.json"))
    };
    let current: Vec<Entry> = results.iter().map(Entry::of).collect();
    let order: Vec<&str> = brief.participants.iter().map(|p| p.name.as_str()).collect();
    let mut file = RoundResult {
        finished_at: Some(now_iso()),
        round_num: (round > 1).then_some(round),
        round,
        participants: current,
        cli_versions: versions.clone(),
        sandbox_check: (round == 1)
            .then(|| sandbox.map_or_else(|| json!({"skipped": true}), |r| json!(r))),
        extra: serde_json::Map::new(),
    };
    if let Some(harbor) = &brief.harbor {
        // The task that ran, by its hash (lint checked the cook's copy against it).
        file.extra.insert("harbor_task".into(), json!(harbor));
    }
    if settings.merge {
        let prior: RoundResult = results::read(&path).unwrap_or_default();
        let mut earlier = prior.participants;
        if round == 1 {
            // A run killed before writing its result left each finished cell's trace.json.
            earlier.extend(traces_of_finished_cells(paths, brief));
        }
        file.participants = results::merge_entries(file.participants, earlier, &order);
        let mut versions = prior.cli_versions;
        versions.extend(file.cli_versions);
        file.cli_versions = versions;
    }
    results::write(&path, &file).map_err(StateError::io("write", path))
}

/// The trace.json of every participant (as result entries), for a run killed before it wrote
/// its result file.
fn traces_of_finished_cells(paths: &CookPaths, brief: &Brief) -> Vec<Entry> {
    brief
        .participants
        .iter()
        .filter_map(|participant| {
            let mut trace: Entry = results::read(&paths.trace(&participant.name))?;
            for extra in ["mode", "round_num", "rate_limited"] {
                trace.0.remove(extra);
            }
            Some(trace)
        })
        .collect()
}

type ProbeHandle = tokio::task::JoinHandle<Result<sandbox::SandboxReport, RuntimeError>>;

/// Starts the sandbox probe; a failing property cancels `stop` (the cells' token), and a
/// cancelled `stop` stops the probe.
fn spawn_probe(
    runtime: &SharedRuntime,
    settings: sandbox::ProbeSettings,
    stop: CancellationToken,
) -> ProbeHandle {
    let runtime = runtime.clone();
    tokio::spawn(async move {
        let report = sandbox::probe(&runtime, &settings, stop.clone()).await;
        if !report.as_ref().is_ok_and(|r| r.passed) {
            stop.cancel();
        }
        report
    })
}

/// The probe's report; a probe that could not run counts as a failed check.
async fn settle_probe(handle: ProbeHandle) -> sandbox::SandboxReport {
    let error = match handle.await {
        Ok(Ok(report)) => return report,
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    sandbox::SandboxReport {
        passed: false,
        checks: vec![sandbox::Check {
            property: "the sandbox probe runs",
            ok: false,
            seen: error,
            fix: "run `multicooker doctor --sandbox` to see why",
            not_enforced: None,
        }],
        not_enforced: Vec::new(),
    }
}

/// What the sandbox probe is compared with: the first participant's limits and the brief's
/// network mode.
fn probe_settings(
    paths: &CookPaths,
    brief: &Brief,
    actors: &[&Actor],
    settings: &CellSettings,
) -> sandbox::ProbeSettings {
    let limits = actors.first().map_or(
        crate::runtime::Limits {
            memory_bytes: 2 << 30,
            memory_swap_bytes: 2 << 30,
            cpus: 1.0,
            pids: crate::cell::plan::DEFAULT_PIDS,
        },
        |actor| crate::cell::plan::limits_for(actor, brief, settings.profile),
    );
    // The probe stands for the participants: under `allowlist` it gets an internal network only
    // when some participant has one (behind its proxy); when none reaches anything, neither
    // does the probe, exactly like its cells (issue 28).
    let network = match brief.network.mode {
        NetworkMode::Allowlist
            if !actors
                .iter()
                .any(|a| Egress::of(brief, a, Role::Participant).reaches_something()) =>
        {
            NetworkMode::None
        }
        mode => mode,
    };
    sandbox::ProbeSettings {
        cook: paths.name().to_owned(),
        root_id: paths.root_id(),
        // Unique per run: the stale sweep at the start of this run must not touch it.
        project: format!(
            "{}-{}",
            Names::for_paths(paths).project(),
            crate::cell::names::run_tag(&settings.run_id)
        ),
        user: settings.user,
        limits,
        network,
        direct: settings.egress.canary_direct.clone(),
        images: settings.images.clone(),
    }
}

/// The machine's name, for RUN.json.
pub fn hostname() -> String {
    fs_err::read_to_string("/proc/sys/kernel/hostname")
        .map_or_else(|_| "unknown".into(), |h| h.trim().to_owned())
}
