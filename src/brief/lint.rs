//! Consistency between brief.yaml and the markdown the judges and participants read
//! (docs/BEHAVIOR.md §3.8, with weakness §10.24 fixed): every rubric dimension id must appear in
//! `JUDGE_BRIEF.md` as a whole word (an id `rate` is not satisfied by `accurate`), a scale or a
//! weight `JUDGE_BRIEF.md` states must match brief.yaml, `BRIEF.md` must exist and say
//! something, and neither may still hold the template's `PLACEHOLDER`. `cook` refuses a cook
//! that fails it. `network: none` is refused for flavors that need their model API
//! ([`super::lint_network`]).

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::{Brief, JudgingMode};

// The dummy's own script parser, so that lint refuses exactly what the dummy would refuse at
// run time (one parser for the host and the cells, as `creds` shares its member list).
#[path = "../../crates/mc-cell-src/script.rs"]
#[allow(dead_code, unreachable_pub, missing_docs, clippy::pedantic)]
mod dummy_script;

/// One lint finding: the file, what is wrong, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file at fault (`JUDGE_BRIEF.md`, `BRIEF.md`, `brief.yaml`).
    pub file: &'static str,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.file, self.problem, self.fix)
    }
}

/// A dummy cell's `model:` that the dummy would refuse at run time (issue 25: lint accepted
/// what then made the cell exit 2). A lone model name is fine: the dummy ignores it.
fn dummy_models(brief: &Brief, findings: &mut Vec<Finding>) {
    let actors = brief.participants.iter().chain(&brief.judges);
    for actor in actors.filter(|a| a.flavor == "dummy") {
        let Some(model) = &actor.model else { continue };
        if let Err(error) = dummy_script::parse(model) {
            let why = error.0.trim_start_matches("mc-cell: ");
            findings.push(Finding {
                file: "brief.yaml",
                problem: format!("`{}` (dummy) has model `{model}`: {why}", actor.name),
                fix: "give dummy directives separated by commas (docs/FLAVORS.md, the dummy), \
                      or one model name, which the dummy ignores"
                    .into(),
            });
        }
    }
}

/// A scale stated in prose: `scale 0-5`, `on a 1 to 10 scale`, `0–5 scale`.
static SCALE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bscale\b[^0-9\n]{0,20}(-?\d+)\s*(?:-|–|—|to|\.\.)\s*(-?\d+)|(-?\d+)\s*(?:-|–|—|to|\.\.)\s*(-?\d+)[^0-9\n]{0,6}\bscale\b")
        .expect("a valid regex")
});

/// A Harbor cook's `task/` must still be the task whose hash brief.yaml records.
fn harbor_task(cook: &Path, brief: &Brief, findings: &mut Vec<Finding>) {
    use crate::error::Hint;
    if let Some(harbor) = &brief.harbor
        && let Err(error) = crate::harbor::in_cook(cook, &harbor.task, &harbor.hash)
    {
        findings.push(Finding {
            file: crate::harbor::COOK_TASK_DIR,
            problem: error.to_string(),
            fix: error.hint().unwrap_or_default(),
        });
    }
}

/// Lints a cook folder against its parsed brief.
pub fn lint(cook: &Path, brief: &Brief) -> Vec<Finding> {
    let mut findings = Vec::new();
    match std::fs::read_to_string(cook.join("BRIEF.md")) {
        Err(_) => findings.push(Finding {
            file: "BRIEF.md",
            problem: "is missing".into(),
            fix: "write the participants' task in BRIEF.md".into(),
        }),
        Ok(text) if text.trim().is_empty() => findings.push(Finding {
            file: "BRIEF.md",
            problem: "is empty".into(),
            fix: "write the participants' task in BRIEF.md".into(),
        }),
        Ok(text) => placeholder("BRIEF.md", &text, &mut findings),
    }
    super::lint_verify::lint_hidden(cook, brief, &mut findings);
    harbor_task(cook, brief, &mut findings);
    super::lint_network::lint_network(cook, brief, &mut findings);
    dummy_models(brief, &mut findings);
    if brief.judges.is_empty() {
        return findings;
    }
    let Ok(judge_brief) = std::fs::read_to_string(cook.join("JUDGE_BRIEF.md")) else {
        findings.push(Finding {
            file: "JUDGE_BRIEF.md",
            problem: "is missing, but brief.yaml lists judges".into(),
            fix: "write how to score in JUDGE_BRIEF.md (`multicooker new` writes a template)"
                .into(),
        });
        return findings;
    };
    placeholder("JUDGE_BRIEF.md", &judge_brief, &mut findings);
    if let Some(rubric) = brief.rubric.as_ref().filter(|r| !r.dimensions.is_empty()) {
        let absent: Vec<&str> = rubric
            .dimensions
            .iter()
            .map(|d| d.id.as_str())
            .filter(|id| !has_word(&judge_brief, id))
            .collect();
        if !absent.is_empty() {
            findings.push(Finding {
                file: "JUDGE_BRIEF.md",
                problem: format!(
                    "never names the rubric dimension(s) {} (as whole words)",
                    absent
                        .iter()
                        .map(|id| format!("`{id}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                fix: "describe each brief.yaml rubric dimension by its id, or rename the ids"
                    .into(),
            });
        }
        for caps in SCALE.captures_iter(&judge_brief) {
            let number = |a: usize, b: usize| {
                caps.get(a)
                    .or_else(|| caps.get(b))
                    .and_then(|m| m.as_str().parse::<i64>().ok())
            };
            if let (Some(lo), Some(hi)) = (number(1, 3), number(2, 4))
                && (lo, hi) != rubric.scale
            {
                findings.push(Finding {
                    file: "JUDGE_BRIEF.md",
                    problem: format!(
                        "states the scale {lo}–{hi}, but brief.yaml's rubric.scale is [{}, {}]",
                        rubric.scale.0, rubric.scale.1
                    ),
                    fix: "make the two scales the same".into(),
                });
            }
        }
        for dimension in &rubric.dimensions {
            for stated in stated_weights(&judge_brief, &dimension.id) {
                if stated != dimension.weight {
                    findings.push(Finding {
                        file: "JUDGE_BRIEF.md",
                        problem: format!(
                            "gives `{}` a weight of {stated} %, but brief.yaml gives it {} %",
                            dimension.id, dimension.weight
                        ),
                        fix: "make the weights the same in both files".into(),
                    });
                }
            }
        }
    }
    if brief.judging.mode == JudgingMode::Pairwise && judge_brief.contains("scores.json") {
        findings.push(Finding {
            file: "JUDGE_BRIEF.md",
            problem: "asks for scores.json, but `judging.mode: pairwise` judges write verdicts.json".into(),
            fix: "describe what makes one submission better than another, without an output format (the prompt gives it)".into(),
        });
    }
    findings
}

fn placeholder(file: &'static str, text: &str, findings: &mut Vec<Finding>) {
    if text.contains("PLACEHOLDER") {
        findings.push(Finding {
            file,
            problem: "still contains the template's `PLACEHOLDER`".into(),
            fix: format!("replace every PLACEHOLDER in {file} with your own text"),
        });
    }
}

/// True when `word` occurs in `text` not inside a longer identifier.
fn has_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Percentages stated on the same line as the dimension id (`correctness (60 %)`).
fn stated_weights(text: &str, id: &str) -> Vec<u32> {
    static PERCENT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(\d{1,3})\s*%").expect("a valid regex"));
    text.lines()
        .filter(|line| has_word(line, id))
        .filter_map(|line| {
            let mut found = PERCENT.captures_iter(line);
            let first = found.next()?;
            // Two percentages on one line say nothing certain about this id.
            found
                .next()
                .is_none()
                .then(|| first[1].parse().ok())
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brief::parse;

    fn brief(extra: &str) -> Brief {
        let yaml = format!(
            "name: t\nparticipants:\n  - {{name: a, flavor: dummy}}\njudges:\n  - {{name: j, flavor: dummy}}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {{id: rate, weight: 60}}\n    - {{id: clarity, weight: 40}}\n{extra}"
        );
        parse(Path::new("brief.yaml"), yaml.as_bytes())
            .unwrap()
            .brief
    }

    fn cook(brief_md: &str, judge_md: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("BRIEF.md"), brief_md).unwrap();
        fs_err::write(dir.path().join("JUDGE_BRIEF.md"), judge_md).unwrap();
        dir
    }

    #[test]
    fn a_consistent_cook_is_clean() {
        let dir = cook(
            "# Task\nDo it.\n",
            "Score on a 0-5 scale.\n- rate (60 %): how fast\n- clarity (40 %): how clear\n",
        );
        assert_eq!(lint(dir.path(), &brief("")), []);
    }

    /// Issue 25: lint accepted a dummy `model:` that the dummy refused at run time.
    #[test]
    fn a_dummy_model_the_dummy_refuses_is_a_finding_and_a_model_name_is_not() {
        let dir = cook(
            "# Task\nDo it.\n",
            "Score on a 0-5 scale.\n- rate (60 %): how fast\n- clarity (40 %): how clear\n",
        );
        let mut with_models = brief("");
        with_models.participants[0].model = Some("opus".into());
        with_models.judges[0].model = Some("quality:4,explode".into());
        let findings = lint(dir.path(), &with_models);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].file, "brief.yaml");
        assert!(
            findings[0].problem.contains("`j` (dummy)")
                && findings[0]
                    .problem
                    .contains("unknown dummy directive `explode`"),
            "{findings:?}"
        );
    }

    #[test]
    fn lint_is_not_satisfied_by_a_substring() {
        let dir = cook("Do it.\n", "Judge accuracy and clarity.\n");
        let findings = lint(dir.path(), &brief(""));
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].problem.contains("`rate`"), "{findings:?}");
    }

    #[test]
    fn scale_and_weight_drift_placeholders_and_a_missing_brief_are_found() {
        let dir = cook(
            "PLACEHOLDER\n",
            "Use a scale of 1 to 10.\n- rate: 50 % of the score\n- clarity\n",
        );
        let problems: Vec<String> = lint(dir.path(), &brief(""))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("BRIEF.md: still contains"))
        );
        assert!(
            problems.iter().any(|p| p.contains("states the scale 1–10")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("`rate` a weight of 50 %")),
            "{problems:?}"
        );
        fs_err::remove_file(dir.path().join("BRIEF.md")).unwrap();
        assert!(
            lint(dir.path(), &brief(""))
                .iter()
                .any(|f| f.file == "BRIEF.md" && f.problem == "is missing")
        );
    }

    #[test]
    fn pairwise_judges_are_not_asked_for_scores() {
        let dir = cook("Do it.\n", "rate and clarity; write scores.json\n");
        let findings = lint(dir.path(), &brief("judging: {mode: pairwise}\n"));
        assert!(findings.iter().any(|f| f.problem.contains("verdicts.json")));
    }
}

#[cfg(test)]
mod example_tests {
    use super::*;

    #[test]
    fn every_example_parses_and_lints_clean() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut names = Vec::new();
        for entry in fs_err::read_dir(&root).unwrap() {
            let dir = entry.unwrap().path();
            let loaded = crate::brief::load(&dir.join("brief.yaml"))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            assert!(
                loaded.warnings.is_empty(),
                "{}: {:?}",
                dir.display(),
                loaded.warnings
            );
            assert_eq!(lint(&dir, &loaded.brief), [], "{}", dir.display());
            names.push(dir.file_name().unwrap().to_string_lossy().into_owned());
        }
        names.sort();
        assert_eq!(
            names,
            [
                "code-review-audit",
                "design-landing",
                "hello-task",
                "implementation-spike",
                "multi-concept-ui",
                "technical-proposal"
            ],
            "the six kinds of the original's examples"
        );
    }

    #[test]
    fn a_cook_in_the_original_format_parses_and_lints_clean() {
        // The reference's shape: fixed name, policy warn, a flat `{"scores": …}` judge brief.
        let dir = tempfile::tempdir().unwrap();
        let yaml = "name: design-landing\ntimeout_s: 1800\njudge_timeout_s: 900\nparticipants:\n- name: claude\n  flavor: claude\n- name: codex\n  flavor: codex\njudges:\n- name: claude-judge\n  flavor: claude\n- name: agy-judge\n  flavor: agy\nrubric:\n  scale: [0, 5]\n  dimensions:\n  - id: correctness\n    weight: 50\n  - id: quality\n    weight: 30\n  - id: honesty\n    weight: 20\njudging:\n  policy: warn\n";
        fs_err::write(dir.path().join("brief.yaml"), yaml).unwrap();
        fs_err::write(
            dir.path().join("BRIEF.md"),
            "# Brief\n\nBuild a landing page.\n",
        )
        .unwrap();
        fs_err::write(
            dir.path().join("JUDGE_BRIEF.md"),
            "Score correctness, quality and honesty from 0 to 5.\n\nWrite `outbox/scores.json` as {\"scores\": {\"A\": {\"correctness\": 4, \"quality\": 3, \"honesty\": 5}}}\n",
        )
        .unwrap();
        let loaded = crate::brief::load(&dir.path().join("brief.yaml")).unwrap();
        assert_eq!(lint(dir.path(), &loaded.brief), []);
    }
}
