//! Rate- and usage-limit detection from a cell's output (BEHAVIOR.md §4.6). CLIs often exit 0
//! when they hit a limit, so the exit code alone would score a limit as a model failure.
//!
//! Patterns are tried in a fixed order per flavor; the first match gives the evidence, and the
//! first matching pattern that captures a time gives the retry delay.

use std::sync::LazyLock;

use regex::{Captures, Regex};

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
    /// `2h39m52s`.
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
        pattern(r"resets in (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", Retry::Hms),
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
    let patterns: Vec<&Pattern> = patterns_for(flavor).into_iter().flatten().collect();
    let found = patterns.iter().find_map(|p| p.regex.find(output))?;
    let retry_after_s = patterns
        .iter()
        .filter(|p| !matches!(p.retry, Retry::None))
        .find_map(|p| {
            p.regex
                .captures(output)
                .and_then(|c| retry_seconds(p.retry, &c))
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

fn retry_seconds(retry: Retry, captures: &Captures<'_>) -> Option<u64> {
    let number = |i: usize| captures.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
    match retry {
        Retry::None => None,
        Retry::Seconds => number(1),
        Retry::Epoch => {
            let at = i64::try_from(number(1)?).ok()?;
            u64::try_from(at - jiff::Timestamp::now().as_second()).ok()
        }
        Retry::Hms => {
            let part = |i: usize| number(i).unwrap_or(0);
            Some(part(1) * 3600 + part(2) * 60 + part(3))
        }
        Retry::HoursOrMinutes => {
            let unit = captures.get(2)?.as_str().to_ascii_lowercase();
            Some(number(1)? * if unit.starts_with('h') { 3600 } else { 60 })
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
            seconds_until(hour, minute, &jiff::Zoned::now())
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

    fn fixture(cli: &str, kind: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/flavors/{cli}/{kind}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn each_vendors_limits_are_told_apart_from_its_fixtures() {
        for cli in ["claude", "codex", "agy", "grok"] {
            let rate = detect_rate_limit(cli, &fixture(cli, "rate_limit"))
                .unwrap_or_else(|| panic!("{cli}: rate limit not detected"));
            assert_eq!(
                rate.kind,
                LimitKind::RateLimited,
                "{cli}: {}",
                rate.evidence
            );
            assert!(rate.is_retryable());
            let usage = detect_rate_limit(cli, &fixture(cli, "usage_limit"))
                .unwrap_or_else(|| panic!("{cli}: usage limit not detected"));
            assert_eq!(
                usage.kind,
                LimitKind::UsageExhausted,
                "{cli}: {}",
                usage.evidence
            );
            assert!(!usage.is_retryable());
            assert!(usage.retry_after_s > 0, "{cli}: the reset time is read");
        }
        let agy = detect_rate_limit("agy", &fixture("agy", "usage_limit")).unwrap();
        assert_eq!(agy.retry_after_s, 2 * 3600 + 39 * 60 + 52);
        let grok = detect_rate_limit("grok", &fixture("grok", "rate_limit")).unwrap();
        assert_eq!(grok.retry_after_s, 60);
        assert!(
            detect_rate_limit("triad", &fixture("grok", "usage_limit")).is_some(),
            "a composite is scanned with its members' patterns"
        );
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
