//! Cooking against the real engine: classification of every outcome, the hardening seen from
//! inside a cell, and nothing left behind.

use serde_json::Value;

use crate::common::{TestCook, dummy_brief, show};

fn brief(participants: &str) -> String {
    format!(
        "name: t\ntimeout_s: 60\nparticipants:\n{participants}judges: []\noutputs:\n  required:\n    - {{path: RESULT.md}}\n"
    )
}

fn result_of<'a>(run_result: &'a Value, name: &str) -> &'a Value {
    run_result["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap()
}

#[test]
fn every_outcome_is_classified_and_nothing_is_left_behind() {
    let participants = [
        "{name: fine, flavor: dummy}",
        "{name: crashes, flavor: dummy, model: \"exit:3\"}",
        "{name: slow, flavor: dummy, model: \"sleep:60\", timeout_s: 2}",
        "{name: limited, flavor: dummy, model: \"rate-limit\"}",
        "{name: silent, flavor: dummy, model: \"no-output\"}",
        "{name: instant, flavor: dummy, model: \"exit:5\"}",
    ];
    let list: String = participants.iter().map(|p| format!("  - {p}\n")).collect();
    let cook = TestCook::new("classify", &brief(&list));
    let output = cook.run("cook");
    assert_eq!(
        output.status.code(),
        Some(0),
        "one ok cell makes the cook a success: {}",
        show(&output)
    );
    let run = cook.json("RUN_RESULT.json");
    let expect = [
        ("fine", "ok", Some(0)),
        ("crashes", "non_zero_exit", Some(3)),
        ("slow", "timed_out", Some(137)),
        ("limited", "rate_limited", Some(0)),
        ("silent", "artifact_missing", Some(0)),
        ("instant", "non_zero_exit", Some(5)),
    ];
    for (name, status, code) in expect {
        let result = result_of(&run, name);
        assert_eq!(result["status"], status, "{name}: {result}");
        assert_eq!(result["exit_code"].as_i64(), code, "{name}: {result}");
        assert!(result["duration_s"].as_f64().unwrap() >= 0.0);
        assert!(
            cook.dir()
                .join(result["stdout"].as_str().unwrap())
                .is_file(),
            "{name} has a log file"
        );
    }
    assert_eq!(result_of(&run, "limited")["retry_after_s"], 42);
    assert_eq!(
        result_of(&run, "silent")["missing_outputs"],
        serde_json::json!(["RESULT.md"])
    );
    assert!(
        result_of(&run, "slow")["duration_s"].as_f64().unwrap() < 30.0,
        "the timeout fired"
    );
    let status = cook.json("status.json");
    assert_eq!(status["state"], "sealed");
    assert_eq!(status["cells"]["slow"]["state"], "timed_out");
    assert_eq!(status["cells"]["fine"]["exit_class"], "ok");
    let events = cook.text("events.jsonl");
    assert_eq!(
        events
            .lines()
            .filter(|l| l.contains("\"cell.exited\""))
            .count(),
        6,
        "{events}"
    );
    assert!(events.contains("\"cell.rate_limited\""));
    assert!(
        cook.text("logs/limited/dummy.stdout.log")
            .contains("rate limit exceeded")
    );
    assert!(
        cook.dir()
            .join("judging/_inbox/fine/out/RESULT.md")
            .is_file(),
        "outputs are sealed"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn a_cook_where_every_cell_fails_exits_1_and_leaves_nothing() {
    let cook = TestCook::new(
        "allfail",
        &brief(
            "  - {name: a, flavor: dummy, model: \"exit:1\"}\n  - {name: b, flavor: dummy, model: \"exit:2\"}\n",
        ),
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn the_hardening_baseline_holds_inside_the_cell() {
    let cook = TestCook::new(
        "hardening",
        &brief("  - {name: probe, flavor: dummy, model: \"probe,env,fill-tmp\"}\n"),
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let sandbox: Value = serde_json::from_str(&cook.text("work/probe/out/SANDBOX.json")).unwrap();
    assert_ne!(sandbox["uid"], 0, "non-root: {sandbox}");
    assert_eq!(
        u64::from_str_radix(sandbox["cap_eff"].as_str().unwrap(), 16).unwrap(),
        0,
        "no capabilities"
    );
    assert_eq!(sandbox["no_new_privs"], 1);
    assert_eq!(sandbox["seccomp"], 2, "default seccomp profile");
    assert_eq!(
        sandbox["root_writable"], false,
        "read-only root file system"
    );
    assert_eq!(sandbox["home_writable"], true, "tmpfs HOME");
    assert_eq!(sandbox["tmp_writable"], true, "tmpfs /tmp");
    assert_eq!(sandbox["docker_socket"], false);
    assert_eq!(
        sandbox["memory_limit"].as_str().unwrap().trim(),
        (2u64 << 30).to_string(),
        "medium profile memory"
    );
    assert_eq!(sandbox["pids_limit"].as_str().unwrap().trim(), "512");
    let cpu = sandbox["cpu"].as_str().unwrap();
    assert!(
        cpu.starts_with("100000 100000") || cpu.starts_with("100000"),
        "one CPU: {cpu}"
    );
    let mounts = sandbox["mounts"].as_array().unwrap();
    let targets: Vec<&str> = mounts
        .iter()
        .map(|m| m["target"].as_str().unwrap())
        .collect();
    assert!(
        !targets.contains(&"/run/mc-cell"),
        "a participant's init serves no launch: no control area (issue 28): {targets:?}"
    );
    for expected in ["/work", "/work/out", "/home/mc", "/tmp"] {
        let mount = mounts
            .iter()
            .find(|m| m["target"] == expected)
            .unwrap_or_else(|| panic!("{expected} missing from {targets:?}"));
        assert_eq!(
            mount["fstype"], "tmpfs",
            "{expected} is in memory, never a host folder: {mount}"
        );
    }
    for staged in ["BRIEF.md", "raw/notes.md", "PROMPT.txt"] {
        assert!(
            !targets.contains(&format!("/work/{staged}").as_str()),
            "{staged} is a staged copy, not a mount"
        );
    }
    assert!(
        !targets
            .iter()
            .any(|t| t.contains("docker.sock") || t.contains("judging")),
        "{targets:?}"
    );
    let env = cook.text("work/probe/out/ENV.txt");
    let names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    for name in &names {
        assert!(
            ["HOME", "PATH", "LANG", "HOSTNAME"].contains(name) || name.starts_with("MULTICOOKER_"),
            "unexpected variable {name} in {names:?}"
        );
    }
    let fill = cook.text("logs/probe/dummy.stdout.log");
    assert!(fill.contains("fill-tmp: wrote"), "{fill}");
    assert!(cook.leftovers().is_empty());
}

#[test]
fn hostile_cells_are_stopped_by_their_limits_without_harming_others() {
    let participants = [
        "{name: bomb, flavor: dummy, model: \"forkbomb\", resources: {pids_limit: 32}}",
        "{name: hog, flavor: dummy, model: \"oom:1G\", resources: {mem_limit: 128m}}",
        "{name: fine, flavor: dummy}",
    ];
    let list: String = participants.iter().map(|p| format!("  - {p}\n")).collect();
    let cook = TestCook::new("limits", &brief(&list));
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let run = cook.json("RUN_RESULT.json");
    assert_eq!(result_of(&run, "hog")["status"], "oom_killed");
    assert_eq!(result_of(&run, "fine")["status"], "ok");
    let bomb = cook.text("logs/bomb/dummy.stdout.log");
    let spawned: u64 = bomb
        .split("spawned ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    assert!(spawned < 32, "the pids limit stopped the fork bomb: {bomb}");
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// The stated policy for failed cells (README, "Failed cells"): a participant's own failure is
/// judged on what it left and shown with its outcome; one that left nothing is unscored, never
/// scored on an empty submission (issue 27: a participant that crashed at start got 8.4).
#[test]
fn failed_cells_are_judged_as_they_are_or_unscored_as_the_policy_says() {
    let yaml = crate::common::dummy_brief(
        &[
            ("fine", "quality:4"),
            ("crashes", "quality:3,exit:3"),
            ("empty", "no-output,exit:3"),
        ],
        "",
    ) + "outputs:\n  required:\n    - {path: RESULT.md}\n";
    let cook = TestCook::new("policy", &yaml);
    cook.cook_judge_report();
    let inbox = cook.dir().join("judging/_inbox");
    assert!(
        inbox.join("crashes/out/RESULT.md").is_file(),
        "a non-zero exit is judged as it is"
    );
    assert!(
        !inbox.join("empty").exists(),
        "nothing left: nothing sealed"
    );
    let summary = cook.json("summary.json");
    let row = |name: &str| {
        summary["ranking"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["participant"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("crashes")["run_status"], "non_zero_exit");
    assert!(row("crashes")["score_pct"].is_number(), "{summary}");
    assert_eq!(row("empty")["run_status"], "non_zero_exit");
    assert_eq!(row("empty")["unscored"], true, "{summary}");
    assert!(row("empty")["score_pct"].is_null());
    let board = cook.text("leaderboard.md");
    assert!(
        board
            .lines()
            .any(|l| l.starts_with("| – | empty | unscored |") && l.contains("| non_zero_exit |")),
        "{board}"
    );
    assert!(
        board
            .lines()
            .any(|l| l.contains("| crashes |") && l.contains("| non_zero_exit |"))
    );
    assert!(
        board.contains("Unscored: empty (non_zero_exit)."),
        "the verdict says it: {board}"
    );
    let html = cook.text("leaderboard.html");
    assert!(html.contains("<span class=\"badge warn\">non_zero_exit</span>"));
    assert!(html.contains("<span class=\"unscored\">unscored</span>"));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 25: the image builds were one shared result per phase, so one flavor whose image
/// failed to build made every healthy cell `start_failed` with *its* error. Each cell now waits
/// on its own image: the dummy participant runs and is sealed, the broken flavor's cell alone is
/// `start_failed` with its own build error, and the cook still says the build failed (exit 2).
#[test]
fn a_flavor_whose_image_fails_to_build_fails_its_own_cells_alone() {
    let cook = TestCook::new("buildsplit", &dummy_brief(&[("a", "quality:3")], ""));
    let flavor = cook.dir().join("flavors/broken");
    fs_err::create_dir_all(&flavor).unwrap();
    fs_err::write(
        flavor.join("Dockerfile"),
        "FROM scratch\nCOPY missing-file /x\n",
    )
    .unwrap();
    fs_err::write(
        cook.dir().join("brief.yaml"),
        dummy_brief(&[("a", "quality:3"), ("b", "quality:2")], "")
            .replace("{name: b, flavor: dummy", "{name: b, flavor: broken"),
    )
    .unwrap();
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let status = cook.json("status.json");
    assert_eq!(status["cells"]["a"]["exit_class"], "ok", "{status}");
    assert_eq!(status["cells"]["b"]["state"], "start_failed", "{status}");
    let healthy = cook.json("work/a/trace.json");
    assert!(healthy.get("error").is_none_or(Value::is_null), "{healthy}");
    assert!(
        cook.dir().join("work/a/out/RESULT.md").is_file(),
        "the healthy participant ran and its output came back"
    );
    let broken = cook.json("work/b/trace.json");
    let error = broken["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("image build failed") && error.contains("missing-file"),
        "its own image's error: {broken}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
