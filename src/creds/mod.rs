//! Credentials: each flavor's subscription login, snapshotted from the host into memory at
//! every run that starts cells, checked before launch, and staged through the engine into each
//! cell's own login area at `/run/mc-auth/<flavor>/` (folder 0500, files 0400, the cell user's
//! alone). The cell's entrypoint seeds its tmpfs HOME from it, so nothing is ever written back to
//! the host. Secrets are collected for redaction.
//!
//! This module never writes a login to the host's disk: not the host's own files, not a copy.

mod sources;
mod store;
// One list for the host side and the cells' entrypoint.
#[path = "../../crates/mc-cell-src/members.rs"]
mod members;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use members::members;
pub use sources::{
    Login, LoginSources, StagedFile, jwt_expiry, login_advice, login_command, read_login,
};
pub use store::{FileStore, KeyringStore, TokenStore, token_store};

use crate::error::Hint;

/// Margin a login must outlive a cell by.
pub const EXPIRY_MARGIN_S: i64 = 300;
/// Where a cell finds its staged login.
pub const STAGING_TARGET: &str = "/run/mc-auth";

/// Why a flavor cannot run.
#[derive(Debug, thiserror::Error)]
pub enum CredsError {
    /// The login file is absent.
    #[error("no {flavor} login at `{}`", .path.display())]
    Missing {
        /// The flavor.
        flavor: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The login file cannot be read.
    #[error("cannot read the {flavor} login `{}`", .path.display())]
    Unreadable {
        /// The flavor.
        flavor: String,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The login is not what the CLI writes.
    #[error("the {flavor} login `{}` {problem}", .path.display())]
    Invalid {
        /// The flavor.
        flavor: String,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The login has expired, or expires before the cells could finish.
    #[error("the {flavor} login {when}")]
    Expires {
        /// The flavor.
        flavor: String,
        /// `expired at …` or `expires in N min, before the Ns timeout ends`.
        when: String,
    },
    /// The token store failed.
    #[error("the token store ({store}) failed: {message}")]
    Store {
        /// Which store.
        store: String,
        /// Its message.
        message: String,
    },
    /// Several logins cannot be used: all of them, named in one run (issue 17).
    #[error("{} logins cannot be used:\n{}", .0.len(), .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Several(Vec<CredsError>),
    /// Staging a login for a cell failed.
    #[error("cannot stage the {flavor} login in `{}`", .path.display())]
    Stage {
        /// The flavor.
        flavor: String,
        /// The staging folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

crate::hint_source!(CredsError);

impl Hint for CredsError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::Missing { flavor, .. }
            | Self::Expires { flavor, .. }
            | Self::Invalid { flavor, .. } => Some(format!(
                "log in on the host with {}, then run this again",
                login_advice(flavor)
            )),
            Self::Unreadable { .. } => Some("check the file's permissions".into()),
            Self::Store { .. } => Some(format!(
                "set {}=file:<folder> to keep tokens in 0600 files instead",
                crate::env_vars::EnvVars::TOKEN_STORE
            )),
            Self::Stage { .. } => Some(
                "run multicooker as root, or as the user cells run as (MULTICOOKER_HARDENING_USER)"
                    .into(),
            ),
            Self::Several(errors) => {
                let mut lines: Vec<String> = Vec::new();
                for error in errors {
                    let line = match error {
                        Self::Missing { flavor, .. }
                        | Self::Expires { flavor, .. }
                        | Self::Invalid { flavor, .. } => {
                            format!("{flavor}: {}", login_advice(flavor))
                        }
                        other => other.hint().unwrap_or_default(),
                    };
                    if !line.is_empty() && !lines.contains(&line) {
                        lines.push(line);
                    }
                }
                Some(format!(
                    "log in on the host, then run this again:\n  {}",
                    lines.join("\n  ")
                ))
            }
        }
    }
}

/// The logins of every flavor one command run needs.
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    logins: BTreeMap<String, Login>,
}

impl Credentials {
    /// Snapshots the logins of `flavors` (each with the longest timeout among its cells) and
    /// checks they outlive the cells. Every login is checked before failing, so one run names
    /// all the missing or expiring ones ([`CredsError::Several`] when more than one).
    pub fn snapshot(
        flavors: &[(String, u64)],
        sources: &LoginSources,
        store: &dyn TokenStore,
    ) -> Result<Self, CredsError> {
        let mut logins = BTreeMap::new();
        let mut problems = Vec::new();
        let mut checked: Vec<&str> = Vec::new();
        let now = jiff::Timestamp::now();
        for (flavor, timeout_s) in flavors {
            for member in members(flavor) {
                if checked.contains(member) {
                    continue;
                }
                checked.push(member);
                match snapshot_member(member, sources, store, now, *timeout_s) {
                    Ok(Some(login)) => {
                        logins.insert((*member).to_owned(), login);
                    }
                    Ok(None) => {}
                    Err(problem) => problems.push(problem),
                }
            }
        }
        match problems.len() {
            0 => Ok(Self { logins }),
            1 => Err(problems.remove(0)),
            _ => Err(CredsError::Several(problems)),
        }
    }

    /// Every secret string, for redaction.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .logins
            .values()
            .flat_map(|l| l.secrets.iter().cloned())
            .filter(|s| s.len() >= 6)
            .collect();
        secrets.sort();
        secrets.dedup();
        secrets
    }

    /// True when a flavor's cells must run one at a time (their login ships a refresh token).
    pub fn serial(&self, flavor: &str) -> bool {
        members(flavor)
            .iter()
            .any(|m| self.logins.get(*m).is_some_and(|l| l.ships_refresh_token))
    }

    /// One line per member login for `doctor`: where it came from and how long it lasts.
    pub fn describe(&self, now: jiff::Timestamp) -> Vec<(String, String)> {
        self.logins
            .values()
            .map(|login| {
                let lasts = match login.expires_at {
                    None => "no expiry".to_owned(),
                    Some(at) => {
                        let minutes = (at.as_second() - now.as_second()) / 60;
                        format!("expires in {} h {} min", minutes / 60, minutes % 60)
                    }
                };
                let refresh = if login.ships_refresh_token {
                    ", refresh token shipped: its cells run one at a time"
                } else {
                    ""
                };
                (
                    login.flavor.clone(),
                    format!("{} ({lasts}{refresh})", login.source),
                )
            })
            .collect()
    }

    /// Where each member's login came from, for the run record.
    pub fn sources(&self) -> BTreeMap<String, String> {
        self.logins
            .iter()
            .map(|(k, v)| (k.clone(), v.source.clone()))
            .collect()
    }

    /// The logins a cell of `flavor` gets, in memory; `None` when the flavor needs none.
    pub fn for_cell(&self, flavor: &str) -> Option<CellLogin> {
        let files: Vec<(String, Vec<u8>)> = members(flavor)
            .iter()
            .filter_map(|m| self.logins.get(*m))
            .flat_map(|login| {
                login
                    .files
                    .iter()
                    .map(|f| (format!("{}/{}", login.flavor, f.name), f.bytes.clone()))
            })
            .collect();
        (!files.is_empty()).then_some(CellLogin { files })
    }
}

/// One cell's login files (`<flavor>/<file>` below [`STAGING_TARGET`]), held in memory only.
#[derive(Clone, PartialEq, Eq)]
pub struct CellLogin {
    /// Path and content of each file.
    pub files: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for CellLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the bytes: a Debug print must not leak a login.
        let names: Vec<&str> = self.files.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("CellLogin").field("files", &names).finish()
    }
}

/// One member flavor's login, read and checked against the longest timeout of its cells.
fn snapshot_member(
    member: &str,
    sources: &LoginSources,
    store: &dyn TokenStore,
    now: jiff::Timestamp,
    timeout_s: u64,
) -> Result<Option<Login>, CredsError> {
    let long_lived = if member == "claude" {
        store.get("claude")?
    } else {
        None
    };
    let Some(login) = read_login(member, sources, long_lived)? else {
        return Ok(None);
    };
    check_expiry(&login, now, timeout_s)?;
    Ok(Some(login))
}

fn check_expiry(login: &Login, now: jiff::Timestamp, timeout_s: u64) -> Result<(), CredsError> {
    let Some(expires_at) = login.expires_at else {
        return Ok(());
    };
    let left = expires_at.as_second() - now.as_second();
    if left <= 0 {
        return Err(CredsError::Expires {
            flavor: login.flavor.clone(),
            when: format!("expired at {expires_at}"),
        });
    }
    let needed = i64::try_from(timeout_s)
        .unwrap_or(i64::MAX)
        .saturating_add(EXPIRY_MARGIN_S);
    if left < needed && !login.ships_refresh_token {
        return Err(CredsError::Expires {
            flavor: login.flavor.clone(),
            when: format!(
                "expires in {} min, before the cells' {timeout_s}s timeout ends (cells never get the rotating refresh token)",
                left / 60
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(expires_in_s: i64, refresh: bool) -> Login {
        Login {
            flavor: "codex".into(),
            source: "test".into(),
            files: vec![],
            secrets: vec![],
            expires_at: Some(
                jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() + expires_in_s)
                    .unwrap(),
            ),
            ships_refresh_token: refresh,
        }
    }

    #[test]
    fn a_login_must_outlive_the_cells() {
        let now = jiff::Timestamp::now();
        assert!(check_expiry(&login(7200, false), now, 1800).is_ok());
        let error = check_expiry(&login(1000, false), now, 1800).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("before the cells' 1800s timeout ends"),
            "{error}"
        );
        assert!(
            check_expiry(&login(1000, true), now, 1800).is_ok(),
            "a shipped refresh token may renew it"
        );
        assert!(
            check_expiry(&login(-5, true), now, 1800)
                .unwrap_err()
                .to_string()
                .contains("expired at")
        );
    }

    #[test]
    fn every_missing_or_expiring_login_is_named_in_one_run_with_its_host_command() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".grok/auth.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"s": {"key": "xai-access", "auth_mode": "oidc", "expires_at": "2001-01-01T00:00:00Z"}}"#).unwrap();
        let store = store::FileStore::new(home.path().join("tokens"));
        let flavors: Vec<(String, u64)> = ["codex", "grok", "agy", "dummy"]
            .iter()
            .map(|f| ((*f).to_owned(), 60))
            .collect();
        let error = Credentials::snapshot(&flavors, &LoginSources::files_only(home.path()), &store)
            .unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with("3 logins cannot be used:"), "{text}");
        assert!(text.contains("no codex login at"), "{text}");
        assert!(text.contains("the grok login expired at"), "{text}");
        assert!(text.contains("no agy login at"), "{text}");
        let hint = error.hint().unwrap();
        for command in ["codex: `codex login`", "grok: `grok login`", "agy: `agy"] {
            assert!(hint.contains(command), "{hint}");
        }
        let one = Credentials::snapshot(
            &flavors[..1],
            &LoginSources::files_only(home.path()),
            &store,
        )
        .unwrap_err();
        assert!(
            matches!(one, CredsError::Missing { .. }),
            "one problem keeps its own variant"
        );
    }

    #[test]
    fn a_cell_gets_its_flavors_login_in_memory_and_debug_never_shows_it() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".grok/auth.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"s": {"key": "xai-access", "auth_mode": "oidc", "expires_at": "2099-01-01T00:00:00Z"}}"#).unwrap();
        let store = store::FileStore::new(home.path().join("tokens"));
        let creds = Credentials::snapshot(
            &[("grok".into(), 60), ("dummy".into(), 60)],
            &LoginSources::files_only(home.path()),
            &store,
        )
        .unwrap();
        let login = creds.for_cell("grok").unwrap();
        assert_eq!(login.files[0].0, "grok/auth.json");
        assert!(String::from_utf8_lossy(&login.files[0].1).contains("xai-access"));
        assert!(!format!("{login:?}").contains("xai-access"));
        assert!(creds.for_cell("dummy").is_none());
        assert_eq!(creds.secrets(), ["xai-access"]);
    }
}
