//! Rate- and usage-limit detection from a cell's output (BEHAVIOR.md §4.6). CLIs often exit 0
//! when they hit a limit, so the exit code alone would score a limit as a model failure.
//!
//! Patterns are tried in a fixed order per flavor; the first match gives the evidence, and the
//! first matching pattern that captures a time gives the retry delay.
//!
//! Flavors with structured output print the whole transcript on stdout (tool output, the
//! model's own prose), and a task about rate limiting fills it with the very words the patterns
//! look for. Only what the CLI itself says is scanned: its error events and the lines that are
//! not JSON (stderr, plain messages), as the reference scanned its plain-text output.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::Value;

/// A detected limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimit {
    /// About 80 characters either side of the match, on one line.
    pub evidence: String,
    /// Seconds until a retry may work (0 when unknown).
    pub retry_after_s: u64,
    /// A short-term rate limit, or the plan's usage exhausted.
    pub kind: LimitKind,
}

/// Which limit was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// Too many requests just now (HTTP 429, "retry after N"): retrying soon may work.
    RateLimited,
    /// The subscription's usage window or quota is used up (5-hour, weekly, daily quota):
    /// nothing will work until it resets, so this run does not retry.
    UsageExhausted,
}

impl RateLimit {
    /// True when retrying within this run may work.
    pub fn is_retryable(&self) -> bool {
        self.kind == LimitKind::RateLimited
    }
}

/// Wording of an exhausted plan (as opposed to a momentary rate limit).
static EXHAUSTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)usage limit|5[- ]hour limit|weekly limit|hit your limit|quota (?:reached|exceeded|exhausted)|resource_exhausted|daily.*limit|plan limit|subscription.*(?:required|limit)",
    )
    .expect("a valid regex")
});

/// How a pattern's captures become a delay.
#[derive(Clone, Copy)]
enum Retry {
    None,
    Seconds,
    ClockTime,
    HoursOrMinutes,
    /// `1893456000`: a Unix time.
    Epoch,
    /// `2h39m52s`, `45m`: the whole duration in capture 1.
    Hms,
}

struct Pattern {
    regex: Regex,
    retry: Retry,
}

fn pattern(source: &str, retry: Retry) -> Pattern {
    Pattern {
        regex: Regex::new(&format!("(?i){source}")).expect("limit patterns are valid regexes"),
        retry,
    }
}

const ERR_SPACED: &str = r"\brate[-_ ]?limit(?:ed)?\s+(?:reached|exceeded|exhausted|hit)\b";
const ERR_JOINED: &str = r"\brate[_-]?limit[_-]?(?:reached|exceeded|exhausted|hit)\b";
const QUOTA: &str = r"(?m)^\s*(?:error:?\s*)?(?:resource\s+)?quota\s+(?:exceeded|exhausted)";
const RETRY_AFTER: &str = r"retry.after[: ]+(\d+)";

static CLAUDE: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(r"usage limit reached\|(\d{9,11})", Retry::Epoch),
        pattern(r"5[- ]hour limit reached", Retry::None),
        pattern(r"weekly limit reached", Retry::None),
        pattern(r"usage limit reached", Retry::None),
        pattern(r"hit your limit", Retry::None),
        pattern(r"\brate_limit_error\b", Retry::None),
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(
            r"\bresets?\s+(?:at\s+)?(\d{1,2}):(\d{2})\s*(am|pm)?",
            Retry::ClockTime,
        ),
        pattern(r"please try again later", Retry::None),
    ]
});

static CODEX: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(r"hit your usage limit", Retry::None),
        pattern(
            r"try again at (\d{1,2}):(\d{2})\s*(am|pm)?",
            Retry::ClockTime,
        ),
        pattern(r"usage limit", Retry::None),
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(QUOTA, Retry::None),
        pattern(r"plan limit", Retry::None),
        pattern(r"too many requests", Retry::None),
        pattern(
            r"\bresets? in (\d+)\s*(hours?|h|minutes?|m)\b",
            Retry::HoursOrMinutes,
        ),
    ]
});

static AGY: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(QUOTA, Retry::None),
        pattern(r"resource.*exhausted", Retry::None),
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(r"daily.*limit", Retry::None),
        pattern(r"quota reached", Retry::None),
        pattern(r"\b429 too many requests", Retry::None),
        pattern(RETRY_AFTER, Retry::Seconds),
        pattern(r"\bresets in\s+(\d+[hms](?:\d+[hms]){0,2})\b", Retry::Hms),
    ]
});

static GROK: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(r"subscription.*required", Retry::None),
        pattern(r"usage limit has been reached", Retry::None),
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(r"too many requests", Retry::None),
        pattern(QUOTA, Retry::None),
        pattern(RETRY_AFTER, Retry::Seconds),
        pattern(
            r"\bresets?\s+(?:at\s+)?(\d{1,2}):(\d{2})\s*(am|pm)?",
            Retry::ClockTime,
        ),
    ]
});

/// The dummy flavor prints a generic API limit message when scripted to (`rate-limit`).
static DUMMY: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(RETRY_AFTER, Retry::Seconds),
    ]
});

fn patterns_for(flavor: &str) -> Vec<&'static [Pattern]> {
    match flavor {
        "claude" => vec![CLAUDE.as_slice()],
        "codex" => vec![CODEX.as_slice()],
        "agy" => vec![AGY.as_slice()],
        "grok" => vec![GROK.as_slice()],
        // A composite is scanned with each member's patterns (the reference had none).
        "triad" => vec![CLAUDE.as_slice(), CODEX.as_slice(), GROK.as_slice()],
        "dummy" => vec![DUMMY.as_slice()],
        _ => Vec::new(),
    }
}

/// Scans a cell's output for a rate or usage limit.
pub fn detect_rate_limit(flavor: &str, output: &str) -> Option<RateLimit> {
    detect_at(flavor, output, &jiff::Zoned::now())
}

/// [`detect_rate_limit`] at a given time (reset times are relative to it).
fn detect_at(flavor: &str, output: &str, now: &jiff::Zoned) -> Option<RateLimit> {
    let patterns: Vec<&Pattern> = patterns_for(flavor).into_iter().flatten().collect();
    let text = cli_messages(flavor, output);
    let output = text.as_ref();
    let found = patterns.iter().find_map(|p| p.regex.find(output))?;
    let retry_after_s = patterns
        .iter()
        .filter(|p| !matches!(p.retry, Retry::None))
        .find_map(|p| {
            p.regex
                .captures(output)
                .and_then(|c| retry_seconds(p.retry, &c, now))
                .filter(|s| *s > 0)
        })
        .unwrap_or(0);
    let evidence = evidence(output, found.start(), found.end());
    let kind = if EXHAUSTED.is_match(&evidence) {
        LimitKind::UsageExhausted
    } else {
        LimitKind::RateLimited
    };
    Some(RateLimit {
        evidence,
        retry_after_s,
        kind,
    })
}

/// The lines of a cell's output in which its CLI speaks for itself (see the module comment).
/// Other flavors' output is scanned whole.
fn cli_messages<'a>(flavor: &str, output: &'a str) -> Cow<'a, str> {
    if !matches!(flavor, "claude" | "triad" | "codex" | "agy" | "grok") {
        return Cow::Borrowed(output);
    }
    let kept: Vec<&str> = output.lines().filter(|l| !is_transcript(l)).collect();
    Cow::Owned(kept.join("\n"))
}

/// True for a JSON event that is not an error: the model's text, a tool's output, a success
/// result, usage. Error events are claude's `is_error` results and `<synthetic>` (API error)
/// messages, codex `error`, `turn.failed` and error items, agy `status: ERROR`, grok `error`.
fn is_transcript(line: &str) -> bool {
    let line = line.trim();
    if !line.starts_with('{') {
        return false;
    }
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let kind = event
        .get("type")
        .or_else(|| event.get("event"))
        .and_then(Value::as_str);
    // agy may wrap its result: `{"event":"result","result":{...}}`.
    let body = event.get("result").filter(|r| r.is_object());
    let error = |v: &Value| {
        v.get("error").is_some_and(|e| !e.is_null() && e != "")
            || v.get("status").and_then(Value::as_str) == Some("ERROR")
            || ["is_error", "is_api_error_message", "isApiErrorMessage"]
                .iter()
                .any(|k| v.get(k).and_then(Value::as_bool) == Some(true))
    };
    let synthetic = event.pointer("/message/model").and_then(Value::as_str) == Some("<synthetic>");
    let error_item = event.pointer("/item/type").and_then(Value::as_str) == Some("error");
    !(matches!(kind, Some("error" | "turn.failed"))
        || error(&event)
        || body.is_some_and(error)
        || synthetic
        || error_item)
}

fn retry_seconds(retry: Retry, captures: &Captures<'_>, now: &jiff::Zoned) -> Option<u64> {
    let number = |i: usize| captures.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
    match retry {
        Retry::None => None,
        Retry::Seconds => number(1),
        Retry::Epoch => {
            let at = i64::try_from(number(1)?).ok()?;
            u64::try_from(at - now.timestamp().as_second()).ok()
        }
        Retry::Hms => {
            let mut seconds: u64 = 0;
            let mut digits: u64 = 0;
            for c in captures.get(1)?.as_str().chars() {
                if let Some(d) = c.to_digit(10) {
                    digits = digits.saturating_mul(10).saturating_add(u64::from(d));
                    continue;
                }
                let unit = match c.to_ascii_lowercase() {
                    'h' => 3600,
                    'm' => 60,
                    _ => 1,
                };
                seconds = std::mem::take(&mut digits)
                    .saturating_mul(unit)
                    .saturating_add(seconds);
            }
            Some(seconds)
        }
        Retry::HoursOrMinutes => {
            let unit = captures.get(2)?.as_str().to_ascii_lowercase();
            number(1)?.checked_mul(if unit.starts_with('h') { 3600 } else { 60 })
        }
        Retry::ClockTime => {
            let mut hour = number(1)?;
            let minute = number(2)?;
            match captures
                .get(3)
                .map(|m| m.as_str().to_ascii_lowercase())
                .as_deref()
            {
                Some("pm") if hour != 12 => hour += 12,
                Some("am") if hour == 12 => hour = 0,
                _ => {}
            }
            seconds_until(hour, minute, now)
        }
    }
}

/// Seconds from `now` until the next local wall-clock `hour:minute` (tomorrow if passed).
fn seconds_until(hour: u64, minute: u64, now: &jiff::Zoned) -> Option<u64> {
    let hour = i8::try_from(hour).ok().filter(|h| *h < 24)?;
    let minute = i8::try_from(minute).ok().filter(|m| *m < 60)?;
    let mut target = now
        .with()
        .hour(hour)
        .minute(minute)
        .second(0)
        .subsec_nanosecond(0)
        .build()
        .ok()?;
    if target <= *now {
        target = target
            .checked_add(jiff::SignedDuration::from_hours(24))
            .ok()?;
    }
    u64::try_from(now.duration_until(&target).as_secs()).ok()
}

fn evidence(text: &str, start: usize, end: usize) -> String {
    let from = floor_char_boundary(text, start.saturating_sub(80));
    let to = floor_char_boundary(text, (end + 80).min(text.len()));
    text[from..to].replace(['\n', '\r'], " ").trim().to_owned()
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
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
        assert!(
            detect_rate_limit("codex", "You've hit your usage limit. Upgrade to Pro").is_some()
        );
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
                include_str!("../../tests/fixtures/flavors/claude/rate_limit.txt")
            }
            ("claude", _) => include_str!("../../tests/fixtures/flavors/claude/usage_limit.txt"),
            ("codex", "rate_limit") => {
                include_str!("../../tests/fixtures/flavors/codex/rate_limit.txt")
            }
            ("codex", _) => include_str!("../../tests/fixtures/flavors/codex/usage_limit.txt"),
            ("agy", "rate_limit") => {
                include_str!("../../tests/fixtures/flavors/agy/rate_limit.txt")
            }
            ("agy", _) => include_str!("../../tests/fixtures/flavors/agy/usage_limit.txt"),
            ("grok", "rate_limit") => {
                include_str!("../../tests/fixtures/flavors/grok/rate_limit.txt")
            }
            _ => include_str!("../../tests/fixtures/flavors/grok/usage_limit.txt"),
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
            (
                "codex",
                concat!(
                    r#"{"type":"thread.started","thread_id":"fake-thread"}"#,
                    "\n",
                    r#"{"type":"turn.started"}"#,
                    "\n",
                    r#"{"type":"item.completed","item":{"type":"agent_message","text":"done"}}"#,
                    "\n",
                    r#"{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":200}}"#,
                ),
            ),
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
}
