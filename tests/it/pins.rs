//! One pin per CLI (issue 25): the packaged images and the real-CLI suite run the same Claude
//! Code and codex, and `.ci/pin-drift --check` fails, offline, when they do not.

use std::path::Path;
use std::process::{Command, Output};

/// The files whose pins must agree.
const PINNED: &[&str] = &[
    "images/claude/Dockerfile",
    "images/codex/Dockerfile",
    "images/triad/Dockerfile",
    "tests/real-clis/prepare.sh",
];

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check(root: &Path) -> Output {
    Command::new(repository().join(".ci/pin-drift"))
        .arg("--check")
        .env("MULTICOOKER_PIN_ROOT", root)
        .output()
        .expect(".ci/pin-drift runs (bash)")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn the_repository_pins_agree() {
    let output = check(repository());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(text(&output).contains("pins agree"), "{}", text(&output));
}

/// A copy of the pinned files with `from` replaced by `to` in `file`.
fn copy_with(file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for pinned in PINNED {
        let target = copy.path().join(pinned);
        fs_err::create_dir_all(target.parent().unwrap()).unwrap();
        let mut content = fs_err::read_to_string(repository().join(pinned)).unwrap();
        if *pinned == file {
            assert!(content.contains(from), "{file} has `{from}`");
            content = content.replacen(from, to, 1);
        }
        fs_err::write(target, content).unwrap();
    }
    copy
}

#[test]
fn a_pin_that_differs_anywhere_fails_the_check_with_what_to_do() {
    let cases = [
        (
            "images/triad/Dockerfile",
            "ARG CLAUDE_CODE_VERSION=",
            "ARG CLAUDE_CODE_VERSION=9.",
            "images/triad",
        ),
        (
            "images/triad/Dockerfile",
            "ARG CODEX_VERSION=",
            "ARG CODEX_VERSION=9.",
            "images/triad",
        ),
        (
            "tests/real-clis/prepare.sh",
            "CLAUDE_SDK_BUNDLES:-",
            "CLAUDE_SDK_BUNDLES:-9.",
            "CLAUDE_SDK_VERSION and CLAUDE_SDK_BUNDLES",
        ),
        (
            "tests/real-clis/prepare.sh",
            "CODEX_WHEEL_VERSION:-",
            "CODEX_WHEEL_VERSION:-9.",
            "set CODEX_WHEEL_VERSION",
        ),
        (
            "images/claude/Dockerfile",
            "ARG CLAUDE_CODE_VERSION=",
            "ARG CLAUDE_CODE_VERSION=9.",
            "the real-CLI suite runs Claude Code",
        ),
    ];
    for (file, from, to, says) in cases {
        let copy = copy_with(file, from, to);
        let output = check(copy.path());
        assert_eq!(output.status.code(), Some(1), "{file}: {}", text(&output));
        assert!(
            text(&output).contains("MISMATCH") && text(&output).contains(says),
            "{file}: {}",
            text(&output)
        );
    }
}
