//! Tests of the usage parsers.

use super::*;

use crate::flavor::fixtures::success as fixture;

#[test]
fn claude_totals_come_from_the_result_line() {
    let usage = usage_from_output("claude", fixture("claude"), Some("opus")).unwrap();
    assert_eq!(usage["input_tokens"], 4127);
    assert_eq!(usage["output_tokens"], 1893);
    assert_eq!(usage["cache_creation_input_tokens"], 9876);
    assert_eq!(usage["cache_read_input_tokens"], 54321);
    assert_eq!(usage["total_tokens"], 4127 + 1893 + 9876 + 54321);
    assert_eq!(usage["cost_usd"], 0.412_345);
    assert_eq!(
        usage["cost_basis"], "list_price_estimate",
        "claude's figure is a list-price estimate, also for a subscription"
    );
    assert_eq!(usage["models"], json!(["claude-opus-4-5-20251101"]));
    assert!(usage.get("web_requests").is_none(), "web tools stayed off");
}

#[test]
fn claude_without_a_result_line_counts_each_message_once() {
    let stdout = concat!(
        r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":5}}}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,"output_tokens":9}}}"#,
        "\nnot json at all\n",
        r#"{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":1,"output_tokens":2}}}"#,
    );
    let usage = usage_from_output("triad", stdout, None).unwrap();
    assert_eq!(
        (
            usage["input_tokens"].as_u64(),
            usage["output_tokens"].as_u64()
        ),
        (Some(11), Some(11)),
        "a message's lines repeat its usage: counted once, with its final output count"
    );
    assert_eq!(usage["events"], 2);
    assert_eq!(usage["models"], json!(["claude-sonnet-4-5"]));
}

/// A limit hit before any call: claude's `<synthetic>` notice and a result of zeros.
#[test]
fn notices_and_zero_records_are_not_usage() {
    let stdout = concat!(
        r#"{"type":"system","subtype":"init","model":"claude-opus-4-5-20251101"}"#,
        "\n",
        r#"{"type":"assistant","error":"rate_limit","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1893456000"}],"usage":{"input_tokens":0,"output_tokens":0}}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":true,"total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}"#,
    );
    assert_eq!(usage_from_output("claude", stdout, None), None);
    let agy = r#"{"type":"result","status":"ERROR","error":"RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 2h39m52s.","usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}"#;
    assert_eq!(usage_from_output("agy", agy, Some("gemini-3-pro")), None);
    let codex = r#"{"type":"turn.completed","usage":{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0}}"#;
    assert_eq!(
        usage_from_output("codex", codex, Some("gpt-5.1-codex")),
        None
    );
}

#[test]
fn codex_sums_its_turns_and_counts_web_searches() {
    let usage = usage_from_output("codex", fixture("codex"), Some("gpt-5.1-codex")).unwrap();
    assert_eq!(usage["events"], 2);
    assert_eq!(usage["input_tokens"], 24_763 + 8_120);
    assert_eq!(usage["cached_input_tokens"], 24_448 + 7_936);
    assert_eq!(usage["output_tokens"], 122 + 1_045);
    assert_eq!(
        usage["total_tokens"],
        24_763 + 122 + 8_120 + 1_045,
        "cached input is part of input: counted once"
    );
    assert_eq!(
        usage["models"],
        json!(["gpt-5.1-codex"]),
        "codex reports none: the requested one"
    );
    assert_eq!(usage["web_requests"], 1);
    assert!(usage.get("cost_usd").is_none() && usage.get("cost_basis").is_none());
}

#[test]
fn agy_reads_either_result_shape() {
    let usage = usage_from_output("agy", fixture("agy"), None).unwrap();
    assert_eq!(usage["input_tokens"], 15_234);
    assert_eq!(usage["reasoning_output_tokens"], 812);
    assert_eq!(usage["total_tokens"], 18_101, "its own total wins");
    assert_eq!(usage["models"], json!(["gemini-3-pro"]));
    let wrapped = r#"{"event":"result","result":{"status":"SUCCESS","usage":{"input_tokens":7,"output_tokens":3}}}"#;
    let usage = usage_from_output("agy", wrapped, Some("gemini-3-flash")).unwrap();
    assert_eq!(
        (usage["total_tokens"].as_u64(), usage["models"][0].as_str()),
        (Some(10), Some("gemini-3-flash"))
    );
}

#[test]
fn grok_totals_come_from_the_end_event() {
    let usage = usage_from_output("grok", fixture("grok"), None).unwrap();
    assert_eq!(usage["input_tokens"], 9_210);
    assert_eq!(usage["output_tokens"], 1_402);
    assert_eq!(usage["cache_read_input_tokens"], 4_096);
    assert_eq!(usage["reasoning_output_tokens"], 377);
    assert_eq!(usage["cost_usd"], 0.031_77);
    assert_eq!(usage["models"], json!(["grok-build"]));
}

#[test]
fn no_usage_is_none() {
    assert_eq!(usage_from_output("claude", "", None), None);
    assert_eq!(
        usage_from_output("claude", "Error: Invalid API key · Please run /login", None),
        None
    );
    assert_eq!(usage_from_output("dummy", fixture("claude"), None), None);
    assert_eq!(usage_from_output("mycli", fixture("claude"), None), None);
}

/// The fake CLIs (crates/mc-cell/src/fake.rs) print these lines; tests in real cells rely on
/// the parser reading them.
#[test]
fn the_fakes_output_parses() {
    let claude = concat!(
        r#"{"type":"system","subtype":"init","model":"opus-q4","session_id":"fake-session"}"#,
        "\n",
        r#"{"type":"assistant","message":{"model":"opus-q4","usage":{"input_tokens":1200,"output_tokens":345,"cache_creation_input_tokens":100,"cache_read_input_tokens":50}}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"num_turns":3,"total_cost_usd":0.0123,"usage":{"input_tokens":1200,"output_tokens":345,"cache_creation_input_tokens":100,"cache_read_input_tokens":50}}"#,
    );
    let usage = usage_from_output("claude", claude, None).unwrap();
    assert_eq!(
        (&usage["total_tokens"], &usage["cost_usd"], &usage["models"]),
        (&json!(1695), &json!(0.0123), &json!(["opus-q4"])),
        "the result line's totals, not result + message"
    );
    let codex = crate::flavor::fixtures::FAKE_CODEX;
    assert_eq!(
        usage_from_output("codex", codex, Some("m")).unwrap()["total_tokens"],
        1100,
        "the 100 cached tokens are part of the 900 input tokens"
    );
    let agy = concat!(
        r#"{"type":"init","model":"gemini-3-pro"}"#,
        "\n",
        r#"{"type":"result","status":"SUCCESS","num_turns":2,"usage":{"input_tokens":700,"output_tokens":150,"thinking_tokens":40,"cache_read_tokens":10,"total_tokens":900}}"#,
    );
    assert_eq!(
        usage_from_output("agy", agy, None).unwrap()["total_tokens"],
        900
    );
    let grok = concat!(
        r#"{"type":"text","text":"done"}"#,
        "\n",
        r#"{"type":"end","model":"g","usage":{"input_tokens":500,"output_tokens":120,"cache_read_tokens":30,"reasoning_tokens":20},"total_cost_usd":0.004}"#,
    );
    assert_eq!(
        usage_from_output("grok", grok, None).unwrap()["total_tokens"],
        670
    );
}

/// codex 0.163.0's `turn.completed` (with `cache_write_input_tokens`) and the entrypoint's
/// report of the model from codex's session files.
#[test]
fn codex_reads_cache_writes_and_the_model_from_its_session_files() {
    let stdout = include_str!("../../../tests/fixtures/flavors/codex/success_0163.jsonl");
    let usage = usage_from_output("codex", stdout, None).unwrap();
    assert_eq!(usage["models"], json!(["gpt-5.1-codex"]));
    assert_eq!(usage["cache_creation_input_tokens"], 4096);
    assert_eq!(usage["cached_input_tokens"], 12_032);
    assert_eq!(
        usage["total_tokens"],
        18_234 + 911,
        "cache reads and writes are part of the input: counted once"
    );
    let requested = usage_from_output("codex", stdout, Some("gpt-5.1-codex-max")).unwrap();
    assert_eq!(
        requested["models"],
        json!(["gpt-5.1-codex"]),
        "the model codex used, not the one asked for"
    );
    // A transcript naming the line type is no report: only top-level lines count.
    let echoed = r#"{"type":"item.completed","item":{"type":"agent_message","text":"{\"type\":\"multicooker.codex_models\",\"models\":[\"spoof\"]}"}}"#;
    let usage = usage_from_output("codex", &format!("{echoed}\n{stdout}"), None).unwrap();
    assert_eq!(usage["models"], json!(["gpt-5.1-codex"]));
}
