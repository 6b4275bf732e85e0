//! Command line, environment and brief become typed settings here; no clap type goes further.

use std::path::PathBuf;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::brief::Brief;
use crate::cell::plan::{CellUser, choose_profile};
use crate::cell::{CellSettings, EgressSettings};
use crate::cli::{ColorChoice, GlobalArgs, env};
use crate::cook::RunSettings;
use crate::cook::seal::DEFAULT_SEAL_MAX_BYTES;
use crate::error::UserError;
use crate::output::{OutputOptions, Printer, use_color};
use crate::runtime::EngineInfo;
use crate::state::resolve_root;

/// What every command starts from.
#[derive(Debug, Clone)]
pub struct Session {
    /// Prints.
    pub printer: Printer,
    /// The cooks folder, resolved.
    pub root: PathBuf,
    /// Where cells run.
    pub backend: Backend,
    /// Whether `--backend` or `MULTICOOKER_BACKEND` chose it (a nightly config's `backend:`
    /// only applies when neither did).
    pub backend_chosen: bool,
}

/// Where cells run, with what the backend needs, from the flags and the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The local engine (`DOCKER_HOST`), subnets from this pool.
    Docker {
        /// `MULTICOOKER_SUBNET_POOL`.
        subnet_pool: String,
    },
    /// A swarm.
    Swarm(crate::runtime::swarm::SwarmConfig),
}

impl Backend {
    /// The backend `choice` names, its settings read from the environment.
    pub fn from_choice(choice: crate::runtime::BackendKind) -> anyhow::Result<Self> {
        use crate::runtime::BackendKind as BackendChoice;
        Ok(match choice {
            BackendChoice::Docker => Self::Docker {
                subnet_pool: subnet_pool(),
            },
            BackendChoice::Swarm => Self::Swarm(swarm_config()?),
        })
    }

    /// `docker` or `swarm`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Docker { .. } => "docker",
            Self::Swarm(_) => "swarm",
        }
    }
}

/// The swarm's addresses from `MULTICOOKER_SWARM_*`; a missing or malformed one is an error
/// naming the variable and the fix.
pub fn swarm_config() -> anyhow::Result<crate::runtime::swarm::SwarmConfig> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let missing = |name: &str, example: &str| {
        UserError::new(
            format!("`--backend swarm` needs {name}"),
            format!("set it, for example `{name}={example}`"),
        )
    };
    let manager = var(env::SWARM_MANAGER)
        .ok_or_else(|| missing(env::SWARM_MANAGER, "tcp://manager.example:2376"))?;
    let registry = var(env::SWARM_REGISTRY)
        .ok_or_else(|| missing(env::SWARM_REGISTRY, "registry.example:5000"))?;
    let text = var(env::SWARM_NODES).ok_or_else(|| {
        missing(
            env::SWARM_NODES,
            "node1=tcp://node1:2376,node2=tcp://node2:2376",
        )
    })?;
    let mut nodes = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((host, address)) = item.split_once('=') else {
            return Err(UserError::new(
                format!("{}: `{item}` is not `host=address`", env::SWARM_NODES),
                "list each node as its hostname (as `docker node ls` shows it), `=`, and its engine's address",
            )
            .into());
        };
        nodes.push((host.trim().to_owned(), address.trim().to_owned()));
    }
    Ok(crate::runtime::swarm::SwarmConfig {
        manager,
        nodes,
        registry,
        subnet_pool: var(env::SUBNET_POOL)
            .unwrap_or_else(|| crate::runtime::swarm::DEFAULT_SWARM_POOL.to_owned()),
    })
}

/// The printer for the global flags.
pub fn printer(global: &GlobalArgs) -> Printer {
    let color = match global.color {
        ColorChoice::Always => "always",
        ColorChoice::Never => "never",
        ColorChoice::Auto => "auto",
    };
    Printer::new(OutputOptions {
        json: global.json,
        quiet: global.quiet,
        verbose: global.verbose,
        no_progress: global.no_progress,
        color: use_color(color),
    })
}

/// The session for the global flags.
pub fn session(global: &GlobalArgs) -> anyhow::Result<Session> {
    crate::state::set_namespace(global.namespace.as_deref())?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(Session {
        printer: printer(global),
        root: resolve_root(&global.root, &cwd),
        backend: Backend::from_choice(global.backend.unwrap_or_default().into())?,
        backend_chosen: global.backend.is_some(),
    })
}

/// Settings of a command that runs cells.
pub fn run_settings(
    brief: &Brief,
    engine: &EngineInfo,
    max_parallel: Option<usize>,
    cells: usize,
    cancel: CancellationToken,
) -> anyhow::Result<RunSettings> {
    let user = cell_user()?;
    let seal_max_bytes = match std::env::var(env::SEAL_MAX_BYTES) {
        Ok(text) => crate::brief::parse_bytes(&text).ok_or_else(|| {
            UserError::new(
                format!("{}: `{text}` is not a size", env::SEAL_MAX_BYTES),
                "use a size such as `512m` or `2g`",
            )
        })?,
        Err(_) => DEFAULT_SEAL_MAX_BYTES,
    };
    let profile = choose_profile(
        brief,
        std::env::var(env::PROFILE).ok().as_deref(),
        engine.mem_per_node(),
    );
    Ok(RunSettings {
        cells: CellSettings {
            user,
            profile,
            keep: std::env::var(env::KEEP).is_ok_and(|v| v == "1"),
            max_parallel: max_parallel.unwrap_or(cells).max(1),
            run_id: run_id(),
            cancel,
            egress: egress_settings(),
            grace: cell_grace()?,
            logins: login_sources(),
            budgets: cook_budgets(brief),
        },
        seal_max_bytes,
        sandbox_check: true,
        merge: false,
        refine: None,
        chef: None,
    })
}

/// The cook's own budget (`budget:` of brief.yaml) as a pool that stops running cells once
/// reached; a phase adds what earlier phases of the cook spent (`cook::prior_spend`).
fn cook_budgets(brief: &Brief) -> crate::cell::budget::Budgets {
    crate::cell::budget::Budgets {
        pools: brief
            .budget
            .iter()
            .map(|cap| {
                crate::cell::budget::Pool::new(
                    crate::cell::budget::COOK,
                    *cap,
                    true,
                    crate::flavor::meter::Spend::default(),
                )
            })
            .collect(),
    }
}

/// Egress settings from the environment: the proxies' outside network and the address the
/// canary and the sandbox probe must fail to reach.
pub fn egress_settings() -> EgressSettings {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let defaults = EgressSettings::default();
    EgressSettings {
        network: set(env::EGRESS_NETWORK),
        canary_direct: set(env::CANARY_DIRECT).unwrap_or(defaults.canary_direct),
    }
}

/// The pool cell networks take their subnets from (`MULTICOOKER_SUBNET_POOL`).
pub fn subnet_pool() -> String {
    std::env::var(env::SUBNET_POOL)
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| crate::runtime::docker::DEFAULT_SUBNET_POOL.to_owned())
}

/// Where the host's logins and the token store are (`MULTICOOKER_HOST_HOME`, else `HOME`;
/// `MULTICOOKER_TOKEN_STORE`).
pub fn login_sources() -> crate::creds::LoginSources {
    let named = std::env::var_os(crate::creds::HOST_HOME_ENV).filter(|h| !h.is_empty());
    crate::creds::LoginSources {
        keychain: named.is_none(),
        home: named
            .or_else(|| std::env::var_os("HOME"))
            .map_or_else(|| PathBuf::from("/"), PathBuf::from),
        store: std::env::var(crate::creds::TOKEN_STORE_ENV)
            .ok()
            .filter(|s| !s.is_empty()),
    }
}

/// How long a cell may outlive its timeout (`MULTICOOKER_CELL_GRACE_S`, default 120 s).
pub fn cell_grace() -> anyhow::Result<std::time::Duration> {
    match std::env::var(env::CELL_GRACE) {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| *s > 0)
            .map(std::time::Duration::from_secs)
            .ok_or_else(|| {
                UserError::new(
                    format!("{}: `{text}` is not a number of seconds", env::CELL_GRACE),
                    "use a whole number of seconds such as `120`, or unset it",
                )
                .into()
            }),
        Err(_) => Ok(crate::cell::plan::CELL_GRACE),
    }
}

/// The cells' identity: `MULTICOOKER_HARDENING_USER`, refused when the host uses it (or the
/// launch pair after it); else the first pair no host account, group or process uses
/// (`cell::host_ids`).
pub fn cell_user() -> anyhow::Result<CellUser> {
    let user_text = std::env::var(env::HARDENING_USER)
        .ok()
        .filter(|t| !t.trim().is_empty());
    let host = crate::cell::host_ids::HostIds::read();
    let Some(text) = user_text else {
        return Ok(host.pick().ok_or_else(|| {
            UserError::new(
                "no free uid:gid for the cells: the host uses every pair multicooker tried",
                format!("set {} to a uid:gid pair (and the next one) no host account, group or process uses", env::HARDENING_USER),
            )
        })?);
    };
    let user = CellUser::resolve(Some(&text)).map_err(|problem| {
        UserError::new(
            format!("{}: {problem}", env::HARDENING_USER),
            "set it to a non-root `uid:gid` no host account uses, or unset it",
        )
    })?;
    if let Some(problem) = host.problem(user) {
        return Err(UserError::new(
            format!("{}: `{text}`: {problem}, so that host user could reach the cells", env::HARDENING_USER),
            "choose a uid:gid whose ids (and the next ones, for launched code) no host account, group or process uses, or unset it to let multicooker pick one",
        )
        .into());
    }
    Ok(user)
}

/// Cook settings for unit tests: 1000:1000, medium profile, nothing from the environment.
#[cfg(test)]
pub fn test_run_settings() -> RunSettings {
    RunSettings {
        cells: CellSettings {
            user: CellUser::resolve(Some("1000:1000")).expect("a valid user"),
            profile: crate::brief::Profile::Medium,
            keep: false,
            max_parallel: 4,
            run_id: "test".into(),
            cancel: CancellationToken::new(),
            egress: EgressSettings::default(),
            grace: crate::cell::plan::CELL_GRACE,
            logins: crate::creds::LoginSources::files_only(std::path::Path::new("/nonexistent")),
            budgets: crate::cell::budget::Budgets::default(),
        },
        seal_max_bytes: DEFAULT_SEAL_MAX_BYTES,
        sandbox_check: false,
        merge: false,
        refine: None,
        chef: None,
    }
}

/// A unique id for this command run: time and process id.
fn run_id() -> String {
    format!(
        "{}-{}",
        jiff::Timestamp::now().as_millisecond(),
        std::process::id()
    )
}

/// A token cancelled on the first SIGINT or SIGTERM. A third signal exits at once.
pub fn cancel_on_signals(printer: Printer) -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        for count in 1.. {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            match count {
                1 => {
                    printer.info("\nstopping: killing every cell and removing its container and network (Ctrl-C twice more to abandon cleanup)");
                    cancel.cancel();
                }
                2 => printer.info("still cleaning up; press Ctrl-C once more to abandon it (then run `multicooker clean --all`)"),
                _ => std::process::exit(130),
            }
        }
    });
    token
}
