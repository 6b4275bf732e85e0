//! Nothing is left running: Ctrl-C during cook and during judge tears everything down with
//! exit 130; after SIGKILL, `clean --all` reclaims what the killed run left.

use std::time::Duration;

use crate::common::{TestCook, dummy_brief, show, signal};

#[test]
fn sigint_during_cook_cancels_and_leaves_nothing() {
    let cook = TestCook::new(
        "sigint-cook",
        &dummy_brief(&[("a", "sleep:120"), ("b", "sleep:120")], ""),
    );
    let child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("a", "running", Duration::from_secs(60));
    cook.wait_for_cell_state("b", "running", Duration::from_secs(60));
    signal(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", show(&output));
    let status = cook.json("status.json");
    assert_eq!(status["state"], "cancelled");
    assert_eq!(status["cells"]["a"]["state"], "cancelled");
    assert!(cook.text("events.jsonl").contains("\"cook.cancelled\""));
    // Said once, as a cancellation (issue 27: every cell was a failure with three hints).
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("failed: cancelled"), "{stderr}");
    assert_eq!(stderr.matches("cancelled after").count(), 1, "{stderr}");
    assert!(
        !cook.dir().join("judging/_inbox/a").exists(),
        "a cancelled cell is unscored: nothing of it is sealed"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn sigint_during_judge_cancels_and_leaves_nothing() {
    let cook = TestCook::new(
        "sigint-judge",
        &dummy_brief(&[("a", "quality:3")], "sleep:120"),
    );
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let child = cook.spawn(&["judge", cook.name()]);
    cook.wait_for_cell_state("referee", "running", Duration::from_secs(60));
    signal(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", show(&output));
    assert_eq!(cook.json("status.json")["state"], "cancelled");
    assert_eq!(
        cook.json("JUDGE_RESULT.json")["judges"][0]["status"],
        "cancelled"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn after_sigkill_clean_all_reclaims_everything() {
    let cook = TestCook::new(
        "sigkill",
        &dummy_brief(&[("a", "sleep:120"), ("b", "sleep:120")], ""),
    );
    let mut child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("b", "running", Duration::from_secs(60));
    cook.wait_for_cell_state("a", "running", Duration::from_secs(60));
    signal(child.id(), "KILL");
    child.wait().unwrap();
    // status tells the truth about a run that died: nobody holds the cook, cells were running.
    let output = cook.run_args(&["status", cook.name(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["interrupted"], true, "{status}");
    assert_eq!(status["running"], serde_json::Value::Null);
    assert_eq!(status["state"], "cooking");
    assert_eq!(status["cells"]["a"]["state"], "running");
    let text = cook.run_args(&["status", cook.name()]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("running (interrupted)"),
        "{}",
        show(&text)
    );
    let left = cook.leftovers();
    assert!(
        left.iter().any(|o| o.starts_with("container")),
        "a killed run leaves its containers: {left:?}"
    );
    let output = cook.run_args(&["clean", "--all"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
    assert!(
        cook.dir().join("status.json").is_file(),
        "clean never deletes results"
    );
}

#[test]
fn a_stale_container_of_a_killed_run_is_replaced_by_the_next_cook() {
    let cook = TestCook::new("stale", &dummy_brief(&[("a", "sleep:120")], ""));
    let mut child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("a", "running", Duration::from_secs(60));
    signal(child.id(), "KILL");
    child.wait().unwrap();
    fs_err::write(
        cook.dir().join("brief.yaml"),
        dummy_brief(&[("a", "quality:2")], ""),
    )
    .unwrap();
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        cook.dir().join("attempts/round-1/a/attempt-1").is_dir(),
        "the killed run's files are kept"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn a_second_command_on_a_busy_cook_is_refused_with_who_holds_it() {
    let cook = TestCook::new("busy", &dummy_brief(&[("a", "sleep:120")], ""));
    let mut child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("a", "running", Duration::from_secs(60));
    for command in ["cook", "judge", "report"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{command}: {}",
            show(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("is busy: `multicooker cook` (pid ")
                && stderr.contains(&format!("kill {}", child.id())),
            "{command}: {stderr}"
        );
    }
    assert_eq!(
        cook.json("status.json")["cells"]["a"]["state"],
        "running",
        "the first run is untouched"
    );
    signal(child.id(), "KILL");
    child.wait().unwrap();
    // A killed holder leaves its lock file but not its lock: the next command proceeds.
    let output = cook.run("report");
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("is busy"),
        "{}",
        show(&output)
    );
    let _ = cook.run_args(&["clean", cook.name()]);
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn cancel_does_not_overwrite_finished_states_or_let_unlaunched_cells_start() {
    let cook = TestCook::new(
        "cancel",
        &dummy_brief(
            &[
                ("first", "quality:3"),
                ("slow", "sleep:120"),
                ("last", "quality:4"),
            ],
            "",
        ),
    );
    let child = cook.spawn(&["cook", cook.name(), "--max-parallel", "1"]);
    cook.wait_for_cell_state("slow", "running", Duration::from_secs(60));
    let running = cook.run_args(&["status", cook.name(), "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&running.stdout).unwrap();
    assert_eq!(status["running"]["command"], "cook", "{status}");
    assert_eq!(status["interrupted"], false);
    let output = cook.run_args(&["cancel", cook.name()]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let cooked = child.wait_with_output().unwrap();
    assert_eq!(cooked.status.code(), Some(130), "{}", show(&cooked));
    let status = cook.json("status.json");
    assert_eq!(status["state"], "cancelled");
    assert_eq!(
        status["cells"]["first"]["state"], "ok",
        "finished cells stay ok"
    );
    assert_eq!(status["cells"]["slow"]["state"], "cancelled");
    assert_eq!(status["cells"]["last"]["state"], "cancelled");
    assert!(
        status["cells"]["last"].get("started_at").is_none(),
        "a cell not launched before the cancel never starts: {status}"
    );
    assert!(
        cook.dir().join("work/first/out/RESULT.md").is_file(),
        "partial outputs are kept"
    );
    assert!(!cook.dir().join("work/last/out/RESULT.md").exists());
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn cancel_on_a_cook_nothing_runs_on_changes_nothing() {
    let cook = TestCook::new("cancel-idle", &dummy_brief(&[("a", "quality:3")], ""));
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let before = cook.text("status.json");
    let output = cook.run_args(&["cancel", cook.name()]);
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("nothing is running"),
        "{}",
        show(&output)
    );
    assert_eq!(
        cook.text("status.json"),
        before,
        "a finished cook is never relabelled"
    );
}

#[test]
fn a_killed_run_is_resumed_without_rerunning_cells_that_ended_ok() {
    let cook = TestCook::new(
        "resume",
        &dummy_brief(
            &[
                ("done", "quality:3"),
                ("cut", "sleep:120"),
                ("flaky", "exit:3"),
            ],
            "",
        ),
    );
    let mut child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("done", "ok", Duration::from_secs(60));
    cook.wait_for_cell_state("flaky", "non_zero_exit", Duration::from_secs(60));
    cook.wait_for_cell_state("cut", "running", Duration::from_secs(60));
    signal(child.id(), "KILL");
    child.wait().unwrap();
    let done_before = cook.json("status.json")["cells"]["done"].clone();
    let result_before = fs_err::read(cook.dir().join("judging/_inbox/done/out/RESULT.md")).unwrap();
    // The flaky participant is fixed before resuming; the cut one now finishes quickly.
    let brief = cook
        .text("brief.yaml")
        .replace("sleep:120", "quality:4")
        .replace("exit:3", "quality:2");
    fs_err::write(cook.dir().join("brief.yaml"), brief).unwrap();
    let output = cook.run_args(&["resume", cook.name()]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cut (was interrupted)") && stderr.contains("flaky (was non_zero_exit)"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("done (was"),
        "an ok cell is never re-run: {stderr}"
    );
    let status = cook.json("status.json");
    assert_eq!(status["state"], "sealed");
    assert_eq!(
        status["cells"]["done"], done_before,
        "the ok cell is untouched"
    );
    assert_eq!(status["cells"]["cut"]["state"], "ok");
    assert_eq!(status["cells"]["flaky"]["state"], "ok");
    assert_eq!(
        fs_err::read(cook.dir().join("judging/_inbox/done/out/RESULT.md")).unwrap(),
        result_before
    );
    let run = cook.json("RUN_RESULT.json");
    let names: Vec<&str> = run["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["done", "cut", "flaky"],
        "results merged in brief order"
    );
    let again = cook.run_args(&["resume", cook.name()]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing to resume"));
    for command in ["judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0), "{command}");
    }
    assert_eq!(
        cook.json("summary.json")["ranking"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// Sets the cook folder's top-level modification times `days` into the past.
fn age(dir: &std::path::Path, days: u64) {
    let then = std::time::SystemTime::now() - Duration::from_secs(days * 86_400);
    for entry in fs_err::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::File::open(&path)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }
    std::fs::File::open(dir)
        .unwrap()
        .set_modified(then)
        .unwrap();
}

#[test]
fn prune_never_takes_a_running_cook_or_everything_and_keep_results_keeps_a_usable_cook() {
    let old = TestCook::new("prune", &dummy_brief(&[("a", "quality:3")], ""));
    assert_eq!(old.run("cook").status.code(), Some(0));
    let fresh = old.root().join("990101-fresh");
    fs_err::create_dir_all(&fresh).unwrap();
    fs_err::copy(old.dir().join("brief.yaml"), fresh.join("brief.yaml")).unwrap();
    age(&old.dir(), 10);

    let everything = old.run_args(&["prune", "--older-than", "0"]);
    assert_eq!(everything.status.code(), Some(2), "{}", show(&everything));
    assert!(String::from_utf8_lossy(&everything.stderr).contains("would prune every cook"));

    let lock = multicooker::state::RunLock::acquire(&old.dir(), "cook").unwrap();
    age(&old.dir(), 10);
    let busy = old.run_args(&["prune", "--older-than", "5"]);
    assert_eq!(busy.status.code(), Some(0), "{}", show(&busy));
    assert!(
        String::from_utf8_lossy(&busy.stderr).contains("is running on it"),
        "{}",
        show(&busy)
    );
    assert!(
        old.dir().join("work/a/out/RESULT.md").is_file(),
        "a running cook is kept"
    );
    drop(lock);
    age(&old.dir(), 10);

    let dry = old.run_args(&["prune", "--older-than", "5", "--dry-run"]);
    assert!(String::from_utf8_lossy(&dry.stdout).contains(&format!("would prune {}", old.name())));
    assert!(old.dir().join("work").is_dir());

    let output = old.run_args(&["prune", "--older-than", "5", "--keep-results"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(old.dir().join("brief.yaml").is_file() && old.dir().join("RUN_RESULT.json").is_file());
    assert!(!old.dir().join("work").exists() && !old.dir().join("logs").exists());
    assert!(
        fresh.join("brief.yaml").is_file(),
        "a recent cook is untouched"
    );
    assert_eq!(
        old.run_args(&["status", old.name()]).status.code(),
        Some(0),
        "still listed"
    );
    assert!(
        old.leftovers().is_empty(),
        "left behind: {:?}",
        old.leftovers()
    );
}

#[test]
fn tail_follows_cells_as_they_start_prefixes_each_line_and_stops_with_the_run() {
    let cook = TestCook::new(
        "tail",
        &dummy_brief(
            &[
                ("first", "say:hello_from_first,sleep:2"),
                ("second", "say:hello_from_second,warn:careful"),
            ],
            "",
        ),
    );
    let child = cook.spawn(&["cook", cook.name(), "--max-parallel", "1"]);
    cook.wait_for_cell_state("first", "running", Duration::from_secs(60));
    let tail = cook.command(&["tail", cook.name()]).output().unwrap();
    let cooked = child.wait_with_output().unwrap();
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    assert_eq!(
        tail.status.code(),
        Some(0),
        "tail stops when the run ends: {}",
        show(&tail)
    );
    let text = String::from_utf8_lossy(&tail.stdout);
    assert!(text.contains("[first] hello from first"), "{text}");
    assert!(
        text.contains("[second] hello from second"),
        "a cell that started later is followed: {text}"
    );
    assert!(text.contains("[second:err] careful"), "{text}");
    assert!(text.contains("[mc] seal.finished"), "{text}");
    let only = cook.run_args(&["tail", cook.name(), "second", "--no-follow"]);
    let text = String::from_utf8_lossy(&only.stdout);
    assert!(
        text.contains("[second] hello") && !text.contains("[first]"),
        "{text}"
    );
    // After another run, tail shows that run only (issue 27: it replayed every earlier run
    // first); --all shows them all.
    let judged = cook.run("judge");
    assert_eq!(judged.status.code(), Some(0), "{}", show(&judged));
    let last = cook.run_args(&["tail", cook.name(), "--no-follow"]);
    let text = String::from_utf8_lossy(&last.stdout);
    assert!(text.contains("[mc] judge.started referee"), "{text}");
    assert!(
        !text.contains("seal.finished") && !text.contains("[first]"),
        "the cook's run is not the current one: {text}"
    );
    let all = cook.run_args(&["tail", cook.name(), "--no-follow", "--all"]);
    let text = String::from_utf8_lossy(&all.stdout);
    assert!(
        text.contains("[mc] seal.finished")
            && text.contains("[first] hello")
            && text.contains("judge.started"),
        "{text}"
    );
}

#[test]
fn namespaces_keep_two_orchestrators_objects_apart() {
    use multicooker::runtime::{Runtime as _, Selector};
    let cook = TestCook::new("ns", &dummy_brief(&[("a", "quality:3")], ""));
    let cooked = cook
        .command(&["cook", cook.name(), "--namespace", "alpha"])
        .env("MULTICOOKER_KEEP", "1")
        .output()
        .unwrap();
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let objects = || {
        crate::common::block_on(async {
            let runtime = crate::common::engine().await;
            let found = runtime.list(&Selector::cook(cook.name())).await.unwrap();
            found.iter().map(ToString::to_string).collect::<Vec<_>>()
        })
    };
    let kept = objects();
    assert!(kept.iter().any(|o| o.starts_with("container")), "{kept:?}");
    let plain = crate::common::cell_name(&cook, multicooker::state::Role::Participant, "a");
    assert!(
        !kept.iter().any(|o| o.contains(&plain)),
        "a namespaced cell is not named like an unnamespaced one: {kept:?}"
    );
    let other = cook.run_args(&["clean", "--all", "--namespace", "beta"]);
    assert_eq!(other.status.code(), Some(0), "{}", show(&other));
    assert_eq!(
        objects(),
        kept,
        "another namespace never touches these objects"
    );
    let own = cook.run_args(&["clean", "--all", "--namespace", "alpha"]);
    assert_eq!(own.status.code(), Some(0), "{}", show(&own));
    assert!(objects().is_empty(), "{:?}", objects());
    let bad = cook.run_args(&["status", cook.name(), "--namespace", "no/slash"]);
    assert_eq!(bad.status.code(), Some(2), "{}", show(&bad));
}

#[test]
fn a_run_killed_while_judging_is_resumed_by_rerunning_only_the_unfinished_judges() {
    let yaml = dummy_brief(&[("a", "quality:2"), ("b", "quality:4")], "").replace(
        "judges:\n  - {name: referee, flavor: dummy, model: \"\"}\n",
        "judges:\n  - {name: quick, flavor: dummy}\n  - {name: slow, flavor: dummy, model: \"sleep:120\"}\n",
    );
    let cook = TestCook::new("resume-judge", &yaml);
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let mut child = cook.spawn(&["judge", cook.name()]);
    cook.wait_for_cell_state("quick", "ok", Duration::from_secs(60));
    cook.wait_for_cell_state("slow", "running", Duration::from_secs(60));
    signal(child.id(), "KILL");
    child.wait().unwrap();
    let quick_scores = cook.text("judging/quick/scores_deanon.json");
    let status = cook.run_args(&["status", cook.name(), "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(
        (status["interrupted"].as_bool(), status["state"].as_str()),
        (Some(true), Some("judging"))
    );
    fs_err::write(
        cook.dir().join("brief.yaml"),
        cook.text("brief.yaml")
            .replace("model: \"sleep:120\"", "model: \"\""),
    )
    .unwrap();
    let output = cook.run_args(&["resume", cook.name()]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("resuming the judging"),
        "{}",
        show(&output)
    );
    assert_eq!(
        cook.text("judging/quick/scores_deanon.json"),
        quick_scores,
        "a judge that finished is not re-run"
    );
    let result = cook.json("JUDGE_RESULT.json");
    let names: Vec<&str> = result["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["quick", "slow"]);
    assert_eq!(
        cook.json("judging/_mapping.json")["judges"]
            .as_object()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(cook.run("report").status.code(), Some(0));
    assert_eq!(
        cook.json("summary.json")["judges_used"],
        serde_json::json!(["quick", "slow"])
    );
    assert_eq!(
        cook.run_args(&["clean", cook.name()]).status.code(),
        Some(0)
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
