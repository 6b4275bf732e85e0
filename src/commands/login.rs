//! `multicooker login <flavor>`: stores a flavor's long-lived, non-rotating token under
//! multicooker's own entry in the OS keyring (or the file store), so cells never receive the
//! host's rotating refresh token. Only claude offers one (`claude setup-token`); for the other
//! flavors the command says how their host login is used instead.

use std::io::{IsTerminal as _, Read as _};

use serde_json::json;

use crate::cli::LoginArgs;
use crate::creds;
use crate::error::{ExitCode, UserError};
use crate::settings;

/// Flavors whose CLI can mint a long-lived, non-rotating token, and the command that does.
const LONG_LIVED: &[(&str, &str)] = &[("claude", "claude setup-token")];

/// How each flavor without a long-lived token reaches its cells (also in SECURITY.md).
fn host_login_note(flavor: &str) -> &'static str {
    match flavor {
        "codex" => {
            "codex offers no long-lived token: cooks snapshot ~/.codex/auth.json (from `codex login`) with its refresh token removed, so the access token must outlive the cells"
        }
        "agy" => {
            "agy offers no long-lived token: Google access tokens last an hour, so cooks ship its refresh token and run agy cells one at a time"
        }
        "grok" => {
            "grok offers no long-lived token: cooks snapshot the oidc entry of ~/.grok/auth.json (from `grok login`) without its rotating refresh token"
        }
        _ => "this flavor has no login multicooker manages",
    }
}

pub(super) fn run(args: &LoginArgs) -> anyhow::Result<ExitCode> {
    let env = settings::Env::from_process();
    let printer = settings::printer(&args.global, &env);
    let store = crate::settings::login_sources(&env).token_store();
    let flavor = args.flavor.as_str();
    let Some((_, mint)) = LONG_LIVED.iter().find(|(f, _)| *f == flavor) else {
        if args.status {
            printer.json(
                &json!({"flavor": flavor, "long_lived": false, "note": host_login_note(flavor)}),
            );
            printer.info(host_login_note(flavor));
            return Ok(ExitCode::Success);
        }
        return Err(UserError::new(
            format!("`multicooker login {flavor}` has nothing to store"),
            format!(
                "{}; run `{}` on the host, and `multicooker doctor` to check it",
                host_login_note(flavor),
                creds::login_command(flavor)
            ),
        )
        .into());
    };
    if args.status {
        let stored = store.get(flavor)?.is_some();
        printer.json(&json!({"flavor": flavor, "long_lived": true, "stored": stored, "store": store.describe()}));
        printer.info(&if stored {
            format!(
                "a long-lived {flavor} token is stored ({}); cooks use it instead of the host login",
                store.describe()
            )
        } else {
            format!(
                "no long-lived {flavor} token stored; cooks use the host login. Run `{mint}`, then `multicooker login {flavor}`"
            )
        });
        return Ok(ExitCode::Success);
    }
    if args.remove {
        let removed = store.delete(flavor)?;
        printer.json(&json!({"flavor": flavor, "removed": removed, "store": store.describe()}));
        printer.info(&if removed {
            format!("removed the {flavor} token ({})", store.describe())
        } else {
            format!("no {flavor} token was stored ({})", store.describe())
        });
        return Ok(ExitCode::Success);
    }
    let token = read_token(flavor, mint)?;
    check_token(flavor, mint, &token)?;
    store.set(flavor, &token)?;
    printer.json(&json!({"flavor": flavor, "stored": true, "store": store.describe()}));
    printer.info(&format!(
        "stored the {flavor} token ({}); cooks now prefer it to the host login",
        store.describe()
    ));
    Ok(ExitCode::Success)
}

/// The token: typed without echo on a terminal, else all of stdin.
fn read_token(flavor: &str, mint: &str) -> anyhow::Result<String> {
    let token = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!(
            "Paste the token `{mint}` printed (input hidden), then Enter: "
        ))?
    } else {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    };
    let token = token.trim().to_owned();
    if token.is_empty() {
        return Err(UserError::new(
            format!("no {flavor} token given"),
            format!("run `{mint}` and paste its token, or pipe it: `{mint} | multicooker login {flavor}`"),
        )
        .into());
    }
    Ok(token)
}

/// Refuses what cannot be a token (never echoing it).
fn check_token(flavor: &str, mint: &str, token: &str) -> anyhow::Result<()> {
    let printable = token.bytes().all(|b| b.is_ascii_graphic());
    if !printable || token.len() < 20 {
        return Err(UserError::new(
            format!(
                "that does not look like a {flavor} token ({} characters{})",
                token.len(),
                if printable {
                    ""
                } else {
                    ", with spaces or control characters"
                }
            ),
            format!("paste only the token line `{mint}` prints"),
        )
        .into());
    }
    if flavor == "claude" && token.starts_with("sk-ant-api") {
        return Err(UserError::new(
            "that is an Anthropic API key, which bills the API instead of your subscription",
            format!("run `{mint}` for a subscription token (it starts with `sk-ant-oat`)"),
        )
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_without_being_echoed() {
        let short = check_token("claude", "claude setup-token", "sk-ant").unwrap_err();
        assert!(!short.to_string().contains("sk-ant"), "{short}");
        let api = check_token(
            "claude",
            "claude setup-token",
            "sk-ant-api03-aaaaaaaaaaaaaaaaaaaa",
        )
        .unwrap_err();
        assert!(api.to_string().contains("bills the API"), "{api}");
        let spaced = check_token("claude", "m", "sk-ant-oat01-aaaa aaaaaaaaaaaaaaaa").unwrap_err();
        assert!(spaced.to_string().contains("spaces"), "{spaced}");
        assert!(check_token("claude", "m", "sk-ant-oat01-aaaaaaaaaaaaaaaaaaaaaaaa").is_ok());
    }
}
