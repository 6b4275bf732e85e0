//! A jury that measures its own biases, against the real engine: normalized judge copies,
//! pairwise verdicts in both orders (a position-biased judge is caught), self-preference and
//! the blinding probe, with a second flavor defined by the cook itself.

use serde_json::Value;

use crate::common::{TestCook, dummy_brief, show};

fn pairwise_brief(participants: &[(&str, &str)], judges: &[(&str, &str)]) -> String {
    let mut yaml = dummy_brief(participants, "").replace(
        "judging: {policy: allow_self}\n",
        "judging: {policy: allow_self, mode: pairwise}\n",
    );
    let mut list = String::from("judges:\n");
    for (name, model) in judges {
        list.push_str(&format!(
            "  - {{name: {name}, flavor: dummy, model: \"{model}\"}}\n"
        ));
    }
    yaml = yaml.replace(
        "judges:\n  - {name: referee, flavor: dummy, model: \"\"}\n",
        &list,
    );
    yaml
}

fn cook_judge_report(cook: &TestCook) -> Value {
    for command in ["cook", "judge", "report"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    cook.json("summary.json")
}

#[test]
fn pairwise_judges_see_every_pair_in_both_orders_and_rank_by_bradley_terry() {
    // Brief order mid, high, low: pair outcomes vary, so α is defined.
    let participants = [
        ("mid", "quality:3"),
        ("high", "quality:5"),
        ("low", "quality:1"),
    ];
    let cook = TestCook::new(
        "pairwise",
        &pairwise_brief(&participants, &[("referee", ""), ("umpire", "")]),
    );
    let summary = cook_judge_report(&cook);
    let mapping = cook.json("judging/_mapping.json");
    let comparisons = mapping["judges"]["referee"]["comparisons"]
        .as_object()
        .unwrap();
    assert_eq!(comparisons.len(), 6, "3 pairs × 2 orders");
    for entry in comparisons.values() {
        let swapped = comparisons
            .values()
            .filter(|c| c["A"] == entry["B"] && c["B"] == entry["A"])
            .count();
        assert_eq!(swapped, 1, "each order has its mirror: {entry}");
    }
    let submissions = cook.dir().join("judging/_work-referee/submissions");
    assert!(submissions.join("01/A/out/RESULT.md").is_file());
    assert!(submissions.join("06/B/out/RESULT.md").is_file());
    let ranking: Vec<&str> = summary["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["participant"].as_str().unwrap())
        .collect();
    assert_eq!(ranking, ["high", "mid", "low"]);
    assert_eq!(summary["judging_mode"], "pairwise");
    assert_eq!(
        summary["judges_used"],
        serde_json::json!(["referee", "umpire"])
    );
    assert_eq!(
        summary["statistics"]["method"],
        "bradley_terry+cluster_jackknife_t"
    );
    assert_eq!(summary["agreement"]["position_consistency"], 1.0);
    assert_eq!(
        summary["agreement"]["pairs_both_orders"], 6,
        "3 pairs × 2 judges"
    );
    assert_eq!(summary["agreement"]["krippendorff_alpha"], 1.0);
    assert_eq!(
        summary["pairwise"]["verdicts"].as_array().unwrap().len(),
        12
    );
    let estimates = summary["statistics"]["estimates"].as_array().unwrap();
    assert!(estimates[0]["estimate"].as_f64().unwrap() > 50.0);
    assert!(estimates[2]["estimate"].as_f64().unwrap() < 50.0);
    let leaderboard = fs_err::read_to_string(cook.dir().join("leaderboard.md")).unwrap();
    assert!(
        leaderboard.contains("Position consistency: 100 % of 6 pairs"),
        "{leaderboard}"
    );
    assert!(
        leaderboard.contains("- **high** over low (both orders agree)")
            || leaderboard.contains("- **high** over mid (both orders agree)"),
        "{leaderboard}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn a_judge_that_always_prefers_the_first_is_position_inconsistent_and_its_pairs_tie() {
    let participants = [("low", "quality:1"), ("high", "quality:5")];
    let cook = TestCook::new(
        "position",
        &pairwise_brief(&participants, &[("biased", "prefer-first")]),
    );
    let summary = cook_judge_report(&cook);
    assert_eq!(summary["agreement"]["position_consistency"], 0.0);
    assert_eq!(summary["agreement"]["position_inconsistent"], 1);
    let pairs = summary["pairwise"]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1);
    assert_eq!(pairs[0]["outcome"], "tie");
    assert_eq!(pairs[0]["consistent"], false);
    let estimates = summary["statistics"]["estimates"].as_array().unwrap();
    for estimate in estimates {
        assert_eq!(
            estimate["estimate"], 50.0,
            "a disagreeing pair is a tie, not a win: {estimate}"
        );
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn judges_get_copies_without_vendor_files_or_attribution_and_the_report_lists_them() {
    let participants = [
        (
            "tagged",
            "quality:4,plant:CLAUDE.md,plant:.codex/sessions/s.jsonl,note:Co-Authored-By:_Claude_<noreply@anthropic.com>",
        ),
        ("plain", "quality:2"),
    ];
    let cook = TestCook::new("normalize", &dummy_brief(&participants, ""));
    let summary = cook_judge_report(&cook);
    let sealed = cook.dir().join("judging/_inbox/tagged/out");
    assert!(
        sealed.join("CLAUDE.md").is_file(),
        "the seal keeps everything"
    );
    let mapping = cook.json("judging/_mapping.json");
    let labels = mapping["judges"]["referee"]["labels"].as_object().unwrap();
    let label = labels
        .iter()
        .find(|(_, p)| *p == "tagged")
        .map(|(l, _)| l.clone())
        .unwrap();
    let copy = cook
        .dir()
        .join("judging/_work-referee/submissions")
        .join(label)
        .join("out");
    assert!(copy.join("RESULT.md").is_file());
    assert!(!copy.join("CLAUDE.md").exists() && !copy.join(".codex").exists());
    let result = fs_err::read_to_string(copy.join("RESULT.md")).unwrap();
    assert!(!result.contains("Co-Authored-By"), "{result}");
    assert_eq!(
        summary["normalized"]["tagged"],
        serde_json::json!([
            "out/.codex/",
            "out/CLAUDE.md",
            "out/RESULT.md: 1 attribution line"
        ])
    );
    assert_eq!(summary["normalized"]["plain"], serde_json::json!([]));
    assert_eq!(
        summary["ranking"][0]["participant"], "tagged",
        "judging still works on the copies"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Two vendor flavors without a registry: the cook defines `dummy1` and `dummy2` with the
/// dummy's own Dockerfile (a cook's own flavor counts as a vendor; the dummy does not).
fn two_flavor_cook(tag: &str, judging: &str) -> TestCook {
    let yaml = format!(
        "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {{name: ada, flavor: dummy1, model: \"quality:4\"}}\n  - {{name: bob, flavor: dummy2, model: \"quality:2\"}}\n\
judges:\n  - {{name: one, flavor: dummy1}}\n  - {{name: two, flavor: dummy2}}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {{id: correctness, weight: 60}}\n    - {{id: clarity, weight: 40}}\njudging: {judging}\n"
    );
    let cook = TestCook::empty(tag);
    let dockerfile = concat!(env!("CARGO_MANIFEST_DIR"), "/images/dummy/Dockerfile");
    for name in ["dummy1", "dummy2"] {
        cook.install_flavor(name, std::path::Path::new(dockerfile));
    }
    cook.with_files(&yaml)
}

#[test]
fn self_preference_is_measured_not_counted_and_the_blinding_probe_is_scored_against_chance() {
    let cook = two_flavor_cook("selfpref", "{self_preference: true, blinding_probe: true}");
    let summary = cook_judge_report(&cook);
    let mapping = cook.json("judging/_mapping.json");
    assert_eq!(
        mapping["judges"]["one"]["self_judged"],
        serde_json::json!(["ada"])
    );
    assert_eq!(
        mapping["judges"]["one"]["labels"]
            .as_object()
            .unwrap()
            .len(),
        2,
        "a self-preference run shows the judge its own flavor too"
    );
    // Only the other flavor's judge counts: ada 80 % (by two), bob 40 % (by one).
    let ranking = summary["ranking"].as_array().unwrap();
    assert_eq!(ranking[0]["participant"], "ada");
    assert_eq!(ranking[0]["num_judges"], 1);
    assert_eq!(ranking[0]["mean_pct"], 80.0);
    let preference = summary["self_preference"].as_array().unwrap();
    assert_eq!(preference.len(), 2, "{preference:?}");
    let one = preference.iter().find(|p| p["judge"] == "one").unwrap();
    assert_eq!(one["self_mean_pct"], 80.0);
    assert_eq!(one["others_mean_pct"], 80.0);
    // No participant of another flavor was scored by both judges, so there is no baseline for
    // its leniency: no difference in differences is claimed.
    assert_eq!(one["delta_pct"], serde_json::Value::Null);
    assert_eq!(
        (one["n"].as_u64(), one["baseline"].as_u64()),
        (Some(1), Some(0))
    );
    // Both dummy judges guess the first vendor, `dummy1`, for everything: one hit in two.
    let probe = summary["blinding_probe"].as_array().unwrap();
    assert_eq!(probe.len(), 2);
    for judge in probe {
        assert_eq!(judge["guesses"], 2, "{judge}");
        assert_eq!(judge["hits"], 1, "{judge}");
        assert_eq!(judge["chance"], 0.5, "the best constant guess: 1 of 2");
        assert_eq!(
            judge["p_value"], 1.0,
            "a constant guess matches as often under every relabelling"
        );
    }
    let coverage = summary["coverage"].as_array().unwrap();
    assert_eq!(
        coverage[0]["eligible"], 1,
        "a judge's own flavor is never eligible"
    );
    let guesses = fs_err::read_to_string(cook.dir().join("judging/one/guesses.json")).unwrap();
    assert!(
        !guesses.contains("ada"),
        "the judge only ever saw labels: {guesses}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
