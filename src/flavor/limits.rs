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
}

/// How a pattern's captures become a delay.
#[derive(Clone, Copy)]
enum Retry {
    None,
    Seconds,
    ClockTime,
    HoursOrMinutes,
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
        pattern(r"5[- ]hour limit reached", Retry::None),
        pattern(r"weekly limit reached", Retry::None),
        pattern(r"usage limit reached", Retry::None),
        pattern(r"hit your limit", Retry::None),
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
        pattern(RETRY_AFTER, Retry::Seconds),
    ]
});

static GROK: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(r"subscription.*required", Retry::None),
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(r"too many requests", Retry::None),
        pattern(QUOTA, Retry::None),
        pattern(RETRY_AFTER, Retry::Seconds),
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
    Some(RateLimit {
        evidence: evidence(output, found.start(), found.end()),
        retry_after_s,
    })
}

fn retry_seconds(retry: Retry, captures: &Captures<'_>) -> Option<u64> {
    let number = |i: usize| captures.get(i).and_then(|m| m.as_str().parse::<u64>().ok());
    match retry {
        Retry::None => None,
        Retry::Seconds => number(1),
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

    #[test]
    fn clock_times_roll_over_to_tomorrow() {
        let now: jiff::Zoned = "2026-11-30T23:00:00+00:00[UTC]".parse().unwrap();
        assert_eq!(seconds_until(23, 30, &now), Some(1800));
        // Already past today: the same time tomorrow, across a month end.
        assert_eq!(seconds_until(22, 0, &now), Some(23 * 3600));
        assert_eq!(seconds_until(25, 0, &now), None);
    }
}
