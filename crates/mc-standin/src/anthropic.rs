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
        "rate_limit" => {
            return Reply::json(
                429,
                &json!({"type": "error", "error": {"type": "rate_limit_error",
                        "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
            )
            .with("retry-after", "1")
            // The API's own "do not retry" header, so the CLI reports the limit at once
            // instead of backing off for minutes.
            .with("x-should-retry", "false");
        }
        _ => {}
    }
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
