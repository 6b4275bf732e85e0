//! Reading what the report needs from a cook folder: the latest round's run entries, the judge
//! run's result, and each judge's de-anonymized scores (docs/BEHAVIOR.md §6.1, §6.4).
//!
//! Reading is tolerant where the reference was: an unparseable scores file skips that judge, an
//! unreadable refine result is a round without entries. It never writes and never scores.

use std::io;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

use super::ReportError;
use crate::brief::Brief;
use crate::fsx;
use crate::state::CookPaths;
use crate::state::results::{self, Entry, JudgeRunResult, RoundResult};

/// Largest JSON or markdown file the report reads.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Everything the report reads from a cook folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportInput {
    /// What each participant and judge spent, against its cap (`spend`, `budget` of the
    /// result entries).
    pub spend: Vec<crate::cell::spend_records::SpendRecord>,
    /// The cook folder name.
    pub cook: String,
    /// The latest round number.
    pub round: u32,
    /// The latest round's participant entries, as written.
    pub run_entries: Vec<RunEntry>,
    /// `RUN_RESULT.json` `finished_at`.
    pub run_finished_at: Option<String>,
    /// `RUN_RESULT.json` `usage_totals`, carried into summary.json unchanged.
    pub usage_totals: Option<Value>,
    /// `JUDGE_RESULT.json`, if present and parseable.
    pub judge_result: Option<JudgeResult>,
    /// Judges with a usable `scores_deanon.json`, sorted by name.
    pub scores: Vec<JudgeScores>,
    /// Judge folders whose scores could not be used, and why.
    pub skipped: Vec<SkippedJudge>,
    /// Result files that were present but unusable, for the command to print.
    pub warnings: Vec<String>,
    /// `RUN_RESULT.json` `sandbox_check.passed` (`None`: skipped or not recorded).
    pub sandbox_passed: Option<bool>,
    /// Lines of submissions and reviews that look aimed at the grader.
    pub injection_flags: Vec<super::injection::InjectionFlag>,
    /// `RUN_RESULT.json` `cli_versions`: the CLI version per flavor, from its image.
    pub cli_versions: std::collections::BTreeMap<String, String>,
    /// Pairwise mode: judges with a usable `verdicts_deanon.json`, sorted by name.
    pub verdicts: Vec<JudgeVerdicts>,
    /// Blinding probe: each judge's de-anonymized guesses, sorted by judge.
    pub guesses: Vec<JudgeGuesses>,
    /// `judging/_normalized.json`: what normalization stripped, per participant.
    pub normalized: IndexMap<String, Vec<String>>,
    /// Size of each brief participant's sealed inbox (`judging/_inbox/<participant>/`): total
    /// bytes of its regular files, links never followed; absent when there is no inbox.
    pub output_bytes: IndexMap<String, u64>,
    /// Each brief participant's hidden-test result (`verification/<p>/result.json`), brief
    /// order; `None` when never verified.
    pub verifications: Vec<Option<crate::state::verification::Verification>>,
    /// Each brief participant's Harbor reward (`verification/<p>/reward.json`), brief order.
    pub rewards: Vec<Option<crate::state::verification::TaskVerdict>>,
}

/// One pairwise judge's de-anonymized verdicts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeVerdicts {
    /// Judge name.
    pub judge: String,
    /// `(first, second, winner)`; `None` is a tie.
    pub verdicts: Vec<(String, String, Option<String>)>,
    /// `judging/<j>/review.md`, trimmed.
    pub review: Option<String>,
}

/// One judge's blinding-probe guesses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeGuesses {
    /// Judge name.
    pub judge: String,
    /// How many vendors a guess could name.
    pub vendors: usize,
    /// `(participant, guess, true flavor)`.
    pub guesses: Vec<(String, String, String)>,
}

/// One participant entry of the latest round's result file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEntry {
    /// Participant name.
    pub name: String,
    /// Its run status (`ok`, `timed_out`, …).
    pub status: Option<String>,
    /// Its run time in seconds.
    pub duration_s: Option<f64>,
    /// Its token usage, when the entry has a `usage` object.
    pub usage: Option<Usage>,
    /// Its egress mode and canary verdict, when recorded (`egress`).
    pub egress: Option<(String, Option<bool>)>,
    /// Its CLI's server-side web tools were on (`egress.web_tools`).
    pub web_tools: bool,
}

/// The two usage figures the report shows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// `usage.total_tokens`.
    pub tokens: Option<u64>,
    /// `usage.cost_usd`.
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Reads a `usage` value; `None` unless it is an object.
    pub fn from_value(value: Option<&Value>) -> Option<Self> {
        let usage = value?.as_object()?;
        Some(Self {
            tokens: usage.get("total_tokens").and_then(Value::as_u64),
            cost_usd: usage.get("cost_usd").and_then(Value::as_f64),
        })
    }
}

/// `JUDGE_RESULT.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeResult {
    /// `finished_at`.
    pub finished_at: Option<String>,
    /// `policy`, as written.
    pub policy: Option<String>,
    /// `mode` (`rubric` when absent).
    pub mode: Option<String>,
    /// `self_preference`.
    pub self_preference: bool,
    /// `blinding_probe`.
    pub blinding_probe: bool,
    /// `seed` of the label shuffles (a number, or a decimal string), reused for the blinding
    /// probe's permutations.
    pub seed: Option<u64>,
    /// `judges`, exactly as written (summary.json's `judge_run`).
    pub raw_judges: Vec<Value>,
    /// The fields of `judges` the report shows.
    pub judges: Vec<JudgeRun>,
}

/// One judge's entry of `JUDGE_RESULT.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeRun {
    /// Judge name.
    pub name: String,
    /// Its `status` (`ok`, `no_scores`, …).
    pub status: Option<String>,
    /// Why it failed, if it did.
    pub reason: Option<String>,
    /// Its run time in seconds.
    pub duration_s: Option<f64>,
    /// Its token usage, when the entry has a `usage` object.
    pub usage: Option<Usage>,
    /// Scores the judge step refused: (participant or label, reason).
    pub rejected: Vec<(String, String)>,
}

/// One judge's de-anonymized scores.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JudgeScores {
    /// Judge name (its folder under `judging/`).
    pub judge: String,
    /// Participant name (or unknown key) → dimension → value, in file order.
    pub entries: IndexMap<String, IndexMap<String, Value>>,
    /// `judging/<j>/review.md`, trimmed, when present and non-empty.
    pub review: Option<String>,
}

/// A judge folder whose scores were not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedJudge {
    /// Judge name.
    pub judge: String,
    /// Why, e.g. "`scores_deanon.json` is missing".
    pub reason: String,
}

/// Reads everything the report needs. Fails only when `judging/` is missing or a file that
/// exists cannot be read at all.
pub fn load(paths: &CookPaths, brief: &Brief) -> Result<ReportInput, ReportError> {
    let mut input = load_runs(paths, brief)?;
    crate::cell::spend_records::add_cook(&mut input.spend, paths.dir());
    input.verifications = brief
        .participants
        .iter()
        .map(|p| crate::state::verification::Verification::read(paths, &p.name))
        .collect();
    input.rewards = brief
        .participants
        .iter()
        .map(|p| crate::state::verification::TaskVerdict::read(paths, &p.name))
        .collect();
    Ok(input)
}

/// Everything but the hidden tests' results.
fn load_runs(paths: &CookPaths, brief: &Brief) -> Result<ReportInput, ReportError> {
    let judging = paths.judging();
    if !judging.is_dir() {
        return Err(ReportError::NoJudging { path: judging });
    }
    let mut input = ReportInput {
        cook: paths.name().to_owned(),
        round: 1,
        ..ReportInput::default()
    };
    if let Some(run) = read_json(&paths.run_result(), &mut input.warnings)? {
        input.usage_totals = run.get("usage_totals").filter(|v| !v.is_null()).cloned();
        let run: RoundResult = serde_json::from_value(run).unwrap_or_default();
        input.run_finished_at = run.finished_at;
        input.round = run.round;
        input.run_entries = run_entries(&run.participants);
        input.cli_versions = run.cli_versions.into_iter().collect();
        input.sandbox_passed = run
            .sandbox_check
            .as_ref()
            .and_then(|c| c.get("passed"))
            .and_then(Value::as_bool);
    }
    if let Some((round, path)) = latest_refine(paths.dir())? {
        input.round = round;
        input.run_entries = results::read::<RoundResult>(&path)
            .map(|refine| run_entries(&refine.participants))
            .unwrap_or_default();
    }
    input.judge_result = read_json(&paths.judge_result(), &mut input.warnings)?
        .map(|v| judge_result(serde_json::from_value(v).unwrap_or_default()));
    let pairwise = input.judge_result.as_ref().and_then(|r| r.mode.as_deref()) == Some("pairwise");
    for judge in judge_dirs(&judging, brief)? {
        let dir = paths.judge_dir(&judge);
        if let Some(guesses) = read_guesses(&dir.join("guesses_deanon.json")) {
            input.guesses.push(JudgeGuesses {
                judge: judge.clone(),
                ..guesses
            });
        }
        if pairwise {
            match read_verdicts(&dir.join("verdicts_deanon.json")) {
                Ok(verdicts) => {
                    let review = read_review(&dir.join("review.md"), &mut input.warnings);
                    input.verdicts.push(JudgeVerdicts {
                        judge,
                        verdicts,
                        review,
                    });
                }
                Err(reason) => input.skipped.push(SkippedJudge { judge, reason }),
            }
            continue;
        }
        match read_scores(&dir.join("scores_deanon.json")) {
            Ok(entries) => {
                let review = read_review(&dir.join("review.md"), &mut input.warnings);
                input.scores.push(JudgeScores {
                    judge,
                    entries,
                    review,
                });
            }
            Err(reason) => input.skipped.push(SkippedJudge { judge, reason }),
        }
    }
    if let Some(Value::Object(map)) =
        read_json(&judging.join("_normalized.json"), &mut input.warnings)?
    {
        input.normalized = map
            .iter()
            .map(|(p, items)| {
                let items = items
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|i| i.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                (p.clone(), items)
            })
            .collect();
    }
    input.injection_flags = super::injection::scan(paths, brief);
    input.output_bytes = output_sizes(paths, brief);
    Ok(input)
}

/// Reads a JSON object file: missing → `None`; unparseable → `None` and a warning.
fn read_json(path: &Path, warnings: &mut Vec<String>) -> Result<Option<Value>, ReportError> {
    let Some(bytes) = read_optional(path)? else {
        return Ok(None);
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(value) if value.is_object() => Ok(Some(value)),
        Ok(_) => {
            warnings.push(format!(
                "`{}` is not a JSON object; ignored",
                path.display()
            ));
            Ok(None)
        }
        Err(e) => {
            warnings.push(format!(
                "`{}` is not valid JSON ({e}); ignored",
                path.display()
            ));
            Ok(None)
        }
    }
}

/// Reads a file that may be absent; a file over the cap is an error.
fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ReportError> {
    match fsx::read_capped(path, MAX_INPUT_BYTES) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn run_entries(entries: &[Entry]) -> Vec<RunEntry> {
    entries
        .iter()
        .map(|entry| Value::Object(entry.0.clone()))
        .filter_map(|entry| {
            let entry = &entry;
            Some(RunEntry {
                name: entry.get("name")?.as_str()?.to_owned(),
                status: text(entry, "status"),
                duration_s: entry.get("duration_s").and_then(Value::as_f64),
                usage: Usage::from_value(entry.get("usage")),
                egress: entry.get("egress").and_then(|e| {
                    let mode = e.get("mode")?.as_str()?.to_owned();
                    Some((
                        mode,
                        e.get("canary")
                            .and_then(|c| c.get("passed"))
                            .and_then(Value::as_bool),
                    ))
                }),
                web_tools: entry
                    .pointer("/egress/web_tools")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })
        })
        .collect()
}

/// The highest `REFINE_<N>_RESULT.json` in the cook folder.
fn latest_refine(dir: &Path) -> Result<Option<(u32, PathBuf)>, ReportError> {
    let io = |source| ReportError::Io {
        action: "list",
        path: dir.to_path_buf(),
        source,
    };
    let mut best: Option<(u32, PathBuf)> = None;
    for entry in fs_err::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let round = name
            .to_str()
            .and_then(|n| n.strip_prefix("REFINE_"))
            .and_then(|n| n.strip_suffix("_RESULT.json"))
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(round) = round
            && best.as_ref().is_none_or(|(seen, _)| round > *seen)
        {
            best = Some((round, entry.path()));
        }
    }
    Ok(best)
}

fn judge_result(file: JudgeRunResult) -> JudgeResult {
    let raw_judges: Vec<Value> = file
        .judges
        .into_iter()
        .map(|entry| Value::Object(entry.0))
        .collect();
    let judges = raw_judges.iter().map(judge_run).collect();
    let as_text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_owned));
    JudgeResult {
        finished_at: file.finished_at,
        policy: as_text(file.policy),
        mode: as_text(file.mode),
        self_preference: file.self_preference,
        blinding_probe: file.blinding_probe,
        seed: file.seed,
        raw_judges,
        judges,
    }
}

/// Each brief participant's sealed inbox size, when it has one.
fn output_sizes(paths: &CookPaths, brief: &Brief) -> IndexMap<String, u64> {
    brief
        .participants
        .iter()
        .filter_map(|p| Some((p.name.clone(), tree_bytes(&paths.sealed(&p.name))?)))
        .collect()
}

/// Total bytes of the regular files under `dir`, links not followed; `None` without `dir`.
pub(crate) fn tree_bytes(dir: &Path) -> Option<u64> {
    if !fs_err::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    Some(
        walkdir::WalkDir::new(dir)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_file())
            .filter_map(|entry| entry.metadata().ok())
            .map(|metadata| metadata.len())
            .sum(),
    )
}

fn judge_run(entry: &Value) -> JudgeRun {
    let rejected = entry
        .get("rejected")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    JudgeRun {
        name: text(entry, "name").unwrap_or_else(|| "?".to_owned()),
        status: text(entry, "status"),
        reason: text(entry, "reason"),
        duration_s: entry.get("duration_s").and_then(Value::as_f64),
        usage: Usage::from_value(entry.get("usage")),
        rejected: rejected
            .iter()
            .filter_map(|r| Some((text(r, "participant")?, text(r, "reason")?)))
            .collect(),
    }
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Non-underscore subfolders of `judging/`, sorted, limited to the brief's judges if it has any.
fn judge_dirs(judging: &Path, brief: &Brief) -> Result<Vec<String>, ReportError> {
    let io = |source| ReportError::Io {
        action: "list",
        path: judging.to_path_buf(),
        source,
    };
    let mut names = Vec::new();
    for entry in fs_err::read_dir(judging).map_err(io)? {
        let entry = entry.map_err(io)?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // `file_type` does not follow links: a symlinked folder is not a judge's output.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let listed = brief.judges.is_empty() || brief.judges.iter().any(|j| j.name == name);
        if is_dir && !name.starts_with('_') && listed {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Reads `verdicts_deanon.json`; the error is why the judge is skipped.
fn read_verdicts(path: &Path) -> Result<Vec<(String, String, Option<String>)>, String> {
    let bytes = match fsx::read_capped(path, MAX_INPUT_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err("`verdicts_deanon.json` is missing".into());
        }
        Err(e) => return Err(format!("`verdicts_deanon.json` cannot be read: {e}")),
    };
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err("`verdicts_deanon.json` is not a JSON list".into());
    };
    Ok(items
        .iter()
        .filter_map(|v| Some((text(v, "first")?, text(v, "second")?, text(v, "winner"))))
        .collect())
}

/// Reads `guesses_deanon.json`, if the judge has one.
fn read_guesses(path: &Path) -> Option<JudgeGuesses> {
    let bytes = fsx::read_capped(path, MAX_INPUT_BYTES).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    let guesses = value
        .get("guesses")?
        .as_array()?
        .iter()
        .filter_map(|g| {
            Some((
                text(g, "participant")?,
                text(g, "guess")?,
                text(g, "flavor")?,
            ))
        })
        .collect();
    Some(JudgeGuesses {
        judge: String::new(),
        vendors: value
            .get("vendors")
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        guesses,
    })
}

/// Reads `scores_deanon.json`; the error is why the judge is skipped.
fn read_scores(path: &Path) -> Result<IndexMap<String, IndexMap<String, Value>>, String> {
    let bytes = match fsx::read_capped(path, MAX_INPUT_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err("`scores_deanon.json` is missing".into());
        }
        Err(e) => return Err(format!("`scores_deanon.json` cannot be read: {e}")),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map
            .iter()
            .filter_map(|(key, entry)| Some((key.clone(), dimensions(entry)?)))
            .collect()),
        Ok(_) => Err("`scores_deanon.json` is not a JSON object".into()),
        Err(e) => Err(format!("`scores_deanon.json` is not valid JSON ({e})")),
    }
}

/// An entry's dimensions: its `dimensions` object as written, or, in the flat form the
/// reference's tolerant parser accepted, every numeric non-bool value except `total`.
/// A value that is not an object is no entry.
pub(crate) fn dimensions(entry: &Value) -> Option<IndexMap<String, Value>> {
    let entry = entry.as_object()?;
    if let Some(Value::Object(dimensions)) = entry.get("dimensions") {
        return Some(
            dimensions
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
    }
    Some(
        entry
            .iter()
            .filter(|(k, v)| *k != "total" && v.is_number())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

fn read_review(path: &Path, warnings: &mut Vec<String>) -> Option<String> {
    match fsx::read_capped(path, MAX_INPUT_BYTES) {
        Ok(bytes) => {
            Some(String::from_utf8_lossy(&bytes).trim().to_owned()).filter(|t| !t.is_empty())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            warnings.push(format!(
                "`{}` cannot be read ({e}); review left out",
                path.display()
            ));
            None
        }
    }
}
