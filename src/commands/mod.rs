//! One file per subcommand: glue between settings, the domain modules and the printer.

mod add_participant;
mod artifacts;
mod build_base;
mod chef;
mod clean;
mod compose;
mod consult;
mod cook;
mod diff;
mod doctor;
#[cfg(test)]
mod glue_tests;
mod harbor;
mod judge;
mod login;
mod new;
mod nightly;
mod prune;
mod refine;
mod report;
mod resume;
mod shell;
mod status;
mod tail;
mod verify;

use std::sync::Arc;

use crate::brief::{self, Loaded};
use crate::cli::{Cli, Command};
use crate::error::{ExitCode, UserError};
use crate::runtime::docker::DockerRuntime;
use crate::runtime::{EngineInfo, SharedRuntime};
use crate::settings::{self, Session};
use crate::state::CookPaths;

/// Runs the command the user asked for.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::New(args) => new::run(&args),
        Command::AddParticipant(args) => add_participant::run(&args),
        Command::Cook(args) => cook::run(&args).await,
        Command::Verify(args) => verify::run(&args).await,
        Command::Judge(args) => judge::run(&args).await,
        Command::Refine(args) => refine::run(&args).await,
        Command::Chef(args) => chef::run(&args).await,
        Command::Consult(args) => consult::run(&args).await,
        Command::Diff(args) => diff::run(&args),
        Command::Resume(args) => resume::run(&args).await,
        Command::Rejudge(args) => judge::rejudge(&args).await,
        Command::Report(args) => report::run(&args),
        Command::Status(args) => status::status(&args).await,
        Command::Tail(args) => tail::run(&args).await,
        Command::Cancel(args) => status::cancel(&args).await,
        Command::Lint(args) => status::lint(&args),
        Command::Artifacts(args) => artifacts::artifacts(&args),
        Command::Archive(args) => artifacts::archive(&args),
        Command::Clean(args) => clean::run(&args).await,
        Command::Compose(args) => compose::run(&args).await,
        Command::Prune(args) => prune::run(&args).await,
        Command::Nightly(args) => nightly::run(&args).await,
        Command::History(args) => nightly::history(&args),
        Command::BuildBase(args) => build_base::run(&args).await,
        Command::Doctor(args) => doctor::run(&args).await,
        Command::Login(args) => login::run(&args),
        Command::Completions(args) => Ok(shell::completions(&args)),
        Command::Man(args) => shell::man(&args),
    }
}

/// Finds a cook and checks its brief.yaml, printing the brief's warnings.
fn open_cook(session: &Session, task: &str) -> anyhow::Result<(CookPaths, Loaded)> {
    let paths = session.find_cook(task)?;
    let loaded = brief::load(&paths.brief_yaml())?;
    for warning in &loaded.warnings {
        session
            .printer
            .warn(&format!("`{}`: {warning}", paths.brief_yaml().display()));
    }
    if let Some(warning) = brief::lint_verify::unlaunched(paths.dir(), &loaded.brief) {
        session
            .printer
            .warn(&format!("`{}`: {warning}", paths.verify_dir().display()));
    }
    Ok((paths, loaded))
}

/// Connects to the engine, and says which (`-v`).
async fn connect(session: &Session) -> anyhow::Result<(SharedRuntime, EngineInfo)> {
    let (runtime, info) = connect_quietly(session).await?;
    session.printer.detail(&format!(
        "engine: {} {} (API {}), {} CPUs, {} MiB",
        info.backend,
        info.version,
        info.api_version,
        info.cpus,
        info.mem_total >> 20
    ));
    Ok((runtime, info))
}

/// Connects to the engine without a word (`doctor` names the engine in its own check).
async fn connect_quietly(session: &Session) -> anyhow::Result<(SharedRuntime, EngineInfo)> {
    let runtime: SharedRuntime = match &session.backend {
        settings::Backend::Docker { subnet_pool } => {
            Arc::new(DockerRuntime::connect_with_pool(&session.env.docker(), subnet_pool).await?)
        }
        settings::Backend::Swarm(config) => {
            // A node that does not answer is named once, on the command's own output.
            let printer = session.printer;
            let warn = crate::runtime::swarm::Warn(Arc::new(move |line| printer.warn(line)));
            Arc::new(crate::runtime::swarm::SwarmRuntime::connect_warning(config, warn).await?)
        }
    };
    let info = runtime.info().await?;
    Ok((runtime, info))
}

/// Keeps the names listed in `wanted` (all when empty); an unknown name is an error.
fn select<'a>(
    kind: &str,
    available: &(impl Iterator<Item = &'a str> + Clone),
    wanted: &[String],
    brief_path: &std::path::Path,
) -> anyhow::Result<Vec<String>> {
    let all: Vec<String> = available.clone().map(str::to_owned).collect();
    if wanted.is_empty() {
        return Ok(all);
    }
    for name in wanted {
        if !all.contains(name) {
            let hint = brief::suggest(name, available.clone()).map_or_else(
                || format!("{kind}s in `{}`: {}", brief_path.display(), all.join(", ")),
                |s| format!("did you mean `{s}`?"),
            );
            return Err(UserError::new(
                format!("no {kind} named `{name}` in `{}`", brief_path.display()),
                hint,
            )
            .into());
        }
    }
    Ok(all.into_iter().filter(|n| wanted.contains(n)).collect())
}

/// What the progress display's overall line needs for these cells of `role`: how many, the
/// longest timeout, and each cell's standard error log (pointed at when the cell fails).
fn overview(
    paths: &CookPaths,
    brief: &brief::Brief,
    role: crate::state::Role,
    names: &[String],
) -> crate::output::Overview {
    use crate::state::Role;
    let actors = match role {
        Role::Judge | Role::Reviewer => &brief.judges,
        // One verifier per participant, named after it.
        Role::Participant | Role::Verifier => &brief.participants,
    };
    let mut overview = crate::output::Overview {
        cells: names.len(),
        cook: paths.name().to_owned(),
        ..Default::default()
    };
    for actor in actors.iter().filter(|a| names.contains(&a.name)) {
        let (dir, flavor) = match role {
            Role::Judge | Role::Reviewer => (paths.judge_logs(&actor.name), actor.flavor.as_str()),
            Role::Participant => (paths.logs(&actor.name), actor.flavor.as_str()),
            Role::Verifier => (
                paths.verification_of(&actor.name).join("logs"),
                crate::verify::plan::VERIFY_FLAVOR,
            ),
        };
        let timeout = match role {
            Role::Verifier => brief
                .verify
                .as_ref()
                .map_or(brief.timeout_for(actor, role), |v| v.timeout_s),
            _ => brief.timeout_for(actor, role),
        };
        overview.timeout_s = overview.timeout_s.max(timeout);
        overview.logs.insert(
            (role, actor.name.clone()),
            dir.join(format!("{flavor}.stderr.log")),
        );
    }
    overview
}

/// Reports objects teardown could not remove.
fn report_leftovers(session: &Session, leftovers: &[crate::runtime::TeardownFailure]) {
    for failure in leftovers {
        session.printer.warn(&format!(
            "could not remove {}: {}",
            failure.object, failure.error
        ));
    }
    if !leftovers.is_empty() {
        session
            .printer
            .info("hint: remove them with `multicooker clean --all`");
    }
}

/// The session and signal handling of commands that run cells.
fn cell_session(
    global: &crate::cli::GlobalArgs,
) -> anyhow::Result<(Session, tokio_util::sync::CancellationToken)> {
    let session = settings::session(global)?;
    let cancel = settings::cancel_on_signals(session.printer);
    Ok((session, cancel))
}

/// One line per participant cell that ran: name, status, seconds.
fn print_results(printer: crate::output::Printer, results: &[crate::cook::ParticipantResult]) {
    for result in results {
        printer.result_row(&format!(
            "{:<20} {:<16} {:.1}s",
            result.name,
            result.status.as_str(),
            result.duration_s
        ));
    }
}
