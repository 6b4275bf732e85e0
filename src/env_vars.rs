//! The name of every environment variable multicooker reads, in one table (as uv's `EnvVars`).
//! Names only: `settings.rs` is the one place that reads them ([`crate::settings::Env`]), once
//! per command, and passes the resolved values down; `cli.rs` names the ones its flags default
//! from. Any module may name a variable in a message.

/// Every variable multicooker reads.
pub struct EnvVars;

impl EnvVars {
    /// Folder that holds the cooks (`--root`).
    pub const ROOT: &'static str = "MULTICOOKER_ROOT";
    /// Namespace separating this orchestrator's engine objects from another's (`--namespace`).
    pub const NAMESPACE: &'static str = "MULTICOOKER_NAMESPACE";
    /// Seed of the judges' label shuffles (`--seed`).
    pub const SEED: &'static str = "MULTICOOKER_SEED";
    /// Where cells run: `docker` or `swarm` (`--backend`).
    pub const BACKEND: &'static str = "MULTICOOKER_BACKEND";
    /// Keep engine objects after a run, for debugging (`1`).
    pub const KEEP: &'static str = "MULTICOOKER_KEEP";
    /// `uid:gid` cells run as.
    pub const HARDENING_USER: &'static str = "MULTICOOKER_HARDENING_USER";
    /// Host profile: `large`, `medium`, `small` or `auto`.
    pub const PROFILE: &'static str = "MULTICOOKER_PROFILE";
    /// An existing network for the egress proxies' outside leg.
    pub const EGRESS_NETWORK: &'static str = "MULTICOOKER_EGRESS_NETWORK";
    /// Build arguments for the flavor images multicooker builds (`NAME=value,…`).
    pub const BUILD_ARGS: &'static str = "MULTICOOKER_BUILD_ARGS";
    /// The address the egress canary and the sandbox probe must fail to reach directly.
    pub const CANARY_DIRECT: &'static str = "MULTICOOKER_CANARY_DIRECT";
    /// Seconds a cell may outlive its timeout before its own init ends it.
    pub const CELL_GRACE: &'static str = "MULTICOOKER_CELL_GRACE_S";
    /// The swarm manager's engine address (`unix://…`, `tcp://…`).
    pub const SWARM_MANAGER: &'static str = "MULTICOOKER_SWARM_MANAGER";
    /// Every swarm node's engine: `host=address,…`.
    pub const SWARM_NODES: &'static str = "MULTICOOKER_SWARM_NODES";
    /// The registry every swarm node pulls from (`host:port`).
    pub const SWARM_REGISTRY: &'static str = "MULTICOOKER_SWARM_REGISTRY";
    /// Cap on one sealed output (`512m`, `2g`).
    pub const SEAL_MAX_BYTES: &'static str = "MULTICOOKER_SEAL_MAX_BYTES";
    /// Pool of subnets for cell networks.
    pub const SUBNET_POOL: &'static str = "MULTICOOKER_SUBNET_POOL";
    /// The home folder whose CLI logins are read (default `HOME`).
    pub const HOST_HOME: &'static str = "MULTICOOKER_HOST_HOME";
    /// Where `multicooker login` keeps tokens: `keyring` or `file:<folder>`.
    pub const TOKEN_STORE: &'static str = "MULTICOOKER_TOKEN_STORE";
    /// The engine's address (`unix://`, `tcp://`, `http://`, `https://`), as the docker CLI
    /// reads it.
    pub const DOCKER_HOST: &'static str = "DOCKER_HOST";
    /// Any non-empty value: talk TLS to the engine, verified against its CA.
    pub const DOCKER_TLS_VERIFY: &'static str = "DOCKER_TLS_VERIFY";
    /// The folder of `ca.pem`, `cert.pem` and `key.pem` (default `~/.docker`).
    pub const DOCKER_CERT_PATH: &'static str = "DOCKER_CERT_PATH";
    /// The user's home: logins (unless `MULTICOOKER_HOST_HOME`), `~/.docker`, `~` in a
    /// nightly config, the swarm's file of objects left on lost nodes.
    pub const HOME: &'static str = "HOME";
    /// The user name claude's macOS Keychain item is stored under.
    pub const USER: &'static str = "USER";
    /// Codex's own home (default `~/.codex`), where its login is.
    pub const CODEX_HOME: &'static str = "CODEX_HOME";
    /// Any non-empty value: no colour unless `--color always`.
    pub const NO_COLOR: &'static str = "NO_COLOR";

    /// Every name above, which is what [`crate::settings::Env`] reads.
    pub const ALL: [&'static str; 25] = [
        Self::ROOT,
        Self::NAMESPACE,
        Self::SEED,
        Self::BACKEND,
        Self::KEEP,
        Self::HARDENING_USER,
        Self::PROFILE,
        Self::EGRESS_NETWORK,
        Self::BUILD_ARGS,
        Self::CANARY_DIRECT,
        Self::CELL_GRACE,
        Self::SWARM_MANAGER,
        Self::SWARM_NODES,
        Self::SWARM_REGISTRY,
        Self::SEAL_MAX_BYTES,
        Self::SUBNET_POOL,
        Self::HOST_HOME,
        Self::TOKEN_STORE,
        Self::DOCKER_HOST,
        Self::DOCKER_TLS_VERIFY,
        Self::DOCKER_CERT_PATH,
        Self::HOME,
        Self::USER,
        Self::CODEX_HOME,
        Self::NO_COLOR,
    ];
}

#[cfg(test)]
mod tests {
    /// Every constant of the table is in [`super::EnvVars::ALL`] once, so `Env` reads it.
    #[test]
    fn every_name_is_read() {
        let source = include_str!("env_vars.rs");
        let names: Vec<&str> = source
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub const "))
            .filter_map(|l| l.split_once(':').map(|(name, _)| name))
            .filter(|name| *name != "ALL")
            .collect();
        assert_eq!(names.len(), super::EnvVars::ALL.len(), "{names:?}");
        for name in names {
            let listed = source.matches(&format!("Self::{name},")).count();
            assert_eq!(listed, 1, "`{name}` is listed in ALL {listed} times");
        }
    }
}
