//! Issue 16: `network: none` for a flavor that needs its model API is refused before any cell
//! runs (the CLI would retry until its timeout and the cell read `timed_out`), by `lint`,
//! `cook`, `add-participant` and `nightly` alike, naming brief.yaml, the field and the fix.
//! The dummy still runs without a network.

use crate::common::{JUDGE_BRIEF, TestCook, dummy_brief, show};

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"/tmp/mc-it-[A-Za-z0-9]+", "[TMP]");
    settings.add_filter(r"990101-[a-z-]+-\d+-\d+", "[COOK]");
    settings
}

fn offline(yaml: &str) -> String {
    yaml.replacen("timeout_s: 60\n", "timeout_s: 60\nnetwork: none\n", 1)
}

#[test]
fn lint_and_cook_refuse_none_for_a_flavor_that_needs_its_api() {
    let yaml = offline(&dummy_brief(&[("d", "quality:3")], "")).replacen(
        "participants:\n",
        "participants:\n  - {name: cl, flavor: claude}\n",
        1,
    );
    let cook = TestCook::new("netnone", &yaml);
    let before = std::fs::read(cook.dir().join("brief.yaml")).unwrap();
    let linted = cook.run("lint");
    assert_eq!(linted.status.code(), Some(1), "{}", show(&linted));
    let stdout = String::from_utf8_lossy(&linted.stdout).into_owned();
    settings().bind(|| insta::assert_snapshot!("network_none_lint", stdout));
    let refused = cook.run("cook");
    assert_eq!(refused.status.code(), Some(2), "{}", show(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr).into_owned();
    settings().bind(|| insta::assert_snapshot!("network_none_cook", stderr));
    assert!(!cook.dir().join("status.json").exists(), "nothing ran");
    assert_eq!(
        std::fs::read(cook.dir().join("brief.yaml")).unwrap(),
        before
    );
    // The dummy alone runs without a network: lint is clean.
    let dummies = TestCook::new("netnone-ok", &offline(&dummy_brief(&[("d", "")], "")));
    let clean = dummies.run("lint");
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    assert!(cook.leftovers().is_empty() && dummies.leftovers().is_empty());
}

#[test]
fn add_participant_refuses_a_flavor_that_needs_its_api_under_none() {
    let cook = TestCook::new("netnone-add", &offline(&dummy_brief(&[("d", "")], "")));
    let before = fs_err::read_to_string(cook.dir().join("brief.yaml")).unwrap();
    let refused = cook.run_args(&["add-participant", cook.name(), "cx=codex"]);
    assert_eq!(refused.status.code(), Some(2), "{}", show(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr).into_owned();
    settings().bind(|| insta::assert_snapshot!("network_none_add_participant", stderr));
    assert_eq!(
        fs_err::read_to_string(cook.dir().join("brief.yaml")).unwrap(),
        before,
        "nothing was changed"
    );
    let added = cook.run_args(&["add-participant", cook.name(), "d2=dummy"]);
    assert_eq!(added.status.code(), Some(0), "{}", show(&added));
    assert!(cook.leftovers().is_empty());
}

#[test]
fn a_night_whose_brief_cuts_a_vendor_off_fails_with_the_lint_reason() {
    let cook = TestCook::empty("netnone-night");
    let root = cook.root().to_path_buf();
    let brief = root.join("brief-a");
    fs_err::create_dir_all(brief.join("raw")).unwrap();
    fs_err::write(
        brief.join("brief.yaml"),
        "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nnetwork: none\nparticipants:\n  - {name: x, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 60}\n    - {id: clarity, weight: 40}\n",
    )
    .unwrap();
    fs_err::write(brief.join("BRIEF.md"), "# a\n\nSay hello.\n").unwrap();
    fs_err::write(brief.join("JUDGE_BRIEF.md"), JUDGE_BRIEF).unwrap();
    let config = root.join("nightly.yaml");
    fs_err::write(
        &config,
        format!(
            "name: nt\nbriefs: [brief-a]\nparticipants:\n  - {{name: a, flavor: dummy}}\n  - {{name: g, flavor: grok}}\njudges:\n  - {{name: j1, flavor: dummy}}\nrepeats: 1\nhistory: {0}/h.sqlite\ncooks_root: {0}\njudging: {{policy: allow_self}}\n",
            root.display()
        ),
    )
    .unwrap();
    let output = cook.run_args(&["nightly", config.to_str().unwrap(), "--night", "2026-11-25"]);
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("FAILED (no ranking)"), "{text}");
    assert!(
        text.contains("`network: none` cuts participant `g` (flavor `grok`)"),
        "{text}"
    );
    assert!(cook.leftovers_under_root().is_empty());
}
