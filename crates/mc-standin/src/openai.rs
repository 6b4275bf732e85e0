//! OpenAI over ChatGPT's backend, as codex calls it with a ChatGPT login: workspace discovery
//! (`wham/accounts/check`), the side routes, and the Responses API (`POST
//! /backend-api/codex/responses`, zstd request body, SSE reply). A first request gets one code-mode
//! `exec` call running the script's `command`; once its output comes back, a message ends the turn.

use serde_json::{Value, json};

use super::http::{Reply, Request};

pub(crate) fn route(request: &Request, path: &str, script: &Value) -> Reply {
    let expected = script["token"].as_str().unwrap_or_default();
    if request.host == "auth.openai.com" {
        // A refresh with the blank refresh token of a test login: refused.
        return Reply::json(401, &json!({"error": "invalid_grant"}));
    }
    if !expected.is_empty() && request.token() != Some(expected) {
        return unauthorized();
    }
    let account = request
        .header("chatgpt-account-id")
        .unwrap_or("acct-standin")
        .to_owned();
    match (request.method.as_str(), path) {
        ("POST", "/backend-api/codex/responses") => responses(request, script),
        ("GET", "/backend-api/wham/accounts/check") => Reply::json(
            200,
            &json!({
                "accounts": [{"id": account, "account_id": account, "name": "cell",
                              "structure": "personal", "plan_type": "pro", "role": "owner",
                              "is_default": true, "is_deactivated": false, "is_paid": true,
                              "can_access_with_session": true,
                              "workspace_backend_origin": "https://chatgpt.com",
                              "account_routing_override": "NO_CONSTRAINT"}],
                "default_account_id": account,
                "current_account_id": account,
                "account_ordering": [account],
            }),
        ),
        _ => Reply::json(200, &json!({})),
    }
}

fn unauthorized() -> Reply {
    Reply::json(
        401,
        &json!({"error": {"message": "Your authentication token has expired. Please try signing in again.",
                "type": "invalid_request_error", "code": "token_expired"}}),
    )
}

fn responses(request: &Request, script: &Value) -> Reply {
    match script["mode"].as_str().unwrap_or("ok") {
        "unauthorized" => return unauthorized(),
        "usage_limit" => {
            return Reply::json(
                429,
                &json!({"error": {"type": "usage_limit_reached",
                        "message": "The usage limit has been reached", "plan_type": "pro",
                        "resets_in_seconds": 3600}}),
            );
        }
        "rate_limit" => {
            return Reply::json(
                429,
                &json!({"error": {"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
                        "message": "Rate limit reached. Please try again in 1s."}}),
            )
            .with("retry-after", "1");
        }
        _ => {}
    }
    let body = request.json();
    let answered = body["input"].as_array().is_some_and(|items| {
        items.iter().any(|i| {
            matches!(
                i["type"].as_str(),
                Some("custom_tool_call_output" | "function_call_output")
            )
        })
    });
    let command = script["command"].as_str().unwrap_or_default();
    let usage = &script["usage"];
    let (input, cached, output, reasoning) = (
        usage["input_tokens"].as_u64().unwrap_or(10),
        usage["cached_input_tokens"].as_u64().unwrap_or(0),
        usage["output_tokens"].as_u64().unwrap_or(5),
        usage["reasoning_output_tokens"].as_u64().unwrap_or(0),
    );
    let item = if answered || command.is_empty() {
        json!({"type": "message", "id": super::http::fresh_id("msg_"), "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Done.", "annotations": []}]})
    } else {
        let js = format!(
            "await tools.exec_command({{cmd: {}}});",
            Value::String(command.to_owned())
        );
        json!({"type": "custom_tool_call", "id": super::http::fresh_id("ctc_"), "call_id": super::http::fresh_id("call_"),
               "name": "exec", "input": js, "status": "completed"})
    };
    let id = super::http::fresh_id("resp_");
    Reply::sse(&[
        ("response.created", json!({"type": "response.created", "response": {"id": id}})),
        ("response.output_item.done", json!({"type": "response.output_item.done", "output_index": 0, "item": item})),
        ("response.completed", json!({"type": "response.completed", "response": {"id": id,
            "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
                      "total_tokens": input + output}}})),
    ])
    .with("x-standin-usage", &json!({"input": input, "cached_input": cached, "output": output, "reasoning": reasoning}).to_string())
}
