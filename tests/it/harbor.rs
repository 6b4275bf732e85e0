//! Harbor tasks (docs/HARBOR.md) through the real binary: `new --from <task>` keeps the task
//! byte for byte with its hash in brief.yaml, a task edited afterwards is refused before any
//! run, and keys multicooker cannot run are refused before a cook exists.

use std::path::{Path, PathBuf};

use crate::common::{TestCook, show};

const TASKS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harbor");

fn task(name: &str) -> PathBuf {
    Path::new(TASKS).join(name)
}

/// Every regular file under `dir`, relative, with its bytes and whether it is executable.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<(String, Vec<u8>, bool)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let mode = e.metadata().unwrap().permissions().mode();
            (
                e.path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                fs_err::read(e.path()).unwrap(),
                mode & 0o111 != 0,
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn new_from_a_harbor_task_keeps_it_byte_for_byte_with_its_hash() {
    for name in ["fizzbuzz", "word-stats", "local-mirror"] {
        let cook = TestCook::empty(&format!("harbor-new-{name}"));
        let source = task(name);
        let output = cook.run_args(&[
            "new",
            cook.name(),
            "--from",
            source.to_str().unwrap(),
            "--participants",
            "one=dummy,two=dummy",
        ]);
        assert_eq!(output.status.code(), Some(0), "{name}: {}", show(&output));
        let dir = cook.dir();
        assert_eq!(
            tree(&dir.join("task")),
            tree(&source),
            "{name}: task/ differs"
        );
        assert_eq!(
            fs_err::read(dir.join("BRIEF.md")).unwrap(),
            fs_err::read(source.join("instruction.md")).unwrap(),
            "{name}: BRIEF.md is the instruction verbatim"
        );
        let expected = multicooker::harbor::load(&source).unwrap();
        let brief = multicooker::brief::load(&dir.join("brief.yaml"))
            .unwrap()
            .brief;
        let harbor = brief.harbor.as_ref().expect("brief.yaml has `harbor:`");
        assert_eq!(
            (harbor.task.as_str(), harbor.hash.as_str()),
            ("task", expected.hash())
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains(expected.hash()), "{name}: {stdout}");
        // The brief's numbers are the task's.
        let config = &expected.config;
        assert_eq!(brief.timeout_s, config.agent_timeout.as_secs(), "{name}");
        assert_eq!(
            brief.resources.cpus,
            Some(config.environment.cpus),
            "{name}"
        );
        assert_eq!(
            brief.resources.mem_limit,
            Some(config.environment.memory_mb << 20),
            "{name}"
        );
        let internet = config.environment.internet != multicooker::harbor::Internet::Closed;
        assert_eq!(
            brief.network.mode == multicooker::brief::NetworkMode::Open,
            internet,
            "{name}: allow_internet decides the network"
        );
        let names: Vec<&str> = brief.participants.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["one", "two"]);
        let lint = cook.run_args(&["lint", cook.name()]);
        assert_eq!(lint.status.code(), Some(0), "{name}: {}", show(&lint));
    }
}

#[test]
fn a_task_edited_in_the_cook_is_refused_before_any_run() {
    let cook = TestCook::empty("harbor-edited");
    let source = task("fizzbuzz");
    let output = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        source.to_str().unwrap(),
        "--participants",
        "one=dummy",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    // A careless user (or a script) "fixes" the verifier in the cook's copy.
    let test_sh = cook.dir().join("task/tests/test.sh");
    let mut text = fs_err::read_to_string(&test_sh).unwrap();
    text.push_str("echo 1 > /logs/verifier/reward.txt\n");
    fs_err::write(&test_sh, text).unwrap();
    for command in ["lint", "cook"] {
        let output = cook.run_args(&[command, cook.name()]);
        let said = show(&output);
        assert_ne!(output.status.code(), Some(0), "{command}: {said}");
        assert!(
            said.contains("changed since the cook was made") && said.contains("/task`"),
            "{command} names the edited task: {said}"
        );
    }
    assert!(
        !cook.dir().join("RUN_RESULT.json").exists(),
        "nothing ran for an edited task"
    );
}

#[test]
fn a_task_multicooker_cannot_run_is_refused_before_a_cook_exists() {
    let cook = TestCook::empty("harbor-refused");
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("steps");
    for (path, bytes, _) in tree(&task("fizzbuzz")) {
        let to = copy.join(&path);
        fs_err::create_dir_all(to.parent().unwrap()).unwrap();
        fs_err::write(to, bytes).unwrap();
    }
    let toml = copy.join("task.toml");
    let mut text = fs_err::read_to_string(&toml).unwrap();
    text.push_str("\n[[steps]]\nname = \"first\"\n");
    fs_err::write(&toml, text).unwrap();
    let output = cook.run_args(&["new", cook.name(), "--from", copy.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        stderr.contains("steps"),
        "the refusal names the key: {stderr}"
    );
    let entries: Vec<_> = fs_err::read_dir(cook.root())
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(entries.is_empty(), "no cook, no staging left: {entries:?}");
}

#[test]
fn participants_are_refused_for_an_example_folder() {
    let cook = TestCook::empty("harbor-example");
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/hello-task");
    let output = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        example,
        "--participants",
        "a=dummy",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        stderr.contains("`--participants` does not apply to an example folder"),
        "{stderr}"
    );
    assert!(!cook.dir().exists());
}

/// The base the test tasks' Dockerfiles start `FROM` (no registry is reachable here): a Debian
/// rootfs with python3 and pytest from tests/harbor-base/prepare.sh, imported once per test
/// binary and kept as a labelled test cache like the real-CLI suite's rootfs.
fn harbor_base() {
    static BASE: std::sync::Once = std::sync::Once::new();
    BASE.call_once(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/harbor-base/prepare.sh");
        let output = std::process::Command::new(script).output().unwrap();
        assert!(output.status.success(), "{}", show(&output));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let rootfs = stdout
            .lines()
            .find_map(|l| l.strip_prefix("rootfs="))
            .expect("prepare.sh prints rootfs=")
            .to_owned();
        crate::common::block_on(import_base(Path::new(&rootfs)));
    });
}

const BASE_TAG: &str = "multicooker-test-debian:bookworm";

async fn import_base(tar: &Path) {
    use futures_util::StreamExt;
    use multicooker::runtime::Runtime;
    let runtime = crate::common::engine().await;
    if runtime.image_exists(BASE_TAG).await.unwrap() {
        return;
    }
    let docker = bollard::Docker::connect_with_local_defaults().unwrap();
    let (repo, version) = BASE_TAG.split_once(':').unwrap();
    let options = bollard::query_parameters::CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(version)
        .changes(vec![
            "LABEL io.multicooker.cook=harbor-base-cache io.multicooker.role=test-cache".to_owned(),
        ])
        .build();
    let bytes = fs_err::read(tar).unwrap();
    let mut stream =
        docker.create_image(Some(options), Some(bollard::body_full(bytes.into())), None);
    while let Some(item) = stream.next().await {
        item.unwrap_or_else(|e| panic!("importing {} as {BASE_TAG}: {e}", tar.display()));
    }
}

/// A copy of the fixture task `name` whose `solution/solve.sh` is `solve` (the fixture's own
/// when `None`), as a user would have it on disk.
fn task_with_solution(scratch: &Path, name: &str, solve: Option<&str>) -> PathBuf {
    copy_task(&task(name), scratch, solve)
}

/// A copy of the task folder `source` in `scratch` whose `solution/solve.sh` is `solve` (its
/// own when `None`).
fn copy_task(source: &Path, scratch: &Path, solve: Option<&str>) -> PathBuf {
    let copy = scratch.join(source.file_name().unwrap());
    for (path, bytes, executable) in tree(source) {
        let to = copy.join(&path);
        fs_err::create_dir_all(to.parent().unwrap()).unwrap();
        fs_err::write(&to, bytes).unwrap();
        if executable {
            use std::os::unix::fs::PermissionsExt;
            fs_err::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    if let Some(solve) = solve {
        fs_err::write(copy.join("solution/solve.sh"), solve).unwrap();
    }
    copy
}

/// Makes an oracle cook from `task`, cooks it and returns the oracle's verification.
fn oracle_verdict(tag: &str, task: &Path) -> (serde_json::Value, TestCook) {
    harbor_base();
    let cook = TestCook::empty(tag);
    let output = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        task.to_str().unwrap(),
        "--oracle",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let output = cook.run_args(&["cook", cook.name()]);
    let path = cook.dir().join("verification/oracle/reward.json");
    let verdict: serde_json::Value = serde_json::from_slice(
        &fs_err::read(&path).unwrap_or_else(|e| panic!("{e}\n{}", show(&output))),
    )
    .unwrap();
    assert!(
        cook.leftovers().is_empty(),
        "cook leaves no engine object (the kept file systems included): {:?}",
        cook.leftovers()
    );
    (verdict, cook)
}

fn wrong(name: &str) -> String {
    let path = Path::new(TASKS)
        .parent()
        .unwrap()
        .join("harbor-wrong")
        .join(name)
        .join("solve.sh");
    fs_err::read_to_string(path).unwrap()
}

#[test]
fn the_oracle_reaches_1_on_each_task_and_wrong_solutions_get_their_reward() {
    let scratch = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, Option<String>, f64); 6] = [
        ("fizzbuzz", "fizzbuzz", None, 1.0),
        ("word-stats", "word-stats", None, 1.0),
        ("local-mirror", "local-mirror", None, 1.0),
        ("fizzbuzz-wrong", "fizzbuzz", Some(wrong("fizzbuzz")), 0.0),
        (
            "word-stats-half",
            "word-stats",
            Some(wrong("word-stats-half")),
            0.5,
        ),
        (
            "local-mirror-wrong",
            "local-mirror",
            Some(wrong("local-mirror")),
            0.0,
        ),
    ];
    for (case, name, solve, expected) in cases {
        let dir = scratch.path().join(case);
        let task = task_with_solution(&dir, name, solve.as_deref());
        let expected_hash = multicooker::harbor::load(&task).unwrap().files.hash;
        let (verdict, cook) = oracle_verdict(&format!("harbor-{case}"), &task);
        assert_eq!(
            verdict["reward"].as_f64(),
            Some(expected),
            "{case}: {verdict:#}\n{}",
            logs_of(&cook)
        );
        assert_eq!(verdict["task_hash"], expected_hash.as_str(), "{case}");
        if name == "word-stats" {
            assert_eq!(
                verdict["components"].as_object().map(serde_json::Map::len),
                Some(4),
                "{case}: reward.json's components are kept: {verdict:#}"
            );
        }
        drop(cook);
    }
}

#[test]
fn a_reward_planted_by_the_participant_and_a_process_left_to_rewrite_it_gain_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    // The participant solves nothing, writes a reward where the verifier will look, and leaves
    // a process behind that keeps writing it.
    let planted = "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n\
        echo '{\"reward\": 1}' > /logs/verifier/reward.json\n\
        nohup bash -c 'while true; do echo 1 > /logs/verifier/reward.txt; sleep 0.1; done' \
        >/dev/null 2>&1 &\ndisown\nsleep 1\n";
    let task = task_with_solution(scratch.path(), "fizzbuzz", Some(planted));
    let (verdict, cook) = oracle_verdict("harbor-planted", &task);
    assert_eq!(
        verdict["reward"].as_f64(),
        Some(0.0),
        "the task's own test.sh decides: {verdict:#}\n{}",
        logs_of(&cook)
    );
}

#[test]
fn a_test_sh_that_writes_no_reward_is_an_error_never_zero() {
    let scratch = tempfile::tempdir().unwrap();
    let task = task_with_solution(scratch.path(), "fizzbuzz", None);
    fs_err::write(task.join("tests/test.sh"), "#!/bin/bash\necho ran\n").unwrap();
    let (verdict, cook) = oracle_verdict("harbor-no-reward", &task);
    assert!(verdict["reward"].is_null(), "{verdict:#}");
    assert!(
        verdict["error"]
            .as_str()
            .is_some_and(|e| e.contains("wrote neither")),
        "{verdict:#}"
    );
    let output = cook.run_args(&["cook", cook.name()]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "no reward is exit 1: {}",
        show(&output)
    );
}

#[test]
fn doctor_on_a_task_folder_says_whether_its_oracle_reaches_1() {
    harbor_base();
    let cook = TestCook::empty("harbor-doctor");
    let scratch = tempfile::tempdir().unwrap();
    let good = task_with_solution(&scratch.path().join("good"), "fizzbuzz", None);
    let broken = task_with_solution(
        &scratch.path().join("broken"),
        "fizzbuzz",
        Some(&wrong("fizzbuzz")),
    );
    let output = cook.run_args(&["doctor", good.to_str().unwrap()]);
    let said = show(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(
        said.contains("the oracle reaches reward 1 on `fizzbuzz`"),
        "{said}"
    );
    let output = cook.run_args(&["doctor", broken.to_str().unwrap()]);
    let said = show(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("does not reach reward 1") && said.contains("reward 0"),
        "{said}"
    );
    // Its temporary cook is gone from the engine too.
    let name = format!("{}-oracle", jiff::Zoned::now().strftime("%y%m%d"));
    let left = crate::common::block_on(async {
        use multicooker::runtime::Runtime;
        crate::common::engine()
            .await
            .list(&multicooker::runtime::Selector::cook(&name))
            .await
            .unwrap()
    });
    assert!(left.is_empty(), "{left:?}");
}

/// The task whose test.sh runs as `tester` (`[verifier] user`), kept outside the dataset.
const USERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harbor-users");

/// A copy of the `as-tester` task with `solve` as its solution (its own when `None`) and
/// `[verifier] user` set to `user`.
fn tester_task(scratch: &Path, solve: Option<&str>, user: &str) -> PathBuf {
    let copy = copy_task(&Path::new(USERS).join("as-tester"), scratch, solve);
    let toml = copy.join("task.toml");
    let text = fs_err::read_to_string(&toml)
        .unwrap()
        .replace("user = \"tester\"", &format!("user = \"{user}\""));
    fs_err::write(&toml, text).unwrap();
    copy
}

/// What test.sh recorded in `/logs/verifier/<name>`, trimmed.
fn recorded(cook: &TestCook, name: &str) -> String {
    cook.text(&format!("verification/oracle/logs/{name}"))
        .trim()
        .to_owned()
}

/// `[verifier] user = "tester"`: test.sh runs as the environment image's tester (uid and gid
/// 2345, HOME its home), with /tests readable and /logs/verifier writable by it, and the
/// oracle reaches 1 (test.sh rewards only a run as tester). `uid:gid` and `name:group` too.
#[test]
fn test_sh_runs_as_the_verifier_user_of_the_environment_image() {
    let scratch = tempfile::tempdir().unwrap();
    for (case, user) in [
        ("name", "tester"),
        ("ids", "2345:2345"),
        ("groups", "tester:tester"),
    ] {
        let task = tester_task(&scratch.path().join(case), None, user);
        let (verdict, cook) = oracle_verdict(&format!("harbor-user-{case}"), &task);
        assert_eq!(
            verdict["reward"].as_f64(),
            Some(1.0),
            "{user}: {verdict:#}\n{}",
            logs_of(&cook)
        );
        assert_eq!(
            (recorded(&cook, "uid"), recorded(&cook, "gid")),
            ("2345".to_owned(), "2345".to_owned()),
            "{user}"
        );
        if case != "ids" {
            assert_eq!(recorded(&cook, "home"), "/home/tester", "{user}");
        }
    }
}

/// A participant that makes `tester` uid 0 in its own /etc/passwd gains nothing: the user is
/// resolved in the environment image, so test.sh still runs as uid 2345 on that file system.
#[test]
fn a_participant_mapping_the_verifier_user_to_root_in_its_passwd_gains_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let remap = fs_err::read_to_string(Path::new(USERS).join("remap-tester-to-root.sh")).unwrap();
    let task = tester_task(scratch.path(), Some(&remap), "tester");
    let (verdict, cook) = oracle_verdict("harbor-user-remap", &task);
    assert!(
        recorded(&cook, "passwd-line").starts_with("tester:x:0:0:"),
        "the verifier ran on the participant's rewritten /etc/passwd: {}",
        recorded(&cook, "passwd-line")
    );
    assert_eq!(
        (recorded(&cook, "uid"), recorded(&cook, "gid")),
        ("2345".to_owned(), "2345".to_owned()),
        "test.sh ran as the environment image's tester, not as root\n{}",
        logs_of(&cook)
    );
    assert_eq!(verdict["reward"].as_f64(), Some(1.0), "{verdict:#}");
}

/// A `[verifier] user` the environment image does not have is refused once the image is built,
/// before any participant's cell: the message names task.toml, the field, the value and the
/// fix, nothing ran and nothing is left on the engine.
#[test]
fn an_unknown_verifier_user_is_refused_with_the_fix_and_leaves_nothing() {
    harbor_base();
    let scratch = tempfile::tempdir().unwrap();
    let task = tester_task(scratch.path(), None, "ghost");
    let cook = TestCook::empty("harbor-user-unknown");
    let made = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        task.to_str().unwrap(),
        "--oracle",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    let output = cook.run_args(&["cook", cook.name()]);
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    assert!(
        said.contains("task.toml`: `[verifier] user = \"ghost\"` cannot run test.sh")
            && said.contains("the environment image has no user `ghost`")
            && said.contains("useradd"),
        "{said}"
    );
    assert!(
        !cook.dir().join("verification/oracle/reward.json").exists()
            && !cook.dir().join("work/oracle/workdir-after").exists(),
        "no participant ran, nothing was verified"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// A copy of the `as-tester` task without `[verifier] user` whose Dockerfile ends with
/// `USER <user>`, whose solution also records the uid it ran as in /app, and whose test.sh
/// copies that record to /logs/verifier.
fn image_user_task(scratch: &Path, user: &str) -> PathBuf {
    let solve = "#!/bin/bash\nset -euo pipefail\necho hello > /app/answer.txt\nid -u > /app/participant-uid\n";
    let copy = copy_task(&Path::new(USERS).join("as-tester"), scratch, Some(solve));
    let edit = |relative: &str, edit: &dyn Fn(String) -> String| {
        let path = copy.join(relative);
        let text = fs_err::read_to_string(&path).unwrap();
        let edited = edit(text.clone());
        assert_ne!(edited, text, "{relative} changed");
        fs_err::write(&path, edited).unwrap();
    };
    edit("task.toml", &|t| t.replace("user = \"tester\"\n", ""));
    edit("environment/Dockerfile", &|t| format!("{t}USER {user}\n"));
    edit("tests/test.sh", &|t| {
        t.replace(
            "mkdir -p /logs/verifier\n",
            "mkdir -p /logs/verifier\ncp /app/participant-uid /logs/verifier/participant-uid\n",
        )
    });
    copy
}

/// Without `[verifier] user`, test.sh runs as the environment image's `USER` (its Dockerfile's
/// last), as Harbor runs it (`docker exec` without `--user`): tester (uid and gid 2345, HOME its
/// home) resolved in the environment image exactly as if `[verifier] user` named it, and the
/// oracle reaches 1. The participant still runs as root (the task profile), which its record
/// shows.
#[test]
fn test_sh_runs_as_the_environment_images_user_when_the_verifier_names_none() {
    let scratch = tempfile::tempdir().unwrap();
    let task = image_user_task(scratch.path(), "tester");
    let (verdict, cook) = oracle_verdict("harbor-user-image", &task);
    assert_eq!(
        verdict["reward"].as_f64(),
        Some(1.0),
        "{verdict:#}\n{}",
        logs_of(&cook)
    );
    assert_eq!(
        (recorded(&cook, "uid"), recorded(&cook, "gid")),
        ("2345".to_owned(), "2345".to_owned()),
        "test.sh ran as the image's USER"
    );
    assert_eq!(recorded(&cook, "home"), "/home/tester");
    assert_eq!(
        recorded(&cook, "participant-uid"),
        "0",
        "the participant runs as root in the task profile, whatever the image's USER"
    );
}

/// An environment image whose `USER` it does not have itself (and no `[verifier] user`) is
/// refused once the image is built, before any participant's cell, naming the Dockerfile's
/// `USER` as the source, with the fix; nothing is left on the engine.
#[test]
fn an_image_user_the_image_lacks_is_refused_naming_the_dockerfile() {
    harbor_base();
    let scratch = tempfile::tempdir().unwrap();
    let task = image_user_task(scratch.path(), "ghost");
    let cook = TestCook::empty("harbor-user-image-unknown");
    let made = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        task.to_str().unwrap(),
        "--oracle",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    let output = cook.run_args(&["cook", cook.name()]);
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    assert!(
        said.contains("environment/Dockerfile`: `USER ghost` cannot run test.sh")
            && said.contains("sets no `[verifier] user`")
            && said.contains("the environment image has no user `ghost`")
            && said.contains("before its `USER` line")
            && said.contains("[verifier] user = \"root\""),
        "{said}"
    );
    assert!(
        !cook.dir().join("verification/oracle/reward.json").exists()
            && !cook.dir().join("work/oracle/workdir-after").exists(),
        "no participant ran, nothing was verified"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// The oracle's and the verifier's logs, for assertion messages.
fn logs_of(cook: &TestCook) -> String {
    let mut text = String::new();
    for entry in walkdir::WalkDir::new(cook.dir())
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| e.path().to_string_lossy().ends_with(".log"))
    {
        text.push_str(&format!(
            "--- {}\n{}\n",
            entry.path().display(),
            fs_err::read_to_string(entry.path()).unwrap_or_default()
        ));
    }
    text
}

/// Issue 26, datasets at night: a nightly whose `briefs:` entry is a folder of Harbor tasks
/// cooks each task as a brief (its own cook folder, the task byte for byte in `task/`, its
/// instruction as BRIEF.md), judges it, and records each task's hash in the night's
/// provenance, so that a task edited between nights makes them not comparable. Each task is
/// cooked as `cook` cooks it (the same pipeline step): the participants work in the task's
/// environment and the task's verifier gives each a reward, which the report carries; the
/// oracle runs at night as a participant and reaches 1 on each task.
#[test]
fn a_nightly_over_a_dataset_folder_cooks_each_task_and_records_its_hash() {
    harbor_base();
    let cook = TestCook::empty("harbor-night");
    let root = cook.root().to_path_buf();
    let config = root.join("nightly.yaml");
    fs_err::write(
        &config,
        format!(
            "name: hn\nbriefs: [{TASKS}]\nparticipants:\n  - {{name: a, flavor: dummy, model: \"quality:4\"}}\n  - {{name: b, flavor: dummy, model: \"quality:2\"}}\n  - {{name: oracle, flavor: oracle}}\njudges:\n  - {{name: j1, flavor: dummy}}\n  - {{name: j2, flavor: dummy}}\nrepeats: 1\nhistory: {root}/h.sqlite\ncooks_root: {root}\njudging: {{policy: allow_self}}\n",
            root = root.display()
        ),
    )
    .unwrap();
    let output = cook.run_args(&["nightly", config.to_str().unwrap(), "--night", "2026-11-28"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let names = ["fizzbuzz", "local-mirror", "word-stats"];
    for name in names {
        let dir = root.join(format!("20261128-hn-{name}-r1"));
        assert!(
            dir.join("summary.json").is_file(),
            "{name}: {}",
            show(&output)
        );
        assert_eq!(
            tree(&dir.join("task")),
            tree(&task(name)),
            "{name}: task/ differs"
        );
        assert_eq!(
            fs_err::read(dir.join("BRIEF.md")).unwrap(),
            fs_err::read(task(name).join("instruction.md")).unwrap(),
            "{name}"
        );
        night_task_rewards(&dir, name, &output);
    }
    let store = multicooker::nightly::store::Store::open(&root.join("h.sqlite")).unwrap();
    let nights = store.nights("hn", None).unwrap();
    assert_eq!(nights.len(), 1);
    let recorded: Vec<(String, String)> = nights[0]
        .briefs
        .iter()
        .map(|b| (b.brief.clone(), b.brief_sha256.clone()))
        .collect();
    let expected: Vec<(String, String)> = names
        .iter()
        .map(|n| {
            let hash = multicooker::harbor::load(&task(n))
                .unwrap()
                .hash()
                .to_owned();
            ((*n).to_owned(), hash)
        })
        .collect();
    assert_eq!(recorded, expected, "each task's hash is on record");
    assert_eq!(nights[0].status, "ok");
    // The rewards the tasks' verifiers gave reach the night's record, pooled over the tasks.
    let pooled: Vec<(&str, u64, usize)> = nights[0]
        .task_rewards
        .iter()
        .map(|r| (r.participant.as_str(), r.trials, r.tasks))
        .collect();
    assert_eq!(
        pooled,
        [("a", 3, 3), ("b", 3, 3), ("oracle", 3, 3)],
        "{}",
        show(&output)
    );
}

/// A night's task cook was cooked in the task's environment and verified by the task's own
/// verifier: each participant has the reward test.sh wrote (`verification/<p>/reward.json`,
/// made from the task's hash), the sealed record of what it changed in the workdir, and
/// summary.json carries each reward as `report` does after `cook`.
fn night_task_rewards(dir: &Path, name: &str, output: &std::process::Output) {
    let summary: serde_json::Value =
        serde_json::from_slice(&fs_err::read(dir.join("summary.json")).unwrap()).unwrap();
    let rows = summary["task_reward"]["participants"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: no task_reward in summary.json: {summary:#}"));
    let mut seen: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["participant"].as_str())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, ["a", "b", "oracle"], "{name}: {summary:#}");
    for row in rows {
        let who = row["participant"].as_str().unwrap();
        let path = dir.join(format!("verification/{who}/reward.json"));
        let verdict: serde_json::Value = serde_json::from_slice(
            &fs_err::read(&path).unwrap_or_else(|e| panic!("{name}/{who}: {e}\n{}", show(output))),
        )
        .unwrap();
        let reward = verdict["reward"].as_f64().unwrap_or_else(|| {
            panic!("{name}/{who}: the task's verifier gave no reward: {verdict:#}")
        });
        assert!((0.0..=1.0).contains(&reward), "{name}/{who}: {verdict:#}");
        let hash = multicooker::harbor::load(&task(name))
            .unwrap()
            .hash()
            .to_owned();
        assert_eq!(verdict["task_hash"], hash.as_str(), "{name}/{who}");
        if who == "oracle" {
            assert_eq!(
                verdict["reward"].as_f64(),
                Some(1.0),
                "{name}: the oracle solves its task: {verdict:#}"
            );
        }
        assert_eq!(
            row["reward"].as_f64(),
            Some(reward),
            "{name}/{who}: {summary:#}"
        );
        assert!(
            dir.join(format!("judging/_inbox/{who}/out/CHANGES.md"))
                .is_file(),
            "{name}/{who}: what it changed in the task's workdir is sealed for the jury"
        );
    }
}

/// A `briefs:` entry that is neither a template nor a Harbor task (or dataset) is named with
/// the fix, and two tasks that would share a cook folder name are refused, before anything runs.
#[test]
fn a_nightly_names_a_folder_that_is_no_brief_and_tasks_that_share_a_name() {
    let cook = TestCook::empty("harbor-night-bad");
    let root = cook.root().to_path_buf();
    let other = root.join("other");
    for (file, bytes, _) in tree(&task("fizzbuzz")) {
        let to = other.join("fizzbuzz").join(file);
        fs_err::create_dir_all(to.parent().unwrap()).unwrap();
        fs_err::write(to, bytes).unwrap();
    }
    fs_err::create_dir_all(root.join("empty")).unwrap();
    let config = root.join("nightly.yaml");
    fs_err::write(
        &config,
        format!(
            "name: hb\nbriefs: [{TASKS}, {other}, {empty}]\nparticipants:\n  - {{name: a, flavor: dummy}}\njudges:\n  - {{name: j1, flavor: dummy}}\nhistory: {root}/h.sqlite\ncooks_root: {root}\n",
            other = other.display(),
            empty = root.join("empty").display(),
            root = root.display()
        ),
    )
    .unwrap();
    let output = cook.run_args(&["nightly", config.to_str().unwrap(), "--night", "2026-11-28"]);
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("two briefs are named `fizzbuzz`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`briefs[2]`") && stderr.contains("nor a folder of Harbor tasks"),
        "{stderr}"
    );
    assert!(!root.join("h.sqlite").exists(), "nothing ran");
}

/// A CLI flavor works inside the task's environment (the dummy, which is the init itself): it
/// gets `instruction.md` as its prompt, works in the task's `workdir`, and the task's verifier
/// sees its final file system; the oracle runs beside it in the same cook. A flavor that
/// cannot work there is refused by name before any cell.
#[test]
fn a_cli_participant_works_in_the_tasks_environment_and_its_verifier_sees_what_it_left() {
    harbor_base();
    let scratch = tempfile::tempdir().unwrap();
    let task = task_with_solution(scratch.path(), "fizzbuzz", None);
    // 1 when the participant left the instruction, as it read it, in the workdir (the dummy
    // copies its prompt to RESULT.md where it works), else 0.
    fs_err::write(
        task.join("tests/test.sh"),
        "#!/bin/bash\nmkdir -p /logs/verifier\nif grep -q 'function `fizzbuzz(n)`' /app/RESULT.md 2>/dev/null; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
    )
    .unwrap();
    let cook = TestCook::empty("harbor-cli");
    let made = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        task.to_str().unwrap(),
        "--participants",
        "a=dummy",
        "--oracle",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    // Offline: the dummy participant marks its quality; dummy judges, which may judge a dummy.
    let yaml = cook.dir().join("brief.yaml");
    let text = fs_err::read_to_string(&yaml).unwrap();
    let text = text
        .replace(
            "{name: a, flavor: dummy}",
            "{name: a, flavor: dummy, model: \"quality:5\"}",
        )
        .replace("flavor: claude}", "flavor: dummy}")
        .replace("flavor: codex}", "flavor: dummy}")
        .replace("policy: require_distinct_flavor", "policy: allow_self");
    fs_err::write(&yaml, format!("{text}scoring: {{verify: 50, jury: 50}}\n")).unwrap();
    let cooked = cook.run_args(&["cook", cook.name()]);
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let reward = |who: &str| -> serde_json::Value {
        let path = cook.dir().join(format!("verification/{who}/reward.json"));
        serde_json::from_slice(
            &fs_err::read(&path)
                .unwrap_or_else(|e| panic!("{who}: {e}\n{}\n{}", show(&cooked), logs_of(&cook))),
        )
        .unwrap()
    };
    assert_eq!(
        reward("a")["reward"].as_f64(),
        Some(1.0),
        "the dummy read instruction.md and wrote in /app: {}\n{}",
        show(&cooked),
        logs_of(&cook)
    );
    assert_eq!(
        reward("oracle")["reward"].as_f64(),
        Some(0.0),
        "the oracle's solution writes no RESULT.md: {}",
        logs_of(&cook)
    );
    assert!(
        cook.leftovers().is_empty(),
        "nothing is left: {:?}",
        cook.leftovers()
    );
    the_jury_judges_what_each_changed_and_the_report_adds_the_rewards(&cook);
    // A flavor with no CLI for a task's environment yet (triad: three CLIs, one lead):
    // refused, the ones that can named.
    let brief = cook.dir().join("brief.yaml");
    let text = fs_err::read_to_string(&brief).unwrap();
    fs_err::write(
        &brief,
        text.replace("{name: a, flavor: dummy", "{name: a, flavor: triad"),
    )
    .unwrap();
    let refused = cook.run_args(&["cook", cook.name(), "--participants", "a"]);
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_ne!(refused.status.code(), Some(0), "{}", show(&refused));
    assert!(
        said.contains("participant `a` (triad) cannot work inside a Harbor task's environment")
            && said.contains("dummy, claude, codex, agy, grok"),
        "{}",
        show(&refused)
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// agy and grok work inside the task's environment (their fakes, mc-cell under the CLI's name:
/// no registry here): each cell is built `FROM` the environment with the CLI layered on, the
/// CLI runs as root with the image's HOME, reads `instruction.md` as its prompt and its login
/// from that HOME, answers in the task's `workdir`, and the task's verifier rewards what it
/// left there; the dummy runs beside them. The real agy and grok binaries are not run here.
#[test]
fn agy_and_grok_work_in_the_tasks_environment_and_its_verifier_rewards_each() {
    use crate::logins::{FakeHost, install_fakes};
    harbor_base();
    let host = FakeHost::new();
    let scratch = tempfile::tempdir().unwrap();
    let task = task_with_solution(scratch.path(), "fizzbuzz", None);
    // A file only the task's environment has, so a cell that is not FROM it cannot pass.
    fs_err::write(
        task.join("environment/Dockerfile"),
        format!("FROM {BASE_TAG}\nRUN echo fizzbuzz-env > /etc/task-marker\nWORKDIR /app\n"),
    )
    .unwrap();
    // 1 when the task's own image is under the participant and it left the instruction, as it
    // read it, in the workdir's out/RESULT.md (where the fakes, like the dummy's prompt asks,
    // answer), else 0; what it left is kept in the verifier's logs, and so is what test.sh
    // finds of the login the CLI was given in the image's HOME (root's).
    fs_err::write(
        task.join("tests/test.sh"),
        "#!/bin/bash\nmkdir -p /logs/verifier\ncp /app/out/RESULT.md /logs/verifier/ 2>/dev/null\ncat /root/.gemini/antigravity-cli/antigravity-oauth-token /root/.grok/auth.json > /logs/verifier/login.txt 2>&1\nif grep -qx fizzbuzz-env /etc/task-marker && grep -q 'function `fizzbuzz(n)`' /app/out/RESULT.md 2>/dev/null; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
    )
    .unwrap();
    let cook = TestCook::empty("harbor-agy-grok");
    let made = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        task.to_str().unwrap(),
        "--participants",
        "ag=agy,gk=grok,d=dummy",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    install_fakes(&cook, &["agy", "grok"]);
    let yaml = cook.dir().join("brief.yaml");
    let text = fs_err::read_to_string(&yaml).unwrap();
    let text = text
        .replace(
            "{name: ag, flavor: agy}",
            "{name: ag, flavor: agy, model: \"gemini-3-pro-q4\"}",
        )
        .replace("flavor: claude}", "flavor: dummy}")
        .replace("flavor: codex}", "flavor: dummy}")
        .replace("policy: require_distinct_flavor", "policy: allow_self");
    fs_err::write(&yaml, text).unwrap();
    let cooked = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(
        cooked.status.code(),
        Some(0),
        "{}\n{}",
        show(&cooked),
        logs_of(&cook)
    );
    let verified = |who: &str| -> (serde_json::Value, String) {
        let dir = cook.dir().join(format!("verification/{who}"));
        let reward = serde_json::from_slice(
            &fs_err::read(dir.join("reward.json"))
                .unwrap_or_else(|e| panic!("{who}: {e}\n{}\n{}", show(&cooked), logs_of(&cook))),
        )
        .unwrap();
        let left = fs_err::read_to_string(dir.join("logs/RESULT.md")).unwrap_or_default();
        let login = fs_err::read_to_string(dir.join("logs/login.txt")).unwrap_or_default();
        assert!(
            login.matches("No such file").count() == 2 && !login.contains("CANARY"),
            "{who}: the kept file system holds no login for the task's verifier: {login}"
        );
        (reward, left)
    };
    for (who, cli) in [("ag", "agy"), ("gk", "grok")] {
        let (reward, left) = verified(who);
        assert_eq!(
            reward["reward"].as_f64(),
            Some(1.0),
            "{who}: {reward:#}\n{}",
            logs_of(&cook)
        );
        assert!(
            left.starts_with(&format!("# {cli} (fake) answer")),
            "{who}: the {cli} CLI wrote it: {left}"
        );
        // Its transcript: the CLI's own structured output, with the model it was given.
        let log = cook.text(&format!("logs/{who}/{cli}.stdout.log"));
        assert!(log.contains("\"usage\""), "{who}: {log}");
    }
    assert!(
        cook.text("logs/ag/agy.stdout.log")
            .contains("\"model\":\"gemini-3-pro-q4\""),
        "agy was run with the participant's model"
    );
    let result = cook.json("RUN_RESULT.json");
    let usage = |who: &str| {
        result["participants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == who)
            .map(|p| p["usage"]["total_tokens"].clone())
    };
    assert_eq!(usage("ag"), Some(serde_json::json!(900)), "{result:#}");
    assert_eq!(usage("gk"), Some(serde_json::json!(670)), "{result:#}");
    // The dummy is the init itself; it answers in the workdir, not under out/.
    assert_eq!(verified("d").0["reward"].as_f64(), Some(0.0));
    assert!(
        cook.leftovers().is_empty(),
        "nothing is left (layered images, kept file systems): {:?}",
        cook.leftovers()
    );
}

/// The jury on top of a task cook (after `cook`): blind judges see what each participant changed
/// in the workdir, never its reward; the report puts the rewards beside the jury's scores.
fn the_jury_judges_what_each_changed_and_the_report_adds_the_rewards(cook: &TestCook) {
    // What each one changed in /app, sealed for the jury: the dummy's RESULT.md, the oracle's
    // fizzbuzz.py, as a list and a unified diff measured against the environment's /app.
    let changes = cook.text("judging/_inbox/a/out/CHANGES.md");
    assert!(changes.contains("- A `RESULT.md`"), "{changes}");
    let diff = cook.text("judging/_inbox/a/out/changes.diff");
    assert!(
        diff.contains("+++ b/RESULT.md") && diff.contains("+dummy-quality: 5"),
        "{diff}"
    );
    for silent in ["a", "oracle"] {
        assert!(
            !cook
                .dir()
                .join(format!("judging/_inbox/{silent}/out/FINAL_MESSAGE.md"))
                .exists(),
            "the dummy and the oracle say nothing the jury could read as a claim"
        );
    }
    let oracle = cook.text("judging/_inbox/oracle/out/changes.diff");
    assert!(oracle.contains("+def fizzbuzz(n):"), "{oracle}");
    assert!(
        !cook
            .text("judging/_inbox/oracle/out/CHANGES.md")
            .contains("RESULT.md"),
        "each participant's own changes"
    );
    // The jury on top: blind judges score what each changed, and the report ranks them.
    let judged = cook.run_args(&["judge", cook.name()]);
    assert_eq!(judged.status.code(), Some(0), "{}", show(&judged));
    let reported = cook.run_args(&["report", cook.name()]);
    assert_eq!(reported.status.code(), Some(0), "{}", show(&reported));
    let leaderboard = cook.text("leaderboard.md");
    let at = |who: &str| leaderboard.find(&format!("| {who} ")).unwrap_or(usize::MAX);
    assert!(at("a") < at("oracle"), "{leaderboard}");
    // The task's reward beside the jury's score, combined by `scoring:`, never shown to judges.
    assert!(leaderboard.contains("## Task reward"), "{leaderboard}");
    let summary = cook.json("summary.json");
    let rewards = &summary["task_reward"]["participants"];
    assert_eq!(rewards[0]["participant"], "a", "{summary:#}");
    assert_eq!(rewards[0]["reward"].as_f64(), Some(1.0), "{summary:#}");
    let jury = rewards[0]["jury_pct"].as_f64().unwrap();
    assert_eq!(
        rewards[0]["combined_pct"].as_f64(),
        Some((f64::midpoint(100.0, jury) * 100.0).round() / 100.0),
        "{summary:#}"
    );
    assert_eq!(rewards[1]["reward"].as_f64(), Some(0.0), "{summary:#}");
    let inbox = cook.dir().join("judging");
    for entry in walkdir::WalkDir::new(&inbox).into_iter().flatten() {
        if entry.file_type().is_file() && !entry.path().to_string_lossy().contains("_mapping") {
            let text = fs_err::read_to_string(entry.path()).unwrap_or_default();
            assert!(
                !text.contains("\"reward\""),
                "no judge's file holds a reward: {}",
                entry.path().display()
            );
        }
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// A task whose environment is a prebuilt `docker_image` (no `environment/Dockerfile`) runs
/// `FROM` it: the oracle reaches 1 through the task's own test.sh, in the task's `workdir`.
#[test]
fn a_prebuilt_docker_image_task_runs_from_that_image() {
    harbor_base();
    let scratch = tempfile::tempdir().unwrap();
    let task = task_with_solution(scratch.path(), "fizzbuzz", None);
    fs_err::remove_dir_all(task.join("environment")).unwrap();
    let toml = fs_err::read_to_string(task.join("task.toml")).unwrap();
    fs_err::write(
        task.join("task.toml"),
        toml.replace(
            "[environment]\n",
            &format!("[environment]\ndocker_image = \"{BASE_TAG}\"\nworkdir = \"/app\"\n"),
        ),
    )
    .unwrap();
    let (verdict, cook) = oracle_verdict("harbor-prebuilt", &task);
    assert_eq!(
        verdict["reward"].as_f64(),
        Some(1.0),
        "{verdict:#}\n{}",
        logs_of(&cook)
    );
    assert!(
        cook.text("judging/_inbox/oracle/out/CHANGES.md")
            .contains("- A `fizzbuzz.py`"),
        "the workdir task.toml names is collected"
    );
}

/// `refine` and `resume` re-run participants in their flavors' images; on a cook made from a
/// Harbor task they would run outside the task's environment, so both are refused with the fix
/// (run `cook` again) before any engine work.
#[test]
fn refine_and_resume_of_a_task_cook_are_refused_with_the_fix() {
    let cook = TestCook::empty("harbor-refine");
    let made = cook.run_args(&[
        "new",
        cook.name(),
        "--from",
        task("fizzbuzz").to_str().unwrap(),
        "--participants",
        "one=dummy",
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    for command in ["refine", "resume"] {
        let output = cook.run_args(&[command, cook.name()]);
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{command}: {}",
            show(&output)
        );
        assert!(
            said.contains(&format!("`{command}` cannot re-run participants of"))
                && said.contains(&format!("multicooker cook {}", cook.name())),
            "{command}: {said}"
        );
    }
    assert!(!cook.dir().join("RUN_RESULT.json").exists(), "nothing ran");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// A layer's check, its failure branch run by a real shell where the CLI is missing, prints the
/// sentence as written (apostrophes included) and fails the build step. (A shell is spawned
/// here, in a test, never by the tool.)
#[test]
fn a_cli_that_does_not_run_fails_the_layer_build_with_what_it_needs() {
    use multicooker::flavor::task_layer::{TASK_LAYERS, dockerfile};
    for layer in &TASK_LAYERS {
        let text = dockerfile(layer, "e", "f");
        let run = text
            .lines()
            .find_map(|l| l.strip_prefix("RUN "))
            .expect("the layer checks its CLI in a RUN step");
        // A PATH with the image's tools the step uses, and no CLI.
        let empty = tempfile::tempdir().unwrap();
        for tool in ["mktemp", "rm"] {
            let found = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.is_file())
                .unwrap();
            std::os::unix::fs::symlink(found, empty.path().join(tool)).unwrap();
        }
        let output = std::process::Command::new("/bin/sh")
            .args(["-c", run])
            .env("PATH", empty.path())
            .env("TMPDIR", empty.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{}: {said}", layer.flavor);
        assert!(
            said.contains(&format!(
                "multicooker: the {} CLI does not run in this task's environment: it needs {}",
                layer.flavor, layer.needs
            )),
            "{}: {said}",
            layer.flavor
        );
    }
}
