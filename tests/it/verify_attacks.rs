//! Participants that attack their hidden tests (issue 14), against the real engine: one that
//! ships its own runner, conftest.py, spec and forged reports, and whose code, run by the
//! tests, forges the results and edits the tests; one whose code never ends; outputs that are
//! huge, deep or full of links; a verifier image that does not build.

use std::time::{Duration, Instant};

use crate::common::{TestCook, dummy_brief, show};
use crate::verify::{totals, verify_cook};

#[test]
fn a_participant_that_ships_its_own_runner_and_forges_reports_gets_its_true_results() {
    // `summary`: the runner writes no report file, so a forged junit.xml left in results/
    // would be read first if the runner did not own that area.
    let cook = verify_cook(
        "vcheat",
        &[
            ("cheater", "quality:5,cheat"),
            ("honest", "quality:3,solve:42"),
        ],
        "",
        "summary",
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    for file in [
        "conftest.py",
        "tests.json",
        "verify/tests.json",
        "results/junit.xml",
    ] {
        assert!(
            cook.dir()
                .join("judging/_inbox/cheater/out")
                .join(file)
                .is_file(),
            "the cheat shipped {file}"
        );
    }
    let cheater = cook.json("verification/cheater/result.json");
    assert_eq!(cheater["source"], "summary", "{cheater}");
    // Wrong answer, wrong program output; only RESULT.md exists; the canary test is skipped.
    assert_eq!(totals(&cheater), (1, 2, 0, 1), "{cheater}");
    let results: Vec<_> = fs_err::read_dir(cook.dir().join("verification/cheater/results"))
        .unwrap()
        .collect();
    assert!(
        results.is_empty(),
        "the forged reports are gone: {results:?}"
    );
    // Its code ran inside the verifier and could not touch the tests or the output under test.
    let stderr = cook.text("verification/cheater/logs/verify.stderr.log");
    for target in ["/work/verify/tests.json", "/work/output/answer.txt"] {
        assert!(
            stderr.contains(&format!("cannot write {target}")),
            "{target} was writable: {stderr}"
        );
    }
    assert!(
        !cook.text("verify/tests.json").contains("anything"),
        "host copy untouched"
    );
    assert_eq!(
        totals(&cook.json("verification/honest/result.json")),
        (3, 0, 0, 1)
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn code_that_never_ends_is_stopped_at_the_verifier_timeout_and_scored_not_skipped() {
    let cook = verify_cook(
        "vloop",
        &[
            ("looper", "quality:5,loop-forever"),
            ("fine", "quality:3,solve:42"),
        ],
        ", timeout_s: 5",
        "tap",
    );
    let started = Instant::now();
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
    let looper = cook.json("verification/looper/result.json");
    assert_eq!(looper["outcome"], "timed_out", "{looper}");
    assert!(
        looper["reason"]
            .as_str()
            .unwrap()
            .contains("killed after 5s")
    );
    let fine = cook.json("verification/fine/result.json");
    assert_eq!(
        (fine["outcome"].as_str(), fine["source"].as_str()),
        (Some("completed"), Some("tap"))
    );
    assert_eq!(totals(&fine), (3, 0, 0, 1));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn huge_deep_and_link_filled_outputs_are_verified_from_their_checked_copy() {
    let cook = verify_cook(
        "vhostile",
        &[
            ("huge", "quality:3,solve:42,big:48M"),
            ("deep", "quality:3,solve:42,deep:2040"),
            ("links", "quality:3,solve:42,escape,many:5000"),
        ],
        "",
        "junit",
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    for name in ["huge", "deep", "links"] {
        let result = cook.json(&format!("verification/{name}/result.json"));
        assert_eq!(result["outcome"], "completed", "{name}: {result}");
        assert_eq!(totals(&result), (3, 0, 0, 1), "{name}: {result}");
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// A cook whose verifier is built from `verify/Dockerfile`.
fn dockerfile_cook(tag: &str, dockerfile: &str) -> TestCook {
    let mut brief = dummy_brief(&[("right", "quality:4,solve:42"), ("wrong", "solve:7")], "");
    brief.push_str(
        "verify: {image: dockerfile, timeout_s: 30, tests: 1, command: [/usr/local/bin/mc-cell, verify, --spec, /opt/tests.json]}\n",
    );
    let cook = TestCook::new(tag, &brief);
    let hidden = cook.dir().join("verify");
    fs_err::create_dir_all(&hidden).unwrap();
    fs_err::write(hidden.join("Dockerfile"), dockerfile).unwrap();
    fs_err::write(
        hidden.join("tests.json"),
        r#"{"tests": [{"name": "answer", "file": "answer.txt", "equals": "42"}]}"#,
    )
    .unwrap();
    cook
}

#[test]
fn a_verifier_built_from_the_cooks_dockerfile_runs_and_leaves_no_image() {
    let cook = dockerfile_cook(
        "vdocker",
        "FROM scratch\nCOPY mc-cell /usr/local/bin/mc-cell\nCOPY tests.json /opt/tests.json\n",
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let right = cook.json("verification/right/result.json");
    assert_eq!(
        (right["outcome"].as_str(), right["image"].as_str()),
        (Some("completed"), Some("dockerfile"))
    );
    assert_eq!(totals(&right), (1, 0, 0, 0));
    assert_eq!(
        totals(&cook.json("verification/wrong/result.json")),
        (0, 1, 0, 0)
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn a_verifier_image_that_fails_to_build_leaves_every_output_unscored_and_nothing_behind() {
    let cook = dockerfile_cook("vbuild", "FROM scratch\nRUN false\n");
    let output = cook.run("cook");
    // Issue 25: the outputs are sealed, but verification was asked for and could not run:
    // exit 1 and say so (it used to exit 0, and a cron user never learned).
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("the hidden tests could not run for `right` (build_failed)")
            && said.contains("multicooker verify"),
        "{said}"
    );
    assert_eq!(cook.json("status.json")["cells"]["right"]["state"], "ok");
    let verified = cook.run_args(&["verify", cook.name()]);
    assert_eq!(verified.status.code(), Some(1), "{}", show(&verified));
    for name in ["right", "wrong"] {
        let result = cook.json(&format!("verification/{name}/result.json"));
        assert_eq!(result["outcome"], "build_failed", "{result}");
        assert!(
            result["reason"].as_str().unwrap().contains("did not build"),
            "{result}"
        );
        assert_eq!(totals(&result), (0, 0, 0, 0));
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
