//! Scripted nights (issue 15): a real drop among noise, and a missing cell on the hardest brief.

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng};

use super::pool::{JudgedScore, pool_scores};
use super::store::{CellRecord, NightRecord};
use super::{changes, history_json};

/// Normal noise by Box–Muller over a seeded generator.
fn noise(rng: &mut StdRng, sd: f64) -> f64 {
    let (u, v): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
    sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

const BRIEFS: [(&str, f64); 5] = [
    ("b1", 5.0),
    ("b2", 0.0),
    ("b3", -3.0),
    ("b4", 8.0),
    ("b5", -20.0),
];

fn cell(brief: &str, participant: &str, score: Option<f64>) -> CellRecord {
    CellRecord {
        cook: format!("{brief}-r1"),
        brief: brief.to_owned(),
        repeat: 1,
        participant: participant.to_owned(),
        run_status: Some(if score.is_some() { "ok" } else { "failed" }.to_owned()),
        score,
        output_bytes: None,
    }
}

fn night(name: &str, cells: Vec<CellRecord>) -> NightRecord {
    NightRecord {
        id: 0,
        config: "n".into(),
        night: name.into(),
        started_at: "t".into(),
        finished_at: None,
        status: "ok".into(),
        seed: u64::MAX,
        method: "additive+cluster_jackknife_t".into(),
        failures: Vec::new(),
        comparable: true,
        reasons: Vec::new(),
        tied_groups: None,
        arms: Vec::new(),
        briefs: Vec::new(),
        estimates: ["a", "b", "c"]
            .iter()
            .map(|p| super::store::EstimateRecord {
                participant: (*p).to_owned(),
                estimate: Some(50.0),
                lo: None,
                hi: None,
                clusters: 5,
                scored_cells: 5,
                cells: 5,
                rank: Some(1),
                rank_worst: Some(3),
                rank_best: Some(1),
                rank_single: Some(false),
                incomplete: false,
                plain: None,
                length_controlled: None,
            })
            .collect(),
        cells,
        pass_rates: Vec::new(),
        spend: Vec::new(),
        task_rewards: Vec::new(),
    }
}

// Participant a drops 8 points on every brief; b and c move by noise (sd 1.5 per brief score):
// only a's change is significant, and the night says what it could have detected.
#[test]
fn only_a_real_drop_is_significant_among_noise() {
    let mut rng = StdRng::seed_from_u64(15);
    let base = [("a", 70.0), ("b", 60.0), ("c", 55.0)];
    let mut nights = Vec::new();
    for (n, drop) in [("2026-11-21", 0.0), ("2026-11-22", 8.0)] {
        let cells = BRIEFS
            .iter()
            .flat_map(|(brief, ease)| base.iter().map(move |(p, q)| (brief, ease, p, q)))
            .map(|(brief, ease, p, q)| {
                let lost = if *p == "a" { drop } else { 0.0 };
                cell(brief, p, Some(q + ease - lost + noise(&mut rng, 1.5)))
            })
            .collect();
        nights.push(night(n, cells));
    }
    let found = changes(&nights[0], &nights[1]);
    let significant: Vec<(&str, bool)> = found
        .iter()
        .filter(|c| c["kind"] == "score")
        .map(|c| {
            (
                c["participant"].as_str().unwrap_or("?"),
                c["significant"] == true,
            )
        })
        .collect();
    assert_eq!(
        significant,
        [("a", true), ("b", false), ("c", false)],
        "{found:#?}"
    );
    let a = found.iter().find(|c| c["participant"] == "a").expect("a");
    let (lo, hi) = (a["lo"].as_f64().expect("lo"), a["hi"].as_f64().expect("hi"));
    assert!(lo < -8.0 + 3.0 && hi > -8.0 - 3.0 && hi < 0.0, "{a}");
    let history = history_json("n", std::path::Path::new("h.sqlite"), &nights);
    let design = &history["nights"][1]["change_design"];
    let mdd = design["minimum_detectable_difference"]
        .as_f64()
        .expect("mdd");
    assert!(
        mdd > 1.0 && mdd < 8.0,
        "8 points is detectable, noise is not: {design}"
    );
    assert_eq!(history["nights"][0]["seed"], u64::MAX.to_string());
}

// Three participants of equal quality, two judges (±3 leniency), five briefs of which b5 is
// the hardest (−20): c failed on b5. The plain mean over its remaining briefs is raised; the
// model's brief effects keep its estimate with the others', and it is marked incomplete.
#[test]
fn a_missing_cell_on_the_hardest_brief_raises_no_mean_and_is_marked() {
    let mut rng = StdRng::seed_from_u64(7);
    let names = ["a", "b", "c"];
    let mut scores = Vec::new();
    let mut cells = Vec::new();
    for (brief, (brief_name, ease)) in BRIEFS.iter().enumerate() {
        for (participant, name) in names.iter().enumerate() {
            let missing = *name == "c" && *brief_name == "b5";
            let mut cell_values = Vec::new();
            for (judge, lenient) in [3.0, -3.0].iter().enumerate() {
                if missing {
                    continue;
                }
                let value = 60.0 + ease + lenient + noise(&mut rng, 1.0);
                cell_values.push(value);
                scores.push(JudgedScore {
                    brief,
                    judge,
                    participant,
                    value,
                    output_bytes: None,
                });
            }
            #[expect(clippy::cast_precision_loss, reason = "two judges")]
            let score = (!cell_values.is_empty())
                .then(|| cell_values.iter().sum::<f64>() / cell_values.len() as f64);
            cells.push(cell(brief_name, name, score));
        }
    }
    let pooled = pool_scores(&names, &scores, &cells, (BRIEFS.len(), 2));
    let get = |p: &str| {
        pooled
            .estimates
            .iter()
            .find(|e| e.participant == p)
            .expect("estimated")
    };
    let (a, c) = (get("a"), get("c"));
    let raised = c.plain.expect("plain") - a.plain.expect("plain");
    assert!(
        raised > 3.0,
        "the plain mean rises without the hardest brief: {raised}"
    );
    let gap = c.estimate.expect("c") - a.estimate.expect("a");
    assert!(
        gap.abs() < 1.5,
        "brief effects keep c with the others: {gap}"
    );
    assert!(c.incomplete && !a.incomplete && !get("b").incomplete);
    assert_eq!((c.scored_cells, c.cells), (4, 5));
    assert!(
        pooled.estimates.iter().all(|e| e.rank == Some(1)),
        "{:?}",
        pooled.estimates
    );
}

// Equal participants whose outputs change size from brief to brief, judged by judges that add
// 4 points per doubling: the plain estimates follow whoever wrote more on average, the
// length-controlled ones (slope fitted within briefs) do not.
#[test]
fn a_size_slope_within_briefs_gives_length_controlled_estimates() {
    let mut rng = StdRng::seed_from_u64(3);
    let names = ["a", "b", "c"];
    // a writes 4–8 KB, b 2–4 KB, c 1–2 KB, varying by brief
    let kilobytes = [[4, 2, 1], [8, 4, 2], [4, 4, 1], [8, 2, 2], [4, 2, 2]];
    let mut scores = Vec::new();
    let mut cells = Vec::new();
    for (brief, (brief_name, ease)) in BRIEFS.iter().enumerate() {
        for (participant, name) in names.iter().enumerate() {
            let bytes = kilobytes[brief][participant] * 1024;
            #[expect(clippy::cast_precision_loss, reason = "small sizes")]
            let doublings = (bytes as f64).log2();
            for judge in 0..2 {
                let value = 40.0 + ease + 4.0 * doublings + noise(&mut rng, 1.0);
                scores.push(JudgedScore {
                    brief,
                    judge,
                    participant,
                    value,
                    output_bytes: Some(bytes),
                });
            }
            cells.push(cell(brief_name, name, Some(0.0)));
        }
    }
    let pooled = pool_scores(&names, &scores, &cells, (BRIEFS.len(), 2));
    let get = |p: &str| {
        pooled
            .estimates
            .iter()
            .find(|e| e.participant == p)
            .expect("estimated")
    };
    let plain_gap = get("a").estimate.expect("a") - get("c").estimate.expect("c");
    // a writes 1.8 doublings more than c on average: 4 × 1.8 = 7.2 points
    assert!(
        plain_gap > 5.0,
        "the plain model rewards a's size: {plain_gap}"
    );
    let controlled_gap =
        get("a").length_controlled.expect("a") - get("c").length_controlled.expect("c");
    assert!(controlled_gap.abs() < 2.0, "controlled: {controlled_gap}");
}

#[test]
fn each_lost_node_is_named_with_the_cells_it_cost() {
    let runs = [
        serde_json::json!({"participants": [
            {"name": "a", "status": "ok", "node": "n1"},
            {"name": "b", "status": "node_lost", "node": "n2"},
        ]}),
        serde_json::json!({"participants": [
            {"name": "a", "status": "node_lost", "node": "n2"},
            {"name": "c", "status": "node_lost", "node": "n3"},
        ]}),
    ];
    assert_eq!(
        super::lost_nodes(&runs),
        [
            "node `n2` was lost: 2 cells not scored",
            "node `n3` was lost: 1 cell not scored"
        ]
    );
    assert!(super::lost_nodes(&[serde_json::json!({})]).is_empty());
}

/// Issue 25: a cell that was judged as it was left (it exited non-zero) makes the night
/// partial, and the night's failures say so; before, only unscored cells were listed.
#[test]
fn a_scored_cell_that_did_not_end_ok_is_a_reason() {
    let mut exited = cell("b1", "a", Some(40.0));
    exited.run_status = Some("non_zero_exit".into());
    let cells = vec![exited, cell("b1", "b", Some(60.0)), cell("b1", "c", None)];
    let lines = super::failures(&[], &cells, false);
    assert_eq!(
        lines,
        [
            "cook `b1-r1`: `c` not scored (ended `failed`)",
            "cook `b1-r1`: `a` ended `non_zero_exit` (its output was judged as it was left)",
        ]
    );
}

// Unchanged scores print no change line and a zero spread no power statement (issue 23: "76.7
// → 76.7 (+0.0 … not significant)" and "detects a change of 0.0 points or more").
#[test]
fn an_unchanged_night_prints_no_change_and_no_power_from_zero_spread() {
    let cells = || -> Vec<CellRecord> {
        BRIEFS
            .iter()
            .flat_map(|(brief, ease)| {
                [("a", 70.0), ("b", 60.0), ("c", 55.0)].map(|(p, q)| cell(brief, p, Some(q + ease)))
            })
            .collect()
    };
    let nights = [night("2026-11-21", cells()), night("2026-11-22", cells())];
    assert!(
        changes(&nights[0], &nights[1])
            .iter()
            .all(|c| c["kind"] != "score")
    );
    let history = history_json("n", std::path::Path::new("h.sqlite"), &nights);
    let design = &history["nights"][1]["change_design"];
    assert_eq!(
        design["minimum_detectable_difference"],
        serde_json::Value::Null
    );
    let text = super::history_text(&history).join("\n");
    assert!(
        text.contains("no power statement: the per-brief differences do not vary"),
        "{text}"
    );
    assert!(!text.contains("changed score"), "{text}");
}
