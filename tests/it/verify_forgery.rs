//! Code under test that attacks the verifier running it (issue 21, "Hidden tests, forged"),
//! against the real engine: each attack of the issue, played by the dummy's `sabotage:KIND`
//! (the participant's program, run by the dummy's runner through `$MULTICOOKER_LAUNCH`), gains
//! its author nothing, and an honest participant's numbers are the same beside it. The issue's
//! runner was pytest; no Python image is available offline, so the runner here is the dummy's
//! of the same shape (each program a subprocess, the report written last).

use crate::common::show;
use crate::verify::{totals, verify_cook};

/// What a wrong answer earns with the spec of `verify::spec`: the answer and the program's
/// output fail, RESULT.md exists, the canary is skipped.
const WRONG: (u64, u64, u64, u64) = (1, 2, 0, 1);
/// What the right answer earns.
const RIGHT: (u64, u64, u64, u64) = (3, 0, 0, 1);

/// The verifier's standard error of a participant.
fn stderr_of(cook: &crate::common::TestCook, participant: &str) -> String {
    cook.text(&format!(
        "verification/{participant}/logs/verify.stderr.log"
    ))
}

/// The daemon ran, could neither stop the runner nor swap its report, and said it was alive
/// only before the call that started it returned.
fn daemon_died_with_its_call(stderr: &str) {
    let returned = stderr
        .find("mc-cell verify: `/work/output/solution.mcs` returned")
        .unwrap_or_else(|| panic!("the program never returned: {stderr}"));
    let (before, after) = stderr.split_at(returned);
    for attempt in [
        "program daemon: alive",
        "program daemon: cannot stop the runner",
        "program: cannot swap /work/results/junit.xml: Permission denied",
    ] {
        assert!(before.contains(attempt), "{attempt}: {stderr}");
    }
    assert!(
        !after.contains("program daemon"),
        "the daemon outlived its call: {stderr}"
    );
}

#[test]
fn code_under_test_cannot_forge_read_or_outlive_its_verification() {
    let cook = verify_cook(
        "vforge",
        &[
            ("honest", "quality:3,solve:42"),
            ("junit", "quality:3,sabotage:junit"),
            ("daemon", "quality:3,sabotage:daemon"),
            ("peek", "quality:3,sabotage:peek"),
            ("tap", "quality:3,sabotage:tap"),
        ],
        "",
        "junit",
    );
    cook.cook_judge_report();
    for attacker in ["junit", "daemon", "peek", "tap"] {
        let result = cook.json(&format!("verification/{attacker}/result.json"));
        assert_eq!(
            (result["outcome"].as_str(), result["source"].as_str()),
            (Some("completed"), Some("junit")),
            "{attacker}: {result}"
        );
        assert_eq!(totals(&result), WRONG, "{attacker}: {result}");
        assert_eq!(result["expected_tests"], 4, "{attacker}: {result}");
    }
    let honest = cook.json("verification/honest/result.json");
    assert_eq!(totals(&honest), RIGHT, "{honest}");
    // 10,000 passing cases, made read-only: never written (the results area is the runner's).
    let junit = stderr_of(&cook, "junit");
    assert!(
        junit.contains("program: cannot write /work/results/junit.xml: Permission denied"),
        "{junit}"
    );
    // The hidden expected answer, read to be printed: not readable by the launched code.
    let peek = cook.json("verification/peek/result.json");
    let printed = peek["tests"][1]["message"].as_str().unwrap_or_default();
    assert!(
        printed.contains("cannot read /work/verify/expected/answer.txt")
            && printed.contains("Permission denied"),
        "{peek}"
    );
    // A 3,000,000-test plan: never written.
    assert!(
        stderr_of(&cook, "tap").contains("program: cannot write /work/results/results.tap"),
        "{}",
        stderr_of(&cook, "tap")
    );
    daemon_died_with_its_call(&stderr_of(&cook, "daemon"));
    // The honest participant's numbers, in the report beside the forgers: 3 of 3.
    let summary = cook.json("summary.json");
    let rows = summary["verification"]["participants"].as_array().unwrap();
    let row = |who: &str| {
        rows.iter()
            .find(|r| r["participant"] == who)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (
            row("honest")["passed"].as_u64(),
            row("honest")["counted"].as_u64()
        ),
        (Some(3), Some(3)),
        "{rows:?}"
    );
    for attacker in ["junit", "daemon", "peek", "tap"] {
        assert_eq!(
            (
                row(attacker)["passed"].as_u64(),
                row(attacker)["counted"].as_u64()
            ),
            (Some(1), Some(3)),
            "{attacker}: {rows:?}"
        );
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn a_summary_line_or_report_the_code_under_test_slips_in_is_never_read() {
    // `summary`: the runner writes no report file, so a junit.xml the daemon swapped in would be
    // read first, and a `100 passed` line on the runner's stdout would be its summary.
    let cook = verify_cook(
        "vshout",
        &[
            ("honest", "quality:3,solve:42"),
            ("shout", "quality:3,sabotage:shout"),
            ("daemon", "quality:3,sabotage:daemon"),
        ],
        "",
        "summary",
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    for attacker in ["shout", "daemon"] {
        let result = cook.json(&format!("verification/{attacker}/result.json"));
        assert_eq!(result["source"], "summary", "{attacker}: {result}");
        assert_eq!(totals(&result), WRONG, "{attacker}: {result}");
        let files: Vec<_> =
            fs_err::read_dir(cook.dir().join(format!("verification/{attacker}/results")))
                .unwrap()
                .collect();
        assert!(files.is_empty(), "{attacker} left {files:?}");
    }
    let shout = stderr_of(&cook, "shout");
    assert!(
        shout.contains("program: cannot write /proc/1/fd/1"),
        "{shout}"
    );
    assert!(
        shout.matches("program: cannot write /proc/").count() >= 2,
        "init's and the runner's stdout both refused: {shout}"
    );
    assert!(
        !cook
            .text("verification/shout/logs/verify.stdout.log")
            .contains("100 passed"),
        "the line reached the runner's channel"
    );
    daemon_died_with_its_call(&stderr_of(&cook, "daemon"));
    assert_eq!(totals(&cook.json("verification/honest/result.json")), RIGHT);
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
#[expect(
    clippy::print_stderr,
    reason = "the measured peak is a number the report quotes"
)]
fn a_runner_reporting_a_plan_of_three_million_is_tampering_read_in_bounded_memory() {
    // The runner itself (from the hidden folder) writes the plan: the host's bound, not the
    // results area's owner, has to catch it.
    let mut brief = crate::common::dummy_brief(&[("a", "quality:3,solve:42")], "");
    brief.push_str(
        "verify: {image: dockerfile, timeout_s: 30, tests: 3, command: [/usr/local/bin/mc-cell, program, /work/verify/forge.mcs]}\n",
    );
    let cook = crate::common::TestCook::new("vplan", &brief);
    let hidden = cook.dir().join("verify");
    fs_err::create_dir_all(&hidden).unwrap();
    fs_err::write(
        hidden.join("Dockerfile"),
        "FROM scratch\nCOPY mc-cell /usr/local/bin/mc-cell\n",
    )
    .unwrap();
    fs_err::write(
        hidden.join("forge.mcs"),
        "write /work/results/results.tap 1..3000000\nprint 3 passed, 0 failed\n",
    )
    .unwrap();
    let (code, rss_kib) = run_measured(&cook, &["cook", cook.name()]);
    assert_eq!(code, 0, "{}", cook.text("../cook.log"));
    // multicooker read the plan in bounded memory (the issue measured 745 MB before).
    eprintln!("multicooker's max RSS: {rss_kib} KiB");
    assert!(rss_kib < 200 << 10, "{rss_kib} KiB");
    let path = cook.dir().join("verification/a/result.json");
    let size = fs_err::metadata(&path).unwrap().len();
    assert!(size < 16 << 10, "result.json is {size} bytes");
    let result = cook.json("verification/a/result.json");
    assert_eq!(result["outcome"], "tampered", "{result}");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("results/results.tap plans 3000000 tests (`1..3000000`), but 3 exist"),
        "{result}"
    );
    assert_eq!(totals(&result), (0, 0, 3, 0), "scored, every test an error");
    // The report says so: never unscored, never a pass.
    for command in ["judge", "report"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    let summary = cook.json("summary.json");
    let row = &summary["verification"]["participants"][0];
    assert_eq!(
        (
            row["outcome"].as_str(),
            row["passed"].as_u64(),
            row["counted"].as_u64()
        ),
        (Some("tampered"), Some(0), Some(3)),
        "{row}"
    );
    let board = cook.text("leaderboard.md");
    let line = board
        .lines()
        .find(|l| l.starts_with("| a | 0/3 |"))
        .unwrap_or_else(|| panic!("{board}"));
    assert!(
        line.contains("| tampered |") && line.contains("plans 3000000 tests"),
        "{line}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Runs multicooker with `args` (its output in the cook root's `cook.log`) and returns its
/// exit code and its own peak resident set in KiB: the kernel's high-water mark of its memory
/// (`VmHWM`), read every 20 ms while it runs. Not `wait4`'s `ru_maxrss`: a child spawned from
/// the test binary carries the parent's high-water mark across `exec`, which under the full
/// suite is the test binary's own (10 GB was reported for a 56 MB multicooker).
fn run_measured(cook: &crate::common::TestCook, args: &[&str]) -> (i32, i64) {
    let log = fs_err::File::create(cook.root().join("cook.log")).unwrap();
    let mut child = cook
        .command(args)
        .stdout(log.try_clone().unwrap().into_parts().0)
        .stderr(log.into_parts().0)
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0_i64;
    loop {
        if let Some(hwm) = fs_err::read_to_string(&status_file).ok().and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        }) {
            peak = peak.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
