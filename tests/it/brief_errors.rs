//! A bad brief.yaml stops every command with an error naming the file, the field and the fix,
//! and writes nothing.

use crate::common::{TestCook, dummy_brief, show};

fn files_of(cook: &TestCook) -> Vec<String> {
    let mut names: Vec<String> = walkdir::WalkDir::new(cook.dir())
        .into_iter()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    names.sort();
    names
}

fn assert_refused(yaml: &str, expected: &str, hint: &str) {
    let cook = TestCook::new("bad", yaml);
    let before = files_of(&cook);
    let output = cook.run("cook");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    assert!(
        stderr.contains(expected),
        "expected `{expected}` in:\n{stderr}"
    );
    assert!(
        stderr.contains("brief.yaml"),
        "the file is named:\n{stderr}"
    );
    assert!(
        stderr.contains(hint),
        "expected the hint `{hint}` in:\n{stderr}"
    );
    assert_eq!(files_of(&cook), before, "a refused brief writes nothing");
    assert!(cook.leftovers().is_empty());
}

#[test]
fn an_unknown_field_is_refused_with_the_allowed_fields() {
    let yaml =
        dummy_brief(&[("a", "")], "").replacen("timeout_s: 60", "timeout_s: 60\ntimout: 5", 1);
    assert_refused(
        &yaml,
        "field `timout`: unknown field",
        "did you mean `timeout_s`?",
    );
}

#[test]
fn a_bad_participant_name_is_refused() {
    let yaml = dummy_brief(&[("../evil", "")], "");
    assert_refused(
        &yaml,
        "field `participants[0].name`: `../evil` may not contain `/`",
        "use letters, digits",
    );
}

#[test]
fn a_missing_rubric_is_refused() {
    let yaml = dummy_brief(&[("a", "")], "");
    let start = yaml.find("rubric:").unwrap();
    let end = yaml.find("judging:").unwrap();
    let yaml = format!("{}{}", &yaml[..start], &yaml[end..]);
    assert_refused(
        &yaml,
        "field `rubric`: is required when `judges` is set",
        "dimensions",
    );
}

#[test]
fn a_missing_cook_names_the_folder_and_the_fix() {
    let cook = TestCook::empty("missing");
    let output = cook.run("cook");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    assert!(
        stderr.contains("no cook folder") && stderr.contains("multicooker new"),
        "{stderr}"
    );
}

#[test]
fn lint_names_each_problem_and_cook_refuses_a_cook_that_fails_it() {
    let cook = TestCook::new("lint", &dummy_brief(&[("a", "quality:3")], ""));
    fs_err::write(
        cook.dir().join("JUDGE_BRIEF.md"),
        "Judge the correctness of each answer on a 1 to 10 scale.\n",
    )
    .unwrap();
    let before = files_of(&cook);
    let output = cook.run("lint");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("2 issue(s)"), "{stdout}");
    assert!(
        stdout.contains("never names the rubric dimension(s) `clarity`"),
        "{stdout}"
    );
    assert!(stdout.contains("states the scale 1–10"), "{stdout}");
    let refused = cook.run("cook");
    assert_eq!(refused.status.code(), Some(2), "{}", show(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("fails lint, so it was not started"),
        "{stderr}"
    );
    assert!(stderr.contains("`clarity`"), "{stderr}");
    assert_eq!(files_of(&cook), before, "a refused cook writes nothing");
    fs_err::write(
        cook.dir().join("JUDGE_BRIEF.md"),
        "Score correctness and clarity on a 0-5 scale.\n",
    )
    .unwrap();
    let clean = cook.run_args(&["lint", cook.name(), "--json"]);
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let report: serde_json::Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert_eq!(report["ok"], true);
}
