//! `verification/<participant>/result.json`: one verification (the file the verify step writes
//! and judge and report read, so it lives with the cook folder's state), written and read by the same
//! type. And the pass rate the report takes from it: an infrastructure failure (the image did
//! not build, the cell did not start, the run was cancelled) is unscored, never 0; a run that
//! ended early (timeout, memory, a runner that reported nothing) is scored, its unreported
//! tests counted as errors, so that a participant cannot escape its tests by hanging.
//!
//! How many tests exist is fixed before any runner runs (`verify.tests`, or the dummy
//! runner's spec) and recorded in each result: never taken from what a run reported. A report
//! that lists more, plans otherwise, or cannot be read is [`Outcome::Tampered`]: scored, every
//! test an error, and said so in the report.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::CookPaths;
use crate::fsx;

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
        self.passed
            .saturating_add(self.failed)
            .saturating_add(self.errors)
            .saturating_add(self.skipped)
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

/// Version of the result file.
pub const SCHEMA_VERSION: u32 = 1;

/// How a verification ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The runner ended and reported.
    Completed,
    /// The runner was killed at `verify.timeout_s` (the code under test did not end).
    TimedOut,
    /// The runner was killed by its memory limit.
    OomKilled,
    /// The runner ended without a report.
    NoResults,
    /// The verifier's image did not build.
    BuildFailed,
    /// The cell could not be created, started or staged (an engine failure).
    StartFailed,
    /// Stopped by the user.
    Cancelled,
    /// The participant has no sealed output to verify.
    NoOutput,
    /// The report lists more tests than exist, plans another number, is oversized or cannot be
    /// read: every test counts as an error, and the report says so.
    Tampered,
}

impl Outcome {
    /// The outcome's name in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::TimedOut => "timed_out",
            Self::OomKilled => "oom_killed",
            Self::NoResults => "no_results",
            Self::BuildFailed => "build_failed",
            Self::StartFailed => "start_failed",
            Self::Cancelled => "cancelled",
            Self::NoOutput => "no_output",
            Self::Tampered => "tampered",
        }
    }

    /// The runner ran against the output, so the result speaks about the output. The others
    /// are failures of the infrastructure (or of the user's patience): never a score of 0.
    pub fn scored(self) -> bool {
        match self {
            Self::Completed
            | Self::TimedOut
            | Self::OomKilled
            | Self::NoResults
            | Self::Tampered => true,
            Self::BuildFailed | Self::StartFailed | Self::Cancelled | Self::NoOutput => false,
        }
    }
}

/// One participant's verification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The participant whose sealed output was tested.
    pub participant: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Why, when it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where the tests' outcomes were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Counts per outcome, as reported (a tampered report's: every test an error).
    pub totals: Totals,
    /// How many tests exist (`verify.tests`, or the dummy runner's spec), fixed before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_tests: Option<u64>,
    /// Each test, when the report lists them (`JUnit`, TAP).
    #[serde(default)]
    pub tests: Vec<TestCase>,
    /// The runner's exit code, if it ended by itself.
    pub exit_code: Option<i64>,
    /// Seconds from go to end, one decimal.
    pub duration_s: f64,
    /// When the runner started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the verification ended.
    pub finished_at: String,
    /// SHA-256 of the sealed output tested (a changed output is verified again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_sha256: Option<String>,
    /// `verify.image`.
    pub image: String,
    /// The runner's logs, relative to the cook folder.
    pub stdout: String,
    /// Standard error log, relative to the cook folder.
    pub stderr: String,
}

impl Verification {
    /// The result file of `participant`.
    pub fn path(paths: &CookPaths, participant: &str) -> std::path::PathBuf {
        paths.verification_of(participant).join("result.json")
    }

    /// Reads a participant's result; `None` when absent or unreadable (never verified).
    pub fn read(paths: &CookPaths, participant: &str) -> Option<Self> {
        read_file(&Self::path(paths, participant))
    }

    /// Writes it atomically.
    pub fn write(&self, paths: &CookPaths) -> std::io::Result<()> {
        fsx::write_json_atomic(&Self::path(paths, &self.participant), self)
    }
}

/// Where a Harbor task's verifier writes each participant's verdict: `verification/<p>/<this>`.
pub const REWARD_FILE: &str = "reward.json";

/// What a Harbor task's verifier gave for one participant (`verification/<p>/reward.json`,
/// docs/HARBOR.md): written by the verify step, read by the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskVerdict {
    /// The participant.
    pub participant: String,
    /// The reward, when test.sh wrote a valid one in time.
    pub reward: Option<f64>,
    /// Named components (`reward.json` only).
    #[serde(default)]
    pub components: std::collections::BTreeMap<String, f64>,
    /// Why there is no reward.
    #[serde(default)]
    pub error: Option<String>,
    /// The task hash the verdict is for.
    pub task_hash: String,
}

impl TaskVerdict {
    /// The verdict of `participant`, if one was written and reads.
    pub fn read(paths: &CookPaths, participant: &str) -> Option<Self> {
        let path = paths.verification_of(participant).join(REWARD_FILE);
        let bytes = fsx::read_capped(&path, 1 << 20).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

fn read_file(path: &Path) -> Option<Verification> {
    let bytes = fsx::read_capped(path, 64 << 20).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// A scored pass rate: `passed` out of `trials` (passed, failed and errors, unreported tests
/// counted as errors; skipped ones in neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassCount {
    /// Tests passed.
    pub passed: u64,
    /// Tests that count.
    pub trials: u64,
    /// Tests the runner never reported (counted as errors in `trials`).
    pub unreported: u64,
}

/// The pass counts of every result, in order: `None` for an unscored result. The number of
/// tests is `expected` (`verify.tests`), else the one the result recorded when it ran, else
/// (a result written before counts were recorded) what that run itself reported: never what
/// another run reported, so one participant's report cannot change another's rate. A tampered
/// result passes nothing. When no scored run reported a single test, the runner itself is broken
/// and nothing is scored.
pub fn pass_counts(
    results: &[Option<&Verification>],
    expected: Option<u64>,
) -> Vec<Option<PassCount>> {
    let reported = results
        .iter()
        .flatten()
        .filter(|r| r.outcome.scored())
        .any(|r| r.totals.reported() > 0);
    if !reported {
        return vec![None; results.len()];
    }
    results
        .iter()
        .map(|result| {
            let result = result.filter(|r| r.outcome.scored())?;
            let totals = result.totals;
            let exist = expected
                .or(result.expected_tests)
                .unwrap_or_else(|| totals.reported());
            if result.outcome == Outcome::Tampered || totals.reported() > exist {
                return (exist > 0).then_some(PassCount {
                    passed: 0,
                    trials: exist,
                    unreported: 0,
                });
            }
            let unreported = exist - totals.reported();
            let trials = totals.passed + totals.failed + totals.errors + unreported;
            (trials > 0).then_some(PassCount {
                passed: totals.passed,
                trials,
                unreported,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(outcome: Outcome, passed: u64, failed: u64) -> Verification {
        Verification {
            schema_version: SCHEMA_VERSION,
            participant: "p".into(),
            outcome,
            reason: None,
            source: None,
            totals: Totals {
                passed,
                failed,
                errors: 0,
                skipped: 1,
            },
            expected_tests: None,
            tests: Vec::new(),
            exit_code: Some(0),
            duration_s: 1.0,
            started_at: None,
            finished_at: "t".into(),
            output_sha256: None,
            image: "dummy".into(),
            stdout: "a".into(),
            stderr: "b".into(),
        }
    }

    #[test]
    fn unreported_tests_are_errors_and_infrastructure_failures_are_unscored() {
        let full = result(Outcome::Completed, 3, 1);
        let hung = result(Outcome::TimedOut, 1, 0);
        let silent = result(Outcome::NoResults, 0, 0);
        let broken = result(Outcome::BuildFailed, 0, 0);
        let counts = pass_counts(
            &[Some(&full), Some(&hung), Some(&silent), Some(&broken), None],
            Some(5),
        );
        let pairs: Vec<Option<(u64, u64)>> = counts
            .iter()
            .map(|c| c.map(|c| (c.passed, c.trials)))
            .collect();
        // 5 tests exist (one skipped): the hung run reported 2, so 3 are errors.
        assert_eq!(
            pairs,
            [Some((3, 4)), Some((1, 4)), Some((0, 4)), None, None]
        );
        assert_eq!(counts[1].unwrap().unreported, 3);
    }

    #[test]
    fn a_runner_that_never_reported_anything_scores_nobody() {
        let silent = result(Outcome::NoResults, 0, 0);
        let empty = Verification {
            totals: Totals::default(),
            ..silent
        };
        assert_eq!(
            pass_counts(&[Some(&empty), Some(&empty)], None),
            [None, None]
        );
        assert_eq!(
            pass_counts(&[Some(&empty)], Some(4)),
            [None],
            "a pinned count does not turn a broken runner into zeros"
        );
    }

    #[test]
    fn one_runs_report_never_changes_another_runs_rate() {
        // The forger's report listed 10,000 passing cases; the honest run 6 of 6.
        let honest = Verification {
            totals: Totals {
                passed: 6,
                ..Totals::default()
            },
            ..result(Outcome::Completed, 0, 0)
        };
        let forger = Verification {
            totals: Totals {
                passed: 10_000,
                ..Totals::default()
            },
            ..result(Outcome::Completed, 0, 0)
        };
        let recorded = |r: &Verification| Verification {
            expected_tests: Some(6),
            ..r.clone()
        };
        let pairs = |counts: Vec<Option<PassCount>>| -> Vec<Option<(u64, u64)>> {
            counts
                .iter()
                .map(|c| c.map(|c| (c.passed, c.trials)))
                .collect()
        };
        for expected in [Some(6), None] {
            let (h, f) = (recorded(&honest), recorded(&forger));
            assert_eq!(
                pairs(pass_counts(&[Some(&h), Some(&f)], expected)),
                [Some((6, 6)), Some((0, 6))],
                "{expected:?}"
            );
        }
        let tampered = Verification {
            totals: Totals {
                errors: 6,
                ..Totals::default()
            },
            ..recorded(&result(Outcome::Tampered, 0, 0))
        };
        assert_eq!(
            pairs(pass_counts(&[Some(&tampered)], None)),
            [Some((0, 6))],
            "tampering is scored: every test an error"
        );
        // Results from before counts were recorded: each run is its own count, never the most.
        assert_eq!(
            pairs(pass_counts(&[Some(&honest), Some(&forger)], None)),
            [Some((6, 6)), Some((10_000, 10_000))]
        );
    }

    #[test]
    fn the_file_round_trips_through_one_type() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(tmp.path().join("c"));
        let written = result(Outcome::Completed, 2, 2);
        fs_err::create_dir_all(paths.verification_of("p")).unwrap();
        written.write(&paths).unwrap();
        assert_eq!(Verification::read(&paths, "p"), Some(written));
    }
}
