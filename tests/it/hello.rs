//! The README's first command, end to end: new → cook → judge → report on the hello example.

use crate::common::{TestCook, show};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/hello-task");

#[test]
fn hello_example_runs_end_to_end_to_a_three_row_leaderboard() {
    let cook = TestCook::empty("hello");
    let created = cook.run_args(&["new", cook.name(), "--from", EXAMPLE]);
    assert!(created.status.success(), "{}", show(&created));
    cook.cook_judge_report();
    let leaderboard = cook.text("leaderboard.md");
    let rows: Vec<&str> = leaderboard
        .lines()
        .filter(|l| {
            l.split('|')
                .nth(1)
                .is_some_and(|rank| rank.trim().trim_end_matches('=').parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(rows.len(), 3, "{leaderboard}");
    // One judge: its scores order the table, but nothing separates them (ranks 1=, range 1–3).
    assert!(rows[0].starts_with("| 1= | ada | 100.0 |"), "{leaderboard}");
    assert!(rows[1].starts_with("| 1= | cleo | 80.0 |"), "{leaderboard}");
    assert!(
        rows[2].starts_with("| 1= | basil | 60.0 |"),
        "{leaderboard}"
    );
    let summary = cook.json("summary.json");
    assert_eq!(summary["ranking"].as_array().unwrap().len(), 3);
    assert_eq!(summary["anti_self_judge_policy"], "require_distinct_flavor");
    assert_eq!(cook.json("status.json")["state"], "reported");
    let sandbox = &cook.json("RUN_RESULT.json")["sandbox_check"];
    assert_eq!(
        sandbox["passed"], true,
        "the cook's sandbox probe ran and passed: {sandbox}"
    );
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn the_same_inputs_give_a_byte_identical_report() {
    let cook = TestCook::empty("same");
    assert!(
        cook.run_args(&["new", cook.name(), "--from", EXAMPLE])
            .status
            .success()
    );
    for command in ["cook", "judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0));
    }
    let (leaderboard, summary) = (cook.text("leaderboard.md"), cook.text("summary.json"));
    assert_eq!(cook.run("report").status.code(), Some(0));
    assert_eq!(cook.text("leaderboard.md"), leaderboard);
    assert_eq!(cook.text("summary.json"), summary);
    assert!(cook.leftovers().is_empty());
}

/// Issue 25: `new` in a cooks folder that cannot be written named a `.new-…` temporary path and
/// gave no hint. On a read-only file system (a tmpfs mounted read-only over the test's root:
/// root ignores permission bits, not a read-only mount) it names the folder and the fix, and
/// writes nothing.
#[test]
fn new_in_a_read_only_root_names_the_folder_and_the_fix() {
    struct Unmount<'a>(&'a std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let cook = TestCook::empty("readonly");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "mc-it-readonly"])
        .arg(cook.root())
        .status()
        .unwrap();
    assert!(mounted.success(), "mounting a read-only tmpfs needs root");
    let _unmount = Unmount(cook.root());
    let created = cook.run_args(&["new", cook.name(), "--from", EXAMPLE]);
    assert_eq!(created.status.code(), Some(2), "{}", show(&created));
    let said = String::from_utf8_lossy(&created.stderr);
    let root = cook.root().display().to_string();
    assert!(
        said.contains(&format!("cannot create a cook in `{root}`")) && said.contains("--root"),
        "{said}"
    );
    assert!(!said.contains(".new-"), "{said}");
    assert_eq!(std::fs::read_dir(cook.root()).unwrap().count(), 0);
}
