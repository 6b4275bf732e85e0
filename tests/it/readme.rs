//! Every example in README.md runs as written (issue 17): the first command (new → cook →
//! judge → report on the hello example), the brief.yaml example, and the nightly config with
//! its history command. They are read from README.md itself, so an edit there is tested.
//! Real vendors need logins these machines do not have, so the nightly's flavors become
//! `dummy` (as its own text suggests for trying it offline); everything else runs unchanged.

use std::path::{Path, PathBuf};

use crate::common::{TestCook, dummy_brief, show};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The fenced blocks of README.md with the given info string, in order.
fn blocks(language: &str) -> Vec<String> {
    let readme = fs_err::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match &mut current {
            None if line.trim_end() == format!("```{language}") => current = Some(String::new()),
            Some(_) if line.starts_with("```") => found.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    found
}

/// Runs `multicooker <args>` from the repository (README paths are relative to it), with the
/// test's own root.
fn multicooker(cook: &TestCook, args: &[&str]) -> std::process::Output {
    cook.command(args).current_dir(REPO).output().unwrap()
}

#[test]
fn the_first_command_runs_as_written() {
    let line = blocks("sh")
        .into_iter()
        .next()
        .expect("README.md opens with a sh block");
    let steps: Vec<Vec<String>> = line
        .trim()
        .split("&&")
        .map(|step| step.split_whitespace().map(str::to_owned).collect())
        .collect();
    assert_eq!(steps[0][..2], ["cargo", "install"], "{line}");
    let cook = TestCook::empty("readme");
    // Twice in the same root on the same day (issue 27: the second `new` failed with
    // "already exists"): the second run makes and reports a cook of its own.
    let mut ran = 0;
    for _ in 0..2 {
        for step in &steps[1..] {
            assert_eq!(step[0], "multicooker", "{line}");
            let args: Vec<&str> = step[1..].iter().map(String::as_str).collect();
            let output = multicooker(&cook, &args);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{}: {}",
                step.join(" "),
                show(&output)
            );
            ran += 1;
        }
    }
    assert_eq!(ran, 8, "new, cook, judge, report, twice: {line}");
    let mut cooks: Vec<String> = fs_err::read_dir(cook.root())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("leaderboard.md").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cooks.sort();
    assert_eq!(cooks.len(), 2, "two cooks with a leaderboard: {cooks:?}");
    assert!(
        cooks[0].ends_with("-hello") && cooks[1] == format!("{}.2-hello", &cooks[0][..6]),
        "the second is the day's second: {cooks:?}"
    );
    // `-q` prints only errors: no leaderboard on stdout, before or after the command.
    for args in [
        &["-q", "report", "hello"][..],
        &["report", "hello", "-q"][..],
    ] {
        let quiet = multicooker(&cook, args);
        assert_eq!(quiet.status.code(), Some(0), "{}", show(&quiet));
        assert!(
            quiet.stdout.is_empty() && quiet.stderr.is_empty(),
            "{}",
            show(&quiet)
        );
    }
    let loud = multicooker(&cook, &["report", "hello"]);
    let text = String::from_utf8_lossy(&loud.stdout);
    assert!(
        text.contains("| Rank | Participant | Score % | 95 % interval | Rank range"),
        "the whole first table, intervals in it: {text}"
    );
    assert!(
        text.contains(" more lines ("),
        "the rest is counted: {text}"
    );
    // What examples/hello-task/README.md promises: the verdict first, naming all three.
    let example =
        fs_err::read_to_string(Path::new(REPO).join("examples/hello-task/README.md")).unwrap();
    let verdict = text
        .lines()
        .find_map(|l| l.strip_prefix("**Verdict:** "))
        .unwrap_or_else(|| panic!("the verdict opens the report: {text}"));
    assert!(
        text.lines().position(|l| l.starts_with("**Verdict:**"))
            < text.lines().position(|l| l.starts_with("| Rank")),
        "before the table"
    );
    assert!(
        example.contains(verdict),
        "the example's README quotes the verdict a user sees: {verdict}"
    );
    assert!(cook.leftovers_under_root().is_empty());
}

#[test]
fn the_brief_yaml_example_is_valid() {
    let yaml = blocks("yaml")
        .into_iter()
        .find(|b| b.contains("participants:") && !b.contains("briefs:"))
        .expect("README.md shows a brief.yaml");
    let loaded = multicooker::brief::parse(Path::new("README.md"), yaml.as_bytes())
        .unwrap_or_else(|e| panic!("README's brief.yaml: {e}"));
    assert_eq!(loaded.brief.participants.len(), 2);
}

/// README's nightly config with every flavor set to `dummy` (models kept as written) and its
/// paths in a temporary
/// folder (history; no webhook): two bundled examples, `judging: {mode: pairwise}`, as written.
fn nightly_config(dir: &Path) -> PathBuf {
    let yaml = blocks("yaml")
        .into_iter()
        .find(|b| b.contains("briefs:"))
        .expect("README.md shows a nightly config");
    // Only the flavor changes: the vendors' model names stay as written, and the dummy takes
    // a lone model name as a name it ignores (issue 25: `model: opus` made every night partial).
    let flavor = regex::Regex::new(r"flavor: [a-z]+").unwrap();
    let mut config = String::new();
    for line in yaml.lines() {
        let line = if line.starts_with("history:") {
            format!("history: {}/models-nightly.sqlite", dir.display())
        } else if line.starts_with("webhook:") {
            continue; // no outside address from a test
        } else if line.starts_with("briefs:") {
            // The examples as the dummy runs them, hidden tests left out (no registry here).
            for example in fs_err::read_dir(Path::new(REPO).join("examples")).unwrap() {
                let example = example.unwrap().path();
                let name = example.file_name().unwrap().to_owned();
                crate::common::copy_example_as_dummy(&example, &dir.join("examples").join(name));
            }
            line.replace("examples/", &format!("{}/examples/", dir.display()))
        } else {
            flavor.replace_all(line, "flavor: dummy").into_owned()
        };
        config.push_str(&line);
        config.push('\n');
    }
    assert!(config.contains("judging: {mode: pairwise}"), "{config}");
    let path = dir.join("nightly.yaml");
    fs_err::write(&path, config).unwrap();
    path
}

#[test]
fn the_nightly_example_and_its_history_run_as_written() {
    let cook = TestCook::empty("readme-nightly");
    let config = nightly_config(cook.root());
    let config = config.to_str().unwrap();
    let sh = blocks("sh")
        .into_iter()
        .find(|b| b.contains("multicooker nightly"))
        .expect("README.md shows the nightly commands");
    assert!(sh.contains("multicooker nightly nightly.yaml"), "{sh}");
    let night = multicooker(&cook, &["nightly", config, "--night", "2026-11-21"]);
    assert_eq!(night.status.code(), Some(0), "{}", show(&night));
    let text = String::from_utf8_lossy(&night.stdout);
    assert!(
        text.contains("night 2026-11-21 of `models-nightly`: ok"),
        "{text}"
    );
    assert!(!text.contains("tied groups: \n"), "{text}");

    let history_line = sh
        .lines()
        .find(|l| l.starts_with("multicooker history"))
        .expect("README.md shows the history command");
    let html = cook.root().join("trends.html");
    let args: Vec<String> = history_line
        .split_whitespace()
        .skip(1)
        .map(|a| match a {
            "nightly.yaml" => config.to_owned(),
            "trends.html" => html.to_string_lossy().into_owned(),
            other => other.to_owned(),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let history = multicooker(&cook, &args);
    assert_eq!(history.status.code(), Some(0), "{}", show(&history));
    assert!(html.is_file());
    // The page from a real night fits both screens and opens with the night's verdict.
    for size in [(1280, 900), (390, 844)] {
        let layout = crate::common::browser::layout(&html, "history-real-night", size);
        crate::common::browser::assert_fits(&layout, size, "Night 2026-11-21: ");
    }
    assert!(
        String::from_utf8_lossy(&history.stdout).contains("2026-11-21 ok"),
        "{}",
        show(&history)
    );
    assert!(cook.leftovers_under_root().is_empty());
}

/// The command table's `doctor [task] [--flavors a,b]` (issue 16: the CLI refused the two
/// together): with both, doctor checks the task and only the listed flavors of it; a listed
/// flavor the task does not use fails, naming the ones it does.
#[test]
fn the_doctor_synopsis_runs_as_written() {
    let readme = fs_err::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `multicooker doctor "))
        .expect("README.md's command table has doctor");
    let synopsis = row.split('`').nth(1).unwrap();
    assert!(
        synopsis.starts_with("multicooker doctor [task] [--flavors a,b]"),
        "{synopsis}"
    );
    let cook = TestCook::new("readme-doctor", &dummy_brief(&[("a", "")], ""));
    let both = multicooker(
        &cook,
        &[
            "doctor",
            cook.name(),
            "--flavors",
            "dummy",
            "--no-build",
            "--json",
        ],
    );
    assert_eq!(both.status.code(), Some(0), "{}", show(&both));
    let text = String::from_utf8_lossy(&both.stdout);
    assert!(text.contains("is valid"), "the task is checked: {text}");
    let unused = multicooker(
        &cook,
        &[
            "doctor",
            cook.name(),
            "--flavors",
            "dummy,codex",
            "--no-build",
        ],
    );
    assert_eq!(unused.status.code(), Some(1), "{}", show(&unused));
    let text = String::from_utf8_lossy(&unused.stdout);
    assert!(
        text.contains("flavor `codex` is not used by `") && text.contains("(it uses: dummy)"),
        "{text}"
    );
    assert!(
        !text.contains("flavor `codex`: "),
        "codex is not checked: {text}"
    );
    assert!(cook.leftovers().is_empty());
}
