use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::brief::{self, Brief, JudgingPolicy};

/// Rubric 60/40 on the scale [1, 5] (lo ≠ 0), two judges, three participants.
const WORKED: &str = r"
name: worked
participants:
  - {name: alpha, flavor: claude}
  - {name: bravo, flavor: grok}
  - {name: charlie, flavor: agy}
judges:
  - {name: j1, flavor: claude}
  - {name: j2, flavor: codex}
rubric:
  scale: [1, 5]
  dimensions:
    - {id: correctness, weight: 60}
    - {id: quality, weight: 40}
judging: {policy: require_distinct_flavor}
";

fn parse_brief(text: &str) -> Brief {
    brief::parse(Path::new("brief.yaml"), text.as_bytes())
        .unwrap()
        .brief
}

/// A cook folder in a temp dir, written file by file.
struct Cook {
    _tmp: tempfile::TempDir,
    paths: CookPaths,
}

impl Cook {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let paths = CookPaths::new(tmp.path().join("251122-worked"));
        fs_err::create_dir_all(paths.judging().join("_inbox")).unwrap();
        Self { _tmp: tmp, paths }
    }

    fn file(&self, relative: &str, text: &str) -> &Self {
        let path = self.paths.dir().join(relative);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
        self
    }

    fn json(&self, relative: &str, value: &Value) -> &Self {
        self.file(relative, &value.to_string())
    }

    fn scores(&self, judge: &str, value: &Value) -> &Self {
        self.json(&format!("judging/{judge}/scores_deanon.json"), value)
    }

    fn report(&self, brief: &Brief) -> Report {
        aggregate(&load(&self.paths, brief).unwrap(), brief)
    }
}

fn canonical(pairs: &[(&str, Value)]) -> Value {
    let map: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, d)| ((*k).to_owned(), json!({ "dimensions": d })))
        .collect();
    Value::Object(map)
}

/// The worked example's scores. Score = Σ w·(s − 1)/4 / 100 × 100:
/// - j1 (claude): alpha {1, 1} → 0 (same flavor as alpha); bravo {4, 3} → 60·3/4 + 40·2/4 = 45 + 20 = 65;
///   charlie {7, 3} → rejected, 7 is outside [1, 5].
/// - j2 (codex): alpha {3, 5} → 60·2/4 + 40·4/4 = 30 + 40 = 70; bravo {5, 2} → 60 + 40·1/4 = 70;
///   charlie {5, –} → rejected, `quality` missing.
fn worked_cook() -> Cook {
    let cook = Cook::new();
    cook.scores(
        "j1",
        &canonical(&[
            ("alpha", json!({"correctness": 1, "quality": 1})),
            ("bravo", json!({"correctness": 4, "quality": 3})),
            ("charlie", json!({"correctness": 7, "quality": 3})),
        ]),
    )
    .scores(
        "j2",
        &canonical(&[
            ("alpha", json!({"correctness": 3, "quality": 5})),
            (
                "bravo",
                json!({"correctness": 5, "quality": 2, "style": 4.5}),
            ),
            ("charlie", json!({"correctness": 5})),
        ]),
    );
    cook
}

fn means(report: &Report) -> Vec<(Option<usize>, &str, Option<f64>, usize)> {
    report
        .standings
        .iter()
        .map(|s| (s.rank, s.participant.as_str(), s.mean_pct, s.num_judges))
        .collect()
}

fn close(actual: Option<f64>, expected: f64) -> bool {
    actual.is_some_and(|a| (a - expected).abs() < 1e-9)
}

#[test]
fn worked_example_under_require_distinct_flavor() {
    let report = worked_cook().report(&parse_brief(WORKED));
    // alpha: j1 excluded (claude judging claude) → j2 only = 70. bravo: (65 + 70) / 2 = 67.5.
    // charlie: both scores rejected → unscored, listed last, not ranked.
    // Leniency: on bravo, whom both scored, j2 gave 5 more than j1, so j2 = +2.5 and j1 = −2.5
    // around the average judge; alpha's 70 came from the lenient j2 alone: 70 − 2.5 = 67.5.
    // Adjusted, the two are equal, and nothing (no residual left to test on) separates them:
    // both rank 1, where the plain means made alpha #1 on one judge's word.
    let standings = means(&report);
    assert_eq!(
        standings
            .iter()
            .map(|s| (s.0, s.1, s.3))
            .collect::<Vec<_>>(),
        [
            (Some(1), "alpha", 1),
            (Some(1), "bravo", 2),
            (None, "charlie", 0)
        ]
    );
    assert!(
        close(standings[0].2, 70.0) && close(standings[1].2, 67.5),
        "{standings:?}"
    );
    let scores: Vec<Option<f64>> = report.standings.iter().map(|s| s.score_pct).collect();
    assert!(
        close(scores[0], 67.5) && close(scores[1], 67.5) && scores[2].is_none(),
        "{scores:?}"
    );
    let leniency: Vec<(&str, f64)> = report
        .jury
        .statistics
        .leniency
        .iter()
        .map(|l| (l.judge.as_str(), l.effect))
        .collect();
    assert!(
        leniency.len() == 2
            && (leniency[0].1 + 2.5).abs() < 1e-9
            && (leniency[1].1 - 2.5).abs() < 1e-9,
        "{leniency:?}"
    );
    assert_eq!(standings[2].2, None);
    assert_eq!(
        report.excluded,
        [ExcludedPair {
            judge: "j1".into(),
            participant: "alpha".into(),
            flavor: "claude".into()
        }]
    );
    let rejected: Vec<(&str, &str, &str)> = report
        .rejected
        .iter()
        .map(|r| (r.judge.as_str(), r.participant.as_str(), r.reason.as_str()))
        .collect();
    assert_eq!(
        rejected,
        [
            (
                "j1",
                "charlie",
                "`correctness` = 7 is outside the scale [1, 5]"
            ),
            ("j2", "charlie", "missing dimension `quality`"),
        ]
    );
    assert_eq!(report.unscored(), ["charlie"]);
    assert!(report.has_scores());
}

#[test]
fn worked_example_under_warn_keeps_the_same_flavor_pair() {
    let brief = parse_brief(&WORKED.replace("require_distinct_flavor", "warn"));
    let report = worked_cook().report(&brief);
    // alpha now counts j1's 0: (0 + 70) / 2 = 35, so bravo (67.5) is listed first. Their paired
    // differences over the two judges are 65 and 0: t = 32.5 / 32.5 = 1 on 1 degree of freedom,
    // p = 0.5, so both still rank 1 (range 1–2).
    let standings = means(&report);
    assert_eq!(
        (standings[0].0, standings[0].1, standings[0].3),
        (Some(1), "bravo", 2)
    );
    assert_eq!(
        (standings[1].0, standings[1].1, standings[1].3),
        (Some(1), "alpha", 2)
    );
    assert_eq!(report.standings[1].rank_worst, Some(2));
    let pair = &report.jury.statistics.pairs[0];
    assert!(
        !pair.separated && (pair.difference - 32.5).abs() < 1e-9,
        "{pair:?}"
    );
    assert!(
        close(standings[0].2, 67.5) && close(standings[1].2, 35.0),
        "{standings:?}"
    );
    assert!(report.excluded.is_empty());
    assert_eq!(report.policy, JudgingPolicy::Warn);
}

#[test]
fn the_policy_recorded_by_the_judge_run_wins_over_the_brief() {
    let cook = worked_cook();
    cook.json(
        "JUDGE_RESULT.json",
        &json!({"finished_at": "t", "policy": "allow_self", "judges": []}),
    );
    let report = cook.report(&parse_brief(WORKED));
    assert_eq!(report.policy, JudgingPolicy::AllowSelf);
    assert!(report.excluded.is_empty());
    assert_eq!(report.generated_at.as_deref(), Some("t"));
}

#[test]
fn ties_keep_brief_order() {
    let cook = Cook::new();
    let same = json!({"correctness": 3, "quality": 3});
    cook.scores(
        "j2",
        &canonical(&[
            ("charlie", same.clone()),
            ("bravo", same.clone()),
            ("alpha", same),
        ]),
    );
    let report = cook.report(&parse_brief(WORKED));
    let order: Vec<_> = report
        .standings
        .iter()
        .map(|s| (s.rank, s.participant.as_str()))
        .collect();
    // One judge: nothing can be tested, so equal scores share rank 1 (issue 15: they were 1, 2, 3).
    assert_eq!(
        order,
        [(Some(1), "alpha"), (Some(1), "bravo"), (Some(1), "charlie")]
    );
}

#[test]
fn flat_scores_from_the_python_tool_are_read() {
    let cook = Cook::new();
    // The reference's tolerant parser kept flat entries: every number but `total` is a dimension.
    cook.file(
        "judging/j2/scores_deanon.json",
        r#"{"alpha": {"correctness": 5, "quality": 3, "total": 4.2, "note": "ok", "pass": true}}"#,
    );
    let report = cook.report(&parse_brief(WORKED));
    let JudgeSection::Scored { entries, .. } = &report.breakdown[0] else {
        panic!("{:?}", report.breakdown)
    };
    assert_eq!(
        entries[0].dimensions,
        [
            ("correctness".to_owned(), json!(5)),
            ("quality".to_owned(), json!(3))
        ]
    );
    // 60·4/4 + 40·2/4 = 80.
    assert!(close(entries[0].score_pct, 80.0));
    assert!(close(report.standings[0].mean_pct, 80.0));
}

#[test]
fn unknown_keys_are_shown_but_never_ranked() {
    let cook = Cook::new();
    cook.scores(
        "j2",
        &canonical(&[
            ("zulu", json!({"correctness": 5, "quality": 5})),
            ("alpha", json!({"correctness": 1, "quality": 1})),
        ]),
    );
    let report = cook.report(&parse_brief(WORKED));
    let JudgeSection::Scored { entries, .. } = &report.breakdown[0] else {
        panic!()
    };
    assert_eq!(
        entries.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
        ["alpha", "zulu"]
    );
    assert_eq!(
        report.standings.iter().filter(|s| s.rank.is_some()).count(),
        1
    );
    assert_eq!(report.unscored(), ["bravo", "charlie"]);
}

#[test]
fn missing_judging_folder_is_no_judging_with_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = CookPaths::new(tmp.path().join("251122-worked"));
    fs_err::create_dir_all(paths.dir()).unwrap();
    let error = load(&paths, &parse_brief(WORKED)).unwrap_err();
    assert!(matches!(&error, ReportError::NoJudging { path } if *path == paths.judging()));
    assert_eq!(
        error.hint().as_deref(),
        Some("run `multicooker judge 251122-worked` first")
    );
}

#[test]
fn load_ignores_strangers_and_skips_unparseable_scores() {
    let cook = worked_cook();
    cook.file("judging/j1/scores_deanon.json", "{not json")
        .scores(
            "stranger",
            &canonical(&[("alpha", json!({"correctness": 5, "quality": 5}))]),
        )
        .scores(
            "_previous",
            &canonical(&[("alpha", json!({"correctness": 5, "quality": 5}))]),
        );
    let input = load(&cook.paths, &parse_brief(WORKED)).unwrap();
    assert_eq!(
        input
            .scores
            .iter()
            .map(|s| s.judge.as_str())
            .collect::<Vec<_>>(),
        ["j2"]
    );
    assert_eq!(input.skipped.len(), 1);
    assert_eq!(input.skipped[0].judge, "j1");
    assert!(
        input.skipped[0]
            .reason
            .starts_with("`scores_deanon.json` is not valid JSON"),
        "{:?}",
        input.skipped
    );
}

#[test]
fn the_latest_refine_round_supplies_the_run_entries() {
    let cook = worked_cook();
    let entry = |status: &str| json!({"participants": [{"name": "alpha", "status": status, "duration_s": 1.0}], "round": 1});
    cook.json("RUN_RESULT.json", &entry("ok"))
        .json("REFINE_2_RESULT.json", &entry("timed_out"))
        .file("REFINE_10_RESULT.json", "garbage");
    let input = load(&cook.paths, &parse_brief(WORKED)).unwrap();
    // Round 10 is the highest and unreadable: round 10, no entries.
    assert_eq!((input.round, input.run_entries.len()), (10, 0));
    fs_err::remove_file(cook.paths.dir().join("REFINE_10_RESULT.json")).unwrap();
    let input = load(&cook.paths, &parse_brief(WORKED)).unwrap();
    assert_eq!(
        (input.round, input.run_entries[0].status.as_deref()),
        (2, Some("timed_out"))
    );
}

#[test]
fn no_accepted_score_is_the_no_scores_case() {
    let cook = Cook::new();
    cook.scores(
        "j2",
        &canonical(&[("alpha", json!({"correctness": 9, "quality": 1}))]),
    );
    let report = cook.report(&parse_brief(WORKED));
    assert!(!report.has_scores());
    // Issue 25: an earlier ranking does not stay beside a no-scores summary.
    fs_err::write(cook.paths.leaderboard(), "| 1 | alpha | 90.0 |\n").unwrap();
    let written = write(&cook.paths, &report).unwrap();
    assert!(written.no_scores && written.leaderboard.is_none());
    assert!(!cook.paths.leaderboard().exists());
    let summary: Value = serde_json::from_slice(&fs_err::read(&written.summary).unwrap()).unwrap();
    assert_eq!(summary["status"], "no_scores");
    assert_eq!(
        (
            summary["ranking"].clone(),
            summary["judges_used"].clone(),
            summary["per_judge"].clone()
        ),
        (json!([]), json!([]), json!({}))
    );
    assert_eq!(summary["artifacts"], json!({}));
    assert_eq!(
        summary["rejected_pairs"][0]["reason"],
        "`correctness` = 9 is outside the scale [1, 5]"
    );
}

/// The worked example plus run results, a judge-run file, a review, an unknown key, a failed
/// judge and a rejection recorded by the judge step (one of them a duplicate).
fn full_cook() -> Cook {
    let cook = worked_cook();
    let usage = |tokens: u64, cost: f64| json!({"total_tokens": tokens, "cost_usd": cost, "input_tokens": 1});
    cook.json("RUN_RESULT.json", &json!({
        "finished_at": "2025-11-22T10:00:00.000000+00:00",
        "round": 1,
        "participants": [
            {"name": "alpha", "flavor": "claude", "status": "ok", "exit_code": 0, "duration_s": 12.34, "usage": usage(1234, 0.0123)},
            {"name": "bravo", "flavor": "grok", "status": "ok", "exit_code": 0, "duration_s": 61.0, "usage": null},
            {"name": "charlie", "flavor": "agy", "status": "timed_out", "exit_code": null, "duration_s": 30.0, "usage": usage(1_000_000, 1.5)},
        ],
        "usage_totals": {"all": {"total_tokens": 1_001_234}},
    }))
    .json("JUDGE_RESULT.json", &json!({
        "finished_at": "2025-11-22T11:00:00.000000+00:00",
        "policy": "require_distinct_flavor",
        "seed": 7,
        "judges": [
            {"name": "j1", "flavor": "claude", "ok": true, "status": "ok", "count": 3, "duration_s": 4.5, "usage": {"total_tokens": 77},
             "rejected": [{"participant": "charlie", "reason": "`correctness` = 7 is outside the scale [1, 5]"}], "excluded": ["alpha"]},
            {"name": "j2", "flavor": "codex", "ok": true, "status": "ok", "count": 4, "duration_s": 5.0, "usage": null,
             "rejected": [{"participant": "Q", "reason": "label `Q` is not in the mapping"}]},
            {"name": "j3", "flavor": "grok", "ok": false, "status": "invalid_json", "reason": "expected value at line 1", "duration_s": 2.0},
        ],
    }))
    .file("judging/j2/review.md", "\n  Alpha is solid; charlie forgot quality.\n\n")
    .json("judging/j2/scores_deanon.json", &json!({
        "alpha": {"dimensions": {"correctness": 3, "quality": 5}, "total": 4},
        "bravo": {"dimensions": {"quality": 2, "correctness": 5, "style": 4.5}},
        "charlie": {"dimensions": {"correctness": 5}},
        "zulu": {"dimensions": {"correctness": 2, "quality": 2.0}},
    }));
    cook
}

fn full_brief() -> Brief {
    parse_brief(&WORKED.replace(
        "  - {name: j2, flavor: codex}",
        "  - {name: j2, flavor: codex}\n  - {name: j3, flavor: grok}",
    ))
}

#[test]
fn leaderboard_and_summary_snapshots() {
    let cook = full_cook();
    let report = cook.report(&full_brief());
    let written = write(&cook.paths, &report).unwrap();
    assert!(!written.no_scores);
    let leaderboard = fs_err::read_to_string(written.leaderboard.unwrap()).unwrap();
    assert!(leaderboard.ends_with(")\n") && !leaderboard.ends_with("\n\n"));
    insta::assert_snapshot!("leaderboard", leaderboard);
    insta::assert_snapshot!("summary", fs_err::read_to_string(written.summary).unwrap());
}

#[test]
fn same_cook_gives_identical_bytes() {
    let cook = full_cook();
    let brief = full_brief();
    let first = cook.report(&brief);
    let second = cook.report(&brief);
    assert_eq!(render_leaderboard(&first), render_leaderboard(&second));
    let (a, b) = (
        fsx::to_json_pretty(&render_summary(&first)),
        fsx::to_json_pretty(&render_summary(&second)),
    );
    assert_eq!(a, b);
    write(&cook.paths, &first).unwrap();
    let before = fs_err::read(cook.paths.summary()).unwrap();
    write(&cook.paths, &second).unwrap();
    assert_eq!(before, fs_err::read(cook.paths.summary()).unwrap());
}

#[test]
fn without_judges_or_rubric_every_judge_folder_counts_on_a_0_to_5_scale() {
    let brief = parse_brief(
        "name: plain\nparticipants:\n  - {name: alpha, flavor: dummy}\n  - {name: bravo, flavor: dummy}\n",
    );
    let cook = Cook::new();
    // docs/BEHAVIOR.md §6.2: {correctness: 4} → 80.0; {correctness: 3, quality: 4} → 70.0.
    cook.scores(
        "anyone",
        &json!({"alpha": {"correctness": 4}, "bravo": {"correctness": 3, "quality": 4}}),
    );
    let report = cook.report(&brief);
    assert_eq!(report.judges_used, ["anyone"]);
    assert!(close(report.standings[0].mean_pct, 80.0) && close(report.standings[1].mean_pct, 70.0));
    let leaderboard = render_leaderboard(&report);
    // One judge: no interval, nothing separated, both rank 1= with range 1–2.
    assert!(
        leaderboard.contains(
            "| 1= | alpha | 80.0 | none | 1–2 | 80.0 | ? | 1 | ? | ? | ? | ? |\n| 1= | bravo | 70.0 | none | 1–2 | 70.0 | ? | 1 | ? | ? | ? | ? |\n"
        ),
        "{leaderboard}"
    );
    assert!(leaderboard.contains("one judge's word"), "{leaderboard}");
    assert!(leaderboard.contains("no rubric in `brief.yaml`"));
    assert!(!leaderboard.contains("**Total**") && !leaderboard.contains("## Judge run metrics"));
}

// Issue 23: judges that agree exactly leave no spread; the note says they agreed, not that an
// interval needs judges whose scores differ.
#[test]
fn judges_that_agree_exactly_are_named_as_such() {
    let cook = Cook::new();
    cook.json(
        "JUDGE_RESULT.json",
        &json!({"finished_at": "t", "policy": "allow_self", "judges": []}),
    );
    let rows = [
        ("alpha", json!({"correctness": 5, "quality": 4})),
        ("bravo", json!({"correctness": 3, "quality": 3})),
        ("charlie", json!({"correctness": 2, "quality": 1})),
    ];
    for judge in ["j1", "j2"] {
        cook.scores(judge, &canonical(&rows));
    }
    let report = cook.report(&parse_brief(WORKED));
    let note = report.jury.statistics.note.clone().unwrap_or_default();
    assert!(note.contains("the 2 judges agreed exactly"), "{note}");
    assert!(
        report
            .jury
            .statistics
            .estimates
            .iter()
            .all(|e| e.lo.is_none())
    );
}
