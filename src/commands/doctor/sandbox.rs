//! `doctor --sandbox`: a probe cell with a participant's default settings checks the hardening
//! baseline from inside (`cell::sandbox`); one line per property, then what the backend cannot
//! enforce, the task profile, and the host services a cell may reach.

use super::Checks;
use crate::brief::NetworkMode;
use crate::cell::plan::DEFAULT_PIDS;
use crate::cell::sandbox::{ProbeSettings, SandboxReport, probe};
use crate::runtime::{Limits, SharedRuntime};
use crate::settings::Session;

/// Runs a probe cell with a participant's default settings and adds one line per property.
pub(super) async fn check_sandbox(runtime: &SharedRuntime, session: &Session, checks: &mut Checks) {
    let settings = match probe_settings(session) {
        Ok(Some(settings)) => settings,
        Ok(None) => return,
        Err(line) => return checks.add("FAIL", line),
    };
    match probe(
        runtime,
        &settings,
        tokio_util::sync::CancellationToken::new(),
    )
    .await
    {
        Ok(report) => {
            add_report(report, checks);
            add_backend_notes(runtime, checks);
        }
        Err(error) => checks.add("FAIL", format!("sandbox: the probe could not run: {error}")),
    }
}

/// The probe's settings: a participant's defaults. `None` when the cell user cannot be had (its
/// own check says why); the failure line when the image settings cannot.
fn probe_settings(session: &Session) -> Result<Option<ProbeSettings>, String> {
    let Ok(user) = crate::settings::cell_user(&session.env) else {
        return Ok(None);
    };
    let images = session.image_settings().map_err(|error| {
        let error = crate::runtime::RuntimeError::Build {
            image: "multicooker-base-dummy".into(),
            message: error.to_string(),
        };
        format!("sandbox: the probe could not run: {error}")
    })?;
    let root = session.root_id();
    Ok(Some(ProbeSettings {
        cook: "doctor".to_owned(),
        project: format!("mc-doctor-{}", &root[..6]),
        root_id: root,
        user,
        limits: Limits {
            memory_bytes: 2 << 30,
            memory_swap_bytes: 2 << 30,
            cpus: 1.0,
            pids: DEFAULT_PIDS,
        },
        network: NetworkMode::Allowlist,
        direct: crate::settings::egress_settings(&session.env).canary_direct,
        images,
    }))
}

/// One line per probed property: held, failed with its fix, or not enforced by this backend.
fn add_report(report: SandboxReport, checks: &mut Checks) {
    for check in report.checks {
        if let Some(compensation) = check.not_enforced {
            checks.add(
                "WARN",
                format!(
                    "sandbox: {} does not hold on this backend (saw {}): {compensation}",
                    check.property, check.seen
                ),
            );
            continue;
        }
        let line = if check.ok {
            format!("sandbox: {} ({})", check.property, check.seen)
        } else {
            format!(
                "sandbox: {} (saw {}); fix: {}",
                check.property, check.seen, check.fix
            )
        };
        checks.add(if check.ok { "OK" } else { "FAIL" }, line);
    }
}

/// What the probe cannot show: limits the backend does not enforce, the task profile, and the
/// host services a cell may reach through its network.
fn add_backend_notes(runtime: &SharedRuntime, checks: &mut Checks) {
    // Every limit the backend cannot enforce is said, probed or not (swap has no probe).
    for item in runtime.unenforced() {
        if !checks.lines.iter().any(|(_, l)| l.contains(item.property)) {
            checks.add(
                "WARN",
                format!(
                    "sandbox: {} is not enforced on this backend: {}",
                    item.property, item.compensation
                ),
            );
        }
    }
    // Harbor cooks' cells run another profile; it is said, not probed here.
    let capabilities: Vec<&str> = crate::runtime::TASK_PROGRAM_CAPABILITIES
        .iter()
        .map(|(name, _)| *name)
        .collect();
    checks.add(
        "INFO",
        format!(
            "sandbox: the task profile, for the cells of a cook made from a Harbor task only: writable root capped at the task's storage_mb where the storage driver allows it (else bounded by the engine's disk), program as root with only {}, the image's HOME and /tmp; init, no-new-privileges, seccomp, limits and egress as above; every other cell runs the profile checked above (SECURITY.md, \"The task profile\")",
            capabilities.join(", ")
        ),
    );
    // The gateway leak is a local bridge's; a swarm's overlays have no host gateway.
    if runtime.backend() == "docker" {
        checks.add("WARN", "sandbox: host services listening on 0.0.0.0 are reachable through a cell's bridge gateway; close them with `iptables -I INPUT -i mc-+ -j DROP` (see SECURITY.md)");
    } else {
        checks.add("WARN", "sandbox: a proxy's outside overlay reaches the host services of its node through `docker_gwbridge` (docs/ENGINE.md §4b); keep host services of nodes that run proxies off 0.0.0.0, or label such nodes `io.multicooker.egress=false`");
    }
}
