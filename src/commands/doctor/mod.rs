//! `multicooker doctor [task]`: is the engine reachable, which API does it speak, can cells run
//! as a non-root user, and does every needed flavor's base image build (it is kept: cooks
//! reuse it).

use serde_json::json;

use super::connect_quietly;
use crate::brief::KNOWN_FLAVORS;
use crate::cli::DoctorArgs;
use crate::error::{ExitCode, hint_for};
use crate::runtime::connect::Endpoint;
use crate::runtime::{EngineInfo, SharedRuntime};
use crate::settings::{self, Session};

mod flavors;
mod live;
mod sandbox;
mod targets;

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
    let (targets, cook) = targets::flavors_to_check(&session, args, &mut checks);
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
            let engine = Engine {
                runtime: &runtime,
                info: &info,
                session: &session,
            };
            engine_checks(engine, args, (&targets, &cook), &mut checks).await;
        }
        Err(error) => {
            let hint = hint_for(&error).unwrap_or_default();
            checks.add("FAIL", format!("engine: {error:#}. {hint}"));
        }
    }
    Ok(print_checks(session.printer, &checks, &endpoint))
}

/// The reachable engine the checks run against.
#[derive(Clone, Copy)]
struct Engine<'a> {
    runtime: &'a SharedRuntime,
    info: &'a EngineInfo,
    session: &'a Session,
}

/// Everything checked once the engine answers: the cell user, each flavor's login and image,
/// what can cook, stale base images, and, when asked, the sandbox and the live probes.
async fn engine_checks(
    engine: Engine<'_>,
    args: &DoctorArgs,
    (targets, cook): (&[Target], &targets::Cook),
    checks: &mut Checks,
) {
    let Engine {
        runtime,
        info,
        session,
    } = engine;
    flavors::check_user(&session.env, checks);
    let mut ready = Vec::new();
    let mut logged_in = Vec::new();
    // Found once: finding the keyring probes it.
    let sources = crate::settings::login_sources(&session.env);
    let store = sources.token_store();
    let cook_dir = cook.as_ref().map(|(dir, _)| dir.as_path());
    for target in targets {
        let login = flavors::check_login(target, &sources, &*store, checks);
        let image =
            flavors::check_flavor(&**runtime, session, target, cook_dir, args.no_build, checks)
                .await;
        if login && crate::flavor::is_vendor(&target.flavor) {
            logged_in.push(target.flavor.clone());
        }
        if login && image {
            ready.push(target.flavor.clone());
        }
    }
    if args.task.is_none() && args.flavors.is_empty() {
        readiness(&ready, &logged_in, checks);
    }
    flavors::check_stale_bases(&**runtime, session, checks).await;
    if args.sandbox {
        sandbox::check_sandbox(runtime, session, checks).await;
    }
    if args.live {
        let task = cook.as_ref().map(|(dir, network)| (dir.as_path(), network));
        live::probe(runtime, session, info, &ready, task, checks).await;
    }
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
