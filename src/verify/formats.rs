//! Reading what a runner reported: `JUnit` XML (`results/junit.xml`), TAP (`results/results.tap`),
//! else the last `N passed, M failed` line of its standard output. Every reader is given
//! bytes the host already collected through the cell engine (bounded, no links); it never
//! opens a file itself and never trusts a count over the cases it lists.

use serde::{Deserialize, Serialize};

/// Largest report file read.
pub const MAX_REPORT_BYTES: u64 = 16 << 20;
/// Longest failure message kept per test.
const MAX_MESSAGE_CHARS: usize = 500;

/// One test's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    /// It passed.
    Pass,
    /// Its assertion failed.
    Fail,
    /// It could not run to an assertion (an exception, a crash, a timeout).
    Error,
    /// It was skipped (counts in no rate).
    Skipped,
}

/// One test as the runner reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    /// Its name (`classname.name` for `JUnit`).
    pub name: String,
    /// Its outcome.
    pub outcome: TestOutcome,
    /// Seconds, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
    /// The failure or skip message, shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Counts per outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Passed.
    pub passed: u64,
    /// Failed.
    pub failed: u64,
    /// Errors.
    pub errors: u64,
    /// Skipped.
    pub skipped: u64,
}

impl Totals {
    /// Every test reported, skipped ones included.
    pub fn reported(&self) -> u64 {
        self.passed + self.failed + self.errors + self.skipped
    }

    /// The counts of a list of cases.
    pub fn of(cases: &[TestCase]) -> Self {
        let count = |o: TestOutcome| cases.iter().filter(|c| c.outcome == o).count() as u64;
        Self {
            passed: count(TestOutcome::Pass),
            failed: count(TestOutcome::Fail),
            errors: count(TestOutcome::Error),
            skipped: count(TestOutcome::Skipped),
        }
    }
}

/// Where the results came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `results/junit.xml`.
    Junit,
    /// `results/results.tap`.
    Tap,
    /// The last summary line of standard output.
    Summary,
}

fn short(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.chars().take(MAX_MESSAGE_CHARS).collect())
}

/// Every `<testcase>` of a `JUnit` XML document (`<testsuites>` or a lone `<testsuite>`, nested
/// suites too). A case with `<failure>` failed, with `<error>` errored, with `<skipped>` was
/// skipped; otherwise it passed.
pub fn junit(text: &str) -> Result<Vec<TestCase>, String> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..roxmltree::ParsingOptions::default()
    };
    let document = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| format!("not JUnit XML: {e}"))?;
    let root = document.root_element();
    if !matches!(root.tag_name().name(), "testsuites" | "testsuite") {
        return Err(format!(
            "not JUnit XML: the root element is `<{}>`, not `<testsuites>` or `<testsuite>`",
            root.tag_name().name()
        ));
    }
    let cases = root
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|case| {
            let child = |tag: &str| case.children().find(|c| c.has_tag_name(tag));
            let (outcome, detail) = if let Some(node) = child("failure") {
                (TestOutcome::Fail, Some(node))
            } else if let Some(node) = child("error") {
                (TestOutcome::Error, Some(node))
            } else if let Some(node) = child("skipped") {
                (TestOutcome::Skipped, Some(node))
            } else {
                (TestOutcome::Pass, None)
            };
            let message = detail.and_then(|n| {
                n.attribute("message")
                    .and_then(short)
                    .or_else(|| n.text().and_then(short))
            });
            let name = case.attribute("name").unwrap_or("?");
            let name = match case.attribute("classname").filter(|c| !c.is_empty()) {
                Some(class) => format!("{class}.{name}"),
                None => name.to_owned(),
            };
            TestCase {
                name,
                outcome,
                time_s: case
                    .attribute("time")
                    .and_then(|t| t.parse::<f64>().ok())
                    .filter(|t| t.is_finite() && *t >= 0.0),
                message,
            }
        })
        .collect();
    Ok(cases)
}

/// The test lines of a TAP stream: `ok N - name`, `not ok N - name`, with `# SKIP` (skipped)
/// and `# TODO` (a known failure, skipped) directives. A plan (`1..N`) promising more tests
/// than were reported adds the missing ones as errors: a runner that died mid-way did not pass
/// them.
pub fn tap(text: &str) -> Result<Vec<TestCase>, String> {
    let mut cases = Vec::new();
    let mut planned = None;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(plan) = line.strip_prefix("1..") {
            planned = plan
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok());
            continue;
        }
        let (passed, rest) = if let Some(rest) = line.strip_prefix("not ok") {
            (false, rest)
        } else if let Some(rest) = line.strip_prefix("ok") {
            (true, rest)
        } else {
            continue;
        };
        let (description, directive) = match rest.split_once(" # ") {
            Some((d, directive)) => (d, Some(directive.trim())),
            None => (rest, None),
        };
        let description = description
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start()
            .trim_start_matches("- ");
        let upper = directive.map(str::to_ascii_uppercase);
        let skipped = upper
            .as_deref()
            .is_some_and(|d| d.starts_with("SKIP") || d.starts_with("TODO"));
        let outcome = match (skipped, passed) {
            (true, _) => TestOutcome::Skipped,
            (false, true) => TestOutcome::Pass,
            (false, false) => TestOutcome::Fail,
        };
        cases.push(TestCase {
            name: if description.is_empty() {
                format!("test {}", cases.len() + 1)
            } else {
                description.replace("\\#", "#")
            },
            outcome,
            time_s: None,
            message: directive.and_then(short),
        });
    }
    if cases.is_empty() && planned.is_none() {
        return Err("not TAP: no plan and no test line".into());
    }
    let reported = cases.len() as u64;
    for missing in reported..planned.unwrap_or(0) {
        cases.push(TestCase {
            name: format!("test {} (planned, never reported)", missing + 1),
            outcome: TestOutcome::Error,
            time_s: None,
            message: None,
        });
    }
    Ok(cases)
}

/// The last line of `text` that reads like a runner's summary: `N passed`, optionally with
/// `N failed`, `N errors` (or `error`), `N skipped`, in any order (pytest's
/// `=== 3 passed, 1 failed in 0.2s ===` too). A line with neither `passed` nor `failed` is none.
pub fn summary_line(text: &str) -> Option<Totals> {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(r"(\d+) (passed|failed|errors?|skipped)\b")
            .expect("the summary pattern is a valid regex")
    });
    text.lines().rev().find_map(|line| {
        let mut totals = Totals::default();
        let mut seen = false;
        for capture in pattern.captures_iter(line) {
            let count: u64 = capture[1].parse().ok()?;
            match &capture[2] {
                "passed" => (totals.passed, seen) = (count, true),
                "failed" => (totals.failed, seen) = (count, true),
                "skipped" => totals.skipped = count,
                _ => totals.errors = count,
            }
        }
        seen.then_some(totals)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_cases_carry_their_outcome_class_and_message() {
        let xml = r#"<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="99" failures="0">
  <testcase classname="m" name="a" time="0.5"/>
  <testcase classname="m" name="b"><failure message="expected 3">trace</failure></testcase>
  <testcase name="c"><error>boom</error></testcase>
  <testcase name="d"><skipped/></testcase>
  <testsuite name="inner"><testcase name="e"/></testsuite>
</testsuite></testsuites>"#;
        let cases = junit(xml).unwrap();
        assert_eq!(
            Totals::of(&cases),
            Totals {
                passed: 2,
                failed: 1,
                errors: 1,
                skipped: 1
            },
            "counts come from the cases, never from the suite's attributes"
        );
        assert_eq!(cases[0].name, "m.a");
        assert_eq!(cases[0].time_s, Some(0.5));
        assert_eq!(cases[1].message.as_deref(), Some("expected 3"));
        assert_eq!(cases[2].message.as_deref(), Some("boom"));
    }

    #[test]
    fn junit_with_a_doctype_or_another_root_is_refused() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><testsuites/>"#;
        assert!(junit(bomb).is_err());
        assert!(
            junit("<html/>")
                .unwrap_err()
                .contains("root element is `<html>`")
        );
        assert!(junit("not xml").is_err());
    }

    #[test]
    fn tap_reads_skips_todos_and_counts_unreported_planned_tests_as_errors() {
        let text = "TAP version 13\n1..5\nok 1 - first\nnot ok 2 - second\n  # details\nok 3 - third # SKIP later\nnot ok 4 # TODO known\n";
        let cases = tap(text).unwrap();
        assert_eq!(
            Totals::of(&cases),
            Totals {
                passed: 1,
                failed: 1,
                errors: 1,
                skipped: 2
            }
        );
        assert_eq!(cases[0].name, "first");
        assert_eq!(cases[4].name, "test 5 (planned, never reported)");
        assert!(tap("hello\n").is_err());
    }

    #[test]
    fn the_last_summary_line_wins() {
        let out = "100 passed, 0 failed\nrunning...\n===== 3 passed, 1 failed, 2 errors, 1 skipped in 0.20s =====\nbye\n";
        assert_eq!(
            summary_line(out),
            Some(Totals {
                passed: 3,
                failed: 1,
                errors: 2,
                skipped: 1
            })
        );
        assert_eq!(
            summary_line("4 failed\n").map(|t| (t.passed, t.failed)),
            Some((0, 4))
        );
        assert_eq!(summary_line("2 skipped\nnothing\n"), None);
    }
}
