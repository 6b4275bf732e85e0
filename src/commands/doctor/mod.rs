//! `multicooker doctor [task]`: is the engine reachable, which API does it speak, can cells run
//! as a non-root user, and does every needed flavor's base image build (it is kept: cooks
//! reuse it).

use serde_json::json;

use super::{connect_quietly, open_cook};
use crate::brief::KNOWN_FLAVORS;
use crate::brief::NetworkMode;
use crate::cell::images::{base_specs, ensure_base, namespace_bases};
use crate::cell::plan::DEFAULT_PIDS;
use crate::cell::sandbox::{ProbeSettings, probe};
use crate::cli::DoctorArgs;
use crate::creds::{Credentials, TokenStore};
use crate::error::{ExitCode, hint_for};
use crate::flavor::has_image;
use crate::runtime::Limits;
use crate::runtime::connect::Endpoint;
use crate::runtime::{ObjectKind, Runtime};
use crate::settings::{self, Session};
use crate::state::Role;

mod live;

#[derive(Default)]
struct Checks {
    lines: Vec<(&'static str, String)>,
    /// Base images this build does not use, all of them (the line shows a few).
    stale_bases: Vec<String>,
    /// Plain `doctor`: what this machine can cook, said before the counts (issue 27).
    readiness: Option<String>,
}

impl Checks {
    fn add(&mut self, level: &'static str, text: impl Into<String>) {
        self.lines.push((level, text.into()));
    }
    fn count(&self, level: &str) -> usize {
        self.lines.iter().filter(|(l, _)| *l == level).count()
    }
}

/// One flavor to check, and how strictly.
struct Target {
    flavor: String,
    /// A problem is a failure (the flavor is needed), not a warning.
    strict: bool,
    /// Build the image when it is missing.
    build: bool,
    /// The longest timeout of its cells (its login must outlive it).
    timeout_s: u64,
}

pub(super) async fn run(args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    // A Harbor task folder: does its oracle reach reward 1 (issue 26)?
    if let Some(dir) = args
        .task
        .as_deref()
        .map(std::path::Path::new)
        .filter(|d| crate::harbor::is_task(d))
    {
        return super::harbor::doctor(&session, dir).await;
    }
    let mut checks = Checks::default();
    let (targets, cook) = flavors_to_check(&session, args, &mut checks);
    let endpoint = match &session.backend {
        // On a swarm the engine is the manager's, whatever DOCKER_HOST says.
        settings::Backend::Swarm(config) => format!("{} (swarm manager)", config.manager),
        settings::Backend::Docker { .. } => Endpoint::from_env(&session.env.docker())
            .map_or_else(|problem| problem, |e| e.to_string()),
    };
    match connect_quietly(&session).await {
        Ok((runtime, info)) => {
            checks.add(
                "OK",
                format!(
                    "engine reachable at {endpoint}: {} {} (API {}), {} CPUs, {} MiB",
                    info.backend,
                    info.version,
                    info.api_version,
                    info.cpus,
                    info.mem_total >> 20
                ),
            );
            check_user(&session.env, &mut checks);
            let mut ready = Vec::new();
            let mut logged_in = Vec::new();
            // Found once: finding the keyring probes it.
            let sources = crate::settings::login_sources(&session.env);
            let store = sources.token_store();
            for target in &targets {
                let login = check_login(target, &sources, &*store, &mut checks);
                let image = check_flavor(
                    &*runtime,
                    &session,
                    target,
                    cook.as_ref().map(|(dir, _)| dir.as_path()),
                    args.no_build,
                    &mut checks,
                )
                .await;
                if login && crate::flavor::is_vendor(&target.flavor) {
                    logged_in.push(target.flavor.clone());
                }
                if login && image {
                    ready.push(target.flavor.clone());
                }
            }
            if args.task.is_none() && args.flavors.is_empty() {
                readiness(&ready, &logged_in, &mut checks);
            }
            check_stale_bases(&*runtime, &session, &mut checks).await;
            if args.sandbox {
                check_sandbox(&runtime, &session, &mut checks).await;
            }
            if args.live {
                let task = cook.as_ref().map(|(dir, network)| (dir.as_path(), network));
                live::probe(&runtime, &session, &info, &ready, task, &mut checks).await;
            }
        }
        Err(error) => {
            let hint = hint_for(&error).unwrap_or_default();
            checks.add("FAIL", format!("engine: {error:#}. {hint}"));
        }
    }
    Ok(print_checks(session.printer, &checks, &endpoint))
}

/// Plain `doctor`: dummy cooks and real flavors are told apart (issue 27: a machine with no
/// login failed `doctor` although every dummy cook works). No login is a warning with the
/// commands that log in; the summary line says what can cook. A cook's own check
/// (`doctor <task>`) stays strict: a flavor it needs fails.
fn readiness(ready: &[String], logged_in: &[String], checks: &mut Checks) {
    if logged_in.is_empty() {
        checks.add(
            "WARN",
            format!(
                "no real flavor is logged in, so only `dummy` cooks can run; log in on the host with one of: {}",
                KNOWN_FLAVORS
                    .iter()
                    .filter(|f| !crate::creds::members(f).is_empty() && **f != "triad")
                    .map(|f| crate::creds::login_advice(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    let dummy = if ready.iter().any(|f| f == "dummy") {
        "yes"
    } else {
        "no (see the `dummy` line)"
    };
    let real: Vec<&str> = ready
        .iter()
        .map(String::as_str)
        .filter(|f| crate::flavor::is_vendor(f))
        .collect();
    let real = if real.is_empty() && logged_in.is_empty() {
        "none (no login)".to_owned()
    } else if real.is_empty() {
        format!(
            "none yet (logged in: {}; see their lines)",
            logged_in.join(", ")
        )
    } else {
        real.join(", ")
    };
    checks.readiness = Some(format!(
        "doctor: ready for dummy cooks: {dummy}; ready for real flavors: {real}"
    ));
}

/// The checks as a table (or, with `-q`, only the failures on stderr), then what the machine
/// can cook (plain `doctor`) and one line with the counts. Exit 1 when something a cook needs
/// is missing.
fn print_checks(printer: crate::output::Printer, checks: &Checks, endpoint: &str) -> ExitCode {
    let (failures, warnings) = (checks.count("FAIL"), checks.count("WARN"));
    printer.json(&json!({
        "engine": endpoint,
        "checks": checks.lines.iter().map(|(l, t)| json!({"level": l, "check": t})).collect::<Vec<_>>(),
        "failures": failures,
        "warnings": warnings,
        "stale_base_images": checks.stale_bases,
    }));
    for (level, text) in &checks.lines {
        printer.data(&format!("  [{level:<4}] {text}"));
        if printer.quiet() && *level == "FAIL" {
            printer.problem(&format!("doctor: {text}"));
        }
    }
    if let Some(readiness) = &checks.readiness {
        printer.data(readiness);
    }
    let warned = match warnings {
        0 => String::new(),
        1 => ", 1 warning".to_owned(),
        n => format!(", {n} warnings"),
    };
    if failures == 0 {
        if warnings == 0 {
            printer.data("doctor: all good");
        } else {
            printer.data(&format!(
                "doctor: ready{warned} (each [WARN] names what it affects and the fix)"
            ));
        }
        ExitCode::Success
    } else {
        printer.data(&format!(
            "doctor: {failures} check(s) failed{warned}; a cook needs each [FAIL] fixed"
        ));
        ExitCode::NothingUsable
    }
}

fn flavors_to_check(
    session: &Session,
    args: &DoctorArgs,
    checks: &mut Checks,
) -> (
    Vec<Target>,
    Option<(std::path::PathBuf, crate::brief::Network)>,
) {
    let default_timeout = crate::brief::DEFAULT_TIMEOUT_S;
    if let Some(task) = &args.task {
        let (targets, cook) = task_targets(session, task, checks);
        return (only_listed(targets, &args.flavors, task, checks), cook);
    }
    if !args.flavors.is_empty() {
        let mut targets = Vec::new();
        for flavor in &args.flavors {
            if KNOWN_FLAVORS.contains(&flavor.as_str()) {
                targets.push(Target {
                    flavor: flavor.clone(),
                    strict: true,
                    build: true,
                    timeout_s: default_timeout,
                });
            } else {
                checks.add(
                    "FAIL",
                    format!(
                        "flavor `{flavor}` is unknown (known: {}; a cook's own flavors are checked with `doctor <task>`)",
                        KNOWN_FLAVORS.join(", ")
                    ),
                );
            }
        }
        return (targets, None);
    }
    for flavor in KNOWN_FLAVORS.iter().filter(|f| !has_image(f)) {
        checks.add(
            "WARN",
            format!("flavor `{flavor}`: no image in this build of multicooker"),
        );
    }
    // The dummy is hermetic and always checked; the real flavors are reported, and built
    // only when asked (their images need the vendors' registries).
    let targets = KNOWN_FLAVORS
        .iter()
        .filter(|f| has_image(f))
        .map(|f| Target {
            flavor: (*f).to_owned(),
            strict: *f == "dummy",
            build: *f == "dummy",
            timeout_s: default_timeout,
        })
        .collect();
    (targets, None)
}

/// `doctor <task> --flavors a,b`: only the listed flavors of the cook; a listed flavor the
/// cook does not use fails, naming the ones it does.
fn only_listed(
    targets: Vec<Target>,
    listed: &[String],
    task: &str,
    checks: &mut Checks,
) -> Vec<Target> {
    if listed.is_empty() {
        return targets;
    }
    let used: Vec<&str> = targets.iter().map(|t| t.flavor.as_str()).collect();
    for flavor in listed.iter().filter(|f| !used.contains(&f.as_str())) {
        checks.add(
            "FAIL",
            format!(
                "flavor `{flavor}` is not used by `{task}` (it uses: {}); `doctor --flavors {flavor}` checks it alone",
                used.join(", ")
            ),
        );
    }
    targets
        .into_iter()
        .filter(|t| listed.contains(&t.flavor))
        .collect()
}

/// The flavors a cook uses, each with the longest timeout of its cells, and the cook's folder
/// and network policy (for `--live`).
fn task_targets(
    session: &Session,
    task: &str,
    checks: &mut Checks,
) -> (
    Vec<Target>,
    Option<(std::path::PathBuf, crate::brief::Network)>,
) {
    match open_cook(session, task) {
        Ok((paths, loaded)) => {
            checks.add("OK", format!("`{}` is valid", paths.brief_yaml().display()));
            let brief = &loaded.brief;
            let mut targets: Vec<Target> = Vec::new();
            let cells = brief
                .participants
                .iter()
                .map(|a| (a, Role::Participant))
                .chain(brief.judges.iter().map(|a| (a, Role::Judge)));
            for (actor, role) in cells {
                let timeout_s = brief.timeout_for(actor, role);
                match targets.iter_mut().find(|t| t.flavor == actor.flavor) {
                    Some(target) => target.timeout_s = target.timeout_s.max(timeout_s),
                    None => targets.push(Target {
                        flavor: actor.flavor.clone(),
                        strict: true,
                        build: true,
                        timeout_s,
                    }),
                }
            }
            targets.sort_by(|a, b| a.flavor.cmp(&b.flavor));
            (
                targets,
                Some((paths.dir().to_path_buf(), brief.network.clone())),
            )
        }
        Err(error) => {
            checks.add("FAIL", format!("{error:#}"));
            (Vec::new(), None)
        }
    }
}

/// The flavor's login: present, well-formed, and outliving its cells. True when usable.
fn check_login(
    target: &Target,
    sources: &crate::creds::LoginSources,
    store: &dyn TokenStore,
    checks: &mut Checks,
) -> bool {
    let flavor = &target.flavor;
    if crate::creds::members(flavor).is_empty() {
        return true;
    }
    match Credentials::snapshot(&[(flavor.clone(), target.timeout_s)], sources, store) {
        Ok(logins) => {
            for (member, line) in logins.describe(jiff::Timestamp::now()) {
                checks.add("OK", format!("flavor `{flavor}`: {member} login: {line}"));
            }
            true
        }
        Err(error) => {
            let hint = crate::error::Hint::hint(&error).unwrap_or_default();
            checks.add(
                if target.strict { "FAIL" } else { "WARN" },
                one_line(&format!("flavor `{flavor}`: {error}; {hint}")),
            );
            false
        }
    }
}

/// A multi-line message (a list of logins) as one line of the table.
fn one_line(text: &str) -> String {
    let mut line = String::new();
    for part in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let part = part.trim_start_matches("- ");
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    line
}

fn check_user(env: &settings::Env, checks: &mut Checks) {
    match crate::settings::cell_user(env) {
        Ok(user) => checks.add(
            "OK",
            format!(
                "cells run as {} (launched code as {}:{}), ids no host account, group or process uses",
                user.spec(),
                user.uid + 1,
                user.gid + 1
            ),
        ),
        Err(problem) => checks.add("FAIL", format!("{problem:#}")),
    }
}

/// The flavor's base image: built, or builds now. True when usable.
async fn check_flavor(
    runtime: &dyn Runtime,
    session: &Session,
    target: &Target,
    cook: Option<&std::path::Path>,
    no_build: bool,
    checks: &mut Checks,
) -> bool {
    let flavor = &target.flavor;
    let level = if target.strict { "FAIL" } else { "WARN" };
    let specs = session
        .image_settings()
        .and_then(|images| base_specs(std::slice::from_ref(flavor), cook, &images));
    let base = match specs {
        Ok(mut specs) => specs.remove(0),
        Err(error) => {
            checks.add(level, format!("flavor `{flavor}`: {error}"));
            return false;
        }
    };
    match runtime.image_exists(&base.tag).await {
        Ok(true) => {
            checks.add(
                "OK",
                format!("flavor `{flavor}`: base image `{}` is built", base.tag),
            );
            return true;
        }
        Ok(false) if no_build || !target.build => {
            let how = if no_build {
                "build skipped".to_owned()
            } else {
                format!(
                    "`multicooker doctor --flavors {flavor}` builds it; it needs network access to the vendor's registry"
                )
            };
            checks.add(
                "WARN",
                format!(
                    "flavor `{flavor}`: base image `{}` not built yet ({how})",
                    base.tag
                ),
            );
            return false;
        }
        Ok(false) => {}
        Err(error) => {
            checks.add("FAIL", format!("flavor `{flavor}`: {error}"));
            return false;
        }
    }
    let started = std::time::Instant::now();
    match ensure_base(runtime, &base).await {
        Ok(()) => {
            checks.add(
                "OK",
                format!(
                    "flavor `{flavor}`: base image `{}` builds ({:.1}s)",
                    base.tag,
                    started.elapsed().as_secs_f64()
                ),
            );
            true
        }
        Err(error) => {
            checks.add(level, format!("flavor `{flavor}`: {error}"));
            false
        }
    }
}

/// Base images this build of multicooker would not use: every build gives the packaged flavors
/// new content hashes, so older builds' base images pile up (issue 17). Listed with the
/// command that removes them; a cook's own `flavors/` images are listed too (they are rebuilt
/// on their next use).
async fn check_stale_bases(runtime: &dyn Runtime, session: &Session, checks: &mut Checks) {
    const SHOWN: usize = 6;
    let packaged: Vec<String> = KNOWN_FLAVORS
        .iter()
        .filter(|f| has_image(f))
        .map(|f| (*f).to_owned())
        .collect();
    let Ok(current) = session
        .image_settings()
        .and_then(|images| base_specs(&packaged, None, &images))
    else {
        return;
    };
    let Ok(listed) = namespace_bases(runtime, session.namespace.as_deref()).await else {
        return;
    };
    // A cluster node's copy is named `node/<host>/…`: by a registry tag, or by its id (a copy
    // pulled by digest), which is the same id as the image it was pushed from.
    let mut in_use: Vec<String> = Vec::new();
    for spec in &current {
        in_use.push(spec.tag.clone());
        if let Ok(Some(id)) = runtime.image_id(&spec.tag).await {
            in_use.push(id);
        }
    }
    let used = |name: &str| {
        let local = on_node(name);
        in_use
            .iter()
            .any(|u| local == u || local.ends_with(&format!("/{u}")))
    };
    let mut stale: Vec<String> = listed
        .into_iter()
        .filter(|o| o.kind == ObjectKind::Image && !used(&o.name))
        .map(|o| o.name)
        .collect();
    stale.sort();
    stale.dedup();
    if stale.is_empty() {
        return;
    }
    checks.stale_bases.clone_from(&stale);
    let more = stale.len().saturating_sub(SHOWN);
    let (whose, flag) = session.namespace.as_deref().map_or_else(
        || (String::new(), String::new()),
        |ns| {
            (
                format!(" of namespace `{ns}`"),
                format!(" --namespace {ns}"),
            )
        },
    );
    checks.add(
        "WARN",
        format!(
            "{} base image(s){whose} this build does not use (older builds, or cooks' own flavors): {}{}; `multicooker clean --all --base-images{flag}` removes every base image{whose} (the ones in use are rebuilt on their next use; other namespaces' are never touched)",
            stale.len(),
            stale.iter().take(SHOWN).map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ),
    );
}

/// The name on its node of a cluster backend's node-side object (`node/<host>/<name>`).
fn on_node(name: &str) -> &str {
    name.strip_prefix("node/")
        .and_then(|rest| rest.split_once('/'))
        .map_or(name, |(_, local)| local)
}

/// Runs a probe cell with a participant's default settings and adds one line per property.
async fn check_sandbox(
    runtime: &crate::runtime::SharedRuntime,
    session: &Session,
    checks: &mut Checks,
) {
    let Ok(user) = crate::settings::cell_user(&session.env) else {
        return;
    };
    let images = match session.image_settings() {
        Ok(images) => images,
        Err(error) => {
            let error = crate::runtime::RuntimeError::Build {
                image: "multicooker-base-dummy".into(),
                message: error.to_string(),
            };
            return checks.add("FAIL", format!("sandbox: the probe could not run: {error}"));
        }
    };
    let root = session.root_id();
    let settings = ProbeSettings {
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
    };
    match probe(
        runtime,
        &settings,
        tokio_util::sync::CancellationToken::new(),
    )
    .await
    {
        Ok(report) => {
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
        Err(error) => checks.add("FAIL", format!("sandbox: the probe could not run: {error}")),
    }
}
