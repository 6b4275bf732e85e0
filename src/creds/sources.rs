//! Where each flavor's login lives on the host, what it must look like, when it expires, and
//! what of it a cell receives (docs/FLAVORS.md §0–§4, §8–§9). The host store is only ever
//! read.
//!
//! Rotating refresh tokens never reach a cell: a cell's copy has its refresh token removed, so
//! it cannot rotate (and revoke) the host's login family; the access token must therefore
//! outlive the cell. Where the CLI offers a long-lived, non-rotating token (`claude
//! setup-token`), `multicooker login` stores it and cooks prefer it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::CredsError;

/// One file a cell receives, under `/run/mc-auth/<flavor>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedFile {
    /// Path below the flavor's staging folder.
    pub name: String,
    /// Content.
    pub bytes: Vec<u8>,
}

/// A flavor's login, read from the host and made safe to hand to a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Login {
    /// The flavor.
    pub flavor: String,
    /// Where it was read, for messages (never the secret).
    pub source: String,
    /// What the cell receives.
    pub files: Vec<StagedFile>,
    /// Every secret string in it, for redaction.
    pub secrets: Vec<String>,
    /// When the access token expires (`None`: long-lived or unknown).
    pub expires_at: Option<jiff::Timestamp>,
    /// The cell needs a refresh token (Google tokens live an hour); such cells run one at a
    /// time per flavor.
    pub ships_refresh_token: bool,
}

/// The command that logs a flavor in on the host.
pub fn login_command(flavor: &str) -> &'static str {
    match flavor {
        "claude" => "claude /login",
        "codex" => "codex login",
        "agy" => "agy",
        "grok" => "grok login",
        _ => "the CLI's own login command",
    }
}

/// [`login_command`] in backticks, with what else to know about it, for a hint.
pub fn login_advice(flavor: &str) -> String {
    let command = login_command(flavor);
    match flavor {
        "claude" => format!(
            "`{command}` (or `claude setup-token | multicooker login claude` for a long-lived token)"
        ),
        "agy" => format!("`{command}` (and sign in with Google)"),
        _ => format!("`{command}`"),
    }
}

/// Where the host's logins are read from, decided once in settings from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginSources {
    /// The host home folder whose login files are read (`MULTICOOKER_HOST_HOME`, else `HOME`).
    pub home: PathBuf,
    /// On macOS, claude's and agy's logins are read from the Keychain (not when a host home
    /// was named explicitly, as tests do).
    pub keychain: bool,
    /// `MULTICOOKER_TOKEN_STORE`, as given.
    pub store: Option<String>,
    /// `CODEX_HOME`, where codex keeps its login instead of `<home>/.codex`.
    pub codex_home: Option<PathBuf>,
    /// `USER`: the account claude's macOS Keychain item is stored under.
    pub keychain_user: String,
}

impl LoginSources {
    /// Files under `home` only (no Keychain, the default token store).
    pub fn files_only(home: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
            keychain: false,
            store: None,
            codex_home: None,
            keychain_user: String::new(),
        }
    }

    /// The token store these sources name.
    pub fn token_store(&self) -> Box<dyn super::TokenStore> {
        super::token_store(self.store.as_deref(), &self.home)
    }
}

/// Reads one flavor's login from the host (`long_lived`: a token from `multicooker login`).
pub fn read_login(
    flavor: &str,
    sources: &LoginSources,
    long_lived: Option<String>,
) -> Result<Option<Login>, CredsError> {
    let home = sources.home.as_path();
    match flavor {
        "claude" => match long_lived {
            Some(token) => Ok(Some(claude_long_lived(token))),
            None => claude(
                home,
                sources.keychain.then_some(sources.keychain_user.as_str()),
            )
            .map(Some),
        },
        "codex" => codex(home, sources.codex_home.as_deref()).map(Some),
        "agy" => agy(home, sources.keychain).map(Some),
        "grok" => grok(home).map(Some),
        _ => Ok(None),
    }
}

fn read_json(flavor: &str, path: &Path) -> Result<Value, CredsError> {
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            CredsError::Missing {
                flavor: flavor.to_owned(),
                path: path.to_path_buf(),
            }
        } else {
            CredsError::Unreadable {
                flavor: flavor.to_owned(),
                path: path.to_path_buf(),
                source: e,
            }
        }
    })?;
    serde_json::from_slice(&bytes).map_err(|_| invalid(flavor, path, "is not valid JSON"))
}

fn invalid(flavor: &str, path: &Path, problem: &str) -> CredsError {
    CredsError::Invalid {
        flavor: flavor.to_owned(),
        path: path.to_path_buf(),
        problem: problem.to_owned(),
    }
}

fn string_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn pretty(value: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(value).expect("serializing JSON cannot fail")
}

fn claude_long_lived(token: String) -> Login {
    Login {
        flavor: "claude".into(),
        source: "multicooker's own keyring entry (claude setup-token)".into(),
        files: vec![StagedFile {
            name: "oauth-token".into(),
            bytes: token.clone().into_bytes(),
        }],
        secrets: vec![token],
        expires_at: None,
        ships_refresh_token: false,
    }
}

/// `~/.claude/.credentials.json` (Linux) or the Keychain item `Claude Code-credentials` of
/// `keychain`'s user (macOS).
fn claude(home: &Path, keychain: Option<&str>) -> Result<Login, CredsError> {
    let path = home.join(".claude/.credentials.json");
    let mut value = if let Some(user) = keychain.filter(|_| cfg!(target_os = "macos")) {
        claude_keychain(user).map_err(|problem| {
            invalid(
                "claude",
                Path::new("Keychain: Claude Code-credentials"),
                &problem,
            )
        })?
    } else {
        read_json("claude", &path)?
    };
    let oauth = value
        .get("claudeAiOauth")
        .ok_or_else(|| invalid("claude", &path, "has no `claudeAiOauth` object"))?;
    let access = string_at(oauth, "/accessToken")
        .ok_or_else(|| invalid("claude", &path, "has no `claudeAiOauth.accessToken`"))?
        .to_owned();
    let expires_ms = oauth
        .get("expiresAt")
        .and_then(Value::as_i64)
        .ok_or_else(|| invalid("claude", &path, "has no numeric `claudeAiOauth.expiresAt`"))?;
    let mut secrets = vec![access];
    secrets.extend(string_at(oauth, "/refreshToken").map(str::to_owned));
    if let Some(oauth) = value
        .get_mut("claudeAiOauth")
        .and_then(Value::as_object_mut)
    {
        oauth.remove("refreshToken");
    }
    Ok(Login {
        flavor: "claude".into(),
        source: path.display().to_string(),
        files: vec![StagedFile {
            name: ".credentials.json".into(),
            bytes: pretty(&value),
        }],
        secrets,
        expires_at: jiff::Timestamp::from_millisecond(expires_ms).ok(),
        ships_refresh_token: false,
    })
}

/// The macOS Keychain item Claude Code writes, through the `keyring` crate.
fn claude_keychain(user: &str) -> Result<Value, String> {
    let entry = keyring::Entry::new("Claude Code-credentials", user)
        .map_err(|e| format!("not found ({e})"))?;
    let text = entry
        .get_password()
        .map_err(|e| format!("not found ({e})"))?;
    serde_json::from_str(&text).map_err(|_| "is not valid JSON".into())
}

/// agy's macOS Keychain item (written by go-keyring: `go-keyring-base64:` + base64 of the token
/// JSON), through the `keyring` crate.
fn agy_keychain() -> Result<Value, String> {
    let entry =
        keyring::Entry::new("gemini", "antigravity").map_err(|e| format!("not found ({e})"))?;
    let text = entry
        .get_password()
        .map_err(|e| format!("not found ({e})"))?;
    decode_go_keyring(&text)
}

/// The token JSON inside a go-keyring value (plain JSON, or `go-keyring-base64:` + base64).
fn decode_go_keyring(text: &str) -> Result<Value, String> {
    let json = match text.strip_prefix("go-keyring-base64:") {
        Some(encoded) => base64_url_decode(encoded.trim()).ok_or("is not valid base64")?,
        None => text.as_bytes().to_vec(),
    };
    serde_json::from_slice(&json).map_err(|_| "is not valid JSON".into())
}

/// `$CODEX_HOME/auth.json` or `~/.codex/auth.json`: subscription logins only.
fn codex(home: &Path, codex_home: Option<&Path>) -> Result<Login, CredsError> {
    let path = codex_home
        .map_or_else(|| home.join(".codex"), Path::to_path_buf)
        .join("auth.json");
    let mut value = read_json("codex", &path)?;
    if value.get("OPENAI_API_KEY").is_some_and(|k| !k.is_null()) {
        return Err(invalid(
            "codex",
            &path,
            "holds an OPENAI_API_KEY, which would bill the API instead of your subscription",
        ));
    }
    let access = string_at(&value, "/tokens/access_token")
        .ok_or_else(|| invalid("codex", &path, "has no `tokens.access_token`"))?
        .to_owned();
    let mut secrets = vec![access.clone()];
    secrets.extend(
        ["/tokens/refresh_token", "/tokens/id_token"]
            .iter()
            .filter_map(|p| string_at(&value, p))
            .map(str::to_owned),
    );
    if let Some(tokens) = value.get_mut("tokens").and_then(Value::as_object_mut) {
        tokens.insert("refresh_token".into(), Value::String(String::new()));
    }
    Ok(Login {
        flavor: "codex".into(),
        source: path.display().to_string(),
        files: vec![StagedFile {
            name: "auth.json".into(),
            bytes: pretty(&value),
        }],
        secrets,
        expires_at: jwt_expiry(&access),
        ships_refresh_token: false,
    })
}

/// `~/.gemini/antigravity-cli/antigravity-oauth-token`. Google access tokens last about an hour,
/// so the refresh token ships; such cells run one at a time.
fn agy(home: &Path, keychain: bool) -> Result<Login, CredsError> {
    let path = home.join(".gemini/antigravity-cli/antigravity-oauth-token");
    let value = if cfg!(target_os = "macos") && keychain {
        agy_keychain().map_err(|problem| {
            invalid("agy", Path::new("Keychain: gemini / antigravity"), &problem)
        })?
    } else {
        read_json("agy", &path)?
    };
    let access = string_at(&value, "/token/access_token")
        .ok_or_else(|| invalid("agy", &path, "has no `token.access_token`"))?
        .to_owned();
    let refresh = string_at(&value, "/token/refresh_token")
        .ok_or_else(|| invalid("agy", &path, "has no `token.refresh_token`"))?
        .to_owned();
    let expiry = string_at(&value, "/token/expiry")
        .ok_or_else(|| invalid("agy", &path, "has no `token.expiry`"))?;
    let expires_at = expiry
        .parse::<jiff::Timestamp>()
        .map_err(|_| invalid("agy", &path, "has an unreadable `token.expiry`"))?;
    Ok(Login {
        flavor: "agy".into(),
        source: path.display().to_string(),
        files: vec![StagedFile {
            name: "antigravity-oauth-token".into(),
            bytes: pretty(&value),
        }],
        secrets: vec![access, refresh],
        expires_at: Some(expires_at),
        ships_refresh_token: true,
    })
}

/// `~/.grok/auth.json`: the OIDC entry only (API-key entries are dropped), without its
/// rotating refresh token.
fn grok(home: &Path) -> Result<Login, CredsError> {
    let path = home.join(".grok/auth.json");
    let value = read_json("grok", &path)?;
    let entries = value
        .as_object()
        .ok_or_else(|| invalid("grok", &path, "is not a JSON object"))?;
    let (scope, entry) = entries
        .iter()
        .find(|(_, e)| e.get("auth_mode").and_then(Value::as_str) == Some("oidc"))
        .ok_or_else(|| invalid("grok", &path, "has no subscription (oidc) login"))?;
    let key = string_at(entry, "/key")
        .ok_or_else(|| invalid("grok", &path, "has an oidc entry without `key`"))?
        .to_owned();
    let mut secrets = vec![key];
    secrets.extend(string_at(entry, "/refresh_token").map(str::to_owned));
    secrets.extend(
        entries
            .values()
            .filter_map(|e| string_at(e, "/key"))
            .map(str::to_owned),
    );
    let expires_at =
        string_at(entry, "/expires_at").and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let mut kept = entry.clone();
    if let Some(map) = kept.as_object_mut() {
        map.remove("refresh_token");
    }
    let staged = serde_json::json!({ scope.clone(): kept });
    Ok(Login {
        flavor: "grok".into(),
        source: path.display().to_string(),
        files: vec![StagedFile {
            name: "auth.json".into(),
            bytes: pretty(&staged),
        }],
        secrets,
        expires_at,
        ships_refresh_token: false,
    })
}

/// The `exp` claim of a JWT, without checking its signature (we only plan around it).
pub fn jwt_expiry(token: &str) -> Option<jiff::Timestamp> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64_url_decode(payload)?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    jiff::Timestamp::from_second(claims.get("exp")?.as_i64()?).ok()
}

/// Decodes base64 in either alphabet (JWTs use the URL-safe one, go-keyring the standard
/// one), padded or not.
fn base64_url_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    [base64::alphabet::URL_SAFE, base64::alphabet::STANDARD]
        .iter()
        .find_map(|alphabet| GeneralPurpose::new(alphabet, config).decode(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(home: &Path, relative: &str, text: &str) {
        let path = home.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn claude_copies_lose_their_refresh_token() {
        let home = tempfile::tempdir().unwrap();
        write(
            home.path(),
            ".claude/.credentials.json",
            r#"{"claudeAiOauth": {"accessToken": "sk-ant-oat01-AAA", "refreshToken": "sk-ant-ort01-RRR", "expiresAt": 1893456000000, "scopes": ["user:inference"]}}"#,
        );
        let login = read_login("claude", &LoginSources::files_only(home.path()), None)
            .unwrap()
            .unwrap();
        let staged = String::from_utf8(login.files[0].bytes.clone()).unwrap();
        assert!(
            staged.contains("sk-ant-oat01-AAA") && !staged.contains("sk-ant-ort01-RRR"),
            "{staged}"
        );
        assert_eq!(login.secrets, ["sk-ant-oat01-AAA", "sk-ant-ort01-RRR"]);
        assert_eq!(login.expires_at.unwrap().as_second(), 1_893_456_000);
        let long = read_login(
            "claude",
            &LoginSources::files_only(home.path()),
            Some("sk-ant-oat01-LONG".into()),
        )
        .unwrap()
        .unwrap();
        assert_eq!(long.files[0].name, "oauth-token");
        assert_eq!(long.expires_at, None);
    }

    #[test]
    fn codex_refuses_api_keys_and_reads_the_jwt_expiry() {
        let home = tempfile::tempdir().unwrap();
        // {"exp": 1893456000}
        let jwt = "eyJhbGciOiJub25lIn0.eyJleHAiOjE4OTM0NTYwMDB9.";
        write(
            home.path(),
            ".codex/auth.json",
            &format!(
                r#"{{"auth_mode": "chatgpt", "OPENAI_API_KEY": null, "tokens": {{"access_token": "{jwt}", "refresh_token": "rt.secret"}}}}"#
            ),
        );
        let login = read_login("codex", &LoginSources::files_only(home.path()), None)
            .unwrap()
            .unwrap();
        assert_eq!(login.expires_at.unwrap().as_second(), 1_893_456_000);
        assert!(!String::from_utf8_lossy(&login.files[0].bytes).contains("rt.secret"));
        write(
            home.path(),
            ".codex/auth.json",
            r#"{"OPENAI_API_KEY": "sk-live", "tokens": {"access_token": "x"}}"#,
        );
        let error = read_login("codex", &LoginSources::files_only(home.path()), None).unwrap_err();
        assert!(error.to_string().contains("OPENAI_API_KEY"), "{error}");
    }

    #[test]
    fn grok_drops_api_keys_and_refresh_tokens() {
        let home = tempfile::tempdir().unwrap();
        write(
            home.path(),
            ".grok/auth.json",
            r#"{"https://auth.x.ai::cli": {"key": "xai-access", "auth_mode": "oidc", "refresh_token": "xai-refresh", "expires_at": "2030-01-01T00:00:00Z"}, "xai::api_key": {"key": "xai-apikey", "auth_mode": "api_key"}}"#,
        );
        let login = read_login("grok", &LoginSources::files_only(home.path()), None)
            .unwrap()
            .unwrap();
        let staged = String::from_utf8(login.files[0].bytes.clone()).unwrap();
        assert!(
            staged.contains("xai-access")
                && !staged.contains("xai-refresh")
                && !staged.contains("xai-apikey"),
            "{staged}"
        );
        assert!(
            login.secrets.contains(&"xai-apikey".to_owned()),
            "api keys are still redacted"
        );
    }

    #[test]
    fn agys_macos_keychain_value_is_decoded() {
        // go-keyring-base64: + base64 of {"token": {"access_token": "ya29.x"}}
        let value = decode_go_keyring(
            "go-keyring-base64:eyJ0b2tlbiI6IHsiYWNjZXNzX3Rva2VuIjogInlhMjkueCJ9fQ==",
        )
        .unwrap();
        assert_eq!(value.pointer("/token/access_token").unwrap(), "ya29.x");
        assert!(decode_go_keyring("{\"token\": {}}").is_ok());
        assert!(decode_go_keyring("go-keyring-base64:!!!").is_err());
    }

    #[test]
    fn missing_and_malformed_logins_name_the_file() {
        let home = tempfile::tempdir().unwrap();
        let error = read_login("agy", &LoginSources::files_only(home.path()), None).unwrap_err();
        assert!(matches!(error, CredsError::Missing { .. }));
        write(
            home.path(),
            ".gemini/antigravity-cli/antigravity-oauth-token",
            r#"{"token": {"access_token": "a"}}"#,
        );
        let error = read_login("agy", &LoginSources::files_only(home.path()), None).unwrap_err();
        assert!(error.to_string().contains("token.refresh_token"), "{error}");
    }
}
