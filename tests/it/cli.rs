//! What users read: `--help` and error messages, as insta snapshots (review with
//! `cargo insta review`; CI never accepts new snapshots).

use crate::common::{TestCook, dummy_brief, show};

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"/tmp/mc-it-[A-Za-z0-9]+", "[TMP]");
    settings.add_filter(r"990101-[a-z-]+-\d+-\d+", "[COOK]");
    settings
}

fn stderr_of(cook: &TestCook, args: &[&str]) -> String {
    String::from_utf8_lossy(&cook.command(args).output().unwrap().stderr).into_owned()
}

#[test]
fn help_explains_commands_and_exit_codes() {
    let cook = TestCook::empty("help");
    let output = cook
        .command(&["--help"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    insta::assert_snapshot!("main_help", String::from_utf8_lossy(&output.stdout));
    let output = cook
        .command(&["judge", "--help"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    insta::assert_snapshot!("judge_help", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn error_messages_name_the_file_the_field_and_the_fix() {
    let cases = [
        (
            "unknown_field",
            dummy_brief(&[("a", "")], "").replacen(
                "timeout_s: 60",
                "timeout_s: 60\nparticpants: []",
                1,
            ),
        ),
        ("bad_name", dummy_brief(&[("a/b", "")], "")),
        (
            "several",
            dummy_brief(&[("a", ""), ("A", "")], "").replace("weight: 40", "weight: 30"),
        ),
        ("bad_yaml", "name: [unclosed\n".to_owned()),
    ];
    for (name, yaml) in cases {
        let cook = TestCook::new("errors", &yaml);
        let text = stderr_of(&cook, &["cook", cook.name()]);
        settings().bind(|| insta::assert_snapshot!(name, text));
    }
    let cook = TestCook::empty("errors");
    let text = stderr_of(&cook, &["cook", "nonesuch"]);
    settings().bind(|| insta::assert_snapshot!("missing_cook", text));
}

/// The tool talks to the engine only through its API: no `docker` (or any other) subprocess,
/// so no argument can be interpreted by a shell or a CLI (SECURITY.md).
#[test]
fn the_tool_never_spawns_a_subprocess() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    for entry in walkdir::WalkDir::new(src)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
    {
        let text = fs_err::read_to_string(entry.path()).unwrap();
        for needle in ["process::Command", "Command::new", "tokio::process"] {
            assert!(
                !text.contains(needle),
                "{} uses {needle}",
                entry.path().display()
            );
        }
    }
}

#[test]
fn doctor_sandbox_checks_every_property_from_inside_a_cell() {
    let cook = TestCook::empty("doctor");
    let output = cook
        .command(&["doctor", "--flavors", "dummy", "--sandbox", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::common::show(&output)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let sandbox: Vec<&serde_json::Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"].as_str().unwrap().starts_with("sandbox: "))
        .collect();
    let ok = sandbox.iter().filter(|c| c["level"] == "OK").count();
    assert_eq!(ok, 17, "every property holds: {sandbox:#?}");
    // Issue 21: the program's exact identity and capability sets are shown, and its init is
    // out of its reach.
    let lines: Vec<&str> = sandbox.iter().filter_map(|c| c["check"].as_str()).collect();
    for expected in [
        "sandbox: runs as exactly the cell user (uid ",
        "CapEff 0000000000000000 CapPrm 0000000000000000 CapBnd 0000000000000000 CapAmb 0000000000000000 NoNewPrivs 1",
        "sandbox: cannot open init's descriptors (/proc/1/fd) (false)",
        "sandbox: cannot trace PID 1 (ptrace) (false)",
    ] {
        assert!(
            lines.iter().any(|l| l.contains(expected)),
            "`{expected}` in {lines:#?}"
        );
    }
    // Issue 26: the Harbor cells' task profile is stated beside the default one.
    assert!(
        sandbox.iter().any(|c| c["level"] == "INFO"
            && c["check"]
                .as_str()
                .is_some_and(|t| t.contains("the task profile")
                    && t.contains(
                        "CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, AUDIT_WRITE"
                    ))),
        "{sandbox:#?}"
    );
    assert!(cook.leftovers().is_empty());
}

#[test]
fn add_participant_keeps_comments_and_refuses_duplicates_without_touching_the_file() {
    let yaml = format!(
        "# my cook, my comments\n{}",
        dummy_brief(&[("a", "quality:3")], "")
    );
    let cook = TestCook::new("add", &yaml);
    let output = cook.run_args(&["add-participant", cook.name(), "bee=dummy"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let text = cook.text("brief.yaml");
    assert!(text.starts_with("# my cook, my comments\n"), "{text}");
    assert!(
        text.contains("  - {name: bee, flavor: dummy}\njudges:"),
        "{text}"
    );
    assert!(cook.dir().join("work/bee").is_dir());
    for (spec, expected) in [
        ("bee=dummy", "already in"),
        ("cee=nosuch", "unknown flavor `nosuch`"),
        ("=dummy", "bad participant spec"),
    ] {
        let output = cook.run_args(&["add-participant", cook.name(), spec]);
        assert_eq!(output.status.code(), Some(2), "{}", show(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(expected),
            "{}",
            show(&output)
        );
        assert_eq!(
            cook.text("brief.yaml"),
            text,
            "a refused edit changes nothing"
        );
    }
}

#[test]
fn build_base_builds_what_is_missing_and_refuses_an_unknown_flavor() {
    let cook = TestCook::empty("base");
    let output = cook.run_args(&["build-base", "dummy", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["images"][0]["flavor"], "dummy");
    assert_eq!(
        report["images"][0]["state"], "already built",
        "the harness built it"
    );
    let forced = cook.run_args(&["build-base", "dummy", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", show(&forced));
    assert!(String::from_utf8_lossy(&forced.stdout).contains("built"));
    let unknown = cook.run_args(&["build-base", "nosuch"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", show(&unknown));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no packaged image for flavor `nosuch`")
    );
}

/// Every `MULTICOOKER_*` variable the source reads or sets is documented in `--help` and in the
/// README (issue 17: a registry that can be forgotten gets a test that fails when it is).
#[test]
fn every_environment_variable_is_listed_in_help_and_readme() {
    let cook = TestCook::empty("env");
    let help = cook.command(&["--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let readme = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let pattern = regex::Regex::new(r"MULTICOOKER_[A-Z_]*[A-Z]").unwrap();
    let mut found = std::collections::BTreeSet::new();
    for entry in walkdir::WalkDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
    {
        let text = fs_err::read_to_string(entry.path()).unwrap();
        found.extend(pattern.find_iter(&text).map(|m| m.as_str().to_owned()));
    }
    assert!(found.len() >= 15, "the scan found the variables: {found:?}");
    for name in &found {
        assert!(
            help.contains(name.as_str()),
            "`--help` does not list {name}"
        );
        assert!(
            readme.contains(name.as_str()),
            "README.md does not list {name}"
        );
    }
}

#[test]
fn global_flags_work_before_and_after_the_subcommand_and_top_level_help_lists_them() {
    let cook = TestCook::empty("global");
    for args in [
        &["-q", "--json", "status", "nonesuch"][..],
        &["status", "nonesuch", "-q", "--json"][..],
    ] {
        let output = cook.command(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", show(&output));
        let error: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", show(&output)));
        assert_eq!(error["code"], 2);
    }
    let help = cook.command(&["--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--root",
        "--json",
        "--quiet",
        "--verbose",
        "--no-progress",
        "--color",
        "--namespace",
    ] {
        assert!(
            help.contains(flag),
            "top-level --help lacks {flag}:\n{help}"
        );
    }
}

#[test]
fn json_errors_are_one_object_on_stdout_with_the_same_exit_codes() {
    let cook = TestCook::empty("jsonerr");
    let output = cook
        .command(&["report", "mits", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let error: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("no cook folder"),
        "{error}"
    );
    assert!(
        error["hint"].as_str().unwrap().contains("multicooker new"),
        "{error}"
    );
    assert_eq!(error["causes"], serde_json::json!([]));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("error: no cook folder"),
        "people still read the error on stderr"
    );
    // A command line clap refuses: exit 2, JSON on stdout with clap's tip as the hint.
    let output = cook.command(&["--json", "repor", "x"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let error: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(error["code"], 2);
    assert!(
        error["hint"].as_str().unwrap().contains("report"),
        "{error}"
    );
    // Without --json stdout stays empty.
    let output = cook.command(&["report", "mits"]).output().unwrap();
    assert!(output.stdout.is_empty(), "{}", show(&output));
}

#[test]
fn completions_and_man_pages_come_from_the_same_definition() {
    let cook = TestCook::empty("shell");
    for (shell, needle) in [
        ("bash", "complete -F _multicooker"),
        ("zsh", "#compdef multicooker"),
        ("fish", "complete -c multicooker"),
    ] {
        let output = cook.command(&["completions", shell]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", show(&output));
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(script.contains(needle), "{shell}: {script}");
        assert!(
            script.contains("nightly") && script.contains("namespace"),
            "{shell}"
        );
    }
    let output = cook.command(&["man"]).output().unwrap();
    let page = String::from_utf8_lossy(&output.stdout);
    assert!(
        page.starts_with(".ie") && page.contains(".TH multicooker 1"),
        "{page}"
    );
    assert!(
        page.contains("MULTICOOKER_ROOT"),
        "the man page carries the environment"
    );
    let out = cook.root().join("man");
    let output = cook
        .command(&["man", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    for page in [
        "multicooker.1",
        "multicooker-cook.1",
        "multicooker-nightly.1",
    ] {
        assert!(out.join(page).is_file(), "{page} written");
    }
}
