//! Artifacts and archives: every file has a visibility class, and an archive never holds a
//! login or the judges' label mapping, wherever they hide (a canary planted in each).

use std::io::Read as _;

use crate::common::{TestCook, dummy_brief, show};

const CANARY: &str = "CANARYarchive7f3Q";

fn planted_cook() -> TestCook {
    let cook = TestCook::new(
        "archive",
        &dummy_brief(&[("a", "quality:3"), ("b", "quality:4")], ""),
    );
    for command in ["cook", "judge", "report"] {
        assert_eq!(cook.run(command).status.code(), Some(0), "{command}");
    }
    let dir = cook.dir();
    let plant = |relative: &str, text: &str| {
        let path = dir.join(relative);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    };
    plant(
        ".auth/p-a/claude/.credentials.json",
        &format!("{{\"token\": \"{CANARY}\"}}"),
    );
    plant("work/a/out/.auth/token", CANARY);
    let mut mapping = cook.json("judging/_mapping.json");
    mapping["canary"] = serde_json::json!(CANARY);
    fs_err::write(dir.join("judging/_mapping.json"), mapping.to_string()).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("work/a/out/passwd")).unwrap();
    cook
}

#[test]
fn an_archive_never_holds_a_login_or_the_label_mapping() {
    let cook = planted_cook();
    let output = cook.run_args(&["artifacts", cook.name(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let manifest: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let class_of = |path: &str| {
        manifest["artifacts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["path"] == path)
            .map(|a| a["visibility"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        class_of("judging/_mapping.json").as_deref(),
        Some("host_only")
    );
    assert_eq!(
        class_of("work/a/out/.auth/token").as_deref(),
        Some("secret")
    );
    assert_eq!(class_of("work/a/out/RESULT.md").as_deref(), Some("public"));
    assert_eq!(class_of("status.json").as_deref(), Some("operator"));

    let tarball = cook.dir().join("everything.tar.gz");
    let output = cook.run_args(&[
        "archive",
        cook.name(),
        "--include-operator",
        "--format",
        "tar",
        "--out",
        tarball.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(
        fs_err::File::open(&tarball).unwrap(),
    ));
    let mut members = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        assert!(
            entry.header().entry_type().is_file(),
            "{path} is a plain file"
        );
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "the canary leaked into {path}"
        );
        members.push(path);
    }
    let name = cook.name();
    for expected in [
        "leaderboard.md",
        "summary.json",
        "work/a/out/RESULT.md",
        "status.json",
        "artifacts.json",
    ] {
        assert!(
            members.contains(&format!("{name}/{expected}")),
            "{expected} in {members:?}"
        );
    }
    for forbidden in [
        "_mapping.json",
        ".auth",
        "_inbox",
        "_work-",
        "passwd",
        "everything.tar.gz",
    ] {
        assert!(
            !members.iter().any(|m| m.contains(forbidden)),
            "{forbidden} must not be archived: {members:?}"
        );
    }

    let output = cook.run_args(&["archive", cook.name()]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let public = cook.dir().join("archive");
    assert!(public.join("work/a/out/RESULT.md").is_file());
    assert!(public.join("leaderboard.md").is_file());
    assert!(
        !public.join("status.json").exists(),
        "operator files need --include-operator"
    );
    assert!(!public.join("logs").exists());
}
