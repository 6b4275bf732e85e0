//! `task.toml` as multicooker reads it: schema versions 1.0 through 1.4 (`version` or
//! `schema_version` at the top), Harbor's defaults, the older `memory = "4G"` and
//! `storage = "10G"` spellings, every key that would change how the task runs and that
//! multicooker cannot do yet refused by name, and everything else (`[metadata]`, unknown keys)
//! ignored as Harbor ignores it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::HarborError;

/// Schema versions read (`schema_version`, or the older top-level `version`).
pub const SCHEMA_VERSIONS: [&str; 5] = ["1.0", "1.1", "1.2", "1.3", "1.4"];

/// Harbor's defaults for keys a task leaves out.
pub mod defaults {
    /// `[agent] timeout_sec`.
    pub const AGENT_TIMEOUT_S: f64 = 600.0;
    /// `[verifier] timeout_sec`.
    pub const VERIFIER_TIMEOUT_S: f64 = 600.0;
    /// `[environment] build_timeout_sec`.
    pub const BUILD_TIMEOUT_S: f64 = 600.0;
    /// `[environment] cpus`.
    pub const CPUS: f64 = 1.0;
    /// `[environment] memory_mb`.
    pub const MEMORY_MB: u64 = 2048;
    /// `[environment] storage_mb`.
    pub const STORAGE_MB: u64 = 10240;
}

/// A checked `task.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskConfig {
    /// The schema version it declares (`1.1` when it declares none, as Harbor assumes).
    pub schema_version: String,
    /// `[task] name` (`org/name`), when the task has one.
    pub name: Option<String>,
    /// `[agent] timeout_sec`.
    pub agent_timeout: Duration,
    /// `[verifier]`.
    pub verifier: VerifierConfig,
    /// `[solution] env`: the oracle's environment.
    pub solution_env: BTreeMap<String, String>,
    /// `[environment]`.
    pub environment: EnvironmentConfig,
}

/// `[verifier]`.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifierConfig {
    /// `timeout_sec`.
    pub timeout: Duration,
    /// `env`: added to test.sh's environment.
    pub env: BTreeMap<String, String>,
    /// `user`: who test.sh runs as: a name, a uid, `uid:gid` or `name:group` of the
    /// environment image ([`super::users`]); `None` is root.
    pub user: Option<String>,
}

/// `[environment]`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvironmentConfig {
    /// `build_timeout_sec`.
    pub build_timeout: Duration,
    /// `docker_image`: a prebuilt image instead of `environment/Dockerfile`.
    pub docker_image: Option<String>,
    /// `cpus`.
    pub cpus: f64,
    /// `memory_mb` (or the older `memory`).
    pub memory_mb: u64,
    /// `storage_mb` (or the older `storage`).
    pub storage_mb: u64,
    /// Where the agent may reach beyond its model API.
    pub internet: Internet,
    /// `workdir`: where the agent starts and test.sh runs; `None` is the image's own WORKDIR.
    pub workdir: Option<String>,
}

/// What the task lets the environment reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Internet {
    /// Anything (`allow_internet = true`, the default, or `network_mode = "public"`).
    Open,
    /// Nothing but what multicooker itself needs (`allow_internet = false`,
    /// `network_mode = "no-network"`).
    Closed,
    /// These hosts (`network_mode = "allowlist"` with `allowed_hosts`).
    Hosts(Vec<String>),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Raw {
    version: Option<String>,
    schema_version: Option<String>,
    task: Option<RawPackage>,
    agent: RawAgent,
    verifier: RawVerifier,
    solution: RawSolution,
    environment: RawEnvironment,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawPackage {
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawAgent {
    timeout_sec: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawVerifier {
    timeout_sec: Option<f64>,
    env: BTreeMap<String, String>,
    user: Option<RawUser>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawUser {
    Name(String),
    Id(i64),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawSolution {
    env: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawEnvironment {
    build_timeout_sec: Option<f64>,
    docker_image: Option<String>,
    cpus: Option<f64>,
    memory_mb: Option<u64>,
    memory: Option<String>,
    storage_mb: Option<u64>,
    storage: Option<String>,
    allow_internet: Option<bool>,
    network_mode: Option<String>,
    allowed_hosts: Vec<String>,
    workdir: Option<String>,
}

/// Reads `task.toml` (its text already read from `path`).
pub fn parse(path: &Path, text: &str) -> Result<TaskConfig, HarborError> {
    let toml_error = |e: toml::de::Error| HarborError::Toml {
        path: path.to_owned(),
        message: e.to_string().trim().replace('\n', " "),
    };
    let table: toml::Table = toml::from_str(text).map_err(toml_error)?;
    super::refuse::check(path, &table)?;
    let raw: Raw = toml::from_str(text).map_err(toml_error)?;
    let check = Checker { path };
    let schema_version = check.schema_version(raw.version, raw.schema_version)?;
    let verifier = VerifierConfig {
        timeout: check.seconds(
            "verifier.timeout_sec",
            raw.verifier.timeout_sec,
            defaults::VERIFIER_TIMEOUT_S,
        )?,
        env: check.env("verifier.env", raw.verifier.env)?,
        user: raw
            .verifier
            .user
            .map(|u| check.user("verifier.user", u))
            .transpose()?,
    };
    Ok(TaskConfig {
        schema_version,
        name: raw.task.and_then(|t| t.name),
        agent_timeout: check.seconds(
            "agent.timeout_sec",
            raw.agent.timeout_sec,
            defaults::AGENT_TIMEOUT_S,
        )?,
        verifier,
        solution_env: check.env("solution.env", raw.solution.env)?,
        environment: check.environment(raw.environment)?,
    })
}

/// Checks values one by one, naming the key in every error.
struct Checker<'a> {
    path: &'a Path,
}

impl Checker<'_> {
    fn invalid(
        &self,
        key: &str,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> HarborError {
        HarborError::Invalid {
            path: self.path.to_owned(),
            key: key.to_owned(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    fn schema_version(
        &self,
        version: Option<String>,
        schema_version: Option<String>,
    ) -> Result<String, HarborError> {
        let (key, value) = match (schema_version, version) {
            (Some(v), _) => ("schema_version", v),
            (None, Some(v)) => ("version", v),
            (None, None) => return Ok("1.1".to_owned()),
        };
        if SCHEMA_VERSIONS.contains(&value.as_str()) {
            return Ok(value);
        }
        Err(HarborError::Unsupported {
            path: self.path.to_owned(),
            what: format!("`{key} = \"{value}\"`"),
            fix: format!(
                "multicooker reads task.toml schema versions {}",
                SCHEMA_VERSIONS.join(", ")
            ),
        })
    }

    fn seconds(
        &self,
        key: &str,
        value: Option<f64>,
        default: f64,
    ) -> Result<Duration, HarborError> {
        let seconds = value.unwrap_or(default);
        if seconds.is_finite() && seconds > 0.0 && seconds <= 7.0 * 86_400.0 {
            return Ok(Duration::from_secs_f64(seconds));
        }
        Err(self.invalid(
            key,
            format!("is {seconds}, not a number of seconds between 0 and a week"),
            format!("set `{key}` to a positive number of seconds, e.g. `600.0`"),
        ))
    }

    fn env(
        &self,
        key: &str,
        env: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, HarborError> {
        for (name, value) in &env {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(self.invalid(
                    &format!("{key}.{name}"),
                    "is not an environment variable name",
                    "use letters, digits and `_`, not starting with a digit",
                ));
            }
            if value.contains("${") {
                return Err(HarborError::Unsupported {
                    path: self.path.to_owned(),
                    what: format!("`{key}.{name}` taken from the host's environment (`${{…}}`)"),
                    fix: "give the value itself: multicooker never passes the host's environment into a cell".into(),
                });
            }
        }
        Ok(env)
    }

    fn user(&self, key: &str, user: RawUser) -> Result<String, HarborError> {
        let text = match user {
            RawUser::Id(id) if (0..=i64::from(u32::MAX)).contains(&id) => return Ok(id.to_string()),
            RawUser::Id(id) => id.to_string(),
            RawUser::Name(name) => name,
        };
        let part = |part: &str| {
            !part.is_empty()
                && part.len() <= 32
                && part
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        };
        // `name`, `uid`, `uid:gid` or `name:group`, as Harbor hands it to the engine.
        let valid = match text.split_once(':') {
            Some((who, group)) => part(who) && part(group),
            None => part(&text),
        };
        if valid {
            Ok(text)
        } else {
            Err(self.invalid(
                key,
                format!("is `{text}`, neither a user name nor a uid (optionally `:group`)"),
                "name a user of the environment image (e.g. `root` or `tester:tester`) or give its uid",
            ))
        }
    }

    fn size_mb(&self, key: &str, text: &str) -> Result<u64, HarborError> {
        let upper = text.trim().to_ascii_uppercase();
        let number = |digits: &str| {
            digits
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n > 0.0)
        };
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a positive, finite size in MB"
        )]
        let mb = match upper.char_indices().last() {
            Some((at, 'G')) => number(&upper[..at]).map(|n| (n * 1024.0) as u64),
            Some((at, 'M')) => number(&upper[..at]).map(|n| n as u64),
            Some((at, 'K')) => number(&upper[..at]).map(|n| (n / 1024.0) as u64),
            _ => None,
        };
        mb.filter(|mb| *mb > 0).ok_or_else(|| {
            self.invalid(
                key,
                format!("is `{text}`, not a size"),
                format!("write it like `4G` or `512M`, or use `{key}_mb` with a number"),
            )
        })
    }

    fn environment(&self, raw: RawEnvironment) -> Result<EnvironmentConfig, HarborError> {
        let memory_mb = match (&raw.memory, raw.memory_mb) {
            (Some(text), _) => self.size_mb("environment.memory", text)?,
            (None, Some(mb)) => mb,
            (None, None) => defaults::MEMORY_MB,
        };
        let storage_mb = match (&raw.storage, raw.storage_mb) {
            (Some(text), _) => self.size_mb("environment.storage", text)?,
            (None, Some(mb)) => mb,
            (None, None) => defaults::STORAGE_MB,
        };
        if memory_mb < 64 {
            return Err(self.invalid(
                "environment.memory_mb",
                format!("is {memory_mb}, below the 64 MB a cell needs"),
                "give the task at least `memory_mb = 64`",
            ));
        }
        let cpus = raw.cpus.unwrap_or(defaults::CPUS);
        if !(cpus.is_finite() && cpus > 0.0 && cpus <= 1024.0) {
            return Err(self.invalid(
                "environment.cpus",
                format!("is {cpus}, not a number of CPUs"),
                "set `cpus` to a positive number, e.g. `1`",
            ));
        }
        if let Some(workdir) = &raw.workdir
            && (!workdir.starts_with('/') || workdir.split('/').any(|p| p == ".."))
        {
            return Err(self.invalid(
                "environment.workdir",
                format!("is `{workdir}`, not an absolute path"),
                "write it as an absolute path without `..`, e.g. `/app`",
            ));
        }
        if raw
            .docker_image
            .as_deref()
            .is_some_and(|i| i.trim().is_empty())
        {
            return Err(self.invalid(
                "environment.docker_image",
                "is empty",
                "name an image, or remove the key to build `environment/Dockerfile`",
            ));
        }
        Ok(EnvironmentConfig {
            build_timeout: self.seconds(
                "environment.build_timeout_sec",
                raw.build_timeout_sec,
                defaults::BUILD_TIMEOUT_S,
            )?,
            internet: self.internet(
                raw.allow_internet,
                raw.network_mode.as_deref(),
                &raw.allowed_hosts,
            )?,
            docker_image: raw.docker_image,
            cpus,
            memory_mb,
            storage_mb,
            workdir: raw.workdir,
        })
    }

    fn internet(
        &self,
        allow: Option<bool>,
        mode: Option<&str>,
        hosts: &[String],
    ) -> Result<Internet, HarborError> {
        let hosts: Vec<String> = hosts
            .iter()
            .map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        if let Some(bad) = hosts.iter().find(|h| {
            !h.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        }) {
            return Err(self.invalid(
                "environment.allowed_hosts",
                format!("holds `{bad}`, not a host name"),
                "list host names or IPv4 addresses, without scheme, port or path",
            ));
        }
        match (mode, hosts.is_empty()) {
            (Some("allowlist") | None, false) => Ok(Internet::Hosts(hosts)),
            (None, true) if allow == Some(false) => Ok(Internet::Closed),
            (Some("public") | None, true) => Ok(Internet::Open),
            (Some("no-network" | "allowlist"), true) => Ok(Internet::Closed),
            (Some("public" | "no-network"), false) => Err(self.invalid(
                "environment.allowed_hosts",
                "is only read with `network_mode = \"allowlist\"`",
                "set `network_mode = \"allowlist\"` or remove `allowed_hosts`",
            )),
            (Some(other), _) => Err(self.invalid(
                "environment.network_mode",
                format!("is `{other}`"),
                "use `public`, `no-network` or `allowlist`",
            )),
        }
    }
}
