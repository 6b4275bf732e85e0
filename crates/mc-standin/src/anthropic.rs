//! Anthropic: the Messages API (`POST /v1/messages`, streamed) and the side routes Claude Code
//! calls. A request offering the `Bash` tool gets, first, one `tool_use` running the script's
//! `command`, then (once a `tool_result` comes back) a text reply ending the turn.

use serde_json::{Value, json};

use super::http::{Reply, Request};

pub(crate) fn route(request: &Request, path: &str, script: &Value) -> Reply {
    let expected = script["token"].as_str().unwrap_or_default();
    if !expected.is_empty() && request.token() != Some(expected) {
        return unauthorized();
    }
    match (request.method.as_str(), path) {
        ("POST", "/v1/messages") => messages(request, script),
        ("GET", "/api/oauth/profile") => Reply::json(
            200,
            &json!({
                "account": {"uuid": "00000000-0000-4000-8000-000000000001",
                            "email": "cell@multicooker.invalid", "email_address": "cell@multicooker.invalid",
                            "display_name": "cell", "has_claude_max": true, "has_claude_pro": false},
                "organization": {"uuid": "00000000-0000-4000-8000-000000000002",
                                 "organization_type": "claude_max", "rate_limit_tier": "default_claude_max_20x"}
            }),
        ),
        _ => Reply::json(200, &json!({})),
    }
}

fn unauthorized() -> Reply {
    Reply::json(
        401,
        &json!({"type": "error", "error": {"type": "authentication_error",
                "message": "OAuth token has expired. Please obtain a new token or refresh your existing token."}}),
    )
}

fn messages(request: &Request, script: &Value) -> Reply {
    match script["mode"].as_str().unwrap_or("ok") {
        "unauthorized" => return unauthorized(),
        "usage_limit" => {
            let reset = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() + 3600);
            return Reply::json(
                429,
                &json!({"type": "error", "error": {"type": "rate_limit_error",
                        "message": "This request would exceed your account's rate limit. Please try again later."}}),
            )
            .with("anthropic-ratelimit-unified-status", "rejected")
            .with("anthropic-ratelimit-unified-representative-claim", "five_hour")
            .with("anthropic-ratelimit-unified-5h-status", "rejected")
            .with("anthropic-ratelimit-unified-reset", &reset.to_string())
            .with("anthropic-ratelimit-unified-5h-reset", &reset.to_string());
        }
        "rate_limit" => return per_minute_limit(script),
        _ => {}
    }
    ok_reply(request, script)
}

/// A per-minute 429 as the API sends it: `retry-after` (the script's `retry_after`, seconds,
/// default 1), `x-should-retry: true`, the request and token buckets' `anthropic-ratelimit-*`
/// headers with the one used up, and a request id. The CLI retries it (issue 25: the stand-in
/// once said `x-should-retry: false`, which no real per-minute 429 says).
fn per_minute_limit(script: &Value) -> Reply {
    let retry_after = script["retry_after"].as_u64().unwrap_or(1);
    let reset = rfc3339_in(retry_after);
    let mut reply = Reply::json(
        429,
        &json!({"type": "error", "error": {"type": "rate_limit_error",
                "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
    )
    .with("retry-after", &retry_after.to_string())
    .with("x-should-retry", "true")
    .with("request-id", &super::http::fresh_id("req_01"));
    for (bucket, limit, remaining) in [
        ("requests", 50, 49),
        ("tokens", 30_000, 0),
        ("input-tokens", 30_000, 0),
        ("output-tokens", 8_000, 8_000),
    ] {
        reply = reply
            .with(
                &format!("anthropic-ratelimit-{bucket}-limit"),
                &limit.to_string(),
            )
            .with(
                &format!("anthropic-ratelimit-{bucket}-remaining"),
                &remaining.to_string(),
            )
            .with(&format!("anthropic-ratelimit-{bucket}-reset"), &reset);
    }
    reply
}

/// Now plus `seconds`, as RFC 3339 in UTC (`2026-11-28T20:40:01Z`).
fn rfc3339_in(seconds: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(now + seconds)
}

/// Seconds since the Unix epoch as RFC 3339 in UTC.
fn rfc3339(epoch: u64) -> String {
    let (days, rest) = (epoch / 86_400, epoch % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A normal turn: one `tool_use` running the script's command, then a text reply.
fn ok_reply(request: &Request, script: &Value) -> Reply {
    let body = request.json();
    let model = body["model"]
        .as_str()
        .unwrap_or("claude-sonnet-4-5")
        .to_owned();
    let has_bash = body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Bash"));
    // The last turn of the conversation; Claude Code 2.1.294 puts a `system` message (its
    // environment) after it.
    let answered = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] != "system"))
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    let command = script["command"].as_str().unwrap_or_default();
    let usage = &script["usage"];
    let (input, output) = (
        usage["input_tokens"].as_u64().unwrap_or(10),
        usage["output_tokens"].as_u64().unwrap_or(5),
    );
    let (creation, read) = (
        usage["cache_creation_input_tokens"].as_u64().unwrap_or(0),
        usage["cache_read_input_tokens"].as_u64().unwrap_or(0),
    );
    let start = json!({"type": "message_start", "message": {
        "id": super::http::fresh_id("msg_01"), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 1,
                  "cache_creation_input_tokens": creation, "cache_read_input_tokens": read}}});
    let (block, delta, stop) = if has_bash && !answered && !command.is_empty() {
        (
            json!({"type": "tool_use", "id": super::http::fresh_id("toolu_01"), "name": "Bash", "input": {}}),
            json!({"type": "input_json_delta",
                   "partial_json": json!({"command": command, "description": "do the task"}).to_string()}),
            "tool_use",
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "Done."}),
            "end_turn",
        )
    };
    Reply::sse(&[
        ("message_start", start),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": output}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
    .with(
        "x-standin-usage",
        &json!({"input": input, "output": output, "cache_creation": creation, "cache_read": read})
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn reset_times_are_rfc3339_in_utc() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_796_216_400), "2026-12-02T13:00:00Z");
    }
}
