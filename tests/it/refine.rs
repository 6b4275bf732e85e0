//! Iteration: refine runs round N+1 on top of the previous outputs with shared and personal
//! feedback, keeps every earlier round, never skips a round number, and `diff` shows what
//! changed between rounds.

use crate::common::{TestCook, dummy_brief, show};

#[test]
fn refine_builds_on_the_previous_round_with_feedback_and_keeps_it() {
    let cook = TestCook::new(
        "refine",
        &dummy_brief(&[("a", "quality:2"), ("b", "quality:3")], ""),
    );
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let round_one = cook.text("work/a/out/RESULT.md");
    fs_err::write(cook.dir().join("FEEDBACK.md"), "Be more specific.\n").unwrap();
    fs_err::write(cook.dir().join("FEEDBACK_a.md"), "Add two examples.\n").unwrap();
    let output = cook.run_args(&["refine", cook.name(), "--participants", "a"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(
        cook.text("rounds/1/a/RESULT.md"),
        round_one,
        "round 1 is kept"
    );
    let prompt = cook.text("work/a/PROMPT.txt");
    assert!(
        prompt.contains("This is round 2") && prompt.contains("Be more specific."),
        "{prompt}"
    );
    assert!(
        prompt.contains("# Personal feedback") && prompt.contains("Add two examples."),
        "{prompt}"
    );
    assert!(
        cook.text("work/a/out/RESULT.md")
            .contains("Round 2 changes")
    );
    let status = cook.json("status.json");
    assert_eq!(status["round"], 2);
    assert_eq!(
        status["cells"]["b"]["state"], "ok",
        "a participant not refined keeps its cell"
    );
    assert_eq!(
        cook.json("REFINE_2_RESULT.json")["participants"][0]["name"],
        "a"
    );
    assert_eq!(cook.json("judging/_inbox/a/meta.json")["round"], 2);

    let diff = cook.run_args(&["diff", cook.name(), "--json"]);
    assert_eq!(diff.status.code(), Some(0), "{}", show(&diff));
    let report: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(
        (report["from"].as_u64(), report["to"].as_u64()),
        (Some(1), Some(2))
    );
    let changes = &report["participants"][0]["changes"];
    assert_eq!(changes[0]["change"], "changed");
    assert_eq!(changes[0]["path"], "RESULT.md");
    let unchanged = cook.run_args(&["diff", cook.name(), "--participants", "b"]);
    assert_eq!(unchanged.status.code(), Some(1), "{}", show(&unchanged));

    for command in ["judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0), "{command}");
    }
    assert_eq!(cook.json("summary.json")["round"], 2);
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn refine_round_gaps_a_dead_refine_is_rerun_as_the_same_round_from_its_snapshot() {
    let cook = TestCook::new("gaps", &dummy_brief(&[("a", "quality:2")], ""));
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let round_one = cook.text("work/a/out/RESULT.md");
    // A refine to round 2 that died after its snapshot, mid-edit.
    fs_err::create_dir_all(cook.dir().join("rounds/1/a")).unwrap();
    fs_err::write(cook.dir().join("rounds/1/a/RESULT.md"), &round_one).unwrap();
    fs_err::write(cook.dir().join("REFINE_2.json"), "{}").unwrap();
    fs_err::write(
        cook.dir().join("work/a/out/RESULT.md"),
        "half-written garbage",
    )
    .unwrap();
    let output = cook.run("refine");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        cook.dir().join("REFINE_2_RESULT.json").is_file(),
        "round 2 again, no gap"
    );
    assert!(!cook.dir().join("rounds/2").exists() && !cook.dir().join("REFINE_3.json").exists());
    assert_eq!(
        cook.text("rounds/1/a/RESULT.md"),
        round_one,
        "the snapshot is the real round 1"
    );
    assert!(
        !cook.text("work/a/out/RESULT.md").contains("garbage"),
        "the round restarted from its snapshot"
    );
}
