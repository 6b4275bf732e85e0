//! Reading tasks: every schema version, Harbor's defaults and old spellings, refusals by name,
//! unknown keys ignored, links refused, the hash stable and the copy byte-identical.

use std::path::Path;
use std::time::Duration;

use super::*;
use crate::error::Hint;

/// Writes a minimal task with this task.toml into a fresh folder.
fn task(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "task.toml", toml);
    write(dir.path(), "instruction.md", "Write hello.txt.\n");
    write(
        dir.path(),
        "environment/Dockerfile",
        "FROM base\nWORKDIR /app\n",
    );
    write(
        dir.path(),
        "tests/test.sh",
        "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
    );
    dir
}

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(path, text).unwrap();
}

fn error(toml: &str) -> (String, String) {
    let dir = task(toml);
    let error = load(dir.path()).unwrap_err();
    (error.to_string(), error.hint().unwrap_or_default())
}

#[test]
fn a_bare_task_gets_harbors_defaults() {
    let dir = task("");
    let task = load(dir.path()).unwrap();
    let c = &task.config;
    assert_eq!(c.schema_version, "1.1");
    assert_eq!(c.agent_timeout, Duration::from_secs(600));
    assert_eq!(c.verifier.timeout, Duration::from_secs(600));
    assert_eq!(c.verifier.user, None);
    assert!((c.environment.cpus - 1.0).abs() < f64::EPSILON);
    assert_eq!(c.environment.memory_mb, 2048);
    assert_eq!(c.environment.storage_mb, 10240);
    assert_eq!(c.environment.internet, Internet::Open);
    assert_eq!(c.environment.workdir, None);
    assert_eq!(task.instruction, "Write hello.txt.\n");
    assert!(!task.has_solution());
    let folder = dir.path().file_name().unwrap().to_string_lossy();
    assert_eq!(task.name, folder);
}

#[test]
fn every_schema_version_and_old_spelling_is_read() {
    let old = r#"
version = "1.0"

[metadata]
author_name = "someone"
difficulty = "medium"
tags = ["x"]
expert_time_estimate_min = 12.5

[agent]
timeout_sec = 900.0

[verifier]
timeout_sec = 120
user = "tester"

[verifier.env]
PYTHONDONTWRITEBYTECODE = "1"

[environment]
build_timeout_sec = 300.0
cpus = 2
memory = "4G"
storage = "512M"
allow_internet = false
workdir = "/app"
"#;
    let dir = task(old);
    let c = load(dir.path()).unwrap().config;
    assert_eq!(c.schema_version, "1.0");
    assert_eq!(c.agent_timeout, Duration::from_secs(900));
    assert_eq!(c.verifier.timeout, Duration::from_secs(120));
    assert_eq!(c.verifier.user.as_deref(), Some("tester"));
    assert_eq!(c.verifier.env["PYTHONDONTWRITEBYTECODE"], "1");
    assert!((c.environment.cpus - 2.0).abs() < f64::EPSILON);
    assert_eq!(c.environment.memory_mb, 4096);
    assert_eq!(c.environment.storage_mb, 512);
    assert_eq!(c.environment.internet, Internet::Closed);
    assert_eq!(c.environment.workdir.as_deref(), Some("/app"));
    for version in SCHEMA_VERSIONS_FOR_TESTS {
        let text = format!(
            "schema_version = \"{version}\"\n[task]\nname = \"org/hello\"\ndescription = \"d\"\nkeywords = [\"a\"]\n[environment]\nmemory_mb = 1024\nstorage_mb = 2048\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"PyPI.org.\"]\n[verifier]\nuser = 1000\n"
        );
        let dir = task(&text);
        let task = load(dir.path()).unwrap();
        assert_eq!(task.config.schema_version, version);
        assert_eq!(task.name, "org/hello");
        assert_eq!(task.config.environment.memory_mb, 1024);
        assert_eq!(
            task.config.environment.internet,
            Internet::Hosts(vec!["pypi.org".into()])
        );
        assert_eq!(task.config.verifier.user.as_deref(), Some("1000"));
    }
}

const SCHEMA_VERSIONS_FOR_TESTS: [&str; 5] = ["1.0", "1.1", "1.2", "1.3", "1.4"];

#[test]
fn unknown_keys_and_sections_are_ignored_as_harbor_ignores_them() {
    let dir = task(
        "schema_version = \"1.4\"\nsource = \"tb\"\nfuture_key = 3\n[future]\nx = 1\n[environment]\nsomething_new = \"y\"\ngpus = 0\nmcp_servers = []\n",
    );
    assert!(load(dir.path()).is_ok());
}

#[test]
fn behaviour_changing_keys_are_refused_one_message_each() {
    let cases = [
        ("[[steps]]\nname = \"a\"\n", "multi-step task (`[[steps]]`)"),
        ("[[verifier.collect]]\ncommand = \"x\"\n", "collect hooks"),
        (
            "[[environment.mcp_servers]]\nname = \"m\"\nurl = \"http://x\"\n",
            "MCP servers",
        ),
        ("[environment]\ngpus = 1\n", "GPUs"),
        ("[environment]\ngpu_types = [\"H100\"]\n", "GPUs"),
        (
            "[environment.healthcheck]\ncommand = \"true\"\n",
            "healthcheck",
        ),
        ("[environment.env]\nKEY = \"${KEY}\"\n", "from the host"),
        ("[agent]\nuser = \"agent\"\n", "`agent.user`"),
        (
            "[verifier]\nallowed_hosts = [\"x\"]\n",
            "`verifier.allowed_hosts`",
        ),
        ("schema_version = \"9.0\"\n", "`schema_version = \"9.0\"`"),
    ];
    for (toml, named) in cases {
        let (message, hint) = error(toml);
        assert!(
            message.contains(named) && message.ends_with("is not supported yet"),
            "{toml}: {message}"
        );
        assert!(!hint.is_empty(), "{toml}: a fix");
    }
    let dir = task("[agent]\nuser = \"root\"\n");
    assert!(load(dir.path()).is_ok(), "root is what the profile does");
    for user in ["tester:staff", "1000:1000"] {
        let dir = task(&format!("[verifier]\nuser = \"{user}\"\n"));
        let task = load(dir.path()).unwrap();
        assert_eq!(
            task.config.verifier.user.as_deref(),
            Some(user),
            "`user:group`"
        );
    }
}

#[test]
fn wrong_values_name_the_key_and_the_fix() {
    let cases = [
        ("[environment]\ncpus = \"two\"\n", "cpus"),
        (
            "[environment]\nmemory = \"lots\"\n",
            "`environment.memory` is `lots`",
        ),
        ("[environment]\ncpus = 0\n", "`environment.cpus` is 0"),
        ("[agent]\ntimeout_sec = -1.0\n", "`agent.timeout_sec` is -1"),
        (
            "[environment]\nworkdir = \"app\"\n",
            "`environment.workdir`",
        ),
        ("[verifier]\nuser = \"Robert'); DROP\"\n", "`verifier.user`"),
        ("[verifier]\nuser = \"tester:a:b\"\n", "`verifier.user`"),
        ("[verifier]\nuser = \":tester\"\n", "`verifier.user`"),
        ("[verifier.env]\n\"1BAD\" = \"x\"\n", "`verifier.env.1BAD`"),
        (
            "[environment]\nnetwork_mode = \"sometimes\"\n",
            "`environment.network_mode`",
        ),
        ("version = ", "not a valid task.toml"),
    ];
    for (toml, named) in cases {
        let (message, hint) = error(toml);
        assert!(message.contains(named), "{toml}: {message}");
        assert!(message.contains("task.toml"), "names the file: {message}");
        assert!(!hint.is_empty(), "{toml}: a fix");
    }
}

#[test]
fn missing_files_and_compose_environments_are_named() {
    let dir = task("");
    fs_err::remove_file(dir.path().join("tests/test.sh")).unwrap();
    assert!(
        load(dir.path())
            .unwrap_err()
            .to_string()
            .contains("no `tests/test.sh`")
    );
    let dir = task("");
    fs_err::remove_file(dir.path().join("environment/Dockerfile")).unwrap();
    assert!(
        load(dir.path())
            .unwrap_err()
            .to_string()
            .contains("environment/Dockerfile")
    );
    let dir = task("[environment]\ndocker_image = \"prebuilt:1\"\n");
    fs_err::remove_file(dir.path().join("environment/Dockerfile")).unwrap();
    assert_eq!(
        load(dir.path())
            .unwrap()
            .config
            .environment
            .docker_image
            .as_deref(),
        Some("prebuilt:1")
    );
    let dir = task("");
    write(
        dir.path(),
        "environment/docker-compose.yaml",
        "services: {}\n",
    );
    let message = load(dir.path()).unwrap_err().to_string();
    assert!(message.contains("docker-compose.yaml") && message.contains("multi-container"));
}

#[test]
fn links_in_a_task_are_refused_never_followed() {
    let dir = task("");
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("tests/data")).unwrap();
    let error = load(dir.path()).unwrap_err();
    assert!(matches!(error, HarborError::NotRegular { .. }), "{error}");
}

#[test]
fn the_hash_is_stable_and_the_copy_byte_identical() {
    use std::os::unix::fs::PermissionsExt;
    let dir = task("");
    write(
        dir.path(),
        "solution/solve.sh",
        "#!/bin/bash\necho hello > /app/hello.txt\n",
    );
    fs_err::set_permissions(
        dir.path().join("solution/solve.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let first = load(dir.path()).unwrap();
    assert!(first.has_solution());
    assert_eq!(first.hash(), load(dir.path()).unwrap().hash());
    assert_eq!(first.hash().len(), 64);
    let copy = tempfile::tempdir().unwrap();
    files::copy(dir.path(), &first.files, copy.path()).unwrap();
    let again = load(copy.path()).unwrap();
    assert_eq!(again.hash(), first.hash(), "byte-identical, modes kept");
    write(dir.path(), "tests/test.sh", "#!/bin/bash\necho 0\n");
    assert_ne!(load(dir.path()).unwrap().hash(), first.hash());
    let tests: Vec<&str> = first.files.under("tests").map(|(p, _)| p).collect();
    assert_eq!(tests, ["test.sh"]);
}

#[test]
fn a_dataset_is_its_task_folders_sorted() {
    let root = tempfile::tempdir().unwrap();
    for name in ["b-task", "a-task"] {
        let one = task("");
        let manifest = files::read(one.path()).unwrap();
        files::copy(one.path(), &manifest, &root.path().join(name)).unwrap();
    }
    fs_err::create_dir_all(root.path().join("scripts")).unwrap();
    let tasks = dataset(root.path()).unwrap();
    let names: Vec<_> = tasks
        .iter()
        .map(|t| t.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a-task", "b-task"]);
    assert_eq!(dataset(&tasks[0]).unwrap(), [tasks[0].clone()]);
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        dataset(empty.path()),
        Err(HarborError::EmptyDataset { .. })
    ));
}

#[test]
fn the_suites_harbor_tasks_read_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harbor");
    let tasks = dataset(&root).unwrap();
    let names: Vec<String> = tasks.iter().map(|t| load(t).unwrap().name).collect();
    assert_eq!(
        names,
        [
            "fizzbuzz",
            "multicooker-tests/local-mirror",
            "multicooker-tests/word-stats"
        ]
    );
    let mirror = load(&root.join("local-mirror")).unwrap();
    assert_eq!(mirror.config.schema_version, "1.4");
    assert_eq!(mirror.config.environment.internet, Internet::Closed);
    assert_eq!(mirror.config.environment.workdir.as_deref(), Some("/app"));
    assert_eq!(mirror.config.verifier.user.as_deref(), Some("root"));
    assert_eq!(mirror.config.solution_env["MIRROR"], "/opt/mirror");
    let fizzbuzz = load(&root.join("fizzbuzz")).unwrap();
    assert_eq!(fizzbuzz.config.environment.memory_mb, 1024);
    assert_eq!(fizzbuzz.config.environment.storage_mb, 2048);
    for task in tasks {
        let task = load(&task).unwrap();
        assert!(task.has_solution(), "{}", task.name);
        let dockerfile = fs_err::read_to_string(task.dir.join(DOCKERFILE)).unwrap();
        assert!(
            dockerfile.starts_with("FROM multicooker-test-debian:bookworm\n"),
            "{}: FROM the suite's local base",
            task.name
        );
    }
}
