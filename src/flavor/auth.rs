//! Login failures, from what a CLI itself says (its error events and plain lines, as for
//! limits): an expired or revoked token ends a cell with a non-zero exit that no retry within
//! the run can fix, and that the user fixes with `multicooker login`. The cell keeps its state
//! (`non_zero_exit`: unscored, run again by `resume`); the failure is named in its record.
//!
//! Texts (docs/REAL-CLIS.md, docs/FLAVORS.md): claude `Failed to authenticate. API Error: 401 OAuth
//! token has expired`, `authentication_error`, `Invalid API key · Please run /login`; codex's
//! refresh after a 401 (`refresh token was already used`, `Please log out and sign in again`, `401
//! Unauthorized`), `Not logged in`; agy `authentication timed out`, `invalid_grant`; grok `Not
//! authenticated`.
//!
//! codex names its login's failure whatever its token endpoint answers: a 401 there is permanent
//! (`… could not be refreshed … Please log out and sign in again`), any other answer (a 404, a
//! 400, a 5xx) is `Failed to refresh token: <status>: <message>`. codex refreshes only when a
//! request was refused or its token is due, so either is its login failing, not the task.

use std::sync::LazyLock;

use regex::Regex;

static CLAUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)failed to authenticate|\bauthentication_error\b|oauth token (?:has expired|revoked)|invalid api key|please run /login|api error: 401\b")
        .expect("a valid regex")
});

static CODEX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)refresh token was already used|log out and sign in again|could not be refreshed|failed to refresh token\b|\brefresh_token_(?:reused|expired|invalidated)\b|\b401 unauthorized\b|unexpected status 401\b|not logged in\. run `codex login`|provided authentication token is expired|authentication token has expired")
        .expect("a valid regex")
});

static AGY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)authentication timed out|\binvalid_grant\b").expect("a valid regex")
});

static GROK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)not authenticated\. run `grok login`|\b401 unauthorized\b")
        .expect("a valid regex")
});

fn patterns_for(flavor: &str) -> Vec<&'static Regex> {
    match flavor {
        "claude" => vec![&CLAUDE],
        "codex" => vec![&CODEX],
        "agy" => vec![&AGY],
        "grok" => vec![&GROK],
        "triad" => vec![&CLAUDE, &CODEX, &GROK],
        _ => Vec::new(),
    }
}

/// The CLI's words when its login failed (about 80 characters either side, one line), or
/// `None`.
pub fn detect_login_failure(flavor: &str, output: &str) -> Option<String> {
    let text = super::limits::cli_messages(flavor, output);
    let text = text.as_ref();
    let found = patterns_for(flavor)
        .into_iter()
        .find_map(|regex| final_word(regex, text))?;
    Some(super::limits::evidence(text, found.start(), found.end()))
}

/// The match that is the CLI's final word: the last one in an error event (a JSON line; codex
/// retries a refused refresh five times, `Reconnecting... n/5 (…)`, before its last `error` and
/// `turn.failed`), else the first one in plain text (stdout comes before stderr's log lines).
fn final_word<'t>(regex: &Regex, text: &'t str) -> Option<regex::Match<'t>> {
    let on_json_line = |m: &regex::Match<'_>| {
        let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..].trim_start().starts_with('{')
    };
    regex
        .find_iter(text)
        .filter(on_json_line)
        .last()
        .or_else(|| regex.find(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_clis_401s_are_login_failures() {
        let claude = concat!(
            r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Failed to authenticate. API Error: 401 OAuth token has expired. Please obtain a new token or refresh your existing token."}"#,
        );
        let found = detect_login_failure("claude", claude).unwrap();
        assert!(found.contains("401 OAuth token has expired"), "{found}");
        let codex = concat!(
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"error","message":"unexpected status 401 Unauthorized: Your authentication token has expired. Please try signing in again."}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"Your access token could not be refreshed because your refresh token was already used. Please log out and sign in again."}}"#,
        );
        assert!(detect_login_failure("codex", codex).is_some());
        assert!(detect_login_failure("triad", codex).is_some(), "a member's");
        assert!(detect_login_failure("agy", "authentication timed out\n").is_some());
    }

    /// Issue 25: a codex 401 was a login failure only when the refresh endpoint also answered
    /// 401; a 404 or 400 there gave `non_zero_exit` with no `login_failure`. codex's own words
    /// after each answer (docs/REAL-CLIS.md), every one named, as a sentence.
    #[test]
    fn a_codex_401_is_a_login_failure_whatever_the_refresh_endpoint_answers() {
        let refused = |message: &str| {
            format!(
                "{}\n{}\n{}\n",
                r#"{"type":"thread.started","thread_id":"t"}"#,
                serde_json::json!({"type": "error", "message": message}),
                serde_json::json!({"type": "turn.failed", "error": {"message": message}}),
            )
        };
        for (endpoint, message) in [
            ("404", "Failed to refresh token: 404 Not Found: Not Found"),
            (
                "400",
                "Failed to refresh token: 400 Bad Request: refresh_token is malformed",
            ),
            (
                "400 invalid_grant",
                "Your access token could not be refreshed. Please log out and sign in again.",
            ),
            (
                "500",
                "Failed to refresh token: 500 Internal Server Error: upstream connect error",
            ),
            (
                "401",
                "Your access token could not be refreshed because your refresh token was revoked. Please log out and sign in again.",
            ),
        ] {
            let found = detect_login_failure("codex", &refused(message))
                .unwrap_or_else(|| panic!("refresh {endpoint}: not a login failure"));
            assert_eq!(
                found, message,
                "refresh {endpoint}: the CLI's sentence, whole"
            );
        }
        // On stderr, as plain text.
        let plain = "ERROR: Failed to refresh token: 404 Not Found: page not found\n";
        assert!(detect_login_failure("codex", plain).is_some());
    }

    /// Issue 25, measured with the real codex 0.163.0: after a 404 or a 400 from the token
    /// endpoint codex retries the refresh five times (`Reconnecting... n/5 (…)` error events)
    /// before its final `error` and `turn.failed`, and logs each refusal on stderr. The evidence is
    /// its final word, not the first retry nor the log line.
    #[test]
    fn codex_retried_refresh_is_named_by_its_final_error() {
        let refused =
            "Failed to refresh token: 400 Bad Request: Invalid request: refresh_token is malformed";
        let mut stdout = String::from(
            r#"{"type":"thread.started","thread_id":"01a22468-bb24-7b61-9d97-2ee1e84809d7"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 5/5 (unexpected status 404 Not Found: Unknown error, url: wss://chatgpt.com/backend-api/codex/responses)"}
"#,
        );
        for attempt in 1..=5 {
            stdout.push_str(
                &serde_json::json!({"type": "error",
                    "message": format!("Reconnecting... {attempt}/5 ({refused})")})
                .to_string(),
            );
            stdout.push('\n');
        }
        stdout.push_str(&format!(
            "{}\n{}\n",
            serde_json::json!({"type": "error", "message": refused}),
            serde_json::json!({"type": "turn.failed", "error": {"message": refused}})
        ));
        let stderr = "2026-11-28T23:09:57.991912Z ERROR codex_login::auth::manager: Failed to refresh token status=400 Bad Request detail=TokenErrorDetail { error_code: Some(\"invalid_request\"), error_message: Some(\"Invalid request: refresh_token is malformed\"), .. }\n";
        let output = format!("{stdout}\n{stderr}\n");
        assert_eq!(
            detect_login_failure("codex", &output).as_deref(),
            Some(refused)
        );
    }

    /// Issue 25: evidence was a cut JSON fragment (`…","error":{"message":"OAuth tok…`). It is
    /// the CLI's sentence: the string holding the match, an embedded API error as its message.
    #[test]
    fn login_evidence_is_a_readable_sentence() {
        let claude = concat!(
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Failed to authenticate. API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"OAuth token has expired. Please obtain a new token or refresh your existing token.\"},\"request_id\":\"req_011\"}","session_id":"5b3c","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}"#,
            "\n",
        );
        assert_eq!(
            detect_login_failure("claude", claude).as_deref(),
            Some(
                "Failed to authenticate. API Error: 401 OAuth token has expired. Please obtain a new token or refresh your existing token. (authentication_error)"
            )
        );
        // A long plain line is cut between words around the match, and says so.
        let long = format!(
            "{} Not logged in. Run `codex login`. {}\n",
            "word ".repeat(200),
            "tail ".repeat(200)
        );
        let found = detect_login_failure("codex", &long).unwrap();
        assert!(
            found.starts_with("… word ") && found.ends_with(" …"),
            "{found}"
        );
        assert!(
            found.contains("Not logged in. Run `codex login`."),
            "{found}"
        );
        assert!(found.chars().count() <= 310, "{}", found.chars().count());
    }

    #[test]
    fn transcripts_limits_and_other_flavors_are_not_login_failures() {
        let transcript = concat!(
            r#"{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"HTTP 401 Unauthorized: refresh token was already used"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"Failed to authenticate is handled"}]}}"#,
        );
        for flavor in ["claude", "codex", "triad"] {
            assert_eq!(detect_login_failure(flavor, transcript), None, "{flavor}");
        }
        let limit = "You've hit your usage limit. Upgrade to Pro or try again at 3:28 PM.";
        assert_eq!(detect_login_failure("codex", limit), None);
        assert_eq!(detect_login_failure("dummy", "API Error: 401"), None);
    }
}
