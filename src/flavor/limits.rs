//! Rate- and usage-limit detection from a cell's output (docs/BEHAVIOR.md §4.6). CLIs often exit 0
//! when they hit a limit, so the exit code alone would score a limit as a model failure.
//!
//! Patterns are tried in a fixed order per flavor; the first match gives the evidence, and the
//! first matching pattern that captures a time gives the retry delay.
//!
//! Flavors with structured output print the whole transcript on stdout (tool output, the
//! model's own prose), and a task about rate limiting fills it with the very words the patterns
//! look for. Only what the CLI itself says is scanned: its error events and the lines that are
//! not JSON (stderr, plain messages), as the reference scanned its plain-text output.
//!
//! claude also says which limit it hit in its own fields (a `result` with `api_error` and
//! `rateLimitType`, a rejected `rate_limit_event`): those are read first ([`structured`]).
//!
//! Clock times without a zone are the cell's: cells run without `TZ`, so in UTC.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::Value;

mod structured;

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
        r"(?i)usage limit|5[- ]hour limit|weekly limit|hit your (?:[\w-]+ )?limit|out of credits|spend cap|quota (?:reached|exceeded|exhausted)|resource_exhausted|daily.*limit|plan limit|subscription.*(?:required|limit)",
    )
    .expect("a valid regex")
});

/// How a pattern's captures become a delay.
#[derive(Clone, Copy)]
enum Retry {
    None,
    Seconds,
    /// `6:20pm`, `6pm (UTC)`, `4:20 PM`: hour, minute, am/pm, zone in captures 1-4.
    ClockTime,
    /// `Nov 27th, 2026 4:20 PM`: month, day, year, hour, minute, am/pm in captures 1-6.
    DateTime,
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
/// claude's reset time: `resets 6:20pm (UTC)`, `resets 5pm (Europe/Berlin)`, `reset at 13:00`.
const CLAUDE_RESET: &str =
    r"\bresets?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([A-Za-z0-9_/+-]+)\))?";

static CLAUDE: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(r"usage limit reached\|(\d{9,11})", Retry::Epoch),
        pattern(r"5[- ]hour limit reached", Retry::None),
        pattern(r"weekly limit reached", Retry::None),
        pattern(r"usage limit reached", Retry::None),
        // `You've hit your limit`, `You've hit your 5-hour limit · resets 6:20pm (UTC)`.
        pattern(r"hit your (?:[\w-]+ )?limit", Retry::None),
        pattern(r"\brate_limit_error\b", Retry::None),
        pattern(ERR_SPACED, Retry::None),
        pattern(ERR_JOINED, Retry::None),
        pattern(CLAUDE_RESET, Retry::ClockTime),
        pattern(r"please try again later", Retry::None),
    ]
});

static CODEX: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        // `You’ve hit your usage limit` (curly or straight apostrophe, not matched).
        pattern(r"hit your usage limit", Retry::None),
        // A reset on another day: `try again at Nov 27th, 2026 4:20 PM`.
        pattern(
            r"try again at ([a-z]{3}) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? (\d{1,2}):(\d{2})\s*(am|pm)?",
            Retry::DateTime,
        ),
        pattern(
            r"try again at (\d{1,2}):(\d{2})\s*(am|pm)?",
            Retry::ClockTime,
        ),
        pattern(r"usage limit", Retry::None),
        pattern(r"out of credits|\bspend cap\b", Retry::None),
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
    detect_at(
        flavor,
        output,
        &jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC),
    )
}

/// [`detect_rate_limit`] at a given time (reset times are relative to it, in its zone).
fn detect_at(flavor: &str, output: &str, now: &jiff::Zoned) -> Option<RateLimit> {
    if matches!(flavor, "claude" | "triad")
        && let Some(found) = structured::claude(output, now)
    {
        return Some(found);
    }
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
pub(super) fn cli_messages<'a>(flavor: &str, output: &'a str) -> Cow<'a, str> {
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
            // `resets 5 times` is no clock time: a minute or an am/pm is needed.
            let meridiem = captures.get(3).map(|m| m.as_str());
            if captures.get(2).is_none() && meridiem.is_none() {
                return None;
            }
            let hour = hour_of_day(number(1)?, meridiem)?;
            let now = match captures.get(4) {
                Some(zone) => now.with_time_zone(time_zone(zone.as_str())?),
                None => now.clone(),
            };
            seconds_until(hour, number(2).unwrap_or(0), &now)
        }
        Retry::DateTime => {
            let month = month_number(captures.get(1)?.as_str())?;
            let (day, year) = (number(2)?, number(3)?);
            let hour = hour_of_day(number(4)?, captures.get(6).map(|m| m.as_str()))?;
            let at = jiff::civil::date(i16::try_from(year).ok()?, month, i8::try_from(day).ok()?)
                .at(
                    i8::try_from(hour).ok()?,
                    i8::try_from(number(5)?).ok()?,
                    0,
                    0,
                )
                .to_zoned(now.time_zone().clone())
                .ok()?;
            u64::try_from(now.duration_until(&at).as_secs()).ok()
        }
    }
}

/// A 12-hour clock's hour on the 24-hour clock.
fn hour_of_day(hour: u64, meridiem: Option<&str>) -> Option<u64> {
    match meridiem.map(str::to_ascii_lowercase).as_deref() {
        Some(_) if hour == 0 || hour > 12 => None,
        Some("pm") if hour != 12 => Some(hour + 12),
        Some("am") if hour == 12 => Some(0),
        _ => Some(hour),
    }
}

/// A zone a CLI names (`UTC`, `Europe/Berlin`); `None` when this machine does not know it.
fn time_zone(name: &str) -> Option<jiff::tz::TimeZone> {
    if ["utc", "gmt", "z"].contains(&name.to_ascii_lowercase().as_str()) {
        return Some(jiff::tz::TimeZone::UTC);
    }
    jiff::tz::TimeZone::get(name).ok()
}

fn month_number(name: &str) -> Option<i8> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let name = name.to_ascii_lowercase();
    let index = MONTHS.iter().position(|m| *m == name)?;
    i8::try_from(index + 1).ok()
}

/// Seconds until claude's `resets …` time in `text`, in the zone it names.
fn claude_reset_in(text: &str, now: &jiff::Zoned) -> Option<u64> {
    static RESET: LazyLock<Pattern> = LazyLock::new(|| pattern(CLAUDE_RESET, Retry::ClockTime));
    RESET
        .regex
        .captures_iter(text)
        .find_map(|c| retry_seconds(Retry::ClockTime, &c, now))
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

/// Longest evidence kept, in characters.
const EVIDENCE_CHARS: usize = 300;

/// What the CLI said around a match, as a readable sentence: the JSON string that holds it (a
/// JSON object inside it, like claude's `API Error: 429 {…}`, shown as its message and type),
/// else its line; whitespace folded, at most [`EVIDENCE_CHARS`] characters cut between words
/// with `…`. Never a cut fragment of JSON syntax.
pub(super) fn evidence(text: &str, start: usize, end: usize) -> String {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    let line = &text[line_start..line_end];
    let matched = &text[start..end];
    let sentence = json_sentence(line, matched).unwrap_or_else(|| line.to_owned());
    let sentence = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    let matched = matched.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = sentence
        .to_lowercase()
        .find(&matched.to_lowercase())
        .filter(|at| sentence.is_char_boundary(*at))
        .unwrap_or(0);
    shorten(&sentence, at, matched.len())
}

/// The string of a JSON line that holds `matched`, with an embedded JSON object made readable.
fn json_sentence(line: &str, matched: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    let needle = matched.to_lowercase();
    let found = holding(&value, &needle)?;
    Some(readable(found))
}

/// The first string in `value` that contains `needle` (lower-cased).
fn holding<'a>(value: &'a Value, needle: &str) -> Option<&'a str> {
    match value {
        Value::String(s) if s.to_lowercase().contains(needle) => Some(s),
        Value::Array(items) => items.iter().find_map(|v| holding(v, needle)),
        Value::Object(map) => map.values().find_map(|v| holding(v, needle)),
        _ => None,
    }
}

/// `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"…"}}` →
/// `API Error: 429 … (rate_limit_error)`: a JSON object inside a message, as its own message.
fn readable(text: &str) -> String {
    for (at, _) in text.match_indices('{') {
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        let Some(Ok(embedded)) = values.next() else {
            continue;
        };
        let rest = &text[at + values.byte_offset()..];
        let error = embedded
            .get("error")
            .filter(|e| e.is_object())
            .unwrap_or(&embedded);
        let Some(message) = error.get("message").and_then(Value::as_str) else {
            continue;
        };
        let kind = error
            .get("type")
            .or_else(|| error.get("code"))
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty() && *k != "error")
            .map(|k| format!(" ({k})"))
            .unwrap_or_default();
        return format!("{}{message}{kind}{rest}", &text[..at]);
    }
    text.to_owned()
}

/// `text` in at most about [`EVIDENCE_CHARS`] characters around the match at `at..at + len`,
/// cut between words.
fn shorten(text: &str, at: usize, len: usize) -> String {
    if text.chars().count() <= EVIDENCE_CHARS {
        return text.to_owned();
    }
    let end = (at + len).min(text.len());
    let before = text[..at].chars().count();
    let mut from = text
        .char_indices()
        .nth(before.saturating_sub(EVIDENCE_CHARS / 3))
        .map_or(0, |(i, _)| i);
    if from > 0
        && let Some(space) = text[from..at].find(' ')
    {
        from += space + 1;
    }
    let budget = EVIDENCE_CHARS
        .saturating_sub(text[from..at].chars().count())
        .max(text[at..end].chars().count());
    let mut to = text[at..]
        .char_indices()
        .nth(budget)
        .map_or(text.len(), |(i, _)| at + i);
    if to < text.len()
        && let Some(space) = text[end..to].rfind(' ')
    {
        to = end + space;
    }
    format!(
        "{}{}{}",
        if from > 0 { "… " } else { "" },
        text[from..to].trim(),
        if to < text.len() { " …" } else { "" }
    )
}

#[cfg(test)]
mod tests;
