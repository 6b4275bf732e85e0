//! The hidden tests in the report: each participant's pass rate with a Wilson interval beside
//! the jury's score, the combined score with `scoring:` weights, and how far the jury's and the
//! tests' orderings agree (Spearman's ρ, Kendall's τ-b). Pure: the same results give the same
//! numbers. An unscored verification (build, engine, cancel) is shown as such, never as 0; a
//! combined score needs both parts.

use serde_json::{Value, json};

use super::format::{fixed, round2};
use crate::brief::{Brief, Scoring};
use crate::state::verification::{Verification, pass_counts};

/// Level of the pass rate's interval.
pub const LEVEL: f64 = 0.95;

/// The hidden tests' part of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct VerificationReport {
    /// One row per brief participant, brief order.
    pub rows: Vec<Row>,
    /// `scoring:` weights, when the brief sets them.
    pub weights: Option<Scoring>,
    /// Spearman's ρ and Kendall's τ-b between jury scores and pass rates, when defined.
    pub agreement: Option<(mc_stats::RankCorrelation, mc_stats::RankCorrelation)>,
}

/// One participant's tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Participant.
    pub participant: String,
    /// Its result's outcome name (`completed`, `timed_out`, `build_failed` …); `None` when never
    /// verified.
    pub outcome: Option<String>,
    /// Why, when it did not complete.
    pub reason: Option<String>,
    /// Passed, counted tests, unreported ones; `None` when unscored.
    pub passed: Option<(u64, u64, u64)>,
    /// The pass rate and its Wilson interval, in percent.
    pub rate: Option<mc_stats::Proportion>,
    /// The jury's score in percent, when scored.
    pub jury_pct: Option<f64>,
    /// `(verify × rate + jury × score) / (verify + jury)`, in percent, when both are there.
    pub combined_pct: Option<f64>,
}

/// The verification report, when the brief has `verify:` or some result exists.
pub fn build(
    brief: &Brief,
    results: &[Option<Verification>],
    jury: &[(String, Option<f64>)],
) -> Option<VerificationReport> {
    if brief.verify.is_none() && results.iter().all(Option::is_none) {
        return None;
    }
    let expected = brief.verify.as_ref().and_then(|v| v.tests);
    let refs: Vec<Option<&Verification>> = results.iter().map(Option::as_ref).collect();
    let counts = pass_counts(&refs, expected);
    let weights = brief.scoring;
    let rows: Vec<Row> = brief
        .participants
        .iter()
        .zip(results.iter().zip(&counts))
        .map(|(participant, (result, count))| {
            let rate = count.and_then(|c| mc_stats::wilson_interval(c.passed, c.trials, LEVEL));
            let jury_pct = jury
                .iter()
                .find(|(p, _)| *p == participant.name)
                .and_then(|(_, s)| *s);
            let combined_pct = match (weights, rate, jury_pct) {
                (Some(w), Some(rate), Some(score)) => {
                    let (wv, wj) = (f64::from(w.verify), f64::from(w.jury));
                    Some((wv * rate.estimate * 100.0 + wj * score) / (wv + wj))
                }
                _ => None,
            };
            Row {
                participant: participant.name.clone(),
                outcome: result.as_ref().map(|r| r.outcome.as_str().to_owned()),
                reason: result.as_ref().and_then(|r| r.reason.clone()),
                passed: count.map(|c| (c.passed, c.trials, c.unreported)),
                rate,
                jury_pct,
                combined_pct,
            }
        })
        .collect();
    let pairs: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.jury_pct?, r.rate?.estimate)))
        .collect();
    let (x, y): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
    let agreement = mc_stats::spearman(&x, &y).zip(mc_stats::kendall_tau_b(&x, &y));
    Some(VerificationReport {
        rows,
        weights,
        agreement,
    })
}

impl VerificationReport {
    /// The row of a participant.
    pub fn row(&self, participant: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.participant == participant)
    }
}

/// `Tests %` and `Combined %` cells of the ranking table.
pub(super) fn ranking_cells(report: &VerificationReport, participant: &str) -> (String, String) {
    let row = report.row(participant);
    let tests = match row.and_then(|r| r.rate) {
        Some(rate) => format!(
            "{} ({}–{})",
            fixed(rate.estimate * 100.0, 1),
            fixed(rate.lo * 100.0, 1),
            fixed(rate.hi * 100.0, 1)
        ),
        None => "unscored".to_owned(),
    };
    let combined = row
        .and_then(|r| r.combined_pct)
        .map_or_else(|| "–".to_owned(), |c| fixed(c, 1));
    (tests, combined)
}

/// The "Hidden tests" section of leaderboard.md.
pub(super) fn markdown(report: &VerificationReport, lines: &mut Vec<String>) {
    lines.extend(
        [
            "",
            "## Hidden tests",
            "",
            "Pass rate = passed / (passed + failed + errors), tests the runner never reported counted as errors; 95 % Wilson interval. A verification that could not run (image, engine, cancel) is unscored, never 0.",
        ]
        .map(String::from),
    );
    if let Some(w) = report.weights {
        lines.push(format!(
            "Combined = ({} × pass rate + {} × jury score) / {} (`scoring:` in brief.yaml).",
            w.verify,
            w.jury,
            w.verify + w.jury
        ));
    }
    lines.extend(
        [
            "",
            "| Participant | Passed | Pass % | 95 % interval | Outcome | Note |",
            "|-------------|--------|--------|---------------|---------|------|",
        ]
        .map(String::from),
    );
    for row in &report.rows {
        let passed = row.passed.map_or_else(
            || "–".to_owned(),
            |(p, n, unreported)| {
                if unreported > 0 {
                    format!("{p}/{n} ({unreported} unreported)")
                } else {
                    format!("{p}/{n}")
                }
            },
        );
        let (pct, interval) = row.rate.map_or_else(
            || ("unscored".to_owned(), "–".to_owned()),
            |r| {
                (
                    fixed(r.estimate * 100.0, 1),
                    format!("{} – {}", fixed(r.lo * 100.0, 1), fixed(r.hi * 100.0, 1)),
                )
            },
        );
        let note = row
            .reason
            .as_deref()
            .map_or_else(String::new, |r| r.replace('|', "\\|").replace('\n', " "));
        lines.push(format!(
            "| {} | {passed} | {pct} | {interval} | {} | {note} |",
            row.participant,
            row.outcome.as_deref().unwrap_or("not verified"),
        ));
    }
    lines.push(String::new());
    lines.push(agreement_line("tests", report.agreement.as_ref()));
}

/// The line saying how far the jury's ordering and `other`'s agree (leaderboard.md).
pub(super) fn agreement_line(
    other: &str,
    agreement: Option<&(mc_stats::RankCorrelation, mc_stats::RankCorrelation)>,
) -> String {
    match agreement {
        Some((rho, tau)) => format!(
            "Jury and {other} agree: Spearman ρ = {}, Kendall τ-b = {} over {} participants{}.",
            fixed(rho.coefficient, 2),
            fixed(tau.coefficient, 2),
            rho.n,
            if rho.n < 5 {
                " (too few to read much into)"
            } else {
                ""
            }
        ),
        None => format!(
            "Jury and {other} agree: not measurable (fewer than two participants with both, or no spread)."
        ),
    }
}

/// The agreement in summary.json.
pub(super) fn agreement_json(
    agreement: Option<&(mc_stats::RankCorrelation, mc_stats::RankCorrelation)>,
) -> Value {
    agreement.map_or(Value::Null, |(rho, tau)| {
        json!({
            "spearman": round2(rho.coefficient),
            "spearman_p": rho.p_value.map(round2),
            "kendall_tau_b": round2(tau.coefficient),
            "n": rho.n,
        })
    })
}

/// `verification` in summary.json.
pub(super) fn summary(report: &VerificationReport) -> Value {
    let rows: Vec<Value> = report
        .rows
        .iter()
        .map(|r| {
            json!({
                "participant": r.participant,
                "outcome": r.outcome,
                "reason": r.reason,
                "passed": r.passed.map(|p| p.0),
                "counted": r.passed.map(|p| p.1),
                "unreported": r.passed.map(|p| p.2),
                "pass_pct": r.rate.map(|p| round2(p.estimate * 100.0)),
                "lo": r.rate.map(|p| round2(p.lo * 100.0)),
                "hi": r.rate.map(|p| round2(p.hi * 100.0)),
                "jury_pct": r.jury_pct.map(round2),
                "combined_pct": r.combined_pct.map(round2),
            })
        })
        .collect();
    json!({
        "level": LEVEL,
        "interval": "wilson",
        "weights": report.weights.map(|w| json!({"verify": w.verify, "jury": w.jury})),
        "participants": rows,
        "agreement": agreement_json(report.agreement.as_ref()),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::state::verification::Totals;
    use crate::state::verification::{Outcome, SCHEMA_VERSION};

    fn result(participant: &str, outcome: Outcome, (passed, failed): (u64, u64)) -> Verification {
        Verification {
            schema_version: SCHEMA_VERSION,
            participant: participant.into(),
            outcome,
            reason: (!outcome.scored()).then(|| "the image did not build".into()),
            source: None,
            totals: Totals {
                passed,
                failed,
                ..Totals::default()
            },
            expected_tests: Some(10),
            tests: Vec::new(),
            exit_code: None,
            duration_s: 0.0,
            started_at: None,
            finished_at: "t".into(),
            output_sha256: None,
            image: "dummy".into(),
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    fn brief() -> Brief {
        crate::brief::parse(
            Path::new("b.yaml"),
            b"name: t\nparticipants:\n  - {name: a, flavor: dummy}\n  - {name: b, flavor: dummy}\n  - {name: c, flavor: dummy}\n  - {name: d, flavor: dummy}\nverify: {image: dummy}\nscoring: {verify: 3, jury: 1}\n",
        )
        .unwrap()
        .brief
    }

    #[test]
    fn pass_rates_get_wilson_intervals_and_combine_only_when_both_parts_exist() {
        let results = vec![
            Some(result("a", Outcome::Completed, (7, 3))),
            Some(result("b", Outcome::TimedOut, (2, 0))),
            Some(result("c", Outcome::BuildFailed, (0, 0))),
            None,
        ];
        let jury = vec![
            ("a".to_owned(), Some(60.0)),
            ("b".to_owned(), Some(80.0)),
            ("c".to_owned(), Some(50.0)),
            ("d".to_owned(), None),
        ];
        let report = build(&brief(), &results, &jury).unwrap();
        let a = report.row("a").unwrap();
        assert_eq!(a.passed, Some((7, 10, 0)));
        let rate = a.rate.unwrap();
        assert!(
            (rate.lo - 0.396_778_147_461_145_37).abs() < 1e-12,
            "statsmodels' Wilson"
        );
        assert_eq!(a.combined_pct, Some((3.0 * 70.0 + 60.0) / 4.0));
        let b = report.row("b").unwrap();
        assert_eq!(
            b.passed,
            Some((2, 10, 8)),
            "8 unreported tests count as errors"
        );
        let c = report.row("c").unwrap();
        assert_eq!((c.rate, c.combined_pct), (None, None), "unscored, never 0");
        assert_eq!(report.row("d").unwrap().outcome, None);
        let (rho, tau) = report.agreement.unwrap();
        assert_eq!((rho.n, rho.coefficient, tau.coefficient), (2, -1.0, -1.0));
        let mut lines = Vec::new();
        markdown(&report, &mut lines);
        assert!(
            lines.contains(&"| a | 7/10 | 70.0 | 39.7 – 89.2 | completed |  |".to_owned()),
            "{lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("| b | 2/10 (8 unreported) | 20.0 |"))
        );
        assert!(lines.contains(
            &"| c | – | unscored | – | build_failed | the image did not build |".to_owned()
        ));
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("Combined = (3 × pass rate + 1 × jury score) / 4"))
        );
        let data = summary(&report);
        assert_eq!(data["participants"][0]["combined_pct"], 67.5);
        assert_eq!(data["participants"][2]["pass_pct"], serde_json::Value::Null);
    }

    #[test]
    fn a_brief_without_verify_and_no_results_has_no_section() {
        let brief = crate::brief::parse(
            Path::new("b.yaml"),
            b"name: t\nparticipants:\n  - {name: a, flavor: dummy}\n",
        )
        .unwrap()
        .brief;
        assert_eq!(build(&brief, &[None], &[]), None);
    }
}
