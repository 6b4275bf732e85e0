//! What a cook leaves on the host is the operator's alone, and stored once: every folder and
//! file multicooker writes (outputs, sealed, normalized and judge copies, logs, results,
//! archives and their entries) has no group or other bit; sealed, normalized, judge and round
//! copies of one output share its storage (hard links of read-only files), so one output's host
//! cost does not multiply with judges and refine rounds.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::common::{TestCook, show};

/// Two participants (one plants a sub-folder), two judges: cook, judge, report, then both
/// archive formats with every class the operator may ask for.
#[test]
fn the_cook_folder_and_every_copy_and_archive_is_the_operators_alone() {
    let brief = "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {name: a, flavor: dummy, model: \"quality:4,plant:sub/deeper/x.txt\"}\n  - {name: b, flavor: dummy, model: \"quality:2\"}\njudges:\n  - {name: j1, flavor: dummy}\n  - {name: j2, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 100}\njudging: {policy: allow_self}\n";
    let cook = TestCook::new("private", brief);
    cook.cook_judge_report();
    let tarball = cook.dir().join("everything.tar.gz");
    for args in [
        vec!["--format", "tar", "--out", tarball.to_str().unwrap()],
        vec!["--format", "dir"],
    ] {
        let mut command = vec!["archive", cook.name(), "--include-operator"];
        command.extend(args);
        let output = cook.run_args(&command);
        assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    }
    assert_eq!(
        mode(&cook.dir()),
        0o700,
        "the cook folder is closed to others"
    );
    // What the test itself wrote as the cook's author is left as the author made it.
    let authored = ["brief.yaml", "BRIEF.md", "JUDGE_BRIEF.md", "raw"];
    let mut seen = HashSet::new();
    let mut walker = walkdir::WalkDir::new(cook.dir()).min_depth(1).into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.unwrap();
        let relative = entry.path().strip_prefix(cook.dir()).unwrap();
        if entry.depth() == 1 && authored.iter().any(|a| relative == Path::new(a)) {
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        let top = relative.components().next().unwrap().as_os_str();
        seen.insert(top.to_string_lossy().into_owned());
        assert_eq!(
            entry.metadata().unwrap().mode() & 0o077,
            0,
            "{} is open to others: {:o}",
            relative.display(),
            mode(entry.path())
        );
    }
    for expected in [
        "work",
        "judging",
        "logs",
        "archive",
        "everything.tar.gz",
        "leaderboard.md",
        "leaderboard.html",
        "RUN_RESULT.json",
        "status.json",
    ] {
        assert!(seen.contains(expected), "`{expected}` was walked: {seen:?}");
    }
    for copy in [
        "_inbox/a",
        "_normalized/a",
        "_work-j1/submissions",
        "_work-j2/submissions",
    ] {
        assert!(
            cook.dir().join("judging").join(copy).is_dir(),
            "the sealed, normalized and judge copies were walked: {copy}"
        );
    }
    assert!(
        cook.dir()
            .join("judging/_normalized/a/out/sub/deeper/x.txt")
            .is_file()
    );
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(
        fs_err::File::open(&tarball).unwrap(),
    ));
    let mut entries = 0;
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        let header_mode = entry.header().mode().unwrap();
        assert_eq!(
            header_mode & 0o077,
            0,
            "{} is open to others in the archive: {header_mode:o}",
            entry.path().unwrap().display()
        );
        entries += 1;
    }
    assert!(entries > 5, "{entries} entries");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// An 8 MiB output judged by two judges is stored once (not in the inbox, the normalized copy
/// and each judge's copy again); a refine round adds its own new output once and keeps the
/// previous round as links.
#[test]
fn one_output_costs_its_size_once_on_the_host_after_cook_judge_and_refine() {
    const N: u64 = 8 << 20;
    let brief = "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {name: a, flavor: dummy, model: \"quality:4,big:8M\"}\n  - {name: b, flavor: dummy, model: \"quality:2\"}\njudges:\n  - {name: j1, flavor: dummy}\n  - {name: j2, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 100}\njudging: {policy: allow_self}\n";
    let cook = TestCook::new("stored-once", brief);
    cook.cook_judge_report();
    let (unique, naive, copies) = usage(&cook.dir());
    assert!(
        copies >= 4,
        "out, sealed, normalized and two judges' copies: {copies}"
    );
    assert!(naive >= 4 * N, "what copies would have cost: {naive}");
    assert!(
        (N..N + (1 << 20)).contains(&unique),
        "one 8 MiB output stored once: {unique} bytes"
    );
    for command in ["refine", "judge"] {
        let output = cook.run(command);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{command}: {}",
            show(&output)
        );
    }
    let (unique, naive, copies) = usage(&cook.dir());
    assert!(
        copies >= 7,
        "a round snapshot and the new round's copies: {copies}"
    );
    assert!(naive >= 6 * N, "{naive}");
    assert!(
        (2 * N..2 * N + (1 << 20)).contains(&unique),
        "two rounds' outputs, each stored once: {unique} bytes"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Bytes of the distinct inodes under `root`, bytes summed per path, and how many paths are
/// named `big.bin`.
fn usage(root: &Path) -> (u64, u64, usize) {
    let (mut inodes, mut naive, mut copies) = (HashSet::new(), 0, 0);
    let mut unique = 0;
    for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
        let meta = entry.metadata().unwrap();
        if !meta.is_file() {
            continue;
        }
        naive += meta.len();
        copies += usize::from(entry.file_name() == "big.bin");
        if inodes.insert((meta.dev(), meta.ino())) {
            unique += meta.len();
        }
    }
    (unique, naive, copies)
}

fn mode(path: &Path) -> u32 {
    fs_err::metadata(path).unwrap().mode() & 0o777
}

/// A credential that is no secret of this run (so nothing redacts it) is flagged by its shape:
/// recorded with its file in `RUN_RESULT.json` and warned about on the terminal. (`solve:` writes
/// the answer into answer.txt and a solution.mcs that prints it.)
#[test]
fn a_token_shaped_string_in_an_output_is_flagged() {
    let brief = "name: t\ntimeout_s: 60\nparticipants:\n  - {name: a, flavor: dummy, model: \"solve:sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123\"}\n  - {name: b, flavor: dummy, model: \"quality:2\"}\njudges: []\n";
    let cook = TestCook::new("token-shape", brief);
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let run = cook.json("RUN_RESULT.json");
    let participants = run["participants"].as_array().unwrap();
    let a = participants.iter().find(|p| p["name"] == "a").unwrap();
    assert_eq!(
        a["token_shapes"],
        serde_json::json!([
            {"path": "answer.txt", "kind": "anthropic"},
            {"path": "solution.mcs", "kind": "anthropic"}
        ]),
        "{a}"
    );
    let b = participants.iter().find(|p| p["name"] == "b").unwrap();
    assert!(b.get("token_shapes").is_none(), "{b}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        said.contains(
            "warning: `a` left a token-shaped string (anthropic) in answer.txt: look before publishing"
        ),
        "{said}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 21 (a gap): the token-shape scan covers what judges write too (reviews, scores): a
/// credential-shaped string in a judge's review.md is recorded with its file in
/// `JUDGE_RESULT.json` and warned about on the terminal; a clean judge records none.
#[test]
fn a_token_shaped_string_in_a_judges_review_is_flagged() {
    let brief = "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {name: a, flavor: dummy, model: \"quality:4\"}\n  - {name: b, flavor: dummy, model: \"quality:2\"}\njudges:\n  - {name: leaky, flavor: dummy, model: \"note:sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123\"}\n  - {name: clean, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 100}\njudging: {policy: allow_self}\n";
    let cook = TestCook::new("judge-token", brief);
    let cooked = cook.run("cook");
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let output = cook.run("judge");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let result = cook.json("JUDGE_RESULT.json");
    let judges = result["judges"].as_array().unwrap();
    let leaky = judges.iter().find(|j| j["name"] == "leaky").unwrap();
    assert_eq!(
        leaky["token_shapes"],
        serde_json::json!([{"path": "review.md", "kind": "anthropic"}]),
        "{leaky}"
    );
    assert_eq!(leaky["status"], "ok", "flagged, not refused: {leaky}");
    let clean = judges.iter().find(|j| j["name"] == "clean").unwrap();
    assert!(clean.get("token_shapes").is_none(), "{clean}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        said.contains(
            "warning: judge `leaky` left a token-shaped string (anthropic) in review.md: look before publishing"
        ),
        "{said}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
