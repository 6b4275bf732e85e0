//! Hidden verification (issue 14, "Hidden verification: tests the participants never see
//! decide part of the score"), against the real engine: the happy path, participants that
//! cheat, loop or ship hostile trees, a verifier image that does not build, hidden material
//! absent from every other cell, and archives without it.

use crate::common::{TestCook, dummy_brief, show};

/// A canary only the hidden folder holds.
pub(crate) const CANARY: &str = "HIDDENcanary9d4Kq";

/// The dummy runner's spec: an answer file, a program to run, a file the brief asks for.
pub(crate) fn spec(report: &str) -> String {
    format!(
        r#"{{"report": "{report}", "tests": [
  {{"name": "answer is right", "file": "answer.txt", "equals_file": "expected/answer.txt"}},
  {{"name": "program prints the answer", "run": "solution.mcs", "expect": "42"}},
  {{"name": "result written", "file": "RESULT.md", "exists": true}},
  {{"name": "canary {CANARY} stays hidden", "skip": "documents the canary"}}
]}}
"#
    )
}

/// A cook whose participants are `(name, model)`, with `verify:` (`verify` appended inside it)
/// and a hidden `verify/` folder for the dummy runner.
pub(crate) fn verify_cook(
    tag: &str,
    participants: &[(&str, &str)],
    verify: &str,
    report: &str,
) -> TestCook {
    let mut brief = dummy_brief(participants, "");
    let timeout = if verify.contains("timeout_s") {
        ""
    } else {
        ", timeout_s: 30"
    };
    brief.push_str(&format!("verify: {{image: dummy{timeout}{verify}}}\n"));
    let cook = TestCook::new(tag, &brief);
    let hidden = cook.dir().join("verify");
    fs_err::create_dir_all(hidden.join("expected")).unwrap();
    fs_err::write(hidden.join("tests.json"), spec(report)).unwrap();
    fs_err::write(hidden.join("expected/answer.txt"), "42\n").unwrap();
    fs_err::write(hidden.join("NOTES.md"), format!("{CANARY}\n")).unwrap();
    cook
}

pub(crate) fn totals(result: &serde_json::Value) -> (u64, u64, u64, u64) {
    let t = &result["totals"];
    let n = |k: &str| t[k].as_u64().unwrap();
    (n("passed"), n("failed"), n("errors"), n("skipped"))
}

#[test]
fn cook_runs_the_hidden_tests_on_every_sealed_output_and_a_rerun_keeps_the_earlier_results() {
    let cook = verify_cook(
        "verify",
        &[
            ("right", "quality:4,solve:42"),
            ("wrong", "quality:4,solve:41"),
        ],
        "",
        "junit",
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let right = cook.json("verification/right/result.json");
    assert_eq!(right["outcome"], "completed", "{right}");
    assert_eq!(right["source"], "junit");
    assert_eq!(totals(&right), (3, 0, 0, 1));
    let wrong = cook.json("verification/wrong/result.json");
    assert_eq!(totals(&wrong), (1, 2, 0, 1), "{wrong}");
    assert!(
        cook.dir()
            .join("verification/wrong/results/junit.xml")
            .is_file()
    );
    let status = cook.json("status.json");
    assert_eq!(status["state"], "sealed", "the cook's state comes back");
    assert_eq!(status["cells"]["verify/right"]["role"], "verifier");
    // Resumable: nothing changed, so nothing runs again.
    let again = cook.run_args(&["verify", cook.name()]);
    assert_eq!(again.status.code(), Some(0), "{}", show(&again));
    assert!(String::from_utf8_lossy(&again.stdout).contains("(kept)"));
    assert!(!cook.dir().join("verification/_previous").exists());
    // --all runs again and keeps the earlier results.
    let all = cook.run_args(&["verify", cook.name(), "--all", "--participants", "wrong"]);
    assert_eq!(all.status.code(), Some(0), "{}", show(&all));
    let previous: Vec<_> = fs_err::read_dir(cook.dir().join("verification/_previous"))
        .unwrap()
        .collect();
    assert_eq!(previous.len(), 1);
    let kept = previous[0]
        .as_ref()
        .unwrap()
        .path()
        .join("wrong/result.json");
    assert!(kept.is_file(), "{}", kept.display());
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn the_report_puts_the_pass_rate_beside_the_jury_and_combines_them_with_the_briefs_weights() {
    let cook = verify_cook(
        "vreport",
        &[
            ("best", "quality:5,solve:42"),
            ("good", "quality:4,solve:42"),
            ("poor", "quality:2,solve:1"),
        ],
        "",
        "junit",
    );
    let brief = cook.text("brief.yaml") + "scoring: {verify: 60, jury: 40}\n";
    fs_err::write(cook.dir().join("brief.yaml"), brief).unwrap();
    cook.cook_judge_report();
    let summary = cook.json("summary.json");
    let verification = &summary["verification"];
    assert_eq!(verification["interval"], "wilson");
    let rows = verification["participants"].as_array().unwrap();
    assert_eq!(rows[0]["pass_pct"], 100.0, "{verification}");
    assert_eq!(rows[2]["passed"], 1, "{verification}");
    let value = |i: usize, key: &str| rows[i][key].as_f64().unwrap();
    for i in 0..3 {
        let expected = (60.0 * value(i, "pass_pct") + 40.0 * value(i, "jury_pct")) / 100.0;
        assert!(
            (value(i, "combined_pct") - expected).abs() < 0.02,
            "{i}: {verification}"
        );
    }
    assert_eq!(verification["agreement"]["n"], 3);
    let ranking = summary["ranking"].as_array().unwrap();
    assert!(ranking.iter().all(|r| r["tests_pct"].is_number()));
    let board = cook.text("leaderboard.md");
    assert!(
        board.contains("| Tests % (95 % Wilson) | Combined % |"),
        "{board}"
    );
    assert!(board.contains("## Hidden tests"), "{board}");
    assert!(
        board.contains("Jury and tests agree: Spearman ρ"),
        "{board}"
    );
    let html = cook.text("leaderboard.html");
    assert!(html.contains("id=\"hidden-tests\""));
    assert!(
        !board.contains(CANARY) && !html.contains(CANARY),
        "test names stay out of reports"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn judges_may_see_the_test_summary_and_a_judge_that_rewards_an_empty_submission_is_flagged() {
    let mut brief = String::from(
        "name: test\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {name: a, flavor: dummy, model: \"quality:4,solve:42\"}\n  - {name: b, flavor: dummy, model: \"quality:2,solve:1\"}\n",
    );
    brief.push_str("judges:\n  - {name: fair, flavor: dummy}\n  - {name: lenient, flavor: dummy, model: generous}\n");
    brief.push_str(
        "rubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 100}\n",
    );
    brief.push_str("judging: {policy: allow_self, null_participant: true}\n");
    brief.push_str("verify: {image: dummy, timeout_s: 30, jury: summary}\n");
    let cook = TestCook::new("vnull", &brief);
    let hidden = cook.dir().join("verify");
    fs_err::create_dir_all(hidden.join("expected")).unwrap();
    fs_err::write(hidden.join("tests.json"), spec("junit")).unwrap();
    fs_err::write(hidden.join("expected/answer.txt"), "42\n").unwrap();
    cook.cook_judge_report();
    let mapping = cook.json("judging/_mapping.json");
    let labels = mapping["judges"]["fair"]["labels"]
        .as_object()
        .unwrap()
        .clone();
    let label_of = |who: &str| {
        labels.iter().find(|(_, p)| *p == who).map_or_else(
            || panic!("{who} has no label: {mapping}"),
            |(l, _)| l.clone(),
        )
    };
    let tests_line = |who: &str| {
        cook.text(&format!(
            "judging/_work-fair/submissions/{}/TESTS.txt",
            label_of(who)
        ))
    };
    assert_eq!(
        tests_line("a"),
        "Hidden tests: 3 of 3 passed (0 did not).\n"
    );
    assert_eq!(
        tests_line("b"),
        "Hidden tests: 1 of 3 passed (2 did not).\n"
    );
    assert_eq!(
        tests_line("_null"),
        "Hidden tests: not run on this submission.\n"
    );
    assert!(
        cook.text("judging/_work-fair/PROMPT.txt")
            .contains("TESTS.txt")
    );
    let summary = cook.json("summary.json");
    let checks = summary["null_participant"]["judges"].as_array().unwrap();
    let check = |judge: &str| checks.iter().find(|c| c["judge"] == judge).unwrap().clone();
    assert_eq!(check("fair")["flagged"], false, "{checks:?}");
    assert_eq!(check("fair")["score_pct"], 0.0);
    assert_eq!(check("lenient")["flagged"], true, "{checks:?}");
    let ranked: Vec<&str> = summary["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["participant"].as_str().unwrap())
        .collect();
    assert!(!ranked.contains(&"_null"), "{ranked:?}");
    assert!(
        cook.text("leaderboard.md")
            .contains("- lenient: 100.0 % — FLAGGED")
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
