//! Command line, environment and brief become typed settings here; no clap type goes further.
//!
//! This is the one module that reads the environment: [`Env`] takes every variable of
//! [`EnvVars`] once, when a command starts ([`session`]), and the values resolved from it go down
//! through the [`Session`], a run's [`RunSettings`] and the runtime's connect settings. A unit
//! test below fails on a read anywhere else in `src/`.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::brief::Brief;
use crate::cell::images::ImageSettings;
use crate::cell::plan::{CellUser, choose_profile};
use crate::cell::{CellSettings, EgressSettings};
use crate::cli::{ColorChoice, GlobalArgs};
use crate::cook::RunSettings;
use crate::cook::seal::DEFAULT_SEAL_MAX_BYTES;
use crate::env_vars::EnvVars;
use crate::error::UserError;
use crate::output::{OutputOptions, Printer, use_color};
use crate::runtime::EngineInfo;
use crate::runtime::connect::DockerEnv;
use crate::state::{CookPaths, resolve_root};

/// The variables of [`EnvVars`] as this process had them when the command started: the only
/// read of the environment. Everything else asks this value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<&'static str, OsString>,
}

impl Env {
    /// Reads every variable of [`EnvVars::ALL`] from the process.
    pub fn from_process() -> Self {
        Self {
            vars: EnvVars::ALL
                .iter()
                .filter_map(|name| std::env::var_os(name).map(|value| (*name, value)))
                .collect(),
        }
    }

    /// An environment of exactly `pairs` (tests).
    pub fn from_pairs(pairs: &[(&'static str, &str)]) -> Self {
        Self {
            vars: pairs
                .iter()
                .map(|(name, value)| (*name, OsString::from(value)))
                .collect(),
        }
    }

    /// The variable as it is, if set.
    fn os(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(name).map(OsString::as_os_str)
    }

    /// The variable, if set and valid UTF-8 (as `std::env::var(name).ok()`).
    fn string(&self, name: &str) -> Option<&str> {
        self.os(name).and_then(OsStr::to_str)
    }

    /// The variable, if set to something besides white space.
    fn set(&self, name: &str) -> Option<&str> {
        self.string(name).filter(|v| !v.trim().is_empty())
    }

    /// `HOME`, if set.
    pub fn home(&self) -> Option<PathBuf> {
        self.os(EnvVars::HOME).map(PathBuf::from)
    }

    /// `NO_COLOR` is set and not empty.
    pub fn no_color(&self) -> bool {
        self.os(EnvVars::NO_COLOR).is_some_and(|v| !v.is_empty())
    }

    /// The standard Docker variables (`DOCKER_HOST`, `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`;
    /// `HOME` for `~/.docker`), read the way the docker CLI reads them.
    pub fn docker(&self) -> DockerEnv {
        let var = |name: &str| self.string(name).filter(|v| !v.is_empty());
        DockerEnv {
            host: var(EnvVars::DOCKER_HOST).map(str::to_owned),
            tls_verify: var(EnvVars::DOCKER_TLS_VERIFY).is_some(),
            cert_path: var(EnvVars::DOCKER_CERT_PATH).map(PathBuf::from),
            home: self.home(),
        }
    }

    /// `MULTICOOKER_BUILD_ARGS` (none when unset), checked.
    pub fn build_args(
        &self,
    ) -> Result<Vec<crate::flavor::build_args::BuildArg>, crate::flavor::FlavorError> {
        self.string(EnvVars::BUILD_ARGS)
            .map_or_else(|| Ok(Vec::new()), crate::flavor::build_args::parse)
    }
}

/// What every command starts from: the flags and the environment, resolved once.
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
    /// The namespace (`--namespace`, `MULTICOOKER_NAMESPACE`), checked: it is part of every
    /// engine object's root label and of the base images' tags.
    pub namespace: Option<String>,
    /// The environment as the command found it.
    pub env: Env,
}

impl Session {
    /// The existing cook folder `task` names ([`crate::state::find_cook`]), in this session's
    /// namespace.
    pub fn find_cook(&self, task: &str) -> Result<CookPaths, crate::state::StateError> {
        crate::state::find_cook(&self.root, task, self.namespace.as_deref())
    }

    /// The paths of the cook folder `dir`, in this session's namespace.
    pub fn cook_paths(&self, dir: PathBuf) -> CookPaths {
        CookPaths::new(dir).in_namespace(self.namespace.as_deref())
    }

    /// The root label of this session's cooks folder and namespace.
    pub fn root_id(&self) -> String {
        crate::state::root_id_in(&self.root, self.namespace.as_deref())
    }

    /// The namespace and build arguments of the images this session builds.
    pub fn image_settings(&self) -> Result<ImageSettings, crate::flavor::FlavorError> {
        Ok(ImageSettings {
            namespace: self.namespace.clone(),
            build_args: self.env.build_args()?,
        })
    }
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
    /// The backend `choice` names, its settings from `env`.
    pub fn from_choice(choice: crate::runtime::BackendKind, env: &Env) -> anyhow::Result<Self> {
        use crate::runtime::BackendKind as BackendChoice;
        Ok(match choice {
            BackendChoice::Docker => Self::Docker {
                subnet_pool: subnet_pool(env),
            },
            BackendChoice::Swarm => Self::Swarm(swarm_config(env)?),
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
pub fn swarm_config(env: &Env) -> anyhow::Result<crate::runtime::swarm::SwarmConfig> {
    let var = |name: &str| env.set(name).map(str::to_owned);
    let missing = |name: &str, example: &str| {
        UserError::new(
            format!("`--backend swarm` needs {name}"),
            format!("set it, for example `{name}={example}`"),
        )
    };
    let manager = var(EnvVars::SWARM_MANAGER)
        .ok_or_else(|| missing(EnvVars::SWARM_MANAGER, "tcp://manager.example:2376"))?;
    let registry = var(EnvVars::SWARM_REGISTRY)
        .ok_or_else(|| missing(EnvVars::SWARM_REGISTRY, "registry.example:5000"))?;
    let text = var(EnvVars::SWARM_NODES).ok_or_else(|| {
        missing(
            EnvVars::SWARM_NODES,
            "node1=tcp://node1:2376,node2=tcp://node2:2376",
        )
    })?;
    let mut nodes = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((host, address)) = item.split_once('=') else {
            return Err(UserError::new(
                format!("{}: `{item}` is not `host=address`", EnvVars::SWARM_NODES),
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
        subnet_pool: var(EnvVars::SUBNET_POOL)
            .unwrap_or_else(|| crate::runtime::swarm::DEFAULT_SWARM_POOL.to_owned()),
        docker: env.docker(),
    })
}

/// The printer for the global flags (and `NO_COLOR` of `env`).
pub fn printer(global: &GlobalArgs, env: &Env) -> Printer {
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
        color: use_color(color, env.no_color()),
    })
}

/// The session for the global flags, with the environment read now, once.
pub fn session(global: &GlobalArgs) -> anyhow::Result<Session> {
    session_in(global, Env::from_process())
}

/// The session for the global flags in `env`.
pub fn session_in(global: &GlobalArgs, env: Env) -> anyhow::Result<Session> {
    let namespace = crate::state::check_namespace(global.namespace.as_deref())?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(Session {
        printer: printer(global, &env),
        root: resolve_root(&global.root, &cwd),
        backend: Backend::from_choice(global.backend.unwrap_or_default().into(), &env)?,
        backend_chosen: global.backend.is_some(),
        namespace,
        env,
    })
}

/// Settings of a command that runs cells.
pub fn run_settings(
    session: &Session,
    brief: &Brief,
    engine: &EngineInfo,
    max_parallel: Option<usize>,
    cells: usize,
    cancel: CancellationToken,
) -> anyhow::Result<RunSettings> {
    let env = &session.env;
    let user = cell_user(env)?;
    let seal_max_bytes = match env.string(EnvVars::SEAL_MAX_BYTES) {
        Some(text) => crate::brief::parse_bytes(text).ok_or_else(|| {
            UserError::new(
                format!("{}: `{text}` is not a size", EnvVars::SEAL_MAX_BYTES),
                "use a size such as `512m` or `2g`",
            )
        })?,
        None => DEFAULT_SEAL_MAX_BYTES,
    };
    let profile = choose_profile(brief, env.string(EnvVars::PROFILE), engine.mem_per_node());
    Ok(RunSettings {
        cells: CellSettings {
            user,
            profile,
            keep: env.string(EnvVars::KEEP) == Some("1"),
            max_parallel: max_parallel.unwrap_or(cells).max(1),
            run_id: run_id(),
            cancel,
            egress: egress_settings(env),
            grace: cell_grace(env)?,
            logins: login_sources(env),
            budgets: cook_budgets(brief),
            images: session.image_settings()?,
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
pub fn egress_settings(env: &Env) -> EgressSettings {
    let set = |name: &str| env.set(name).map(str::to_owned);
    let defaults = EgressSettings::default();
    EgressSettings {
        network: set(EnvVars::EGRESS_NETWORK),
        canary_direct: set(EnvVars::CANARY_DIRECT).unwrap_or(defaults.canary_direct),
    }
}

/// The pool cell networks take their subnets from (`MULTICOOKER_SUBNET_POOL`).
pub fn subnet_pool(env: &Env) -> String {
    env.set(EnvVars::SUBNET_POOL)
        .unwrap_or(crate::runtime::docker::DEFAULT_SUBNET_POOL)
        .to_owned()
}

/// Where the host's logins and the token store are (`MULTICOOKER_HOST_HOME`, else `HOME`;
/// `MULTICOOKER_TOKEN_STORE`; `CODEX_HOME`; `USER` for the macOS Keychain).
pub fn login_sources(env: &Env) -> crate::creds::LoginSources {
    let named = env.os(EnvVars::HOST_HOME).filter(|h| !h.is_empty());
    crate::creds::LoginSources {
        keychain: named.is_none(),
        home: named
            .or_else(|| env.os(EnvVars::HOME))
            .map_or_else(|| PathBuf::from("/"), PathBuf::from),
        store: env
            .string(EnvVars::TOKEN_STORE)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        codex_home: env.os(EnvVars::CODEX_HOME).map(PathBuf::from),
        keychain_user: env.string(EnvVars::USER).unwrap_or_default().to_owned(),
    }
}

/// How long a cell may outlive its timeout (`MULTICOOKER_CELL_GRACE_S`, default 120 s).
pub fn cell_grace(env: &Env) -> anyhow::Result<std::time::Duration> {
    match env.string(EnvVars::CELL_GRACE) {
        Some(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| *s > 0)
            .map(std::time::Duration::from_secs)
            .ok_or_else(|| {
                UserError::new(
                    format!(
                        "{}: `{text}` is not a number of seconds",
                        EnvVars::CELL_GRACE
                    ),
                    "use a whole number of seconds such as `120`, or unset it",
                )
                .into()
            }),
        None => Ok(crate::cell::plan::CELL_GRACE),
    }
}

/// The cells' identity: `MULTICOOKER_HARDENING_USER`, refused when the host uses it (or the
/// launch pair after it); else the first pair no host account, group or process uses
/// (`cell::host_ids`).
pub fn cell_user(env: &Env) -> anyhow::Result<CellUser> {
    let user_text = env.set(EnvVars::HARDENING_USER).map(str::to_owned);
    let host = crate::cell::host_ids::HostIds::read();
    let Some(text) = user_text else {
        return Ok(host.pick().ok_or_else(|| {
            UserError::new(
                "no free uid:gid for the cells: the host uses every pair multicooker tried",
                format!("set {} to a uid:gid pair (and the next one) no host account, group or process uses", EnvVars::HARDENING_USER),
            )
        })?);
    };
    let user = CellUser::resolve(Some(&text)).map_err(|problem| {
        UserError::new(
            format!("{}: {problem}", EnvVars::HARDENING_USER),
            "set it to a non-root `uid:gid` no host account uses, or unset it",
        )
    })?;
    if let Some(problem) = host.problem(user) {
        return Err(UserError::new(
            format!("{}: `{text}`: {problem}, so that host user could reach the cells", EnvVars::HARDENING_USER),
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
            images: ImageSettings::default(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// No module but this one reads the environment: every name is in `env_vars::EnvVars` and
    /// every read goes through [`Env`] (compile-time `env!` is not a read).
    #[test]
    fn only_settings_reads_the_environment() {
        let reads = regex::Regex::new(r"\benv::(var|var_os|vars|vars_os|home_dir)\b").unwrap();
        let mut offenders = Vec::new();
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        for entry in walkdir::WalkDir::new(src) {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("settings.rs") {
                continue;
            }
            let text = fs_err::read_to_string(path).unwrap();
            for (number, line) in text.lines().enumerate() {
                if reads.is_match(line) {
                    offenders.push(format!(
                        "{}:{}: {}",
                        path.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "read the environment in settings.rs (through `Env`) and pass the value down:\n{}",
            offenders.join("\n")
        );
    }

    #[test]
    fn variables_are_read_as_before() {
        let env = Env::from_pairs(&[
            (EnvVars::HARDENING_USER, "  "),
            (EnvVars::SUBNET_POOL, "10.9.0.0/16"),
            (EnvVars::DOCKER_HOST, ""),
            (EnvVars::DOCKER_TLS_VERIFY, "1"),
            (EnvVars::HOME, "/home/h"),
            (EnvVars::NO_COLOR, ""),
            (EnvVars::BUILD_ARGS, "BASE_IMAGE=x:1"),
        ]);
        assert_eq!(env.set(EnvVars::HARDENING_USER), None, "blank is unset");
        assert_eq!(subnet_pool(&env), "10.9.0.0/16");
        assert_eq!(
            subnet_pool(&Env::default()),
            crate::runtime::docker::DEFAULT_SUBNET_POOL
        );
        let docker = env.docker();
        assert_eq!(docker.host, None, "an empty DOCKER_HOST is unset");
        assert!(docker.tls_verify);
        assert_eq!(docker.home, Some(PathBuf::from("/home/h")));
        assert!(!env.no_color(), "an empty NO_COLOR does not count");
        assert_eq!(
            env.build_args().unwrap(),
            [("BASE_IMAGE".to_owned(), "x:1".to_owned())]
        );
        let logins = login_sources(&env);
        assert!(logins.keychain);
        assert_eq!(logins.home, Path::new("/home/h"));
        let named = login_sources(&Env::from_pairs(&[
            (EnvVars::HOST_HOME, "/elsewhere"),
            (EnvVars::CODEX_HOME, "/codex"),
        ]));
        assert!(!named.keychain);
        assert_eq!(named.home, Path::new("/elsewhere"));
        assert_eq!(named.codex_home.as_deref(), Some(Path::new("/codex")));
    }
}
