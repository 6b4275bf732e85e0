//! The type rule "hidden material reaches only a verifier cell", checked on real plans: for a
//! cook with a `verify/` folder, the cells of every other role (participants, a refine round,
//! the chef, judges, `consult` reviewers) name no path under `verify/` and hold no
//! [`Input::Hidden`], and what is staged into them holds none of its bytes.

use std::path::Path;

use crate::cell::files::{CellFiles, Input, ReviewerFiles};
use crate::cell::names::Names;
use crate::cell::plan::OUTBOX_BYTES;
use crate::cell::plan::{CellUser, PlanContext};
use crate::state::CookPaths;

const CANARY: &[u8] = b"HIDDENcanaryUnit";

fn staged_bytes(files: &CellFiles) -> Vec<u8> {
    let staging =
        crate::cell::stage::prepare(files, CellUser::resolve(Some("1000:1000")).unwrap(), true)
            .unwrap();
    let mut all = Vec::new();
    for (_, archive) in staging.archives {
        all.extend(archive.into_bytes().unwrap().as_ref());
    }
    all
}

/// A cook folder with every file the roles' plans name, and a canary in `verify/`.
fn cook_folder(paths: &CookPaths) {
    for (file, text) in [
        ("BRIEF.md", "brief".as_bytes()),
        ("JUDGE_BRIEF.md", b"judge"),
        ("raw/notes.md", b"notes"),
        ("verify/tests.json", CANARY),
        ("judging/_work-j/PROMPT.txt", b"p"),
        ("judging/_work-j/RUBRIC.json", b"{}"),
        ("judging/_work-j/submissions/A/out/RESULT.md", b"r"),
        ("consult/_work-r/PROMPT.txt", b"p"),
        ("consult/_work-r/candidate/RESULT.md", b"c"),
        ("chef/c/input/RANKING.md", b"r"),
        ("judging/_inbox/a/out/RESULT.md", b"sealed"),
    ] {
        let path = paths.dir().join(file);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }
}

#[test]
fn no_other_role_can_be_given_the_hidden_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = CookPaths::new(tmp.path().join("251122-t"));
    cook_folder(&paths);
    let brief = crate::brief::parse(
        Path::new("b.yaml"),
        b"name: t\nparticipants:\n  - {name: a, flavor: dummy}\n  - {name: c, flavor: dummy}\njudges:\n  - {name: j, flavor: dummy}\nrubric: {dimensions: [{id: x, weight: 100}]}\nverify: {image: dummy}\n",
    )
    .unwrap()
    .brief;
    let names = Names::for_paths(&paths);
    let context = PlanContext {
        paths: &paths,
        names: &names,
        brief: &brief,
        user: CellUser::resolve(Some("1000:1000")).unwrap(),
        profile: crate::brief::Profile::Medium,
        run_id: "r",
        grace: crate::cell::plan::CELL_GRACE,
    };
    let plain = crate::settings::test_run_settings();
    let mut refine = crate::settings::test_run_settings();
    refine.refine = Some(crate::cook::Refine {
        round: 2,
        prompts: std::collections::BTreeMap::new(),
    });
    let mut chef = crate::settings::test_run_settings();
    chef.chef = Some(crate::cook::Chef {
        name: "c".into(),
        prompt: "synthesize".into(),
    });
    let participant = &brief.participants[0];
    let cells: Vec<(&str, CellFiles)> = vec![
        (
            "participant",
            crate::cook::plan::participant_plan(&context, participant, "go".into(), &plain).files,
        ),
        (
            "refine round",
            crate::cook::plan::participant_plan(&context, participant, "go".into(), &refine).files,
        ),
        (
            "chef",
            crate::cook::plan::participant_plan(
                &context,
                &brief.participants[1],
                "go".into(),
                &chef,
            )
            .files,
        ),
        (
            "judge",
            crate::judge::judge_plan(&context, &brief.judges[0]).files,
        ),
        (
            "reviewer",
            ReviewerFiles {
                outbox_cap: OUTBOX_BYTES,
            }
            .files(&paths, "r", paths.dir().join("consult/_work-r/outbox")),
        ),
    ];
    let hidden = paths.verify_dir();
    for (role, files) in &cells {
        for input in &files.inputs {
            assert!(
                !matches!(input, Input::Hidden(_)),
                "{role} holds hidden material"
            );
            if let Some(source) = input.host_source() {
                assert!(
                    !source.starts_with(&hidden),
                    "{role} is given {}",
                    source.display()
                );
            }
        }
        for writable in &files.writable {
            assert!(
                writable
                    .seed
                    .as_ref()
                    .is_none_or(|s| !s.path().starts_with(&hidden))
            );
        }
        let bytes = staged_bytes(files);
        assert!(
            !bytes.windows(CANARY.len()).any(|w| w == CANARY),
            "{role}: hidden bytes were staged"
        );
    }
    // The control: a verifier's files do hold it.
    let verifier = super::plan::verifier_plan(&context, brief.verify.as_ref().unwrap(), "a", "img");
    let bytes = staged_bytes(&verifier.files);
    assert!(bytes.windows(CANARY.len()).any(|w| w == CANARY));
}
