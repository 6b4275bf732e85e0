//! The null participant (`judging.null_participant`): an empty submission every judge scored
//! under a label like any other. A judge that gives it more than [`NULL_THRESHOLD_PCT`] is
//! flagged: it rewards form over substance, or does not read. Pure; the null's scores never
//! enter the ranking.

use serde_json::{Value, json};

use super::format::{fixed, round2};
use super::input::ReportInput;
use super::score::score;
use crate::brief::Brief;
use crate::state::NULL_PARTICIPANT;

/// Above this score (percent of the rubric's range) a judge's score of the empty submission is
/// flagged.
pub const NULL_THRESHOLD_PCT: f64 = 25.0;

/// One judge's score of the empty submission.
#[derive(Debug, Clone, PartialEq)]
pub struct NullCheck {
    /// Judge.
    pub judge: String,
    /// Its score in percent; `None` when it gave none or an invalid one.
    pub score_pct: Option<f64>,
    /// Above the threshold.
    pub flagged: bool,
}

/// Every judge's score of the null participant, sorted by judge; empty unless the brief asks.
pub fn null_checks(input: &ReportInput, brief: &Brief) -> Vec<NullCheck> {
    if !brief.judging.null_participant {
        return Vec::new();
    }
    input
        .scores
        .iter()
        .map(|scores| {
            let score_pct = scores
                .entries
                .get(NULL_PARTICIPANT)
                .and_then(|dimensions| score(dimensions, brief.rubric.as_ref()).ok());
            NullCheck {
                judge: scores.judge.clone(),
                score_pct,
                flagged: score_pct.is_some_and(|s| s > NULL_THRESHOLD_PCT),
            }
        })
        .collect()
}

/// The calibration section of leaderboard.md.
pub(super) fn markdown(checks: &[NullCheck], lines: &mut Vec<String>) {
    if checks.is_empty() {
        return;
    }
    lines.extend([
        String::new(),
        "## Calibration: the null participant".to_owned(),
        String::new(),
        format!(
            "An empty submission was judged under a label like any other; a judge that gives it more than {} % is flagged. Its scores are never ranked.",
            fixed(NULL_THRESHOLD_PCT, 0)
        ),
        String::new(),
    ]);
    for check in checks {
        let score = check
            .score_pct
            .map_or_else(|| "no score".to_owned(), |s| format!("{} %", fixed(s, 1)));
        let flag = if check.flagged { " — FLAGGED" } else { "" };
        lines.push(format!("- {}: {score}{flag}", check.judge));
    }
}

/// `null_participant` in summary.json.
pub(super) fn summary(checks: &[NullCheck]) -> Value {
    json!({
        "threshold_pct": NULL_THRESHOLD_PCT,
        "judges": checks.iter().map(|c| json!({"judge": c.judge, "score_pct": c.score_pct.map(round2), "flagged": c.flagged})).collect::<Vec<_>>(),
    })
}
