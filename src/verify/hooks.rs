//! What happens around each verifier cell: status and events at every transition, and, once
//! it ends, its result read from what the engine collected (`verification/<p>/results/`) and
//! its standard output log, never from the output under test, and written as
//! `verification/<p>/result.json`.
//!
//! Every count read is held against the number of tests fixed before the run: a report that
//! lists more, plans another number, is oversized or unreadable is tampering (scored, every
//! test an error, never unscored and never a pass). The summary line is read only from a
//! runner that ended by itself, and only as the last line it printed.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::formats::{self, MAX_REPORT_BYTES, Parsed, Source, TestCase, Totals};
use super::result::{Outcome, SCHEMA_VERSION, Verification};
use crate::cell::plan::CellPlan;
use crate::cell::run::{CellHooks, CellOutcome};
use crate::progress::{CellPhase, Progress};
use crate::state::{CellState, CookPaths, EventLog, Phase, Role, StatusStore, now_iso};

/// A report format's reader, keeping at most the given number of cases.
type Reader = fn(&str, u64) -> Result<Parsed, String>;

/// How much of the runner's standard output the summary line is looked for in.
const SUMMARY_TAIL_BYTES: u64 = 64 << 10;

/// The status.json key of a participant's verifier (`/` never appears in an actor's name).
pub fn status_key(participant: &str) -> String {
    format!("verify/{participant}")
}

/// Hooks of the verify phase.
pub(super) struct VerifyHooks {
    pub(super) paths: CookPaths,
    pub(super) status: Arc<StatusStore>,
    pub(super) events: EventLog,
    pub(super) progress: Arc<dyn Progress>,
    /// `verify.image`, recorded in results.
    pub(super) image: String,
    /// Each participant's sealed output digest.
    pub(super) digests: Vec<(String, Option<String>)>,
    /// How many tests exist (`verify.tests`, or the dummy runner's spec).
    pub(super) expected: u64,
}

impl VerifyHooks {
    fn note(&self, result: Result<(), crate::state::StateError>) {
        if let Err(e) = result {
            self.progress.note(&format!("warning: {e}"));
        }
    }

    fn set_cell(&self, participant: &str, change: impl FnOnce(&mut crate::state::Cell)) {
        self.note(self.status.update_cell(
            &status_key(participant),
            Role::Verifier,
            super::plan::VERIFY_FLAVOR,
            change,
        ));
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.paths.dir())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// A result for a participant whose cell never ran the runner.
    pub(super) fn unscored(
        &self,
        participant: &str,
        outcome: Outcome,
        reason: String,
    ) -> Verification {
        let logs = self.paths.verification_of(participant).join("logs");
        Verification {
            schema_version: SCHEMA_VERSION,
            participant: participant.to_owned(),
            outcome,
            reason: Some(reason),
            source: None,
            totals: Totals::default(),
            expected_tests: Some(self.expected),
            tests: Vec::new(),
            exit_code: None,
            duration_s: 0.0,
            started_at: None,
            finished_at: now_iso(),
            output_sha256: self.digest(participant),
            image: self.image.clone(),
            stdout: self.relative(&logs.join("verify.stdout.log")),
            stderr: self.relative(&logs.join("verify.stderr.log")),
        }
    }

    fn digest(&self, participant: &str) -> Option<String> {
        self.digests
            .iter()
            .find(|(p, _)| p == participant)
            .and_then(|(_, d)| d.clone())
    }

    /// Writes a result and reports it.
    pub(super) fn record(&self, result: &Verification) {
        if let Err(e) = result.write(&self.paths) {
            self.progress.note(&format!(
                "warning: cannot write the verification of `{}`: {e}",
                result.participant
            ));
        }
        let t = result.totals;
        let detail = format!(
            "{} passed, {} failed, {} errors, {} skipped, {:.1}s",
            t.passed, t.failed, t.errors, t.skipped, result.duration_s
        );
        self.progress.cell(
            Role::Verifier,
            &result.participant,
            CellPhase::Done {
                state: result.outcome.as_str().to_owned(),
                detail: result
                    .reason
                    .clone()
                    .map_or(detail.clone(), |r| format!("{detail}; {r}")),
                ok: result.outcome == Outcome::Completed,
            },
        );
        self.note(self.events.cell(
            "verify.finished",
            Phase::Verify,
            &result.participant,
            json!({"outcome": result.outcome, "totals": result.totals}),
        ));
    }
}

impl CellHooks for VerifyHooks {
    type Output = Verification;

    fn starting(&self, plan: &CellPlan) {
        self.progress
            .cell(Role::Verifier, &plan.actor, CellPhase::Starting);
        self.set_cell(&plan.actor, |c| c.state = CellState::Starting);
    }

    fn started(&self, plan: &CellPlan, started_at: &str) {
        self.progress
            .cell(Role::Verifier, &plan.actor, CellPhase::Running);
        self.set_cell(&plan.actor, |c| {
            c.state = CellState::Running;
            c.started_at = Some(started_at.to_owned());
        });
    }

    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> Verification {
        let participant = plan.actor.clone();
        let results_dir = self.paths.verification_of(&participant).join("results");
        let (class, reason) = match outcome.state {
            CellState::Cancelled => (Some(Outcome::Cancelled), None),
            CellState::StartFailed => (Some(Outcome::StartFailed), outcome.error.clone()),
            CellState::TimedOut => (
                Some(Outcome::TimedOut),
                Some(format!(
                    "the runner was killed after {}s",
                    plan.timeout.as_secs()
                )),
            ),
            CellState::OomKilled => (
                Some(Outcome::OomKilled),
                Some("the runner was killed by its memory limit".to_owned()),
            ),
            _ => (None, None),
        };
        let mut result = self.unscored(&participant, Outcome::Completed, String::new());
        result.reason = reason;
        result.exit_code = outcome.exit_code;
        result.duration_s = outcome.duration_s;
        result.started_at.clone_from(&outcome.started_at);
        result.finished_at.clone_from(&outcome.finished_at);
        if class.is_none_or(Outcome::scored) {
            let reading = read_results(
                &results_dir,
                &plan.stdout_log,
                self.expected,
                class.is_none(),
            );
            let exit = outcome.exit_code;
            reading.apply(&mut result, class, exit, self.expected);
        } else if let Some(class) = class {
            result.outcome = class;
        }
        self.set_cell(&participant, |c| {
            c.state = outcome.state;
            c.exit_class = Some(result.outcome.as_str().to_owned());
            c.finished_at = Some(outcome.finished_at.clone());
            c.duration_s = Some(outcome.duration_s);
        });
        self.record(&result);
        result
    }
}

/// What the host read of one run.
#[derive(Debug, PartialEq)]
enum Reading {
    /// A report consistent with the number of tests.
    Report {
        /// Where.
        source: Source,
        /// Its cases (none for a summary line).
        cases: Vec<TestCase>,
        /// Their counts.
        totals: Totals,
    },
    /// A report that cannot be believed, and why.
    Tampered {
        /// Where.
        source: Source,
        /// What is wrong with it.
        why: String,
    },
    /// No report and no summary line.
    Nothing,
}

impl Reading {
    /// Fills `result` from what was read; `class` is how the cell ended when not by itself.
    fn apply(
        self,
        result: &mut Verification,
        class: Option<Outcome>,
        exit: Option<i64>,
        expected: u64,
    ) {
        match self {
            Self::Report {
                source,
                cases,
                totals,
            } => {
                result.source = Some(source);
                result.tests = cases;
                result.totals = totals;
                result.outcome = class.unwrap_or(Outcome::Completed);
            }
            Self::Tampered { source, why } => {
                result.source = Some(source);
                result.totals = Totals {
                    errors: expected,
                    ..Totals::default()
                };
                result.outcome = Outcome::Tampered;
                result.reason = Some(format!(
                    "tampering: {why}; every one of the {expected} tests counts as an error"
                ));
            }
            Self::Nothing => {
                result.outcome = class.unwrap_or(Outcome::NoResults);
                if result.reason.is_none() {
                    let exit = exit.map_or("-".into(), |c| c.to_string());
                    result.reason = Some(format!(
                        "the runner (exit {exit}) wrote no results/junit.xml, no results/results.tap and did not end with an `N passed, M failed` line"
                    ));
                }
            }
        }
    }
}

/// The tests' outcomes: `JUnit` XML, else TAP, else, from a runner that `ended_itself`, the
/// summary line its standard output ends with. Each is held against `expected`.
fn read_results(results: &Path, stdout_log: &Path, expected: u64, ended_itself: bool) -> Reading {
    let readers: [(&str, Source, Reader); 2] = [
        ("junit.xml", Source::Junit, formats::junit),
        ("results.tap", Source::Tap, formats::tap),
    ];
    for (file, source, parse) in readers {
        let path = results.join(file);
        let Ok(meta) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        let name = format!("results/{file}");
        let tampered = |why: String| Reading::Tampered { source, why };
        if !meta.is_file() {
            return tampered(format!("{name} is not a regular file"));
        }
        if meta.len() > MAX_REPORT_BYTES {
            return tampered(format!(
                "{name} is {} bytes, more than a report may be ({MAX_REPORT_BYTES})",
                meta.len()
            ));
        }
        let parsed = crate::fsx::read_capped(&path, MAX_REPORT_BYTES)
            .map_err(|e| format!("{name} cannot be read: {e}"))
            .and_then(|bytes| {
                parse(&String::from_utf8_lossy(&bytes), expected)
                    .map_err(|e| format!("{name}: {e}"))
            });
        return match parsed {
            Err(why) => tampered(why),
            Ok(parsed) => match formats::bound(&parsed, expected, &name) {
                Some(why) => tampered(why),
                None => Reading::Report {
                    source,
                    totals: Totals::of(&parsed.cases),
                    cases: parsed.cases,
                },
            },
        };
    }
    if !ended_itself {
        return Reading::Nothing;
    }
    let tail = read_tail(stdout_log, SUMMARY_TAIL_BYTES);
    match formats::summary_line(&tail) {
        Some(totals) if totals.reported() > expected => Reading::Tampered {
            source: Source::Summary,
            why: format!(
                "the summary line counts {} tests, but only {expected} exist",
                totals.reported()
            ),
        },
        Some(totals) => Reading::Report {
            source: Source::Summary,
            cases: Vec::new(),
            totals,
        },
        None => Reading::Nothing,
    }
}

fn read_tail(path: &Path, limit: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::new();
    if file
        .seek(SeekFrom::Start(len.saturating_sub(limit)))
        .is_ok()
    {
        let _ = file.read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source_of(reading: &Reading) -> Option<Source> {
        match reading {
            Reading::Report { source, .. } | Reading::Tampered { source, .. } => Some(*source),
            Reading::Nothing => None,
        }
    }

    #[test]
    fn junit_wins_over_tap_and_the_summary_line_is_the_fallback() {
        let tmp = tempfile::tempdir().unwrap();
        let results = tmp.path().join("results");
        fs_err::create_dir_all(&results).unwrap();
        let log = tmp.path().join("verify.stdout.log");
        fs_err::write(&log, "2 passed, 1 failed\n").unwrap();
        let Reading::Report { source, totals, .. } = read_results(&results, &log, 3, true) else {
            panic!("no summary read");
        };
        assert_eq!(
            (source, totals.passed, totals.failed),
            (Source::Summary, 2, 1)
        );
        assert_eq!(
            read_results(&results, &log, 3, false),
            Reading::Nothing,
            "a runner killed at its timeout or memory limit did not print its own summary"
        );
        fs_err::write(results.join("results.tap"), "1..3\nok 1 - a\n").unwrap();
        assert_eq!(
            source_of(&read_results(&results, &log, 3, true)),
            Some(Source::Tap)
        );
        fs_err::write(
            results.join("junit.xml"),
            "<testsuite><testcase name=\"x\"/></testsuite>",
        )
        .unwrap();
        assert_eq!(
            source_of(&read_results(&results, &log, 3, true)),
            Some(Source::Junit)
        );
        fs_err::write(&log, "nothing\n").unwrap();
        fs_err::remove_file(results.join("results.tap")).unwrap();
        fs_err::remove_file(results.join("junit.xml")).unwrap();
        assert_eq!(read_results(&results, &log, 3, true), Reading::Nothing);
    }

    #[test]
    fn unreadable_oversized_or_overfull_reports_and_summaries_are_tampering() {
        let tmp = tempfile::tempdir().unwrap();
        let results = tmp.path().join("results");
        fs_err::create_dir_all(&results).unwrap();
        let log = tmp.path().join("verify.stdout.log");
        fs_err::write(&log, "10000 passed, 0 failed\n").unwrap();
        let why = |reading: Reading| match reading {
            Reading::Tampered { why, .. } => why,
            other => panic!("not tampering: {other:?}"),
        };
        assert!(why(read_results(&results, &log, 6, true)).contains("counts 10000 tests"));
        fs_err::write(results.join("junit.xml"), "<html/>").unwrap();
        assert!(
            why(read_results(&results, &log, 6, true)).contains("results/junit.xml: not JUnit XML")
        );
        let big = std::fs::File::create(results.join("junit.xml")).unwrap();
        big.set_len(MAX_REPORT_BYTES + 1).unwrap();
        assert!(why(read_results(&results, &log, 6, true)).contains("more than a report may be"));
        fs_err::remove_file(results.join("junit.xml")).unwrap();
        fs_err::write(results.join("results.tap"), "1..3000000\nok 1\n").unwrap();
        assert!(why(read_results(&results, &log, 6, true)).contains("plans 3000000 tests"));
        fs_err::remove_file(results.join("results.tap")).unwrap();
        fs_err::create_dir(results.join("results.tap")).unwrap();
        assert!(why(read_results(&results, &log, 6, true)).contains("not a regular file"));
    }
}
