//! Reference cooks work unchanged (issue 17): each bundled example cook, in the reference's
//! exact brief.yaml format, with every flavor set to `dummy` (and its hidden tests, whose image
//! needs a registry, left out), cooks, is judged under the
//! default policy `require_distinct_flavor` and reports a leaderboard with every participant
//! ranked. The dummy is no vendor, so a dummy judge may score dummy participants; a real
//! vendor's judge still never sees its own vendor's work (unit tests in `src/judge/`).

use std::path::Path;

use crate::common::{TestCook, copy_example_as_dummy, show};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");

/// Copies an example into the cook folder as the dummy runs it (see
/// [`copy_example_as_dummy`]).
fn copy_as_dummy(example: &Path, cook: &TestCook) {
    copy_example_as_dummy(example, &cook.dir());
}

fn ranked_rows(leaderboard: &str) -> usize {
    leaderboard
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| {
            l.split('|')
                .nth(1)
                .is_some_and(|rank| rank.trim().trim_end_matches('=').parse::<u32>().is_ok())
        })
        .count()
}

#[test]
fn every_example_set_to_dummy_gives_a_leaderboard_under_the_default_policy() {
    let mut examples: Vec<_> = fs_err::read_dir(EXAMPLES)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("brief.yaml").is_file())
        .collect();
    examples.sort();
    assert_eq!(examples.len(), 6, "{examples:?}");
    std::thread::scope(|scope| {
        for example in &examples {
            scope.spawn(move || {
                let name = example.file_name().unwrap().to_string_lossy().into_owned();
                let cook = TestCook::empty("reference");
                copy_as_dummy(example, &cook);
                let brief = cook.text("brief.yaml");
                assert!(
                    !brief.contains("allow_self") && !brief.contains("policy: warn"),
                    "{name} runs under the default policy"
                );
                for command in ["cook", "judge", "report"] {
                    let output = cook.run(command);
                    assert_eq!(
                        output.status.code(),
                        Some(0),
                        "{name} {command}: {}",
                        show(&output)
                    );
                }
                let summary = cook.json("summary.json");
                assert_eq!(summary["anti_self_judge_policy"], "require_distinct_flavor");
                let participants = multicooker::brief::load(&cook.dir().join("brief.yaml"))
                    .unwrap()
                    .brief
                    .participants
                    .len();
                let leaderboard = cook.text("leaderboard.md");
                assert_eq!(
                    ranked_rows(&leaderboard),
                    participants,
                    "{name}:\n{leaderboard}"
                );
                assert!(
                    cook.leftovers().is_empty(),
                    "{name}: {:?}",
                    cook.leftovers()
                );
            });
        }
    });
}
