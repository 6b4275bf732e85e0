//! Hidden material never leaves the verifier cells (issue 14): searched for from inside every
//! participant, judge, `consult` reviewer and chef cell (a canary planted in `verify/` is never
//! found, one planted in raw/ always is), their mounts inspected from inside, and an archive
//! that holds none of it unless asked.

use std::path::Path;

use crate::common::{JUDGE_BRIEF, TestCook, show};
use crate::verify::{CANARY, spec};

const VISIBLE: &str = "VISIBLEcanary2hT7";

/// `(hits of the hidden canary, hits of the visible one)` in a cell's two search reports.
fn searched(dir: &Path) -> (Vec<String>, Vec<String>) {
    let hits = |k: u32| -> Vec<String> {
        let text = fs_err::read_to_string(dir.join(format!("SEARCH-{k}.txt")))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert!(
            text.lines().last().unwrap().starts_with("searched "),
            "{text}"
        );
        text.lines()
            .filter_map(|l| l.strip_prefix("found "))
            .map(str::to_owned)
            .collect()
    };
    (hits(1), hits(2))
}

fn hidden_cook() -> TestCook {
    let search = format!("search:{CANARY},search:{VISIBLE}");
    let brief = format!(
        "name: test\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n\
  - {{name: a, flavor: dummy, model: \"quality:3,solve:42,{search},probe,read:/work/verify/tests.json,read:../verify/tests.json\"}}\n\
  - {{name: chef, flavor: dummy, model: \"{search}\"}}\n\
judges:\n  - {{name: referee, flavor: dummy, model: \"{search},probe\"}}\n\
rubric:\n  scale: [0, 5]\n  dimensions:\n    - {{id: correctness, weight: 100}}\n\
judging: {{policy: allow_self}}\n\
consult:\n  reviewers:\n    - {{name: r1, flavor: dummy, model: \"{search}\"}}\n\
verify: {{image: dummy, timeout_s: 30}}\n"
    );
    let cook = TestCook::new("vhidden", &brief);
    let dir = cook.dir();
    fs_err::write(dir.join("raw/visible.md"), format!("{VISIBLE}\n")).unwrap();
    fs_err::create_dir_all(dir.join("verify/expected")).unwrap();
    fs_err::write(dir.join("verify/tests.json"), spec("junit")).unwrap();
    fs_err::write(dir.join("verify/expected/answer.txt"), "42\n").unwrap();
    // The chef is a participant the brief lists already; `chef` expects its folder.
    fs_err::create_dir_all(dir.join("chef/chef")).unwrap();
    assert_eq!(
        fs_err::read_to_string(dir.join("JUDGE_BRIEF.md")).unwrap(),
        JUDGE_BRIEF
    );
    cook
}

#[test]
fn no_participant_judge_reviewer_or_chef_cell_can_find_the_hidden_tests() {
    let cook = hidden_cook();
    let steps: [&[&str]; 5] = [
        &["cook", cook.name(), "--participants", "a"],
        &["judge", cook.name()],
        &["report", cook.name()],
        &["consult", cook.name(), "--target", "a"],
        &["chef", cook.name(), "--chef", "chef=dummy"],
    ];
    for args in steps {
        let output = cook.run_args(args);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            show(&output)
        );
    }
    let result = cook.json("verification/a/result.json");
    assert_eq!(
        result["outcome"], "completed",
        "the verifier itself had the tests: {result}"
    );
    let cells = [
        ("participant", cook.dir().join("work/a/out")),
        ("judge", cook.dir().join("judging/referee")),
        ("reviewer", cook.dir().join("consult/_work-r1/outbox")),
        ("chef", cook.dir().join("work/chef/out")),
    ];
    for (role, dir) in &cells {
        let (hidden, visible) = searched(dir);
        assert!(
            hidden.is_empty(),
            "{role} found the hidden canary in {hidden:?}"
        );
        assert!(
            visible.iter().any(|p| p.ends_with("raw/visible.md")),
            "{role}: the search works (it found raw/visible.md): {visible:?}"
        );
    }
    let probes = cook.text("work/a/out/PROBES.txt");
    assert_eq!(probes.lines().count(), 2, "{probes}");
    assert!(probes.lines().all(|l| l.contains(" error ")), "{probes}");
    for sandbox in ["work/a/out/SANDBOX.json", "judging/referee/SANDBOX.json"] {
        let mounts = cook.json(sandbox)["mounts"].clone();
        let targets: Vec<&str> = mounts
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["target"].as_str())
            .collect();
        assert!(targets.contains(&"/work"), "{sandbox}: {targets:?}");
        assert!(
            !targets.iter().any(|t| t.contains("verify")),
            "{sandbox}: {targets:?}"
        );
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Every file under `dir` whose bytes contain `needle`.
fn holding(dir: &Path, needle: &str) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            fs_err::read(e.path())
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

#[test]
fn an_archive_holds_the_hidden_tests_only_when_asked() {
    let cook = crate::verify::verify_cook("varchive", &[("a", "quality:3,solve:42")], "", "junit");
    cook.cook_judge_report();
    let plain = cook.dir().join("plain");
    let output = cook.run_args(&[
        "archive",
        cook.name(),
        "--include-operator",
        "--out",
        plain.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(plain.join("summary.json").is_file());
    assert!(!plain.join("verify").exists() && !plain.join("verification").exists());
    assert!(
        holding(&plain, CANARY).is_empty(),
        "{:?}",
        holding(&plain, CANARY)
    );
    let asked = cook.dir().join("asked");
    let output = cook.run_args(&[
        "archive",
        cook.name(),
        "--include-hidden",
        "--out",
        asked.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(asked.join("verify/tests.json").is_file());
    assert!(asked.join("verification/a/result.json").is_file());
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
