//! claude's own account of a limit, from its `stream-json` (docs/REAL-CLIS.md): a used-up 5-hour or
//! weekly window ends in a `result` with `is_error: true`, `api_error: "usage_limit_reached"`
//! and `rateLimitType` (`five_hour`, `seven_day`, …), its text saying when it resets
//! (`You've hit your 5-hour limit · resets 6:20pm (UTC)`); a `rate_limit_event` whose
//! `rate_limit_info.status` is `rejected` and names the window says the same, with `resetsAt`
//! (a Unix time, in seconds or milliseconds); a rejected event naming no window is the
//! momentary per-minute limit, retryable. Either is a used-up plan, never a retryable rate limit, unless the
//! run still ended in a successful `result` (a rejected window it went past, on overage).
//! A failed `result` with `api_error_status: 429` and no window (Claude Code 2.1.294: `API
//! Error: Server is temporarily limiting requests (not your usage limit) · …`) is that
//! momentary limit: retryable, whatever its text says of usage limits.

use serde_json::{Map, Value};

use super::super::usage::json_object;
use super::{LimitKind, RateLimit, claude_reset_in};

/// What the stream said about a limit.
#[derive(Default)]
struct Seen {
    /// A rejected `rate_limit_event` or a `result` with the limit fields.
    hit: bool,
    /// `rateLimitType`.
    window: Option<String>,
    /// `api_error`.
    api_error: Option<String>,
    /// The `result` text.
    text: Option<String>,
    /// `resetsAt`, in seconds since the epoch.
    resets_at: Option<i64>,
    /// A `result` with `is_error: false`: the run went on (on overage, say) and succeeded.
    succeeded: bool,
    /// A failed `result` with `api_error_status: 429` and no used-up window: the momentary
    /// per-minute limit.
    momentary: bool,
}

/// A used-up plan, from claude's structured fields; `None` when they say nothing of one.
pub(super) fn claude(output: &str, now: &jiff::Zoned) -> Option<RateLimit> {
    let mut seen = Seen::default();
    for event in output.lines().filter_map(json_object) {
        match event.get("type").and_then(Value::as_str) {
            Some("rate_limit_event") => rate_limit_event(&event, &mut seen),
            Some("result") => result(&event, &mut seen),
            _ => {}
        }
    }
    if seen.succeeded {
        return None;
    }
    if !seen.hit {
        return seen.momentary.then(|| momentary(seen.text.as_deref()));
    }
    let now_s = now.timestamp().as_second();
    let retry_after_s = seen
        .resets_at
        .and_then(|at| u64::try_from(at - now_s).ok())
        .or_else(|| seen.text.as_deref().and_then(|t| claude_reset_in(t, now)))
        .unwrap_or(0);
    let fields: Vec<String> = [
        ("api_error", &seen.api_error),
        ("rateLimitType", &seen.window),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}: {v}")))
    .collect();
    let text: String = seen.text.unwrap_or_default().chars().take(160).collect();
    let evidence = format!(
        "{} [{}]",
        text.replace(['\n', '\r'], " "),
        fields.join(", ")
    );
    Some(RateLimit {
        evidence: evidence.trim().to_owned(),
        retry_after_s,
        kind: LimitKind::UsageExhausted,
    })
}

/// The momentary per-minute limit, from a failed `result` that says HTTP 429.
fn momentary(text: Option<&str>) -> RateLimit {
    let text: String = text.unwrap_or_default().chars().take(160).collect();
    RateLimit {
        evidence: format!(
            "{} [api_error_status: 429]",
            text.replace(['\n', '\r'], " ")
        )
        .trim()
        .to_owned(),
        retry_after_s: 0,
        kind: LimitKind::RateLimited,
    }
}

fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `resetsAt`: seconds, or milliseconds (as some builds write it).
fn epoch_seconds(value: Option<&Value>) -> Option<i64> {
    let at = value.and_then(Value::as_i64)?;
    Some(if at > 100_000_000_000 { at / 1000 } else { at })
}

fn rate_limit_event(event: &Map<String, Value>, seen: &mut Seen) {
    let Some(info) = event.get("rate_limit_info") else {
        return;
    };
    if info.get("status").and_then(Value::as_str) != Some("rejected") {
        return;
    }
    // The real claude (2.1.330) also says `rejected`, with no window, for a momentary
    // per-minute 429: only a named window (`five_hour`, `seven_day`, …) is a used-up plan.
    let Some(window) = text(info.get("rateLimitType")) else {
        return;
    };
    seen.hit = true;
    seen.window = Some(window);
    seen.resets_at = epoch_seconds(info.get("resetsAt")).or(seen.resets_at);
}

fn result(event: &Map<String, Value>, seen: &mut Seen) {
    match event.get("is_error").and_then(Value::as_bool) {
        Some(true) => {}
        Some(false) => {
            seen.succeeded = true;
            return;
        }
        None => return,
    }
    let api_error = text(event.get("api_error"));
    let window = text(event.get("rateLimitType"));
    if api_error.as_deref() != Some("usage_limit_reached") && window.is_none() {
        if event.get("api_error_status").and_then(Value::as_u64) == Some(429) {
            seen.momentary = true;
            seen.text = text(event.get("result"));
        }
        return;
    }
    seen.hit = true;
    seen.api_error = api_error;
    seen.window = window.or(seen.window.take());
    seen.text = text(event.get("result"));
    seen.resets_at = epoch_seconds(event.get("resetsAt")).or(seen.resets_at);
}
