//! The sandbox checks itself: a probe cell with exactly a participant's settings (user,
//! capabilities, seccomp, read-only root, tmpfs, limits, mounts, network) reports from inside
//! what it sees, and each property is compared with what multicooker asked for. `doctor
//! --sandbox` prints the result; `cook` runs the probe beside its cells once per run and stops
//! the cook if a property does not hold.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::files::{CellFiles, Input, Writable};
use super::images::{base_specs, ensure_base};
use super::plan::{CellPlan, CellUser, Egress};
use super::run::{CellHooks, CellOutcome, RunOptions, images_ready_now, run_cells};
use crate::brief::NetworkMode;
use crate::flavor::CELL_HOME;
use crate::runtime::{
    CONTROL_AREA, CellSpec, Init, LABEL_ROOT, Labels, Ledger, Limits, NetworkSpec, RuntimeError,
    SharedRuntime, Tmpfs,
};
use crate::state::{CellState, Role};

/// Mount targets a cell is given (besides what the engine itself provides): its areas, each
/// an in-memory file system of the engine's, and its scratch space.
const DOCUMENTED: &[&str] = &[
    "/work",
    "/work/out",
    "/work/outbox",
    CONTROL_AREA,
    crate::creds::STAGING_TARGET,
    CELL_HOME,
    "/tmp",
];
/// How long the probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);
/// Files the engine bind-mounts into every container.
const ENGINE_FILES: &[&str] = &["/etc/resolv.conf", "/etc/hostname", "/etc/hosts"];

/// One property of the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What is checked.
    pub property: &'static str,
    /// It holds.
    pub ok: bool,
    /// What the probe saw.
    pub seen: String,
    /// How to fix it when it does not hold.
    pub fix: &'static str,
    /// The backend cannot enforce it, and this stands in for it: the property does not hold
    /// (`ok` stays false), it is reported, and it does not fail the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_enforced: Option<&'static str>,
}

/// The probe's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxReport {
    /// Every property holds, or the backend says it cannot enforce it and what compensates.
    pub passed: bool,
    /// Each property.
    pub checks: Vec<Check>,
    /// What the backend cannot enforce at all (also when no check measures it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_enforced: Vec<String>,
}

impl SandboxReport {
    /// The failing properties, one line each with the fix.
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.ok && c.not_enforced.is_none())
            .map(|c| format!("{} (saw {}): {}", c.property, c.seen, c.fix))
            .collect()
    }

    /// Marks the properties `unenforced` names as not enforced by the backend, as reported.
    #[must_use]
    pub fn with_unenforced(mut self, unenforced: &[crate::runtime::Unenforced]) -> Self {
        for item in unenforced {
            if let Some(check) = self
                .checks
                .iter_mut()
                .find(|c| c.property == item.property && !c.ok)
            {
                check.not_enforced = Some(item.compensation);
            }
            self.not_enforced
                .push(format!("{}: {}", item.property, item.compensation));
        }
        self.passed = self.checks.iter().all(|c| c.ok || c.not_enforced.is_some());
        self
    }
}

/// What the probe cell is asked to be.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    /// Cook label for its objects.
    pub cook: String,
    /// Root label for its objects.
    pub root_id: String,
    /// Object name prefix (the cook's project).
    pub project: String,
    /// The identity cells run as.
    pub user: CellUser,
    /// The limits a participant gets.
    pub limits: Limits,
    /// The network mode participants get.
    pub network: NetworkMode,
    /// Where the probe's direct connection goes (it must fail unless the mode is `open`).
    pub direct: String,
    /// The namespace and build arguments of its tools image.
    pub images: super::images::ImageSettings,
}

/// Runs the probe cell through the same cell engine as every role and checks every property.
/// Whatever happens, the probe's objects are gone when this returns.
pub async fn probe(
    runtime: &SharedRuntime,
    settings: &ProbeSettings,
    cancel: CancellationToken,
) -> Result<SandboxReport, RuntimeError> {
    let tools = base_specs(&["dummy".to_owned()], None, &settings.images)
        .map_err(|e| RuntimeError::Build {
            image: "multicooker-base-dummy".into(),
            message: e.to_string(),
        })?
        .remove(0);
    ensure_base(&**runtime, &tools).await?;
    // A probe whose node was lost (a swarm) says nothing of the sandbox: it runs again on a
    // node that answers, as a participant's lost cell costs only that cell (issue 22).
    let mut attempt = 1;
    let work = loop {
        let (work, outcome) = probe_once(runtime, settings, &tools.tag, &cancel).await?;
        if outcome.state == CellState::NodeLost
            && attempt < PROBE_ATTEMPTS
            && !cancel.is_cancelled()
        {
            attempt += 1;
            continue;
        }
        if outcome.started_at.is_none() {
            return Err(RuntimeError::Build {
                image: "sandbox probe".into(),
                message: outcome.error.unwrap_or_else(|| "it did not start".into()),
            });
        }
        break work;
    };
    let sandbox = read_json(&work.path().join("out/SANDBOX.json"));
    let probes = std::fs::read_to_string(work.path().join("out/PROBES.txt")).unwrap_or_default();
    Ok(evaluate(&sandbox, &probes, settings).with_unenforced(&runtime.unenforced()))
}

/// How often the probe runs when its node is lost under it.
const PROBE_ATTEMPTS: u32 = 3;

/// One run of the probe cell: its folder and outcome, its objects removed.
async fn probe_once(
    runtime: &SharedRuntime,
    settings: &ProbeSettings,
    image: &str,
    cancel: &CancellationToken,
) -> Result<(tempfile::TempDir, CellOutcome), RuntimeError> {
    let work = tempfile::Builder::new()
        .prefix("mc-sandbox-")
        .tempdir()
        .map_err(|e| probe_io(&e))?;
    let plan = probe_plan(settings, image, work.path());
    let ledger = Arc::new(Ledger::new(false));
    let options = RunOptions {
        cancel: cancel.clone(),
        max_parallel: 1,
        images: images_ready_now(),
        egress: None,
        redactor: Arc::default(),
        serial: Vec::new(),
        user: settings.user,
        home: std::env::temp_dir(),
        budgets: crate::cell::budget::Budgets::default(),
    };
    let outcome = run_cells(
        runtime,
        &ledger,
        &Arc::new(ProbeHooks),
        vec![plan],
        &options,
    )
    .await
    .remove(0);
    let leftovers = ledger.teardown(&**runtime).await;
    if let Some(failure) = leftovers.into_iter().next() {
        return Err(failure.error);
    }
    Ok((work, outcome))
}

struct ProbeHooks;

impl CellHooks for ProbeHooks {
    type Output = CellOutcome;
    fn starting(&self, _: &CellPlan) {}
    fn started(&self, _: &CellPlan, _: &str) {}
    fn finished(&self, _: &CellPlan, outcome: CellOutcome) -> CellOutcome {
        outcome
    }
}

fn probe_io(error: &std::io::Error) -> RuntimeError {
    RuntimeError::Build {
        image: "sandbox probe".into(),
        message: format!("cannot prepare its folder: {error}"),
    }
}

/// The probe: a participant's user, limits, network mode and areas, its output collected into
/// `dir/out`.
fn probe_plan(settings: &ProbeSettings, image: &str, dir: &Path) -> CellPlan {
    let name = format!("{}-sandbox-probe", settings.project);
    let labels = Labels::new(&settings.cook, "probe").with(LABEL_ROOT, &settings.root_id);
    let network = (settings.network != NetworkMode::None).then(|| name.clone());
    let owner = Some((settings.user.uid, settings.user.gid));
    let spec = CellSpec {
        name: name.clone(),
        image: image.to_owned(),
        network: network.clone(),
        labels: labels.clone(),
        user: settings.user.spec(),
        env: vec![
            ("HOME".to_owned(), CELL_HOME.to_owned()),
            (
                "MULTICOOKER_MODEL".to_owned(),
                format!("probe,connect:{}", settings.direct),
            ),
        ],
        areas: Vec::new(),
        tmpfs: vec![
            Tmpfs {
                target: CELL_HOME.to_owned(),
                size_bytes: 64 << 20,
                mode: 0o700,
                owner,
            },
            Tmpfs {
                target: "/tmp".to_owned(),
                size_bytes: 64 << 20,
                mode: 0o1777,
                owner: None,
            },
        ],
        limits: settings.limits,
        workdir: "/work".to_owned(),
        program: None,
        init: Init {
            wait_for_go: true,
            launch: false,
            hold: true,
            timeout: Some(PROBE_TIMEOUT),
            deadline: PROBE_TIMEOUT + super::plan::CELL_GRACE,
            task_root: false,
            go_dir: None,
        },
        task: None,
    };
    let text = |path: &str, text: &str| Input::Text {
        path: path.to_owned(),
        bytes: text.as_bytes().to_vec(),
    };
    CellPlan {
        actor: "sandbox-probe".into(),
        role: Role::Participant,
        flavor: "dummy".into(),
        files: CellFiles {
            inputs: vec![
                text("BRIEF.md", "sandbox probe\n"),
                text("PROMPT.txt", "sandbox probe\n"),
                Input::Folder { path: "raw".into() },
            ],
            writable: vec![Writable {
                path: "out".into(),
                cap_bytes: 16 << 20,
                seed: None,
                collect_to: dir.join("out"),
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: None,
        },
        network: network.map(|name| NetworkSpec {
            name,
            labels,
            internal: settings.network != NetworkMode::Open,
            isolated: false,
        }),
        egress: match settings.network {
            NetworkMode::None => Egress::None,
            NetworkMode::Open => Egress::Open,
            NetworkMode::Allowlist => Egress::Closed,
        },
        spec,
        timeout: PROBE_TIMEOUT,
        stdout_log: dir.join("probe.stdout.log"),
        stderr_log: dir.join("probe.stderr.log"),
        budget: None,
        score_over_budget: false,
        commit: None,
        user: None,
    }
}

fn read_json(path: &Path) -> serde_json::Value {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "nothing".to_owned(),
        other => other.to_string(),
    }
}

/// Compares what the probe saw with what was asked for.
pub fn evaluate(
    sandbox: &serde_json::Value,
    probes: &str,
    settings: &ProbeSettings,
) -> SandboxReport {
    let mut checks = identity_checks(sandbox);
    checks.extend(init_checks(sandbox, settings));
    checks.extend(resource_checks(sandbox, probes, settings));
    let passed = checks.iter().all(|c| c.ok);
    SandboxReport {
        passed,
        checks,
        not_enforced: Vec::new(),
    }
}

fn check(property: &'static str, ok: bool, seen: String, fix: &'static str) -> Check {
    Check {
        property,
        ok,
        seen,
        fix,
        not_enforced: None,
    }
}

/// Who the cell is and what it may do.
fn identity_checks(sandbox: &serde_json::Value) -> Vec<Check> {
    let uid = sandbox["uid"].as_i64();
    let caps = sandbox["cap_eff"]
        .as_str()
        .and_then(|c| u64::from_str_radix(c, 16).ok());
    let tmpfs = format!(
        "home {}, tmp {}",
        sandbox["home_writable"], sandbox["tmp_writable"]
    );
    vec![
        check(
            "runs as a non-root user",
            uid.is_some_and(|u| u != 0),
            text(&sandbox["uid"]),
            "set MULTICOOKER_HARDENING_USER to a non-root uid:gid",
        ),
        check(
            "has no capabilities (CapEff = 0)",
            caps == Some(0),
            text(&sandbox["cap_eff"]),
            "the engine must honour cap_drop ALL; check its version and any daemon default capabilities",
        ),
        check(
            "no-new-privileges is set",
            sandbox["no_new_privs"] == 1,
            text(&sandbox["no_new_privs"]),
            "the engine must honour no-new-privileges (API 1.41+ for containers)",
        ),
        check(
            "seccomp filters system calls (mode 2)",
            sandbox["seccomp"] == 2,
            text(&sandbox["seccomp"]),
            "run the engine with its default seccomp profile (not seccomp=unconfined)",
        ),
        check(
            "the root file system is read-only",
            sandbox["root_writable"] == false,
            text(&sandbox["root_writable"]),
            "the engine must honour ReadonlyRootfs",
        ),
        check(
            "HOME and /tmp are writable tmpfs",
            sandbox["home_writable"] == true && sandbox["tmp_writable"] == true,
            tmpfs,
            "the engine must support tmpfs mounts with uid/gid options",
        ),
        check(
            "no Docker socket inside",
            sandbox["docker_socket"] == false,
            text(&sandbox["docker_socket"]),
            "never mount /var/run/docker.sock; check the image",
        ),
    ]
}

/// The program against its init (issue 21): its exact identity, no capability in any set, and
/// init's descriptors and process out of its reach.
fn init_checks(sandbox: &serde_json::Value, settings: &ProbeSettings) -> Vec<Check> {
    let identity = format!(
        "uid {} gid {}",
        text(&sandbox["uid"]),
        text(&sandbox["gid"])
    );
    let sets = ["cap_eff", "cap_prm", "cap_bnd", "cap_amb"];
    let empty = sets.iter().all(|set| {
        sandbox[*set]
            .as_str()
            .and_then(|c| u64::from_str_radix(c, 16).ok())
            == Some(0)
    });
    let capabilities = format!(
        "CapEff {} CapPrm {} CapBnd {} CapAmb {} NoNewPrivs {}",
        text(&sandbox["cap_eff"]),
        text(&sandbox["cap_prm"]),
        text(&sandbox["cap_bnd"]),
        text(&sandbox["cap_amb"]),
        text(&sandbox["no_new_privs"]),
    );
    vec![
        check(
            "runs as exactly the cell user",
            sandbox["uid"] == settings.user.uid && sandbox["gid"] == settings.user.gid,
            identity,
            "the cell's init must start the program as MULTICOOKER_HARDENING_USER (it needs the SETUID and SETGID capabilities)",
        ),
        check(
            "has no capability in any set (effective, permitted, bounding, ambient)",
            empty,
            capabilities,
            "the cell's init must drop the bounding set before it starts the program (it needs SETPCAP)",
        ),
        check(
            "cannot open init's descriptors (/proc/1/fd)",
            sandbox["init_fds_open"] == false,
            text(&sandbox["init_fds_open"]),
            "init must run as another uid than the program and be non-dumpable (mc-cell init as root)",
        ),
        check(
            "cannot trace PID 1 (ptrace)",
            sandbox["ptrace_init"] == false,
            text(&sandbox["ptrace_init"]),
            "init must run as another uid than the program and be non-dumpable (mc-cell init as root)",
        ),
    ]
}

/// Limits, mounts and egress.
fn resource_checks(
    sandbox: &serde_json::Value,
    probes: &str,
    settings: &ProbeSettings,
) -> Vec<Check> {
    let memory = text(&sandbox["memory_limit"]);
    let pids = text(&sandbox["pids_limit"]);
    let cpu = text(&sandbox["cpu"]);
    let extra = extra_mounts(sandbox);
    let mounts = if extra.is_empty() {
        "only documented mounts".to_owned()
    } else {
        extra.join(", ")
    };
    let blocked = probes
        .lines()
        .any(|l| l.starts_with(&format!("connect {} error", settings.direct)));
    let host_folders = area_file_systems(sandbox);
    let seen = probes
        .lines()
        .find(|l| l.starts_with("connect "))
        .unwrap_or("no probe")
        .to_owned();
    vec![
        check(
            "the memory limit is in force",
            memory == settings.limits.memory_bytes.to_string(),
            memory,
            "the engine's cgroups must support memory limits (check `docker info` warnings)",
        ),
        check(
            "the process limit is in force",
            pids == settings.limits.pids.to_string(),
            pids,
            "the engine's cgroups must support pids limits",
        ),
        check(
            "the CPU limit is in force",
            cpu_matches(&cpu, settings.limits.cpus),
            cpu,
            "the engine's cgroups must support CPU quotas",
        ),
        check(
            "no host paths beyond the documented mounts",
            extra.is_empty(),
            mounts,
            "remove the extra mounts (check daemon defaults and the image's VOLUMEs)",
        ),
        check(
            "every area is the engine's in-memory file system, never a host folder",
            host_folders.is_empty(),
            if host_folders.is_empty() {
                "tmpfs areas only".to_owned()
            } else {
                host_folders.join(", ")
            },
            "the engine must give areas as tmpfs volumes; a host folder mounted there is a leak",
        ),
        check(
            "egress is as configured",
            settings.network == NetworkMode::Open || blocked,
            seen,
            "allowlist and none cells must have no route out; check that the engine creates internal networks",
        ),
    ]
}

fn cpu_matches(seen: &str, cpus: f64) -> bool {
    let numbers: Vec<f64> = seen
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    match numbers.as_slice() {
        [quota, period] if *period > 0.0 => ((quota / period) - cpus).abs() < 0.01,
        _ => false,
    }
}

/// Areas whose file system is not tmpfs (`target fstype`).
fn area_file_systems(sandbox: &serde_json::Value) -> Vec<String> {
    let areas = ["/work", "/work/out", "/work/outbox", CONTROL_AREA];
    sandbox["mounts"]
        .as_array()
        .map(|mounts| {
            mounts
                .iter()
                .filter(|m| m["target"].as_str().is_some_and(|t| areas.contains(&t)))
                .filter(|m| m["fstype"] != "tmpfs")
                .map(|m| format!("{} {}", text(&m["target"]), text(&m["fstype"])))
                .collect()
        })
        .unwrap_or_default()
}

fn extra_mounts(sandbox: &serde_json::Value) -> Vec<String> {
    let allowed: BTreeSet<&str> = DOCUMENTED.iter().chain(ENGINE_FILES).copied().collect();
    let engine_owned = |t: &str| {
        t == "/"
            || ["/proc", "/sys", "/dev"]
                .iter()
                .any(|p| t == *p || t.starts_with(&format!("{p}/")))
    };
    sandbox["mounts"]
        .as_array()
        .map(|mounts| {
            mounts
                .iter()
                .filter_map(|m| m["target"].as_str())
                .filter(|t| !allowed.contains(t) && !engine_owned(t))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> ProbeSettings {
        ProbeSettings {
            cook: "c".into(),
            root_id: "r".into(),
            project: "mc-c".into(),
            user: CellUser::resolve(Some("1000:1000")).unwrap(),
            limits: Limits {
                memory_bytes: 1 << 30,
                memory_swap_bytes: 1 << 30,
                cpus: 0.5,
                pids: 512,
            },
            network: NetworkMode::Allowlist,
            direct: "203.0.113.1:443".into(),
            images: crate::cell::images::ImageSettings::default(),
        }
    }

    fn sane() -> serde_json::Value {
        serde_json::json!({
            "uid": 1000, "gid": 1000, "cap_eff": "0000000000000000", "cap_prm": "0000000000000000",
            "cap_bnd": "0000000000000000", "cap_amb": "0000000000000000",
            "init_fds_open": false, "ptrace_init": false, "no_new_privs": 1, "seccomp": 2,
            "root_writable": false, "home_writable": true, "tmp_writable": true, "docker_socket": false,
            "memory_limit": "1073741824", "pids_limit": "512", "cpu": "50000 100000",
            "mounts": [{"target": "/"}, {"target": "/proc"}, {"target": "/work", "fstype": "tmpfs"}, {"target": "/work/out", "fstype": "tmpfs"}, {"target": "/etc/hosts"}, {"target": "/sys/fs/cgroup/memory"}]
        })
    }

    #[test]
    fn a_sane_sandbox_passes_every_check() {
        let report = evaluate(
            &sane(),
            "connect 203.0.113.1:443 error connection timed out\n",
            &settings(),
        );
        assert!(report.passed, "{:?}", report.failures());
        assert_eq!(report.checks.len(), 17);
    }

    #[test]
    fn each_missing_property_is_a_failing_line_with_its_fix() {
        let mut sandbox = sane();
        sandbox["uid"] = 0.into();
        sandbox["cap_eff"] = "00000000a80425fb".into();
        sandbox["mounts"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"target": "/var/run/docker.sock"}));
        sandbox["mounts"][3]["fstype"] = "ext4".into();
        let report = evaluate(&sandbox, "connect 203.0.113.1:443 ok\n", &settings());
        let failures = report.failures();
        assert_eq!(failures.len(), 7, "{failures:?}");
        assert!(failures.iter().any(|f| f.contains("/work/out ext4")));
        assert!(
            failures[0]
                .starts_with("runs as a non-root user (saw 0): set MULTICOOKER_HARDENING_USER")
        );
        assert!(failures.iter().any(|f| f.contains("/var/run/docker.sock")));
        assert!(
            failures
                .iter()
                .any(|f| f.starts_with("egress is as configured"))
        );
    }

    /// Issue 21: a program that can reach its init (its peer: same uid, dumpable) fails the
    /// check, and the report shows the exact identity and every capability set.
    #[test]
    fn a_program_that_can_reach_its_init_fails_and_its_identity_is_shown() {
        let mut sandbox = sane();
        sandbox["init_fds_open"] = true.into();
        sandbox["ptrace_init"] = true.into();
        sandbox["cap_bnd"] = "00000000000000e0".into();
        sandbox["gid"] = 1001.into();
        let report = evaluate(&sandbox, "connect 203.0.113.1:443 error x\n", &settings());
        let failures = report.failures();
        assert_eq!(failures.len(), 4, "{failures:?}");
        assert!(failures[0].contains("uid 1000 gid 1001"), "{failures:?}");
        assert!(
            failures[1].contains("CapBnd 00000000000000e0 CapAmb 0000000000000000"),
            "{failures:?}"
        );
        assert!(failures[2].starts_with("cannot open init's descriptors"));
        assert!(failures[3].starts_with("cannot trace PID 1"));
    }

    #[test]
    fn what_a_backend_cannot_enforce_is_reported_never_assumed() {
        let mut sandbox = sane();
        sandbox["no_new_privs"] = 0.into();
        let report = evaluate(
            &sandbox,
            "connect 203.0.113.1:443 error timed out\n",
            &settings(),
        );
        assert!(!report.passed);
        let unenforced = [crate::runtime::Unenforced {
            property: "no-new-privileges is set",
            compensation: "compensated by cap-drop ALL",
        }];
        let report = report.with_unenforced(&unenforced);
        assert!(report.passed, "{:?}", report.failures());
        let check = report
            .checks
            .iter()
            .find(|c| c.property == "no-new-privileges is set")
            .unwrap();
        assert!(!check.ok, "it does not hold, and says so");
        assert_eq!(check.not_enforced, Some("compensated by cap-drop ALL"));
    }
}
