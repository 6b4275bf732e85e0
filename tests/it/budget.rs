//! Budgets against the real engine, with the dummy reporting claude-style usage as it goes:
//! a cell over its own cap is stopped long before its timeout and is `budget_exhausted`,
//! unscored and not resumed; a cook-wide cap stops running cells and starts no new one; a
//! night's cap starts no new cook, ends `partial` (exit 3) and its spend is in history.

use serde_json::Value;

use crate::common::{JUDGE_BRIEF, TestCook, show};

fn entry<'a>(result: &'a Value, list: &str, name: &str) -> &'a Value {
    result[list]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("`{name}` in {result}"))
}

const RUBRIC: &str = "rubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 100}\njudging: {policy: allow_self}\n";

#[test]
fn a_cell_over_its_budget_is_stopped_early_unscored_and_not_resumed() {
    let brief = format!(
        "name: t\ntimeout_s: 120\nparticipants:\n  - {{name: spender, flavor: dummy, model: \"quality:5,burn:4000/0.2\", budget: {{tokens: 20000}}}}\n  - {{name: frugal, flavor: dummy, model: \"quality:3,usage:500\", budget: {{tokens: 20000}}}}\njudges:\n  - {{name: j, flavor: dummy}}\n{RUBRIC}"
    );
    let cook = TestCook::new("budget-cell", &brief);
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let run = cook.json("RUN_RESULT.json");
    let spender = entry(&run, "participants", "spender");
    assert_eq!(spender["status"], "budget_exhausted", "{spender}");
    let duration = spender["duration_s"].as_f64().unwrap();
    assert!(
        duration < 30.0,
        "stopped at its cap, long before its 120 s timeout: {duration}"
    );
    let spent = spender["spend"]["tokens"].as_u64().unwrap();
    assert!((20_000..40_000).contains(&spent), "spent {spent}");
    assert_eq!(spender["budget"]["tokens"], 20_000);
    assert!(
        spender["error"]
            .as_str()
            .unwrap()
            .starts_with("its budget is used up (spent "),
        "{spender}"
    );
    let frugal = entry(&run, "participants", "frugal");
    assert_eq!(
        (&frugal["status"], &frugal["spend"]["tokens"]),
        (&"ok".into(), &500.into())
    );
    let status = cook.json("status.json");
    assert_eq!(status["cells"]["spender"]["state"], "budget_exhausted");
    assert!(
        !cook.dir().join("judging/_inbox/spender").exists(),
        "nothing of a stopped cell goes to the judges"
    );
    // Not retried by default: resume has nothing to run.
    let resumed = cook.run("resume");
    assert_eq!(
        cook.json("RUN_RESULT.json")["participants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "spender")
            .unwrap()["finished_at"],
        spender["finished_at"],
        "resume left it alone: {}",
        show(&resumed)
    );
    for command in ["judge", "report"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    let board = cook.text("leaderboard.md");
    assert!(
        board.contains("Unscored (no accepted score from any judge): spender"),
        "{board}"
    );
    assert!(board.contains("## Spend against budget"), "{board}");
    assert!(
        board.contains("| frugal | participant | spent 500 / 20 000 tokens | 0 |"),
        "{board}"
    );
    assert!(
        board.contains("| spender | participant | spent "),
        "{board}"
    );
    let summary = cook.json("summary.json");
    assert_eq!(summary["spend"][0]["role"], "cook", "{summary}");
    assert_eq!(summary["spend"][0]["exhausted"], 1, "{summary}");
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn a_cook_wide_cap_stops_running_cells_and_starts_no_new_one() {
    let brief = "name: t\ntimeout_s: 120\nbudget: {tokens: 10000}\nparticipants:\n  - {name: a, flavor: dummy, model: \"burn:3000/0.3\"}\n  - {name: b, flavor: dummy, model: \"burn:3000/0.3\"}\n  - {name: c, flavor: dummy, model: \"burn:3000/0.3\"}\njudges: []\n";
    let cook = TestCook::new("budget-cook", brief);
    let started = std::time::Instant::now();
    let output = cook.run_args(&["cook", cook.name(), "--max-parallel", "1"]);
    let run = cook.json("RUN_RESULT.json");
    let a = entry(&run, "participants", "a");
    assert_eq!(a["status"], "budget_exhausted", "{a}\n{}", show(&output));
    assert!(
        a["error"]
            .as_str()
            .unwrap()
            .starts_with("the cook's budget is used up (spent "),
        "{a}"
    );
    for name in ["b", "c"] {
        let cell = entry(&run, "participants", name);
        assert_eq!(cell["status"], "budget_exhausted", "{cell}");
        assert!(cell["started_at"].is_null(), "never started: {cell}");
        assert!(
            cell["error"]
                .as_str()
                .unwrap()
                .starts_with("not started: the cook's budget is used up"),
            "{cell}"
        );
    }
    assert!(
        started.elapsed().as_secs() < 90,
        "one cell's worth of time, not three timeouts: {:?}",
        started.elapsed()
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn a_night_at_its_cap_starts_no_new_cook_ends_partial_and_keeps_spend_in_history() {
    let cook = TestCook::empty("budget-night");
    let root = cook.root().to_path_buf();
    for name in ["brief-a", "brief-b"] {
        let dir = root.join(name);
        fs_err::create_dir_all(dir.join("raw")).unwrap();
        fs_err::write(
            dir.join("brief.yaml"),
            format!("name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {{name: x, flavor: dummy}}\n{RUBRIC}"),
        )
        .unwrap();
        fs_err::write(dir.join("BRIEF.md"), "# t\n\nSay hello.\n").unwrap();
        fs_err::write(dir.join("JUDGE_BRIEF.md"), JUDGE_BRIEF).unwrap();
    }
    let config = root.join("nightly.yaml");
    fs_err::write(
        &config,
        format!(
            "name: nb\nbriefs: [brief-a, brief-b]\nparticipants:\n  - {{name: a, flavor: dummy, model: \"quality:4,usage:3000\", budget: {{tokens: 5000}}}}\n  - {{name: b, flavor: dummy, model: \"quality:2,usage:3000\"}}\njudges:\n  - {{name: j, flavor: dummy}}\nrepeats: 2\nhistory: {0}/h.sqlite\ncooks_root: {0}\nbudget: {{tokens: 10000, on_exhausted: finish}}\n",
            root.display()
        ),
    )
    .unwrap();
    let output = cook.run_args(&["nightly", config.to_str().unwrap(), "--night", "2026-11-25"]);
    assert_eq!(output.status.code(), Some(3), "partial: {}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("because the night's budget is used up (spent 12 000 / 10 000 tokens)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("night: spent 12 000 / 10 000 tokens"),
        "{stdout}"
    );
    // The first cook ran whole; the second's participants ran, its judge never started; the
    // other two cooks were never created.
    let cooks: Vec<_> = fs_err::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-nb-"))
        .collect();
    assert_eq!(cooks.len(), 2, "{cooks:?}");
    let judged = |cook: &str| -> Value {
        serde_json::from_str(
            &fs_err::read_to_string(root.join(cook).join("JUDGE_RESULT.json")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(
        entry(&judged("20261125-nb-brief-a-r1"), "judges", "j")["status"],
        "ok"
    );
    assert_eq!(
        entry(&judged("20261125-nb-brief-a-r2"), "judges", "j")["status"],
        "budget_exhausted"
    );
    let history = cook.run_args(&["history", config.to_str().unwrap(), "--json"]);
    assert_eq!(history.status.code(), Some(0), "{}", show(&history));
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    let night = &history["nights"][0];
    assert_eq!(night["status"], "partial");
    let spend = night["spend"].as_array().unwrap();
    assert_eq!(spend[0]["role"], "night");
    assert_eq!(spend[0]["text"], "spent 12 000 / 10 000 tokens");
    let arm = spend
        .iter()
        .find(|r| r["arm"] == "a" && r["role"] == "participant")
        .unwrap();
    assert_eq!(
        arm["text"], "spent 6 000 / 10 000 tokens",
        "two cells of 3 000, each capped at 5 000"
    );
    assert!(
        night["failures"].as_array().unwrap().iter().any(|f| f
            .as_str()
            .unwrap()
            .contains("not started: the night's budget is used up")),
        "{night}"
    );
    // The same night run again starts nothing: its budget is still used up.
    let again = cook.run_args(&["nightly", config.to_str().unwrap(), "--night", "2026-11-25"]);
    assert_eq!(again.status.code(), Some(3), "{}", show(&again));
    assert_eq!(
        entry(&judged("20261125-nb-brief-a-r2"), "judges", "j")["status"],
        "budget_exhausted",
        "not run again"
    );
    assert!(!root.join("20261125-nb-brief-b-r1").exists());
    assert!(
        cook.leftovers_under_root().is_empty(),
        "left behind: {:?}",
        cook.leftovers_under_root()
    );
}

/// The attack: one participant prints `{"type":"result","usage":{"input_tokens":
/// 1000000000000}}`. Only it is stopped and flagged (`spend_implausible`, unscored, its claim
/// counted nowhere); the cook's pool is not emptied, the honest participants are scored and
/// judging runs.
#[test]
fn a_forged_spend_line_stops_and_flags_its_cell_alone() {
    let brief = format!(
        "name: t\ntimeout_s: 120\nbudget: {{tokens: 100000}}\nparticipants:\n  - {{name: forger, flavor: dummy, model: \"quality:5,usage:300,claim:1000000000000,sleep:60\"}}\n  - {{name: honest, flavor: dummy, model: \"quality:3,sleep:3,usage:500\"}}\n  - {{name: other, flavor: dummy, model: \"quality:2,sleep:3,usage:700\"}}\njudges:\n  - {{name: j, flavor: dummy}}\n{RUBRIC}"
    );
    let cook = TestCook::new("budget-forged", &brief);
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let run = cook.json("RUN_RESULT.json");
    let forger = entry(&run, "participants", "forger");
    assert_eq!(forger["status"], "spend_implausible", "{forger}");
    assert!(
        forger["duration_s"].as_f64().unwrap() < 30.0,
        "stopped at the forged line, not at its 60 s sleep: {forger}"
    );
    assert_eq!(
        forger["spend"]["tokens"], 300,
        "the claim is counted nowhere"
    );
    assert!(
        forger["error"]
            .as_str()
            .unwrap()
            .starts_with("implausible spend: one line of its output claims 999 999 999 700 tokens"),
        "{forger}"
    );
    for (name, tokens) in [("honest", 500), ("other", 700)] {
        let cell = entry(&run, "participants", name);
        assert_eq!(
            (&cell["status"], &cell["spend"]["tokens"]),
            (&"ok".into(), &tokens.into()),
            "{cell}"
        );
    }
    assert!(
        !cook.dir().join("judging/_inbox/forger").exists(),
        "nothing of a flagged cell goes to the judges"
    );
    let judged = cook.run("judge");
    assert_eq!(
        judged.status.code(),
        Some(0),
        "judging runs: {}",
        show(&judged)
    );
    assert_eq!(
        entry(&cook.json("JUDGE_RESULT.json"), "judges", "j")["status"],
        "ok"
    );
    let report = cook.run("report");
    assert_eq!(report.status.code(), Some(0), "{}", show(&report));
    let board = cook.text("leaderboard.md");
    assert!(
        board.contains("Unscored (no accepted score from any judge): forger"),
        "{board}"
    );
    assert!(
        board.contains("| honest |") && board.contains("| other |"),
        "{board}"
    );
    assert!(
        board.contains("| **whole cook** | cook | spent 1 500 / 100 000 tokens |"),
        "{board}"
    );
    assert!(
        board.contains("Flagged, `spend_implausible` (a line of its output claimed more spend than its turns could cost; the claim is counted nowhere, docs/FLAVORS.md §8 item 9): forger"),
        "flagged in the report: {board}"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// Issue 21 (a gap): the forged spend line from a *judge*. Only that judge is stopped and
/// flagged (`spend_implausible`, its claim counted nowhere, its scores unused); the other judge
/// is counted and scores every participant, and the cook's pool is not emptied.
#[test]
fn a_judges_forged_spend_line_stops_and_flags_that_judge_alone() {
    let brief = format!(
        "name: t\ntimeout_s: 120\njudge_timeout_s: 120\nbudget: {{tokens: 100000}}\nparticipants:\n  - {{name: a, flavor: dummy, model: \"quality:4\"}}\n  - {{name: b, flavor: dummy, model: \"quality:2\"}}\njudges:\n  - {{name: forger, flavor: dummy, model: \"usage:300,claim:1000000000000,sleep:60\"}}\n  - {{name: honest, flavor: dummy, model: \"usage:500\"}}\n{RUBRIC}"
    );
    let cook = TestCook::new("budget-judge-forged", &brief);
    let cooked = cook.run("cook");
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let judged = cook.run("judge");
    assert_eq!(judged.status.code(), Some(0), "{}", show(&judged));
    let result = cook.json("JUDGE_RESULT.json");
    let forger = entry(&result, "judges", "forger");
    assert_eq!(forger["status"], "spend_implausible", "{forger}");
    assert_eq!(forger["ok"], false, "{forger}");
    assert!(
        forger["duration_s"].as_f64().unwrap() < 30.0,
        "stopped at the forged line, not at its 60 s sleep: {forger}"
    );
    assert_eq!(
        forger["spend"]["tokens"], 300,
        "the claim is counted nowhere"
    );
    assert!(
        forger["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("implausible spend: one line of its output claims"),
        "{forger}"
    );
    let honest = entry(&result, "judges", "honest");
    assert_eq!(
        (
            &honest["status"],
            &honest["spend"]["tokens"],
            &honest["count"]
        ),
        (&"ok".into(), &500.into(), &2.into()),
        "{honest}"
    );
    let report = cook.run("report");
    assert_eq!(report.status.code(), Some(0), "{}", show(&report));
    let board = cook.text("leaderboard.md");
    assert!(
        board.contains("| a |") && board.contains("| b |"),
        "both participants scored by the honest judge: {board}"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// Issue 25: codex reports its usage only at the end of its single turn. With a 10,000-token cap
/// it finished its task (280,840 tokens), was then killed and marked `budget_exhausted`, its
/// work thrown away. Here the fake codex (1,100 tokens, reported at its turn's end) runs under
/// a 500-token cap: it is not killed, its output is kept, it is recorded over budget, its spend
/// counts in the cook's pool, and `judging.over_budget` decides whether it is judged.
#[test]
fn codex_over_its_cap_at_the_end_of_its_turn_keeps_its_work_and_the_brief_decides_scoring() {
    use crate::logins::{FakeHost, brief, install_fakes};
    let host = FakeHost::new();
    let yaml = brief(
        &[("cx", "codex", "m"), ("cl", "claude", "m")],
        &[("j", "dummy")],
    )
    .replace(
        "{name: cx, flavor: codex, model: \"m\"}",
        "{name: cx, flavor: codex, model: \"m\", budget: {tokens: 500}}",
    ) + "budget: {tokens: 1000000}\n";
    let cook = TestCook::new("budget-codex", &yaml);
    install_fakes(&cook, &["codex", "claude"]);
    let linted = host.run(&cook, &["lint", cook.name()]);
    assert!(
        String::from_utf8_lossy(&linted.stderr).contains(
            "flavor `codex` reports its usage only at the end of its turn (`codex exec` runs one)"
        ),
        "lint says so: {}",
        show(&linted)
    );
    let cooked = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let run = cook.json("RUN_RESULT.json");
    let cx = entry(&run, "participants", "cx");
    assert_eq!(
        cx["status"], "budget_exhausted",
        "unscored by default: {cx}"
    );
    assert_eq!(cx["spend"]["tokens"], 1_100, "{cx}");
    let over = cx["over_budget"].as_str().unwrap_or_default();
    assert!(
        over.starts_with("finished its turn over its budget (spent 1 100 / 500 tokens)"),
        "{cx}"
    );
    assert!(
        cx["error"].as_str().unwrap().contains(
            "its output is kept in the cook folder, not judged (`judging.over_budget: score`"
        ),
        "{cx}"
    );
    assert!(
        cook.text("work/cx/out/RESULT.md").contains("(fake) answer"),
        "the finished work is kept"
    );
    assert!(!cook.dir().join("judging/_inbox/cx").exists(), "not judged");
    for command in ["judge", "report"] {
        let output = host.run(&cook, &[command, cook.name()]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    let board = cook.text("leaderboard.md");
    let cl_spend = entry(&run, "participants", "cl")["spend"]["tokens"]
        .as_u64()
        .unwrap();
    assert!(
        board.contains(&format!(
            "| **whole cook** | cook | spent {} / 1 000 000 tokens |",
            multicooker::brief::grouped(1_100 + cl_spend)
        )),
        "its spend counts in the cook's pool: {board}"
    );
    // The brief decides: scored, it is sealed and judged, and still recorded over budget.
    fs_err::write(
        cook.dir().join("brief.yaml"),
        format!("{yaml}judging: {{over_budget: score}}\n"),
    )
    .unwrap();
    let cooked = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let run = cook.json("RUN_RESULT.json");
    let cx = entry(&run, "participants", "cx");
    assert_eq!(cx["status"], "ok", "{cx}");
    assert!(
        cx["over_budget"]
            .as_str()
            .is_some_and(|o| o.starts_with("finished its turn over")),
        "{cx}"
    );
    assert!(
        cook.dir().join("judging/_inbox/cx").is_dir(),
        "sealed for the judges"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// Issue 25: a judge that finished its turn over its cap and is still scored (`judging.over_budget:
/// score`) is marked `over_budget` in what judging records, as a participant is in
/// `RUN_RESULT.json`; under the default its scores are not used, and it is marked as well.
#[test]
fn a_judge_scored_over_its_budget_is_marked_over_budget() {
    use crate::logins::{FakeHost, brief, install_fakes};
    let host = FakeHost::new();
    let yaml = brief(&[("cl", "claude", "m")], &[("jx", "codex")]).replace(
        "{name: jx, flavor: codex}",
        "{name: jx, flavor: codex, budget: {tokens: 500}}",
    );
    let cook = TestCook::new(
        "budget-judge",
        &format!("{yaml}judging: {{over_budget: score}}\n"),
    );
    install_fakes(&cook, &["codex", "claude"]);
    for command in ["cook", "judge"] {
        let output = host.run(&cook, &[command, cook.name()]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    let judged = cook.json("JUDGE_RESULT.json");
    let jx = entry(&judged, "judges", "jx");
    assert_eq!(
        jx["status"], "ok",
        "scored under `over_budget: score`: {jx}"
    );
    assert!(
        jx["over_budget"].as_str().is_some_and(
            |o| o.starts_with("finished its turn over its budget (spent 1 100 / 500 tokens)")
        ),
        "marked over budget: {jx}"
    );
    // Under the default its scores are not used, and the record says why.
    fs_err::write(cook.dir().join("brief.yaml"), &yaml).unwrap();
    let output = host.run(&cook, &["judge", cook.name()]);
    let judged = cook.json("JUDGE_RESULT.json");
    let jx = entry(&judged, "judges", "jx");
    assert_eq!(jx["status"], "budget_exhausted", "{jx}\n{}", show(&output));
    assert!(jx["over_budget"].is_string(), "{jx}");
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}
