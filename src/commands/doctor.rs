//! `multicooker doctor [task]`: is the engine reachable, which API does it speak, can cells run
//! as a non-root user, and does every needed flavor's base image build (it is kept: cooks
//! reuse it).

use serde_json::json;

use super::{connect, open_cook};
use crate::brief::KNOWN_FLAVORS;
use crate::brief::NetworkMode;
use crate::cli::DoctorArgs;
use crate::cook::images::{base_specs, ensure_base};
use crate::cook::plan::CellUser;
use crate::cook::plan::DEFAULT_PIDS;
use crate::cook::sandbox::{ProbeSettings, probe};
use crate::error::{ExitCode, hint_for};
use crate::flavor::has_image;
use crate::runtime::Limits;
use crate::runtime::Runtime;
use crate::settings::{self, Session};

#[derive(Default)]
struct Checks {
    lines: Vec<(&'static str, String)>,
}

impl Checks {
    fn add(&mut self, level: &'static str, text: impl Into<String>) {
        self.lines.push((level, text.into()));
    }
    fn failures(&self) -> usize {
        self.lines.iter().filter(|(l, _)| *l == "FAIL").count()
    }
}

pub(super) async fn run(args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let mut checks = Checks::default();
    let (flavors, cook) = flavors_to_check(&session, args, &mut checks);
    match connect(&session).await {
        Ok((runtime, info)) => {
            checks.add(
                "OK",
                format!(
                    "engine reachable: {} {} (API {}), {} CPUs, {} MiB",
                    info.backend,
                    info.version,
                    info.api_version,
                    info.cpus,
                    info.mem_total >> 20
                ),
            );
            check_user(&mut checks);
            for flavor in flavors {
                check_flavor(
                    &*runtime,
                    &flavor,
                    cook.as_deref(),
                    args.no_build,
                    &mut checks,
                )
                .await;
            }
            if args.sandbox {
                check_sandbox(&runtime, &session, &mut checks).await;
            }
        }
        Err(error) => {
            let hint = hint_for(&error).unwrap_or_default();
            checks.add("FAIL", format!("engine: {error:#}. {hint}"));
        }
    }
    let printer = session.printer;
    let failures = checks.failures();
    printer.json(&json!({"checks": checks.lines.iter().map(|(l, t)| json!({"level": l, "check": t})).collect::<Vec<_>>(), "failures": failures}));
    for (level, text) in &checks.lines {
        printer.data(&format!("  [{level:<4}] {text}"));
    }
    if failures == 0 {
        printer.data("doctor: all good");
        Ok(ExitCode::Success)
    } else {
        printer.data(&format!("doctor: {failures} check(s) failed"));
        Ok(ExitCode::NothingUsable)
    }
}

fn flavors_to_check(
    session: &Session,
    args: &DoctorArgs,
    checks: &mut Checks,
) -> (Vec<String>, Option<std::path::PathBuf>) {
    let Some(task) = &args.task else {
        for flavor in KNOWN_FLAVORS.iter().filter(|f| !has_image(f)) {
            checks.add(
                "WARN",
                format!("flavor `{flavor}`: no image in this build of multicooker"),
            );
        }
        let flavors = KNOWN_FLAVORS
            .iter()
            .filter(|f| has_image(f))
            .map(|f| (*f).to_owned())
            .collect();
        return (flavors, None);
    };
    match open_cook(session, task) {
        Ok((paths, loaded)) => {
            checks.add("OK", format!("`{}` is valid", paths.brief_yaml().display()));
            let mut flavors: Vec<String> = loaded
                .brief
                .participants
                .iter()
                .chain(&loaded.brief.judges)
                .map(|a| a.flavor.clone())
                .collect();
            flavors.sort();
            flavors.dedup();
            (flavors, Some(paths.dir().to_path_buf()))
        }
        Err(error) => {
            checks.add("FAIL", format!("{error:#}"));
            (Vec::new(), None)
        }
    }
}

fn check_user(checks: &mut Checks) {
    match CellUser::resolve(
        std::env::var(crate::cli::env::HARDENING_USER)
            .ok()
            .as_deref(),
    ) {
        Ok(user) => checks.add("OK", format!("cells run as non-root user {}", user.spec())),
        Err(problem) => checks.add(
            "FAIL",
            format!("{}: {problem}", crate::cli::env::HARDENING_USER),
        ),
    }
}

async fn check_flavor<R: Runtime>(
    runtime: &R,
    flavor: &str,
    cook: Option<&std::path::Path>,
    no_build: bool,
    checks: &mut Checks,
) {
    let base = match base_specs(&[flavor.to_owned()], cook) {
        Ok(mut specs) => specs.remove(0),
        Err(error) => return checks.add("FAIL", format!("flavor `{flavor}`: {error}")),
    };
    match runtime.image_exists(&base.tag).await {
        Ok(true) => {
            return checks.add(
                "OK",
                format!("flavor `{flavor}`: base image `{}` is built", base.tag),
            );
        }
        Ok(false) if no_build => {
            return checks.add(
                "WARN",
                format!(
                    "flavor `{flavor}`: base image `{}` not built yet (build skipped)",
                    base.tag
                ),
            );
        }
        Ok(false) => {}
        Err(error) => return checks.add("FAIL", format!("flavor `{flavor}`: {error}")),
    }
    let started = std::time::Instant::now();
    match ensure_base(runtime, &base).await {
        Ok(()) => checks.add(
            "OK",
            format!(
                "flavor `{flavor}`: base image `{}` builds ({:.1}s)",
                base.tag,
                started.elapsed().as_secs_f64()
            ),
        ),
        Err(error) => checks.add("FAIL", format!("flavor `{flavor}`: {error}")),
    }
}

/// Runs a probe cell with a participant's default settings and adds one line per property.
async fn check_sandbox<R: Runtime>(
    runtime: &std::sync::Arc<R>,
    session: &Session,
    checks: &mut Checks,
) {
    let Ok(user) = CellUser::resolve(
        std::env::var(crate::cli::env::HARDENING_USER)
            .ok()
            .as_deref(),
    ) else {
        return;
    };
    let root = crate::state::root_id(&session.root);
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
    };
    match probe(runtime, &settings).await {
        Ok(report) => {
            for check in report.checks {
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
            checks.add("WARN", "sandbox: host services listening on 0.0.0.0 are reachable through a cell's bridge gateway; close them with `iptables -I INPUT -i mc-+ -j DROP` (see SECURITY.md)");
        }
        Err(error) => checks.add("FAIL", format!("sandbox: the probe could not run: {error}")),
    }
}
