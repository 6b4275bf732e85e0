//! Reading what a runner reported: `JUnit` XML (`results/junit.xml`), TAP (`results/results.tap`),
//! else the `N passed, M failed` line its standard output ends with. Every reader is given
//! bytes the host already collected through the cell engine (bounded, no links); it never
//! opens a file itself and never trusts a count over the cases it lists.
//!
//! Memory is bounded by the report's size and the expected count, never by a count the report
//! claims: a reader keeps at most `limit` cases and only counts the rest, a TAP plan is a
//! number, and a `JUnit` file listing more `<testcase>` tags than `limit` is refused before it
//! is parsed. [`bound`] says whether what was read exceeds or contradicts the expected count:
//! the caller flags that as tampering.

/// Largest report file read.
pub const MAX_REPORT_BYTES: u64 = 16 << 20;
/// Longest failure message kept per test.
const MAX_MESSAGE_CHARS: usize = 500;

pub use crate::state::verification::{Source, TestCase, TestOutcome, Totals};

fn short(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.chars().take(MAX_MESSAGE_CHARS).collect())
}

/// A report as read: at most `limit` of its cases, how many it listed, and the count it
/// declared (a TAP plan, a `JUnit` root's `tests` attribute).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The cases, in order, never more than the reader's `limit`.
    pub cases: Vec<TestCase>,
    /// How many cases the report listed (may exceed `cases.len()`).
    pub listed: u64,
    /// The count the report declared for itself, if it did.
    pub declared: Option<u64>,
    /// The declaration is a TAP plan (which must match exactly; a `JUnit` count may fall short
    /// when a runner dies mid-way).
    pub plan: bool,
}

/// Why a report cannot be believed against `expected` tests: it lists more, declares more, or
/// (TAP) plans a different number. `None` when it is consistent.
pub fn bound(parsed: &Parsed, expected: u64, file: &str) -> Option<String> {
    if parsed.listed > expected {
        return Some(format!(
            "{file} lists {} tests, but only {expected} exist",
            parsed.listed
        ));
    }
    match parsed.declared {
        Some(n) if parsed.plan && n != expected => Some(format!(
            "{file} plans {n} tests (`1..{n}`), but {expected} exist"
        )),
        Some(n) if n > expected => Some(format!(
            "{file} declares {n} tests, but only {expected} exist"
        )),
        _ => None,
    }
}

/// How many `<testcase` tags `bytes` holds (an upper bound on the cases, counted without
/// parsing).
fn testcase_tags(text: &str) -> u64 {
    let tag = "<testcase";
    text.match_indices(tag)
        .filter(|(at, _)| {
            text.as_bytes()
                .get(at + tag.len())
                .is_none_or(|b| b.is_ascii_whitespace() || *b == b'/' || *b == b'>')
        })
        .count() as u64
}

/// Every `<testcase>` of a `JUnit` XML document (`<testsuites>` or a lone `<testsuite>`, nested
/// suites too), at most `limit` of them: a document with more tags is refused unparsed. A case
/// with `<failure>` failed, with `<error>` errored, with `<skipped>` was skipped; otherwise it
/// passed.
pub fn junit(text: &str, limit: u64) -> Result<Parsed, String> {
    let tags = testcase_tags(text);
    if tags > limit {
        return Ok(Parsed {
            cases: Vec::new(),
            listed: tags,
            declared: None,
            plan: false,
        });
    }
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
    let declared = root
        .attribute("tests")
        .and_then(|n| n.trim().parse::<u64>().ok());
    let cases: Vec<TestCase> = root
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
    Ok(Parsed {
        listed: cases.len() as u64,
        cases,
        declared,
        plan: false,
    })
}

/// The test lines of a TAP stream: `ok N - name`, `not ok N - name`, with `# SKIP` (skipped)
/// and `# TODO` (a known failure, skipped) directives, at most `limit` of them kept (the rest
/// only counted), and its plan (`1..N`) as a number: tests it promised and never reported are
/// the caller's to count as errors, never allocated here. A second plan is refused.
pub fn tap(text: &str, limit: u64) -> Result<Parsed, String> {
    let mut parsed = Parsed {
        cases: Vec::new(),
        listed: 0,
        declared: None,
        plan: true,
    };
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(plan) = line.strip_prefix("1..") {
            if parsed.declared.is_some() {
                return Err("not TAP: more than one plan (`1..N`)".into());
            }
            let number = plan.split_whitespace().next().unwrap_or_default();
            let planned = number
                .parse::<u64>()
                .map_err(|_| format!("not TAP: the plan `1..{number}` is not a number"))?;
            parsed.declared = Some(planned);
            continue;
        }
        let Some(case) = tap_case(line, parsed.listed) else {
            continue;
        };
        parsed.listed += 1;
        if (parsed.cases.len() as u64) < limit {
            parsed.cases.push(case);
        }
    }
    if parsed.listed == 0 && parsed.declared.is_none() {
        return Err("not TAP: no plan and no test line".into());
    }
    Ok(parsed)
}

/// One TAP test line, the `index`-th (from 0); `None` for any other line.
fn tap_case(line: &str, index: u64) -> Option<TestCase> {
    let (passed, rest) = if let Some(rest) = line.strip_prefix("not ok") {
        (false, rest)
    } else {
        (true, line.strip_prefix("ok")?)
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
    Some(TestCase {
        name: if description.is_empty() {
            format!("test {}", index + 1)
        } else {
            description
                .chars()
                .take(MAX_MESSAGE_CHARS)
                .collect::<String>()
                .replace("\\#", "#")
        },
        outcome,
        time_s: None,
        message: directive.and_then(short),
    })
}

/// The runner's summary, when the last non-empty line of `text` reads like one: `N passed`,
/// optionally with `N failed`, `N errors` (or `error`), `N skipped`, in any order (pytest's
/// `=== 3 passed, 1 failed in 0.2s ===` too). A summary is what a runner prints when it is done,
/// after everything else: a matching line followed by anything is not one (text the code under
/// test printed earlier never counts). A line with neither `passed` nor `failed` is none.
pub fn summary_line(text: &str) -> Option<Totals> {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(r"(\d+) (passed|failed|errors?|skipped)\b")
            .expect("the summary pattern is a valid regex")
    });
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
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
        let parsed = junit(xml, 10).unwrap();
        assert_eq!((parsed.listed, parsed.declared), (5, None));
        let cases = parsed.cases;
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
        assert!(junit(bomb, 5).is_err());
        assert!(
            junit("<html/>", 5)
                .unwrap_err()
                .contains("root element is `<html>`")
        );
        assert!(junit("not xml", 5).is_err());
    }

    #[test]
    fn tap_reads_skips_todos_and_its_plan_as_a_number() {
        let text = "TAP version 13\n1..5\nok 1 - first\nnot ok 2 - second\n  # details\nok 3 - third # SKIP later\nnot ok 4 # TODO known\n";
        let parsed = tap(text, 5).unwrap();
        assert_eq!(
            Totals::of(&parsed.cases),
            Totals {
                passed: 1,
                failed: 1,
                errors: 0,
                skipped: 2
            }
        );
        assert_eq!((parsed.listed, parsed.declared), (4, Some(5)));
        assert_eq!(parsed.cases[0].name, "first");
        assert_eq!(bound(&parsed, 5, "results.tap"), None);
        assert!(tap("hello\n", 5).is_err());
        assert!(
            tap("1..2\nok\n1..2\n", 5)
                .unwrap_err()
                .contains("more than one plan")
        );
    }

    #[test]
    fn only_a_summary_on_the_last_line_counts() {
        let out = "100 passed, 0 failed\nrunning...\n===== 3 passed, 1 failed, 2 errors, 1 skipped in 0.20s =====\n\n";
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
        assert_eq!(
            summary_line("6 passed, 0 failed\nTraceback: the runner died\n"),
            None,
            "a summary the code under test printed before the runner's own end is not one"
        );
        assert_eq!(
            summary_line("99999999999999999999 passed\n"),
            None,
            "a count beyond u64 is no summary"
        );
    }

    #[test]
    fn a_report_claiming_more_than_exists_is_caught_without_allocating_its_claim() {
        // A plan of three million and a three-million-line stream: kept cases stay at the limit.
        let plan = tap("1..3000000\nok 1\n", 6).unwrap();
        assert_eq!(plan.cases.len(), 1);
        assert_eq!(
            bound(&plan, 6, "results/results.tap").as_deref(),
            Some("results/results.tap plans 3000000 tests (`1..3000000`), but 6 exist")
        );
        let flood = "ok\n".repeat(3_000_000);
        let parsed = tap(&flood, 6).unwrap();
        assert_eq!((parsed.cases.len(), parsed.listed), (6, 3_000_000));
        assert!(
            bound(&parsed, 6, "t")
                .unwrap()
                .contains("lists 3000000 tests")
        );
        assert!(
            tap("1..x\n", 6)
                .unwrap_err()
                .contains("`1..x` is not a number")
        );
        // Ten thousand passing JUnit cases are refused before parsing; a smaller lie is caught by
        // its count or its declaration.
        let forged = format!(
            "<testsuites><testsuite>{}</testsuite></testsuites>",
            "<testcase name=\"x\"/>".repeat(10_000)
        );
        let parsed = junit(&forged, 6).unwrap();
        assert_eq!((parsed.cases.len(), parsed.listed), (0, 10_000));
        assert!(
            bound(&parsed, 6, "junit.xml")
                .unwrap()
                .contains("lists 10000 tests")
        );
        let declared = junit(
            "<testsuite tests=\"10000\"><testcase name=\"a\"/></testsuite>",
            6,
        )
        .unwrap();
        assert!(
            bound(&declared, 6, "junit.xml")
                .unwrap()
                .contains("declares 10000")
        );
        // A runner that died mid-way lists fewer: not tampering (the rest count as errors).
        let short = junit(
            "<testsuite tests=\"6\"><testcase name=\"a\"/></testsuite>",
            6,
        )
        .unwrap();
        assert_eq!(bound(&short, 6, "junit.xml"), None);
        assert_eq!(
            testcase_tags("<testcases/><testcase/><testcase\nname='a'>"),
            2
        );
    }
}
