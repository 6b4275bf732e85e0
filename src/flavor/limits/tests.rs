//! Tests of limit detection.

use super::*;

#[test]
fn dummy_limit_message_is_detected_with_its_retry_time() {
    let found = detect_rate_limit(
        "dummy",
        "working\nAPI Error: rate limit exceeded; please retry after 42 seconds\n",
    )
    .unwrap();
    assert_eq!(found.retry_after_s, 42);
    assert!(found.evidence.contains("rate limit exceeded"));
}

#[test]
fn vendor_messages_are_detected() {
    assert!(detect_rate_limit("claude", "Claude AI usage limit reached|1767225600").is_some());
    assert!(detect_rate_limit("codex", "You've hit your usage limit. Upgrade to Pro").is_some());
    let codex = detect_rate_limit("codex", "Too many requests; resets in 2 hours").unwrap();
    assert_eq!(codex.retry_after_s, 7200);
    assert!(
        detect_rate_limit(
            "agy",
            "RESOURCE_EXHAUSTED (code 429): Individual quota reached"
        )
        .is_some()
    );
    assert!(
        detect_rate_limit("triad", "codex: You've hit your usage limit").is_some(),
        "composite members are scanned"
    );
}

#[test]
fn prose_about_limits_does_not_match() {
    for text in [
        "the central limit theorem",
        r#"{"reason": "rate limit; retry suggested later"}"#,
        "we added rate-limit detection",
    ] {
        for flavor in ["claude", "codex", "agy", "grok", "dummy"] {
            assert_eq!(detect_rate_limit(flavor, text), None, "{flavor}: {text}");
        }
    }
    for flavor in ["codex", "agy", "grok"] {
        assert_eq!(
            detect_rate_limit(flavor, "+ rate limit, quota exceeded, try again in."),
            None,
            "{flavor}"
        );
    }
}

fn fixture(cli: &str, kind: &str) -> &'static str {
    match (cli, kind) {
        ("claude", "rate_limit") => {
            include_str!("../../../tests/fixtures/flavors/claude/rate_limit.txt")
        }
        ("claude", _) => include_str!("../../../tests/fixtures/flavors/claude/usage_limit.txt"),
        ("codex", "rate_limit") => {
            include_str!("../../../tests/fixtures/flavors/codex/rate_limit.txt")
        }
        ("codex", _) => include_str!("../../../tests/fixtures/flavors/codex/usage_limit.txt"),
        ("agy", "rate_limit") => {
            include_str!("../../../tests/fixtures/flavors/agy/rate_limit.txt")
        }
        ("agy", _) => include_str!("../../../tests/fixtures/flavors/agy/usage_limit.txt"),
        ("grok", "rate_limit") => {
            include_str!("../../../tests/fixtures/flavors/grok/rate_limit.txt")
        }
        _ => include_str!("../../../tests/fixtures/flavors/grok/usage_limit.txt"),
    }
}

/// 2026-11-30 13:00 UTC: reset times in the fixtures become exact delays.
fn fixed_now() -> jiff::Zoned {
    "2026-11-30T13:00:00+00:00[UTC]".parse().unwrap()
}

#[test]
fn each_vendors_limits_are_told_apart_from_its_fixtures() {
    let now = fixed_now();
    // (flavor, fixture, kind, retry delay): the epoch, clock times and `2h39m52s` are read.
    let cases = [
        ("claude", "rate_limit", LimitKind::RateLimited, 0),
        (
            "claude",
            "usage_limit",
            LimitKind::UsageExhausted,
            1_893_456_000 - 1_796_043_600,
        ),
        ("codex", "rate_limit", LimitKind::RateLimited, 0),
        (
            "codex",
            "usage_limit",
            LimitKind::UsageExhausted,
            2 * 3600 + 28 * 60,
        ),
        ("agy", "rate_limit", LimitKind::RateLimited, 30),
        (
            "agy",
            "usage_limit",
            LimitKind::UsageExhausted,
            2 * 3600 + 39 * 60 + 52,
        ),
        ("grok", "rate_limit", LimitKind::RateLimited, 60),
        ("grok", "usage_limit", LimitKind::UsageExhausted, 9 * 3600),
    ];
    for (cli, name, kind, retry) in cases {
        let found = detect_at(cli, fixture(cli, name), &now)
            .unwrap_or_else(|| panic!("{cli} {name}: not detected"));
        assert_eq!(
            (found.kind, found.retry_after_s),
            (kind, retry),
            "{cli} {name}: {}",
            found.evidence
        );
        assert_eq!(found.is_retryable(), kind == LimitKind::RateLimited);
    }
    for (cli, name) in [
        ("claude", "usage_limit"),
        ("codex", "usage_limit"),
        ("grok", "usage_limit"),
    ] {
        assert!(
            detect_at("triad", fixture(cli, name), &now).is_some(),
            "a composite is scanned with its members' patterns: {cli}"
        );
    }
}

#[test]
fn a_reset_time_in_the_past_gives_no_delay() {
    let found = detect_at(
        "claude",
        "Claude AI usage limit reached|1767225600",
        &fixed_now(),
    );
    assert_eq!(
        found.map(|f| (f.kind, f.retry_after_s)),
        Some((LimitKind::UsageExhausted, 0))
    );
}

/// The exact lines `print_limit` and `print_success` of the fake CLIs print
/// (crates/mc-cell/src/fake.rs).
#[test]
fn the_fakes_limits_are_classified_and_their_successes_are_not_limits() {
    let now = fixed_now();
    let limits = [
        (
            "claude",
            "Claude AI usage limit reached|1893456000",
            LimitKind::UsageExhausted,
            97_412_400,
        ),
        (
            "codex",
            "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 3:28 PM.",
            LimitKind::UsageExhausted,
            8880,
        ),
        (
            "agy",
            r#"{"type":"result","status":"ERROR","error":"RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 2h39m52s."}"#,
            LimitKind::UsageExhausted,
            9592,
        ),
        (
            "grok",
            "Error: rate limit exceeded (429 Too Many Requests), retry after 60",
            LimitKind::RateLimited,
            60,
        ),
    ];
    for (cli, line, kind, retry) in limits {
        let found = detect_at(cli, &format!("{line}\n"), &now).unwrap();
        assert_eq!((found.kind, found.retry_after_s), (kind, retry), "{cli}");
    }
    let successes = [
        (
            "claude",
            concat!(
                r#"{"type":"system","subtype":"init","model":"opus","session_id":"fake-session"}"#,
                "\n",
                r#"{"type":"assistant","message":{"model":"opus","usage":{"input_tokens":1200,"output_tokens":345,"cache_creation_input_tokens":100,"cache_read_input_tokens":50}}}"#,
                "\n",
                r#"{"type":"result","subtype":"success","is_error":false,"num_turns":3,"total_cost_usd":0.0123,"usage":{"input_tokens":1200,"output_tokens":345,"cache_creation_input_tokens":100,"cache_read_input_tokens":50}}"#,
            ),
        ),
        ("codex", crate::flavor::fixtures::FAKE_CODEX),
        (
            "agy",
            concat!(
                r#"{"type":"init","model":"gemini-3-pro"}"#,
                "\n",
                r#"{"type":"result","status":"SUCCESS","num_turns":2,"usage":{"input_tokens":700,"output_tokens":150,"thinking_tokens":40,"cache_read_tokens":10,"total_tokens":900}}"#,
            ),
        ),
        (
            "grok",
            concat!(
                r#"{"type":"text","text":"done"}"#,
                "\n",
                r#"{"type":"end","model":"grok-build","usage":{"input_tokens":500,"output_tokens":120,"cache_read_tokens":30,"reasoning_tokens":20},"total_cost_usd":0.004}"#,
            ),
        ),
    ];
    for (cli, stdout) in successes {
        assert_eq!(detect_at(cli, stdout, &now), None, "{cli}");
    }
}

/// A task about rate limiting fills the transcript with limit wording; only the CLI's own
/// error events and plain lines count.
#[test]
fn limit_wording_in_a_transcript_is_not_a_limit() {
    let now = fixed_now();
    let transcripts = [
        (
            "claude",
            concat!(
                r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"test_429 ... ok: rate limit exceeded, please try again later; usage limit reached"}]}}"#,
                "\n",
                r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-5","content":[{"type":"text","text":"Weekly limit reached is now handled; resets at 5:00 pm"}]}}"#,
                "\n",
                r#"{"type":"result","subtype":"success","is_error":false,"result":"The API answers 429 Too Many Requests when the rate limit is hit: rate limit exceeded."}"#,
            ),
        ),
        (
            "codex",
            concat!(
                r#"{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"HTTP 429 Too Many Requests\nquota exceeded\nYou've hit your usage limit","exit_code":0}}"#,
                "\n",
                r#"{"type":"item.completed","item":{"type":"agent_message","text":"The limiter says: usage limit, try again at 3:28 PM."}}"#,
            ),
        ),
        (
            "agy",
            concat!(
                r#"{"type":"step_update","delta":"RESOURCE_EXHAUSTED: quota reached; the window resets in 1h"}"#,
                "\n",
                r#"{"type":"result","status":"SUCCESS","error":null,"response":"daily limit of 10 requests, retry after 30"}"#,
            ),
        ),
        (
            "grok",
            concat!(
                r#"{"type":"tool_call_update","output":"rate limit exceeded; too many requests; subscription required"}"#,
                "\n",
                r#"{"type":"text","text":"retry after 60 seconds"}"#,
            ),
        ),
    ];
    for (cli, stdout) in transcripts {
        assert_eq!(detect_at(cli, stdout, &now), None, "{cli}");
    }
    assert_eq!(
        detect_at("agy", "the counter resets in each window\n", &now),
        None
    );
    // The CLI's own error events in the same stream are still read.
    let synthetic = r#"{"type":"assistant","error":"rate_limit","message":{"model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1893456000"}]}}"#;
    let found = detect_at("claude", synthetic, &now).unwrap();
    assert_eq!(found.kind, LimitKind::UsageExhausted);
    let wrapped = r#"{"event":"result","result":{"status":"ERROR","error":"RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 45m."}}"#;
    assert_eq!(
        detect_at("agy", wrapped, &now).map(|f| f.retry_after_s),
        Some(2700)
    );
    let failed = r#"{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}"#;
    assert!(detect_at("triad", failed, &now).is_some_and(|f| f.is_retryable()));
}

#[test]
fn clock_times_roll_over_to_tomorrow() {
    let now: jiff::Zoned = "2026-11-30T23:00:00+00:00[UTC]".parse().unwrap();
    assert_eq!(seconds_until(23, 30, &now), Some(1800));
    // Already past today: the same time tomorrow, across a month end.
    assert_eq!(seconds_until(22, 0, &now), Some(23 * 3600));
    assert_eq!(seconds_until(25, 0, &now), None);
}

/// claude 2.1.330's used-up 5-hour window (docs/REAL-CLIS.md): its `<synthetic>` notice and the
/// API's `rate_limit_error` in the stream, then the `result` that names the limit.
const CLAUDE_FIVE_HOUR: &str = concat!(
    r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5-20250929"}"#,
    "\n",
    r#"{"type":"assistant","error":"rate_limit","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"rejected\"}}"}]}}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":true,"api_error":"usage_limit_reached","rateLimitType":"five_hour","result":"You've hit your 5-hour limit · resets 6:20pm (UTC)","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}"#,
    "\n",
);

#[test]
fn claudes_used_up_window_is_read_from_its_fields_with_the_reset_as_delay() {
    let found = detect_at("claude", CLAUDE_FIVE_HOUR, &fixed_now()).unwrap();
    assert_eq!(
        (found.kind, found.retry_after_s),
        (LimitKind::UsageExhausted, 5 * 3600 + 20 * 60),
        "{}",
        found.evidence
    );
    assert!(!found.is_retryable());
    assert!(
        found.evidence.contains("rateLimitType: five_hour")
            && found.evidence.contains("5-hour limit"),
        "{}",
        found.evidence
    );
    // The zone it names counts, not the machine's: the same instant seen from UTC+01:00.
    let elsewhere = fixed_now().with_time_zone(jiff::tz::TimeZone::fixed(jiff::tz::offset(1)));
    assert_eq!(
        detect_at("claude", CLAUDE_FIVE_HOUR, &elsewhere).map(|f| f.retry_after_s),
        Some(5 * 3600 + 20 * 60)
    );
    assert_eq!(
        detect_at("triad", CLAUDE_FIVE_HOUR, &fixed_now()).map(|f| f.kind),
        Some(LimitKind::UsageExhausted),
        "triad's lead is claude"
    );
}

#[test]
fn a_rejected_rate_limit_event_gives_the_weekly_reset() {
    // resetsAt in milliseconds: 2026-12-02 13:00 UTC, two days on.
    let stream = concat!(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796216400000,"rateLimitType":"seven_day"}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":true,"result":"You've hit your weekly limit"}"#,
    );
    let found = detect_at("claude", stream, &fixed_now()).unwrap();
    assert_eq!(
        (found.kind, found.retry_after_s),
        (LimitKind::UsageExhausted, 2 * 86_400)
    );
    assert!(found.evidence.contains("seven_day"), "{}", found.evidence);
    // A run that went on past a rejected window and succeeded hit no limit.
    let past = stream.replace(
        r#""is_error":true,"result":"You've hit your weekly limit""#,
        r#""is_error":false,"result":"done""#,
    );
    assert_ne!(past, stream);
    assert_eq!(detect_at("claude", &past, &fixed_now()), None);
    // An allowed one is only news, and a warning is no limit.
    let allowed = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796216400,"rateLimitType":"five_hour"}}"#;
    assert_eq!(detect_at("claude", allowed, &fixed_now()), None);
}

#[test]
fn a_rejected_event_naming_no_window_is_a_momentary_rate_limit() {
    // What the real claude 2.1.330 prints for a per-minute 429 (x-should-retry: false): a
    // rejected event without a window, then its API error text.
    let stream = concat!(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","isUsingOverage":false},"uuid":"u","session_id":"s"}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}"}"#,
    );
    let found = detect_at("claude", stream, &fixed_now()).unwrap();
    assert_eq!(found.kind, LimitKind::RateLimited, "{}", found.evidence);
}

/// Claude Code 2.1.294 (the images' pin, issue 25) words a per-minute 429 differently from
/// 2.1.330: its text says "not your usage limit", and only `api_error_status: 429` and the
/// message's `error: rate_limit` say what it is. A momentary, retryable limit.
#[test]
fn claude_2_1_294s_per_minute_429_is_a_momentary_rate_limit() {
    let stream = concat!(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","isUsingOverage":false},"uuid":"u","session_id":"s"}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"f99","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: Server is temporarily limiting requests (not your usage limit) · Number of request tokens has exceeded your per-minute rate limit"}]},"error":"rate_limit","is_api_error_message":true}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"num_turns":1,"result":"API Error: Server is temporarily limiting requests (not your usage limit) · Number of request tokens has exceeded your per-minute rate limit","terminal_reason":"api_error","total_cost_usd":0}"#,
    );
    let found = detect_at("claude", stream, &fixed_now()).unwrap();
    assert_eq!(found.kind, LimitKind::RateLimited, "{}", found.evidence);
    assert!(found.is_retryable());
    assert!(
        found
            .evidence
            .starts_with("API Error: Server is temporarily limiting requests")
            && found.evidence.ends_with("[api_error_status: 429]"),
        "{}",
        found.evidence
    );
    // A 429 that is a used-up window stays a used-up plan.
    let window = stream.replace(
        r#""api_error_status":429,"#,
        r#""api_error_status":429,"api_error":"usage_limit_reached","rateLimitType":"five_hour","#,
    );
    assert_eq!(
        detect_at("claude", &window, &fixed_now()).map(|f| f.kind),
        Some(LimitKind::UsageExhausted)
    );
}

#[test]
fn claudes_limit_text_alone_is_a_used_up_plan() {
    let found = detect_at(
        "claude",
        "You've hit your 5-hour limit · resets 6:20pm (UTC)\n",
        &fixed_now(),
    )
    .unwrap();
    assert_eq!(
        (found.kind, found.retry_after_s),
        (LimitKind::UsageExhausted, 19_200)
    );
    let hour_only = detect_at(
        "claude",
        "You've hit your limit · resets 5pm (UTC)\n",
        &fixed_now(),
    );
    assert_eq!(
        hour_only.map(|f| (f.kind, f.retry_after_s)),
        Some((LimitKind::UsageExhausted, 4 * 3600))
    );
    // A per-minute rate limit in the same envelope stays retryable.
    let rate = detect_at("claude", fixture("claude", "rate_limit"), &fixed_now()).unwrap();
    assert!(rate.is_retryable());
}

#[test]
fn codexs_usage_limit_with_a_curly_apostrophe_and_a_date_is_a_used_up_plan() {
    let stream = concat!(
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"error","message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 4:20 PM."}"#,
        "\n",
        r#"{"type":"turn.failed","error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 4:20 PM."}}"#,
    );
    let found = detect_at("codex", stream, &fixed_now()).unwrap();
    assert_eq!(
        (found.kind, found.retry_after_s),
        (LimitKind::UsageExhausted, 3 * 3600 + 20 * 60)
    );
    let later = detect_at(
        "codex",
        "You’ve hit your usage limit. Try again at Dec 2nd, 2026 1:00 PM.\n",
        &fixed_now(),
    )
    .unwrap();
    assert_eq!(
        (later.kind, later.retry_after_s),
        (LimitKind::UsageExhausted, 2 * 86_400)
    );
    let credits = detect_at("codex", "Your workspace is out of credits.\n", &fixed_now());
    assert_eq!(credits.map(|f| f.kind), Some(LimitKind::UsageExhausted));
}

/// Issue 25: limit evidence was about 80 characters either side of the match, a cut JSON
/// fragment. It is the CLI's own sentence: the JSON string that holds the match, an API error
/// embedded in it shown as its message and type.
#[test]
fn limit_evidence_is_the_clis_sentence_not_a_cut_json_fragment() {
    let now = fixed_now();
    let expected = [
        (
            "claude",
            "rate_limit",
            "API Error: 429 Number of request tokens has exceeded your per-minute rate limit (rate_limit_error)",
        ),
        (
            "codex",
            "rate_limit",
            "exceeded retry limit, last status: 429 Too Many Requests",
        ),
        (
            "codex",
            "usage_limit",
            "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 3:28 PM.",
        ),
        (
            "grok",
            "rate_limit",
            "Error: rate limit exceeded (429 Too Many Requests), retry after 60",
        ),
        (
            "agy",
            "usage_limit",
            "RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 2h39m52s.",
        ),
    ];
    for (cli, kind, sentence) in expected {
        let found = detect_at(cli, fixture(cli, kind), &now).unwrap();
        assert_eq!(found.evidence, sentence, "{cli} {kind}");
        assert!(
            !found.evidence.contains("\":"),
            "no JSON syntax: {}",
            found.evidence
        );
    }
}
