//! OpenAI over ChatGPT's backend, as codex calls it with a ChatGPT login: workspace discovery
//! (`wham/accounts/check`), the side routes, the token refresh (`auth.openai.com`), and the
//! Responses API on `/backend-api/codex/responses` over either transport codex speaks: a
//! WebSocket upgrade (codex's first choice; one request JSON per text frame, one event JSON per
//! frame back, `websocket.rs`) when the script's `transport` is `websocket`, else a 404 to the
//! upgrade and `POST` with a zstd request body and an SSE reply. A first request gets one
//! code-mode `exec` call running the script's `command`; once its output comes back, a message
//! ends the turn.
//!
//! Script fields read here: `token` (the access token accepted), `mode` (`ok`, `unauthorized`,
//! `usage_limit`, `rate_limit`), `transport` (`sse`, `websocket`), `refresh` (the status the
//! token endpoint answers a refresh with: 401, 404 or 400), `command`, `usage`.

use serde_json::{Value, json};

use super::http::{Reply, Request, fresh_id};

/// The Responses route, for both transports.
pub(crate) const RESPONSES: &str = "/backend-api/codex/responses";

pub(crate) fn route(request: &Request, path: &str, script: &Value) -> Reply {
    let expected = script["token"].as_str().unwrap_or_default();
    if request.host == "auth.openai.com" {
        return refresh(script);
    }
    if !expected.is_empty() && request.token() != Some(expected) {
        return unauthorized();
    }
    if request.header("upgrade").is_some() {
        return upgrade(path, script);
    }
    let account = request
        .header("chatgpt-account-id")
        .unwrap_or("acct-standin")
        .to_owned();
    match (request.method.as_str(), path) {
        ("POST", RESPONSES) => responses(request, script),
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

/// A WebSocket upgrade: accepted (101, served by `websocket.rs`) on the Responses route when the
/// script asks for that transport and the login is good; otherwise 404, and codex falls back to
/// `POST` with SSE.
fn upgrade(path: &str, script: &Value) -> Reply {
    if path != RESPONSES || script["transport"].as_str() != Some("websocket") {
        return Reply::json(404, &json!({"error": "websocket not supported"}));
    }
    if script["mode"].as_str() == Some("unauthorized") {
        return unauthorized();
    }
    Reply::switching()
}

/// The token endpoint's answer to codex's refresh (a test login's refresh token is blank): 401
/// `invalid_grant` as OpenAI's answers a refused grant, or a 404 or a 400 (`refresh`), each of
/// which codex reports in its own words.
fn refresh(script: &Value) -> Reply {
    match script["refresh"].as_u64().unwrap_or(401) {
        404 => Reply::json(
            404,
            &json!({"error": {"message": "Not Found", "type": "invalid_request_error",
                    "code": "not_found"}}),
        ),
        400 => Reply::json(
            400,
            &json!({"error": {"message": "Invalid request: refresh_token is malformed",
                    "type": "invalid_request_error", "code": "invalid_request"}}),
        ),
        _ => Reply::json(401, &json!({"error": "invalid_grant"})),
    }
}

fn unauthorized() -> Reply {
    Reply::json(401, &unauthorized_body())
}

fn unauthorized_body() -> Value {
    json!({"error": {"message": "Your authentication token has expired. Please try signing in again.",
           "type": "invalid_request_error", "code": "token_expired"}})
}

/// A refusal of a Responses request, as an HTTP reply or a WebSocket `error` event carries it.
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) body: Value,
    pub(crate) headers: Vec<(&'static str, &'static str)>,
}

/// The refusal the script's `mode` asks for, if any.
pub(crate) fn refusal(script: &Value) -> Option<Refusal> {
    let (status, body, headers) = match script["mode"].as_str().unwrap_or("ok") {
        "unauthorized" => (401, unauthorized_body(), Vec::new()),
        "usage_limit" => (
            429,
            json!({"error": {"type": "usage_limit_reached",
                   "message": "The usage limit has been reached", "plan_type": "pro",
                   "resets_in_seconds": 3600}}),
            Vec::new(),
        ),
        "rate_limit" => (
            429,
            json!({"error": {"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
                   "message": "Rate limit reached. Please try again in 1s."}}),
            vec![("retry-after", "1")],
        ),
        _ => return None,
    };
    Some(Refusal {
        status,
        body,
        headers,
    })
}

fn responses(request: &Request, script: &Value) -> Reply {
    if let Some(refused) = refusal(script) {
        return refused.headers.into_iter().fold(
            Reply::json(refused.status, &refused.body),
            |reply, (n, v)| reply.with(n, v),
        );
    }
    let (events, usage) = turn(&request.json(), script);
    Reply::sse(&events).with("x-standin-usage", &usage.to_string())
}

/// One turn's Responses events (name, JSON) for a request body, and the usage they report.
pub(crate) fn turn(body: &Value, script: &Value) -> (Vec<(&'static str, Value)>, Value) {
    if body["generate"] == false {
        return prewarm();
    }
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
        json!({"type": "message", "id": fresh_id("msg_"), "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "Done.", "annotations": []}]})
    } else {
        let js = format!(
            "await tools.exec_command({{cmd: {}}});",
            Value::String(command.to_owned())
        );
        json!({"type": "custom_tool_call", "id": fresh_id("ctc_"), "call_id": fresh_id("call_"),
               "name": "exec", "input": js, "status": "completed"})
    };
    let id = fresh_id("resp_");
    let events = vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": id}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": id,
            "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
                      "total_tokens": input + output}}}),
        ),
    ];
    let sent =
        json!({"input": input, "cached_input": cached, "output": output, "reasoning": reasoning});
    (events, sent)
}

/// codex's first frame on a new socket is a prewarm (`generate: false`, the instructions and
/// tools without a turn): a response with no output and no tokens.
fn prewarm() -> (Vec<(&'static str, Value)>, Value) {
    let id = fresh_id("resp_");
    let usage = json!({"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 0, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 0});
    let events = vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": id}}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed",
            "response": {"id": id, "output": [], "usage": usage}}),
        ),
    ];
    let sent = json!({"input": 0, "cached_input": 0, "output": 0, "reasoning": 0});
    (events, sent)
}
