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
    // Issue 25: a round that does not exist is an error naming the rounds there are, not
    // "no change" (exit 1).
    let missing = cook.run_args(&["diff", cook.name(), "--from", "1", "--to", "9"]);
    assert_eq!(missing.status.code(), Some(2), "{}", show(&missing));
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(
        said.contains("has no round 9") && said.contains("rounds are 1 to 2"),
        "{said}"
    );

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

#[test]
fn the_chef_synthesizes_anonymized_outputs_and_is_judged_beside_the_others() {
    let cook = TestCook::new(
        "chef",
        &dummy_brief(&[("alpha", "quality:2"), ("bravo", "quality:4")], ""),
    );
    for command in ["cook", "judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0), "{command}");
    }
    let output = cook.run_args(&["chef", cook.name(), "--chef", "chef=dummy"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        cook.text("brief.yaml")
            .contains("- {name: chef, flavor: dummy}"),
        "registered"
    );
    let input = cook.dir().join("chef/chef/input");
    let mut entries: Vec<String> = walkdir::WalkDir::new(&input)
        .into_iter()
        .flatten()
        .map(|e| e.path().strip_prefix(&input).unwrap().display().to_string())
        .collect();
    entries.sort();
    assert!(
        entries.contains(&"submissions/A/out/RESULT.md".to_owned()),
        "{entries:?}"
    );
    assert!(
        entries.contains(&"submissions/B/out/RESULT.md".to_owned()),
        "{entries:?}"
    );
    for entry in &entries {
        assert!(
            !entry.contains("alpha") && !entry.contains("bravo"),
            "anonymized: {entry}"
        );
    }
    let ranking = cook.text("chef/chef/input/RANKING.md");
    assert!(
        !ranking.contains("alpha") && !ranking.contains("bravo") && ranking.contains("1. "),
        "{ranking}"
    );
    let mapping = cook.json("chef/chef/_mapping.json");
    assert_eq!(
        mapping["labels"].as_object().unwrap().len(),
        2,
        "the mapping stays on the host"
    );
    assert!(
        cook.text("work/chef/out/RESULT.md")
            .contains("You are the chef")
    );
    assert_eq!(cook.json("CHEF_chef_RESULT.json")["result"]["status"], "ok");
    let run = cook.json("RUN_RESULT.json");
    assert_eq!(
        run["participants"].as_array().unwrap().len(),
        3,
        "merged beside the others"
    );
    assert_eq!(cook.run("rejudge").status.code(), Some(0));
    assert_eq!(cook.run("report").status.code(), Some(0));
    let summary = cook.json("summary.json");
    assert!(
        summary["ranking"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["participant"] == "chef" && r["rank"].is_number())
    );
    let again = cook.run_args(&["chef", cook.name(), "--chef", "chef=dummy"]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "a second chef run needs --force: {}",
        show(&again)
    );
    let taken = cook.run_args(&["chef", cook.name(), "--chef", "alpha=dummy"]);
    assert_eq!(taken.status.code(), Some(2), "{}", show(&taken));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn chef_ignoring_namespaces_a_chef_runs_in_its_namespace_only() {
    let cook = TestCook::new("chefns", &dummy_brief(&[("alpha", "quality:2")], ""));
    assert_eq!(
        cook.run_args(&["cook", cook.name(), "--namespace", "nsx"])
            .status
            .code(),
        Some(0)
    );
    let output = cook
        .command(&[
            "chef",
            cook.name(),
            "--chef",
            "chef=dummy",
            "--namespace",
            "nsx",
        ])
        .env("MULTICOOKER_KEEP", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        cook.leftovers().is_empty(),
        "nothing under the default namespace: {:?}",
        cook.leftovers()
    );
    let clean = cook.run_args(&["clean", cook.name(), "--namespace", "nsx", "--json"]);
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let removed: serde_json::Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert!(
        removed["objects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o.as_str().unwrap().contains("-p-chef")),
        "the chef's kept cell is found in its namespace: {removed}"
    );
}

#[test]
fn consult_reviews_one_candidate_into_feedback_and_refines_it() {
    let cook = TestCook::new(
        "consult",
        &dummy_brief(&[("alpha", "quality:2"), ("bravo", "quality:4")], ""),
    );
    for command in ["cook", "judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0), "{command}");
    }
    fs_err::write(cook.dir().join("FEEDBACK.md"), "Keep it short.\n").unwrap();
    let output = cook.run_args(&[
        "consult",
        cook.name(),
        "--reviewers",
        "r1=dummy,r2=dummy",
        "--refine",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let result = cook.json("consult/bravo/CONSULT_RESULT.json");
    assert_eq!(
        result["target"], "bravo",
        "the leaderboard's first by default"
    );
    assert_eq!(result["reviewers"].as_array().unwrap().len(), 2);
    assert!(
        cook.text("consult/bravo/r1.md")
            .contains("Prioritized fixes")
    );
    let feedback = cook.text("FEEDBACK.md");
    assert!(
        feedback.starts_with("<!-- BEGIN multicooker consult: bravo -->"),
        "{feedback}"
    );
    assert!(
        feedback.contains("### r2 (dummy)") && feedback.ends_with("Keep it short.\n"),
        "{feedback}"
    );
    assert!(
        cook.dir().join("REFINE_2_RESULT.json").is_file(),
        "--refine ran round 2 for the target"
    );
    assert!(
        cook.text("work/bravo/PROMPT.txt")
            .contains("Add two examples."),
        "the reviews reached the prompt"
    );
    let again = cook.run_args(&[
        "consult",
        cook.name(),
        "--target",
        "bravo",
        "--reviewers",
        "r1=dummy",
    ]);
    assert_eq!(again.status.code(), Some(0), "{}", show(&again));
    assert_eq!(
        cook.text("FEEDBACK.md")
            .matches("BEGIN multicooker consult: bravo")
            .count(),
        1,
        "replaced, not duplicated"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn re_cook_over_stale_state_starts_a_new_round_one_and_keeps_the_old_rounds() {
    let cook = TestCook::new("recook", &dummy_brief(&[("a", "quality:2")], ""));
    assert_eq!(cook.run("cook").status.code(), Some(0));
    assert_eq!(cook.run("refine").status.code(), Some(0));
    assert!(cook.dir().join("REFINE_2_RESULT.json").is_file());
    let again = cook.run("cook");
    assert_eq!(
        again.status.code(),
        Some(0),
        "cook again from scratch: {}",
        show(&again)
    );
    assert!(
        !cook.dir().join("REFINE_2_RESULT.json").exists() && !cook.dir().join("rounds").exists()
    );
    let kept = cook.dir().join("attempts/refines-1");
    assert!(
        kept.join("REFINE_2_RESULT.json").is_file() && kept.join("rounds/1/a").is_dir(),
        "nothing is lost"
    );
    for command in ["judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0), "{command}");
    }
    assert_eq!(
        cook.json("summary.json")["round"],
        1,
        "the report reads the new round, not a stale refine"
    );
    let diff = cook.run_args(&["diff", cook.name(), "--from", "1", "--to", "2"]);
    assert_ne!(
        diff.status.code(),
        Some(0),
        "no stale round 2 to compare with: {}",
        show(&diff)
    );
}

#[test]
fn resume_finishes_a_refine_round_in_that_round() {
    let cook = TestCook::new(
        "resume-refine",
        &dummy_brief(&[("a", "quality:2"), ("b", "quality:3")], ""),
    );
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let brief = cook.text("brief.yaml");
    fs_err::write(
        cook.dir().join("brief.yaml"),
        brief.replace("quality:3", "exit:3"),
    )
    .unwrap();
    let refine = cook.run("refine");
    assert_eq!(refine.status.code(), Some(0), "a is ok: {}", show(&refine));
    assert_eq!(
        cook.json("status.json")["cells"]["b"]["state"],
        "non_zero_exit"
    );
    let a_before = cook.json("status.json")["cells"]["a"].clone();
    fs_err::write(cook.dir().join("brief.yaml"), brief).unwrap();
    let output = cook.run("resume");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let status = cook.json("status.json");
    assert_eq!(status["round"], 2);
    assert_eq!(status["cells"]["b"]["state"], "ok");
    assert_eq!(
        status["cells"]["a"], a_before,
        "a ended ok in round 2 and is not re-run"
    );
    let names: Vec<String> = cook.json("REFINE_2_RESULT.json")["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a", "b"], "the round's results merged");
    assert!(
        cook.text("work/b/out/RESULT.md")
            .contains("This is round 2"),
        "b ran round 2's prompt"
    );
    assert!(!cook.dir().join("REFINE_3.json").exists());
}
