//! A Harbor task's reward in the report (docs/HARBOR.md, §8): each participant's reward from the
//! task's own verifier beside the jury's score, the two combined with `scoring:` weights, and
//! how far their orderings agree (Spearman's ρ, Kendall's τ-b). Pure. A participant without a
//! reward (no reward file, a malformed one, a timeout) is shown with the reason, never as 0;
//! a combined score needs both parts. One cook is one trial per participant: the reward has no
//! interval here (repeats and tasks give one at night).

use serde_json::{Value, json};

use super::format::{fixed, round2};
use crate::brief::{Brief, Scoring};
use crate::state::verification::TaskVerdict;

/// The rewards' part of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct RewardReport {
    /// The task hash the rewards are for (the first verdict's).
    pub task_hash: Option<String>,
    /// One row per brief participant, brief order.
    pub rows: Vec<RewardRow>,
    /// `scoring:` weights, when the brief sets them.
    pub weights: Option<Scoring>,
    /// Spearman's ρ and Kendall's τ-b between jury scores and rewards, when defined.
    pub agreement: Option<(mc_stats::RankCorrelation, mc_stats::RankCorrelation)>,
}

/// One participant's reward.
#[derive(Debug, Clone, PartialEq)]
pub struct RewardRow {
    /// Participant.
    pub participant: String,
    /// The reward, when the verifier gave one.
    pub reward: Option<f64>,
    /// Why not, or `None` when never verified.
    pub error: Option<String>,
    /// Whether a verdict exists.
    pub verified: bool,
    /// The jury's score in percent, when scored.
    pub jury_pct: Option<f64>,
    /// `(verify × reward × 100 + jury × score) / (verify + jury)`, when both are there.
    pub combined_pct: Option<f64>,
}

/// The reward report of a Harbor cook (`None` for any other cook).
pub fn build(
    brief: &Brief,
    verdicts: &[Option<TaskVerdict>],
    jury: &[(String, Option<f64>)],
) -> Option<RewardReport> {
    brief.harbor.as_ref()?;
    let weights = brief.scoring;
    let rows: Vec<RewardRow> = brief
        .participants
        .iter()
        .zip(verdicts)
        .map(|(participant, verdict)| {
            let reward = verdict.as_ref().and_then(|v| v.reward);
            let jury_pct = jury
                .iter()
                .find(|(p, _)| *p == participant.name)
                .and_then(|(_, s)| *s);
            let combined_pct = match (weights, reward, jury_pct) {
                (Some(w), Some(reward), Some(score)) => {
                    let (wv, wj) = (f64::from(w.verify), f64::from(w.jury));
                    Some((wv * reward * 100.0 + wj * score) / (wv + wj))
                }
                _ => None,
            };
            RewardRow {
                participant: participant.name.clone(),
                reward,
                error: verdict.as_ref().and_then(|v| v.error.clone()),
                verified: verdict.is_some(),
                jury_pct,
                combined_pct,
            }
        })
        .collect();
    let (x, y): (Vec<f64>, Vec<f64>) = rows
        .iter()
        .filter_map(|r| Some((r.jury_pct?, r.reward?)))
        .unzip();
    let agreement = mc_stats::spearman(&x, &y).zip(mc_stats::kendall_tau_b(&x, &y));
    Some(RewardReport {
        task_hash: verdicts
            .iter()
            .flatten()
            .map(|v| v.task_hash.clone())
            .next(),
        rows,
        weights,
        agreement,
    })
}

/// The "Task reward" section of leaderboard.md.
pub(super) fn markdown(report: &RewardReport, lines: &mut Vec<String>) {
    lines.extend(
        [
            "",
            "## Task reward",
            "",
            "Reward = what the task's own verifier (tests/test.sh) wrote, 0 to 1; the judges never see it. No reward (no file, a malformed one, a timeout) is shown as such, never as 0.",
        ]
        .map(String::from),
    );
    if let Some(w) = report.weights {
        lines.push(format!(
            "Combined = ({} × reward × 100 + {} × jury score) / {} (`scoring:` in brief.yaml).",
            w.verify,
            w.jury,
            w.verify + w.jury
        ));
    }
    lines.extend(
        [
            "",
            "| Participant | Reward | Jury % | Combined % | Note |",
            "|-------------|--------|--------|------------|------|",
        ]
        .map(String::from),
    );
    for row in &report.rows {
        let reward = match (row.reward, row.verified) {
            (Some(r), _) => fixed(r, 2),
            (None, true) => "no reward".to_owned(),
            (None, false) => "not verified".to_owned(),
        };
        let dash = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| fixed(v, 1));
        let note = row
            .error
            .as_deref()
            .map_or_else(String::new, |r| r.replace('|', "\\|").replace('\n', " "));
        lines.push(format!(
            "| {} | {reward} | {} | {} | {note} |",
            row.participant,
            dash(row.jury_pct),
            dash(row.combined_pct)
        ));
    }
    lines.push(String::new());
    lines.push(super::verification::agreement_line(
        "reward",
        report.agreement.as_ref(),
    ));
}

/// `task_reward` in summary.json.
pub(super) fn summary(report: &RewardReport) -> Value {
    let rows: Vec<Value> = report
        .rows
        .iter()
        .map(|r| {
            json!({
                "participant": r.participant,
                "reward": r.reward,
                "error": r.error,
                "verified": r.verified,
                "jury_pct": r.jury_pct.map(round2),
                "combined_pct": r.combined_pct.map(round2),
            })
        })
        .collect();
    json!({
        "task_hash": report.task_hash,
        "weights": report.weights.map(|w| json!({"verify": w.verify, "jury": w.jury})),
        "participants": rows,
        "agreement": super::verification::agreement_json(report.agreement.as_ref()),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const HASH: &str = "abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd";

    fn brief(scoring: &str) -> Brief {
        let yaml = format!(
            "name: t\nharbor: {{task: task, hash: {HASH}}}\n{scoring}participants:\n  - {{name: a, flavor: dummy}}\n  - {{name: b, flavor: dummy}}\n  - {{name: c, flavor: dummy}}\n"
        );
        crate::brief::parse(Path::new("b.yaml"), yaml.as_bytes())
            .unwrap()
            .brief
    }

    fn verdict(participant: &str, reward: Option<f64>) -> TaskVerdict {
        TaskVerdict {
            participant: participant.into(),
            reward,
            components: std::collections::BTreeMap::new(),
            error: reward.is_none().then(|| "no reward file".into()),
            task_hash: HASH.into(),
        }
    }

    #[test]
    fn rewards_sit_beside_the_jury_combined_by_the_weights_and_never_turned_into_0() {
        let brief = brief("scoring: {verify: 3, jury: 1}\n");
        let verdicts = [
            Some(verdict("a", Some(1.0))),
            Some(verdict("b", None)),
            None,
        ];
        let jury = [
            ("a".to_owned(), Some(60.0)),
            ("b".to_owned(), Some(80.0)),
            ("c".to_owned(), None),
        ];
        let report = build(&brief, &verdicts, &jury).unwrap();
        assert_eq!(report.rows[0].combined_pct, Some(90.0));
        assert_eq!(report.rows[1].reward, None);
        assert_eq!(report.rows[1].combined_pct, None);
        assert!(report.agreement.is_none(), "one participant has both");
        let mut lines = Vec::new();
        markdown(&report, &mut lines);
        let text = lines.join("\n");
        assert!(text.contains("| a | 1.00 | 60.0 | 90.0 |"), "{text}");
        assert!(
            text.contains("| b | no reward | 80.0 | – | no reward file |"),
            "{text}"
        );
        assert!(text.contains("| c | not verified |"), "{text}");
        assert_eq!(summary(&report)["participants"][1]["reward"], Value::Null);
    }

    #[test]
    fn agreement_is_measured_over_participants_with_both() {
        let brief = brief("");
        let verdicts = [
            Some(verdict("a", Some(1.0))),
            Some(verdict("b", Some(0.5))),
            Some(verdict("c", Some(0.0))),
        ];
        let jury = [
            ("a".to_owned(), Some(90.0)),
            ("b".to_owned(), Some(50.0)),
            ("c".to_owned(), Some(10.0)),
        ];
        let report = build(&brief, &verdicts, &jury).unwrap();
        let (rho, tau) = report.agreement.unwrap();
        assert!((rho.coefficient - 1.0).abs() < 1e-9);
        assert!((tau.coefficient - 1.0).abs() < 1e-9);
        assert!(
            report.rows.iter().all(|r| r.combined_pct.is_none()),
            "no weights"
        );
        let plain = crate::brief::parse(
            Path::new("b.yaml"),
            b"name: t\nparticipants:\n  - {name: a, flavor: dummy}\n",
        )
        .unwrap()
        .brief;
        assert!(build(&plain, &[None], &[]).is_none(), "not a Harbor cook");
    }
}
