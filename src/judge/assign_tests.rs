//! Who each judge may see under each policy ([`super::assign`]).

use std::path::Path;

use super::assign;
use crate::brief::{self, Brief};

/// A brief in the reference's exact format: one of its example cooks (four vendors cooking,
/// two judging, no `judging:` block) with every flavor set to `flavor`.
fn reference_example(flavor: &str) -> Brief {
    let yaml = format!(
        "name: design-landing\ntimeout_s: 1800\njudge_timeout_s: 900\nparticipants:\n  \
- {{name: claude, flavor: {flavor}}}\n  - {{name: codex, flavor: {flavor}}}\n  \
- {{name: gemini, flavor: {flavor}}}\n  - {{name: grok, flavor: {flavor}}}\njudges:\n  \
- {{name: claude-judge, flavor: {flavor}}}\n  - {{name: codex-judge, flavor: {flavor}}}\n\
rubric:\n  scale: [0, 5]\n  dimensions:\n    - {{id: visual_design, weight: 35}}\n    \
- {{id: correctness, weight: 30}}\n    - {{id: accessibility, weight: 20}}\n    \
- {{id: code_quality, weight: 15}}\n"
    );
    brief::parse(Path::new("brief.yaml"), yaml.as_bytes())
        .unwrap()
        .brief
}

fn names(brief: &Brief) -> Vec<String> {
    brief.participants.iter().map(|p| p.name.clone()).collect()
}

#[test]
fn dummy_judges_score_dummy_participants_under_the_default_policy() {
    let brief = reference_example("dummy");
    for assignment in assign(&brief, &brief.judges, &names(&brief), 7) {
        assert_eq!(assignment.mapping.len(), 4, "{assignment:?}");
        assert!(assignment.excluded.is_empty(), "{assignment:?}");
        assert!(assignment.self_judged.is_empty(), "{assignment:?}");
    }
}

#[test]
fn a_vendor_judge_never_sees_its_own_vendor_under_the_default_policy() {
    let brief = reference_example("claude");
    for assignment in assign(&brief, &brief.judges, &names(&brief), 7) {
        assert!(assignment.mapping.is_empty(), "{assignment:?}");
        assert_eq!(assignment.excluded.len(), 4, "{assignment:?}");
    }
    let mixed = brief::parse(
        Path::new("brief.yaml"),
        b"name: mixed\nparticipants:\n  - {name: a, flavor: claude}\n  - {name: b, flavor: dummy}\n\
judges:\n  - {name: j, flavor: claude}\n  - {name: d, flavor: dummy}\n\
rubric: {scale: [0, 5], dimensions: [{id: correctness, weight: 100}]}\n",
    )
    .unwrap()
    .brief;
    let assignments = assign(&mixed, &mixed.judges, &names(&mixed), 7);
    assert_eq!(assignments[0].excluded, ["a"]);
    assert_eq!(assignments[0].mapping.len(), 1);
    assert!(assignments[1].excluded.is_empty());
    assert_eq!(assignments[1].mapping.len(), 2);
}
