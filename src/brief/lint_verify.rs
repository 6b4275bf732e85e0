//! Lint of the hidden tests: `verify:` needs a real `verify/` folder (and its Dockerfile or
//! spec), a `verify/` folder without `verify:` never runs, and no file of `raw/` (which every
//! participant reads) may be a copy of a hidden one. A warning (never blocking, so older runners
//! still run) when no hidden file uses `$MULTICOOKER_LAUNCH`: the code under test then runs with
//! the runner's powers.

use std::collections::HashMap;
use std::path::Path;

use sha2::Digest as _;

use super::lint::Finding;
use super::{Brief, VerifierImage};

/// Files larger than this are not compared.
const MAX_COMPARED_BYTES: u64 = 16 << 20;
/// Files shorter than this are too common to mean a leak (`{}`, an empty line).
const MIN_COMPARED_BYTES: u64 = 16;

/// Findings about `verify/` and `verify:`.
pub(super) fn lint_hidden(cook: &Path, brief: &Brief, findings: &mut Vec<Finding>) {
    let dir = cook.join(crate::state::VERIFY_DIR);
    let meta = std::fs::symlink_metadata(&dir).ok();
    if meta.as_ref().is_some_and(std::fs::Metadata::is_symlink) {
        findings.push(Finding {
            file: "verify/",
            problem: "is a link; the hidden tests must be a real folder of the cook".into(),
            fix: "replace the link by a copy of the folder".into(),
        });
        return;
    }
    let is_dir = meta.is_some_and(|m| m.is_dir());
    match (&brief.verify, is_dir) {
        (Some(verify), true) => {
            let (needed, what) = match verify.image {
                VerifierImage::Dockerfile => ("Dockerfile", "the image that runs the tests"),
                VerifierImage::Dummy => ("tests.json", "the dummy runner's spec"),
            };
            if !dir.join(needed).is_file() {
                findings.push(Finding {
                    file: "verify/",
                    problem: format!("has no `{needed}` ({what}), which `verify.image: {}` needs", verify.image.as_str()),
                    fix: format!("add `verify/{needed}`"),
                });
            } else if let (VerifierImage::Dummy, Some(tests)) = (verify.image, verify.tests) {
                spec_count(&dir.join(needed), tests, findings);
            }
        }
        (Some(_), false) => findings.push(Finding {
            file: "verify/",
            problem: "is missing, but brief.yaml has `verify:`".into(),
            fix: "put the hidden tests in `verify/` next to brief.yaml, or remove `verify:`".into(),
        }),
        (None, true) => findings.push(Finding {
            file: "verify/",
            problem: "holds hidden tests, but brief.yaml has no `verify:`, so they never run".into(),
            fix: "add `verify: {image: dockerfile}` (README, \"Hidden verification\"), or remove the folder".into(),
        }),
        (None, false) => return,
    }
    if is_dir {
        copies_in_raw(cook, &dir, findings);
    }
}

/// `verify.tests` must be the number of tests the dummy's spec lists: a runner reporting more
/// than `verify.tests` is flagged as tampering.
fn spec_count(spec: &Path, tests: u64, findings: &mut Vec<Finding>) {
    let listed = std::fs::read(spec)
        .ok()
        .filter(|b| b.len() as u64 <= MAX_COMPARED_BYTES)
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| Some(v.get("tests")?.as_array()?.len() as u64));
    if let Some(listed) = listed.filter(|n| *n != tests) {
        findings.push(Finding {
            file: "brief.yaml",
            problem: format!("`verify.tests` is {tests}, but `verify/tests.json` lists {listed} tests, so every run would be flagged or short"),
            fix: format!("set `verify.tests: {listed}`, or remove it (the spec's count is used)"),
        });
    }
}

/// What a runner uses to start the code under test with less power.
const LAUNCH_ENV: &str = "MULTICOOKER_LAUNCH";

/// The warning for a `dockerfile` verifier none of whose hidden files (runner, tests, helpers)
/// names `$MULTICOOKER_LAUNCH`: the code under test then runs as the runner's user, and can
/// write the results, read the hidden tests and outlive its call. `None` when the runner is the
/// dummy's (`mc-cell verify`, which launches on its own) or some hidden file uses the launcher.
pub fn unlaunched(cook: &Path, brief: &Brief) -> Option<String> {
    let verify = brief.verify.as_ref()?;
    let dummy_runner = verify.command.as_ref().is_some_and(|c| {
        c.first().is_some_and(|p| p.ends_with("mc-cell")) && c.get(1).is_some_and(|a| a == "verify")
    });
    if verify.image == VerifierImage::Dummy || dummy_runner {
        return None;
    }
    let dir = cook.join(crate::state::VERIFY_DIR);
    let launches = walkdir::WalkDir::new(&dir)
        .follow_links(false)
        .max_depth(crate::fsx::MAX_DEPTH)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| e.metadata().is_ok_and(|m| m.len() <= MAX_COMPARED_BYTES))
        .take(100_000)
        .any(|e| {
            std::fs::read(e.path()).is_ok_and(|b| {
                b.windows(LAUNCH_ENV.len())
                    .any(|w| w == LAUNCH_ENV.as_bytes())
            })
        });
    (!launches && dir.is_dir()).then(|| {
        format!("no file of `verify/` uses `${LAUNCH_ENV}`, so the code under test runs with the runner's powers (it can write /work/results, read /work/verify and outlive its call); start it with `${LAUNCH_ENV} CMD ARGS…` (README, \"Hidden verification\")")
    })
}

/// A raw/ file with the same bytes as a hidden file hands the tests to every participant.
fn copies_in_raw(cook: &Path, hidden: &Path, findings: &mut Vec<Finding>) {
    let digests = |root: &Path| -> HashMap<[u8; 32], String> {
        walkdir::WalkDir::new(root)
            .follow_links(false)
            .max_depth(crate::fsx::MAX_DEPTH)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .filter(|e| {
                e.metadata()
                    .is_ok_and(|m| (MIN_COMPARED_BYTES..=MAX_COMPARED_BYTES).contains(&m.len()))
            })
            .take(100_000)
            .filter_map(|e| {
                let bytes = std::fs::read(e.path()).ok()?;
                let relative = e.path().strip_prefix(cook).unwrap_or(e.path());
                Some((
                    sha2::Sha256::digest(&bytes).into(),
                    relative.display().to_string(),
                ))
            })
            .collect()
    };
    let secret = digests(hidden);
    let mut leaks: Vec<(String, String)> = digests(&cook.join("raw"))
        .into_iter()
        .filter_map(|(digest, raw)| Some((raw, secret.get(&digest)?.clone())))
        .collect();
    leaks.sort();
    for (raw, hidden) in leaks {
        findings.push(Finding {
            file: "raw/",
            problem: format!(
                "`{raw}` is a copy of the hidden `{hidden}`, and every participant reads raw/"
            ),
            fix: format!("remove `{raw}`, or change the hidden file"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(extra: &str) -> Brief {
        let yaml = format!("name: t\nparticipants:\n  - {{name: a, flavor: dummy}}\n{extra}");
        crate::brief::parse(Path::new("b.yaml"), yaml.as_bytes())
            .unwrap()
            .brief
    }

    fn problems(cook: &Path, brief: &Brief) -> Vec<String> {
        let mut findings = Vec::new();
        lint_hidden(cook, brief, &mut findings);
        findings
            .into_iter()
            .map(|f| format!("{}: {}", f.file, f.problem))
            .collect()
    }

    #[test]
    fn a_runner_that_never_uses_the_launcher_is_warned_about_and_still_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let cook = tmp.path();
        fs_err::create_dir_all(cook.join("verify/tests")).unwrap();
        fs_err::write(cook.join("verify/Dockerfile"), "FROM scratch\n").unwrap();
        fs_err::write(
            cook.join("verify/tests/test_a.py"),
            "subprocess.run([sys.executable, PROGRAM])\n",
        )
        .unwrap();
        let dockerfile = brief("verify: {image: dockerfile, tests: 1}\n");
        let warning = unlaunched(cook, &dockerfile).unwrap();
        assert!(
            warning.contains("runs with the runner's powers"),
            "{warning}"
        );
        assert!(
            problems(cook, &dockerfile).is_empty(),
            "a warning, never a finding"
        );
        fs_err::write(
            cook.join("verify/tests/test_a.py"),
            "LAUNCH = os.environ.get(\"MULTICOOKER_LAUNCH\", \"\").split()\n",
        )
        .unwrap();
        assert_eq!(unlaunched(cook, &dockerfile), None);
        assert_eq!(unlaunched(cook, &brief("verify: {image: dummy}\n")), None);
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        for example in ["implementation-spike", "code-review-audit"] {
            let dir = examples.join(example);
            let loaded = crate::brief::load(&dir.join("brief.yaml")).unwrap();
            assert_eq!(unlaunched(&dir, &loaded.brief), None, "{example}");
        }
    }

    #[test]
    fn verify_and_its_folder_go_together_and_raw_never_copies_a_hidden_file() {
        let tmp = tempfile::tempdir().unwrap();
        let cook = tmp.path();
        fs_err::create_dir_all(cook.join("raw")).unwrap();
        let with = brief("verify: {image: dummy}\n");
        assert_eq!(
            problems(cook, &with),
            ["verify/: is missing, but brief.yaml has `verify:`"]
        );
        fs_err::create_dir_all(cook.join("verify/expected")).unwrap();
        assert!(problems(cook, &with)[0].contains("has no `tests.json`"));
        fs_err::write(cook.join("verify/tests.json"), "{\"tests\": []}").unwrap();
        assert!(problems(cook, &with).is_empty());
        assert!(problems(cook, &brief(""))[0].contains("so they never run"));
        assert_eq!(
            problems(cook, &brief("verify: {image: dummy, tests: 2}\n")),
            [
                "brief.yaml: `verify.tests` is 2, but `verify/tests.json` lists 0 tests, so every run would be flagged or short"
            ]
        );
        fs_err::write(
            cook.join("verify/expected/out.txt"),
            "the expected output, verbatim\n",
        )
        .unwrap();
        fs_err::write(
            cook.join("raw/sample-out.txt"),
            "the expected output, verbatim\n",
        )
        .unwrap();
        assert_eq!(
            problems(cook, &with),
            [
                "raw/: `raw/sample-out.txt` is a copy of the hidden `verify/expected/out.txt`, and every participant reads raw/"
            ]
        );
    }
}
