//! Scripted judges of known behaviour (issue 15): each case gives the aggregation synthetic
//! scores or verdicts and checks the reading the report must give.

use indexmap::IndexMap;
use serde_json::json;

use super::input::{JudgeGuesses, JudgeResult, JudgeScores, JudgeVerdicts, ReportInput};
use super::{Report, aggregate};
use crate::brief::{self, Brief};

fn parse(text: &str) -> Brief {
    let text =
        format!("{text}rubric: {{scale: [0, 5], dimensions: [{{id: overall, weight: 100}}]}}\n");
    brief::parse(std::path::Path::new("brief.yaml"), text.as_bytes())
        .unwrap()
        .brief
}

/// Three participants and three judges of the same three flavors.
fn brief(judging: &str) -> Brief {
    parse(&format!(
        "name: scripted\nparticipants:\n  - {{name: ada, flavor: claude}}\n  - {{name: bo, flavor: codex}}\n  - {{name: cy, flavor: grok}}\njudges:\n  - {{name: jc, flavor: claude}}\n  - {{name: jx, flavor: codex}}\n  - {{name: jg, flavor: grok}}\njudging: {judging}\n"
    ))
}

/// A judge's percent scores as dimensions on the default 0–5 scale.
fn scores(judge: &str, pct: &[(&str, f64)]) -> JudgeScores {
    JudgeScores {
        judge: judge.to_owned(),
        entries: pct
            .iter()
            .map(|(p, s)| {
                let mut dims = IndexMap::new();
                dims.insert("overall".to_owned(), json!(s / 20.0));
                ((*p).to_owned(), dims)
            })
            .collect(),
        review: None,
    }
}

fn estimate(report: &Report, name: &str) -> f64 {
    report
        .standings
        .iter()
        .find(|s| s.participant == name)
        .and_then(|s| s.score_pct)
        .expect("scored")
}

// Equal work (60 %) judged by a lenient (+10), a harsh (−10) and a neutral judge, each barred
// from its own flavor, with ±1 of noise: the plain means spread by the judges' leniency, the
// adjusted scores do not, and nobody is separated.
#[test]
fn lenient_harsh_and_neutral_judges_of_equal_work_rank_them_equal() {
    let brief = brief("{policy: require_distinct_flavor}");
    let input = ReportInput {
        scores: vec![
            scores("jc", &[("bo", 71.8), ("cy", 69.1)]),
            scores("jg", &[("ada", 60.9), ("bo", 58.7)]),
            scores("jx", &[("ada", 49.6), ("cy", 50.2)]),
        ],
        ..ReportInput::default()
    };
    let report = aggregate(&input, &brief);
    let plain: Vec<f64> = report.standings.iter().filter_map(|s| s.mean_pct).collect();
    let spread = |v: &[f64]| {
        v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
    };
    assert!(
        spread(&plain) > 9.0,
        "plain means follow the judges: {plain:?}"
    );
    let adjusted = ["ada", "bo", "cy"].map(|p| estimate(&report, p));
    assert!(spread(&adjusted) < 2.0, "adjusted: {adjusted:?}");
    assert!(report.standings.iter().all(|s| s.rank == Some(1)));
    assert!(report.jury.statistics.pairs.iter().all(|p| !p.separated));
    let lenient = report
        .jury
        .statistics
        .leniency
        .iter()
        .find(|l| l.judge == "jc")
        .expect("jc");
    assert!((lenient.effect - 10.0).abs() < 1.5, "{lenient:?}");
}

/// Both orders of every pair; `winner(first, second)`.
fn both_orders(
    judge: &str,
    names: &[&str],
    winner: impl Fn(&str, &str) -> Option<String>,
) -> JudgeVerdicts {
    let mut rows: Vec<(String, String, Option<String>)> = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            rows.push(((*a).to_owned(), (*b).to_owned(), winner(a, b)));
            rows.push(((*b).to_owned(), (*a).to_owned(), winner(b, a)));
        }
    }
    JudgeVerdicts {
        judge: judge.to_owned(),
        verdicts: rows,
        review: None,
    }
}

fn pairwise_input(judges: Vec<JudgeVerdicts>) -> ReportInput {
    ReportInput {
        judge_result: Some(JudgeResult {
            mode: Some("pairwise".into()),
            seed: Some(3),
            ..JudgeResult::default()
        }),
        verdicts: judges,
        ..ReportInput::default()
    }
}

// A judge that always picks the submission shown first is flagged; with
// `exclude_inconsistent_judges` its forced ties leave the estimates.
#[test]
fn a_position_biased_judge_is_flagged_and_excluded_when_the_brief_says_so() {
    let names = ["ada", "bo", "cy"];
    let better = |a: &str, b: &str| Some(if a < b { a } else { b }.to_owned());
    let judges = || {
        vec![
            both_orders("jc", &names, |first, _| Some(first.to_owned())),
            both_orders("jg", &names, better),
            both_orders("jx", &names, better),
        ]
    };
    let kept = aggregate(&pairwise_input(judges()), &brief("{mode: pairwise}"));
    let flagged: Vec<(&str, bool, bool)> = kept
        .jury
        .agreement
        .judges_consistency
        .iter()
        .map(|c| (c.judge.as_str(), c.flagged, c.excluded))
        .collect();
    assert_eq!(
        flagged,
        [
            ("jc", true, false),
            ("jg", false, false),
            ("jx", false, false)
        ]
    );
    let excluded = aggregate(
        &pairwise_input(judges()),
        &brief("{mode: pairwise, exclude_inconsistent_judges: true}"),
    );
    assert!(excluded.jury.agreement.judges_consistency[0].excluded);
    assert_eq!(excluded.jury.statistics.clusters, 2);
    // Its ties pulled the best toward 50; without them the best scores higher.
    assert!(estimate(&excluded, "ada") > estimate(&kept, "ada"));
}

// Pairwise α is the same whatever the order of participants in brief.yaml (it once swung from
// −0.044 to 0.732).
#[test]
fn pairwise_alpha_does_not_depend_on_the_order_of_participants() {
    let names = ["ada", "bo", "cy"];
    let judges = vec![
        both_orders("jg", &names, |a, b| {
            Some(if a < b { a } else { b }.to_owned())
        }),
        both_orders("jx", &names, |a, b| match (a, b) {
            ("bo", _) | (_, "bo") => Some("bo".to_owned()),
            _ => None,
        }),
        both_orders("jc", &names, |a, b| {
            Some(if a < b { a } else { b }.to_owned())
        }),
    ];
    let orders = [
        ["ada", "bo", "cy"],
        ["cy", "bo", "ada"],
        ["bo", "cy", "ada"],
    ];
    let alphas: Vec<f64> = orders
        .iter()
        .map(|order| {
            let flavors = ["claude", "codex", "grok"];
            let participants: String = order
                .iter()
                .zip(flavors)
                .map(|(n, f)| format!("  - {{name: {n}, flavor: {f}}}\n"))
                .collect();
            let brief = parse(&format!("name: s\nparticipants:\n{participants}judges:\n  - {{name: jc, flavor: claude}}\n  - {{name: jx, flavor: codex}}\n  - {{name: jg, flavor: grok}}\njudging: {{mode: pairwise}}\n"));
            aggregate(&pairwise_input(judges.clone()), &brief)
                .jury
                .agreement
                .alpha
                .expect("alpha")
        })
        .collect();
    assert!(
        alphas.iter().all(|a| (a - alphas[0]).abs() < 1e-12),
        "{alphas:?}"
    );
}

// A judge that always names the majority vendor (4 of 6 submissions) is right 4 times, as a
// shuffle of the vendors would be: not de-anonymizing (it was, at p = 0.007).
#[test]
fn a_majority_vendor_guesser_is_not_called_de_anonymizing() {
    let flavors = ["claude", "claude", "claude", "claude", "codex", "grok"];
    let guesses: Vec<(String, String, String)> = flavors
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            // pairwise judges guess once per comparison: several guesses per submission
            (0..5).map(move |_| (format!("p{i}"), "claude".to_owned(), (*f).to_owned()))
        })
        .collect();
    let probe = super::probes::blinding(
        &[JudgeGuesses {
            judge: "jg".into(),
            vendors: 3,
            guesses,
        }],
        11,
    );
    let b = &probe[0];
    assert_eq!((b.guesses, b.raw_guesses, b.hits), (6, 30, 4));
    assert!((b.chance - 4.0 / 6.0).abs() < 1e-12);
    assert!(b.p_value.is_some_and(|p| p > 0.5), "{b:?}");
}

// A judge 15 points more lenient than the others on everyone, its own flavor included, shows a
// big raw "self minus others" but no self-preference beyond its leniency.
#[test]
fn a_lenient_judge_without_self_preference_is_not_called_self_preferring() {
    let brief = parse(
        "name: s\nparticipants:\n  - {name: ada, flavor: claude}\n  - {name: bo, flavor: codex}\n  - {name: cy, flavor: grok}\n  - {name: di, flavor: agy}\njudges:\n  - {name: jc, flavor: claude}\n  - {name: jx, flavor: codex}\n  - {name: jg, flavor: grok}\njudging: {self_preference: true}\n",
    );
    let quality = [("ada", 60.0), ("bo", 50.0), ("cy", 70.0), ("di", 55.0)];
    let noise = [
        0.8, -1.1, 0.4, -0.3, 1.2, -0.6, 0.2, -0.9, 0.7, -0.2, 1.0, -0.5,
    ];
    let judge = |name: &str, lenient: f64, offset: usize| {
        let pct: Vec<(&str, f64)> = quality
            .iter()
            .enumerate()
            .map(|(i, (p, q))| (*p, q + lenient + noise[offset + i]))
            .collect();
        scores(name, &pct)
    };
    let input = ReportInput {
        judge_result: Some(JudgeResult {
            self_preference: true,
            ..JudgeResult::default()
        }),
        scores: vec![
            judge("jc", 15.0, 0),
            judge("jg", 0.0, 4),
            judge("jx", 0.0, 8),
        ],
        ..ReportInput::default()
    };
    let report = aggregate(&input, &brief);
    let jc = report
        .jury
        .self_preference
        .iter()
        .find(|s| s.judge == "jc")
        .expect("jc judged its own flavor");
    let raw = jc.self_mean_pct - jc.others_mean_pct.expect("others scored ada");
    assert!(raw > 12.0, "raw self minus others: {raw}");
    let (lo, hi) = (jc.lo.expect("lo"), jc.hi.expect("hi"));
    assert!(lo < 0.0 && 0.0 < hi, "difference in differences {jc:?}");
    assert!(jc.delta_pct.is_some_and(|d| d.abs() < 3.0), "{jc:?}");
}

// Equal work whose judges all add 5 points per doubling of size (1, 2 and 4 KB): the report
// measures about +5 per doubling for each judge and the panel, and the length-controlled
// scores come out equal where the plain ones spread by 10.
#[test]
fn judges_that_reward_size_show_a_slope_and_length_control_takes_it_out() {
    let brief = brief("{policy: warn}");
    let sizes = [("ada", 1024_u64), ("bo", 2048), ("cy", 4096)];
    let noise = [0.4, -0.3, 0.2, -0.5, 0.1, 0.3, -0.2, 0.5, -0.4];
    let judge = |name: &str, lenient: f64, offset: usize| {
        let pct: Vec<(&str, f64)> = sizes
            .iter()
            .enumerate()
            .map(|(i, (p, bytes))| {
                #[expect(clippy::cast_precision_loss, reason = "small sizes")]
                let doublings = (*bytes as f64 / 1024.0).log2();
                (*p, 55.0 + lenient + 5.0 * doublings + noise[offset + i])
            })
            .collect();
        scores(name, &pct)
    };
    let input = ReportInput {
        scores: vec![
            judge("jc", 4.0, 0),
            judge("jg", 0.0, 3),
            judge("jx", -4.0, 6),
        ],
        output_bytes: sizes.iter().map(|(p, b)| ((*p).to_owned(), *b)).collect(),
        ..ReportInput::default()
    };
    let report = aggregate(&input, &brief);
    let length = report.jury.length.as_ref().expect("sizes and three judges");
    assert!((length.slope.estimate - 5.0).abs() < 1.0, "{length:?}");
    assert!(
        length.judges.iter().all(|(_, s)| (s - 5.0).abs() < 1.5),
        "{length:?}"
    );
    let controlled: Vec<f64> = report
        .jury
        .statistics
        .estimates
        .iter()
        .map(|e| e.length_controlled.expect("sized"))
        .collect();
    let spread = |v: &[f64]| {
        v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
    };
    assert!(spread(&controlled) < 1.5, "{controlled:?}");
    assert!(
        report
            .jury
            .statistics
            .estimates
            .iter()
            .all(|e| e.output_bytes.is_some())
    );
    let leaderboard = super::render_leaderboard(&report);
    assert!(
        leaderboard.contains("| 4.0 KB |") && leaderboard.contains("Length-controlled scores"),
        "{leaderboard}"
    );
}

// Issue 23: a slope the judges do not agree on (interval over judges reaching 0) is not taken
// out: no length-controlled score, and the table's order is the estimates'.
#[test]
fn a_slope_not_distinguishable_from_zero_gives_no_length_controlled_score() {
    let brief = brief("{policy: warn}");
    let sizes = [("ada", 1024_u64), ("bo", 2048), ("cy", 65536)];
    let judge = |name: &str, pct: [f64; 3]| {
        let rows: Vec<(&str, f64)> = sizes.iter().zip(pct).map(|((p, _), v)| (*p, v)).collect();
        scores(name, &rows)
    };
    let input = ReportInput {
        scores: vec![
            judge("jc", [80.0, 70.0, 78.0]),
            judge("jg", [78.0, 72.0, 50.0]),
            judge("jx", [82.0, 68.0, 62.0]),
        ],
        output_bytes: sizes.iter().map(|(p, b)| ((*p).to_owned(), *b)).collect(),
        ..ReportInput::default()
    };
    let report = aggregate(&input, &brief);
    let length = report.jury.length.as_ref().expect("sizes and three judges");
    assert!(length.slope.lo.expect("lo") < 0.0 && length.slope.hi.expect("hi") > 0.0);
    assert!(length.withheld.is_some());
    assert!(
        report
            .jury
            .statistics
            .estimates
            .iter()
            .all(|e| e.length_controlled.is_none())
    );
    let leaderboard = super::render_leaderboard(&report);
    assert!(
        leaderboard.contains("no length-controlled score"),
        "{leaderboard}"
    );
    let order: Vec<&str> = report
        .standings
        .iter()
        .map(|s| s.participant.as_str())
        .collect();
    assert_eq!(order, ["ada", "bo", "cy"]);
}
