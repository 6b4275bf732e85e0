//! `mc-cell verify`: the dummy flavor's test runner, run in a verifier cell. It reads its spec
//! from the hidden side (`/work/verify/tests.json`), never from the output under test
//! (`/work/output`, read-only), evaluates each check, and only then writes its report into
//! `/work/results` (JUnit XML, TAP, or nothing but the summary line), after emptying that area:
//! whatever the code under test wrote there is gone before the report is written.
//!
//! A check may run the output's "program" (`.mcs`, see `program.rs`), the stand-in for a
//! participant's code under test: as a subprocess whose stdout the runner captures, started
//! through `$MULTICOOKER_LAUNCH` when the cell offers it (as another uid, which cannot read
//! the hidden folder, write the results or signal the runner, and whose every process is dead
//! when the call returns), else directly, with the runner's own powers. It can loop forever
//! (the cell's timeout ends it) or try to forge results, edit or read the tests.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::json::{self, Json};

/// Where the runner reads and writes, from its arguments, and how it runs a program.
struct Places {
    spec: PathBuf,
    output: PathBuf,
    results: PathBuf,
    /// The command a program's path is appended to.
    interpreter: Vec<String>,
}

/// `$MULTICOOKER_LAUNCH mc-cell program`, or `mc-cell program` without a launcher.
fn interpreter() -> Vec<String> {
    let mut command: Vec<String> = std::env::var("MULTICOOKER_LAUNCH")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let me = std::env::current_exe().map_or_else(
        |_| "/usr/local/bin/mc-cell".to_owned(),
        |p| p.display().to_string(),
    );
    command.extend([me, "program".to_owned()]);
    command
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Pass,
    Fail(String),
    Error(String),
    Skip(String),
}

/// One evaluated check.
#[derive(Debug, Clone, PartialEq)]
struct Case {
    name: String,
    outcome: Outcome,
    seconds: f64,
}

/// Entry point of `mc-cell verify [--spec P] [--output D] [--results D]`.
pub fn run(args: &[String]) -> ExitCode {
    let mut places = Places {
        spec: PathBuf::from("/work/verify/tests.json"),
        output: PathBuf::from("/work/output"),
        results: PathBuf::from("/work/results"),
        interpreter: interpreter(),
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let slot = match flag.as_str() {
            "--spec" => &mut places.spec,
            "--output" => &mut places.output,
            "--results" => &mut places.results,
            other => {
                eprintln!("mc-cell verify: unknown argument `{other}`");
                return ExitCode::from(2);
            }
        };
        match args.next() {
            Some(value) => *slot = PathBuf::from(value),
            None => {
                eprintln!("mc-cell verify: `{flag}` needs a path");
                return ExitCode::from(2);
            }
        }
    }
    match verify(&places) {
        Ok(failed) => ExitCode::from(u8::from(failed)),
        Err(error) => {
            eprintln!("mc-cell verify: {error}");
            ExitCode::from(2)
        }
    }
}

/// Runs every check; true when some check did not pass.
fn verify(places: &Places) -> Result<bool, String> {
    let text = std::fs::read_to_string(&places.spec)
        .map_err(|e| format!("cannot read the spec {}: {e}", places.spec.display()))?;
    let spec = json::parse(&text).map_err(|e| format!("{}: {e}", places.spec.display()))?;
    let Some(Json::Array(tests)) = spec.get("tests") else {
        return Err(format!("{} has no `tests` list", places.spec.display()));
    };
    let hidden = places.spec.parent().unwrap_or(Path::new("/"));
    let cases: Vec<Case> = tests
        .iter()
        .enumerate()
        .map(|(i, test)| {
            let started = Instant::now();
            let name = match test.get("name") {
                Some(Json::Str(name)) => name.clone(),
                _ => format!("test {}", i + 1),
            };
            let outcome = check(test, places, hidden);
            Case {
                name,
                outcome,
                seconds: started.elapsed().as_secs_f64(),
            }
        })
        .collect();
    let format = match spec.get("report") {
        Some(Json::Str(format)) => format.as_str(),
        _ => "junit",
    };
    // The runner owns its results area: what the code under test left there goes first.
    clear(&places.results)?;
    let report = match format {
        "junit" => Some(("junit.xml", junit(&cases))),
        "tap" => Some(("results.tap", tap(&cases))),
        "summary" => None,
        other => return Err(format!("unknown report format `{other}`")),
    };
    if let Some((file, text)) = report {
        let path = places.results.join(file);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let count = |f: fn(&Outcome) -> bool| cases.iter().filter(|c| f(&c.outcome)).count();
    let (passed, failed) = (
        count(|o| *o == Outcome::Pass),
        count(|o| matches!(o, Outcome::Fail(_))),
    );
    let (errors, skipped) = (
        count(|o| matches!(o, Outcome::Error(_))),
        count(|o| matches!(o, Outcome::Skip(_))),
    );
    println!("{passed} passed, {failed} failed, {errors} errors, {skipped} skipped");
    Ok(failed + errors > 0)
}

fn clear(dir: &Path) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let removed = match entry.file_type() {
            Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        removed.map_err(|e| format!("cannot clear {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Evaluates one check against the output.
fn check(test: &Json, places: &Places, hidden: &Path) -> Outcome {
    let output = places.output.as_path();
    let text = |key: &str| match test.get(key) {
        Some(Json::Str(s)) => Some(s.clone()),
        _ => None,
    };
    if let Some(reason) = text("skip") {
        return Outcome::Skip(reason);
    }
    if let Some(program) = text("run") {
        let Some(expect) = text("expect") else {
            return Outcome::Error("`run` needs `expect`".into());
        };
        return match run_program(&places.interpreter, &output.join(&program)) {
            Ok(printed) if printed.trim() == expect.trim() => Outcome::Pass,
            Ok(printed) => Outcome::Fail(format!(
                "printed {:?}, expected {:?}",
                printed.trim(),
                expect.trim()
            )),
            Err(error) => Outcome::Fail(error),
        };
    }
    let Some(file) = text("file") else {
        return Outcome::Error("a check needs `file`, `run` or `skip`".into());
    };
    let path = output.join(&file);
    if let Some(Json::Bool(wanted)) = test.get("exists") {
        return if path.is_file() == *wanted {
            Outcome::Pass
        } else {
            Outcome::Fail(format!("{file}: exists is {}", !wanted))
        };
    }
    let Ok(content) = std::fs::read_to_string(&path) else {
        return Outcome::Fail(format!("{file} is missing or unreadable"));
    };
    if let Some(needle) = text("contains") {
        return verdict(content.contains(&needle), || {
            format!("{file} does not contain {needle:?}")
        });
    }
    let expected = match (text("equals"), text("equals_file")) {
        (Some(expected), _) => expected,
        (None, Some(reference)) => match std::fs::read_to_string(hidden.join(&reference)) {
            Ok(expected) => expected,
            Err(e) => return Outcome::Error(format!("hidden {reference}: {e}")),
        },
        (None, None) => return Outcome::Error(format!("no condition for {file}")),
    };
    verdict(content.trim() == expected.trim(), || {
        format!("{file} differs from the expected text")
    })
}

fn verdict(passed: bool, why: impl FnOnce() -> String) -> Outcome {
    if passed {
        Outcome::Pass
    } else {
        Outcome::Fail(why())
    }
}

/// Runs a program as a subprocess (`interpreter PATH`, stdin empty, stderr the runner's) and
/// returns what it printed on its stdout, once it ended with status 0.
fn run_program(interpreter: &[String], path: &Path) -> Result<String, String> {
    let (first, rest) = interpreter.split_first().ok_or("no interpreter")?;
    let output = std::process::Command::new(first)
        .args(rest)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start `{first}`: {e}"))?;
    eprintln!("mc-cell verify: `{}` returned", path.display());
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(printed)
    } else {
        Err(format!("{} ended with {}", path.display(), output.status))
    }
}

fn escape_xml(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

fn junit(cases: &[Case]) -> String {
    let count = |f: fn(&Outcome) -> bool| cases.iter().filter(|c| f(&c.outcome)).count();
    let failures = count(|o| matches!(o, Outcome::Fail(_)));
    let errors = count(|o| matches!(o, Outcome::Error(_)));
    let skipped = count(|o| matches!(o, Outcome::Skip(_)));
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"hidden\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n",
        cases.len()
    );
    for case in cases {
        let head = format!(
            "    <testcase classname=\"hidden\" name=\"{}\" time=\"{:.3}\"",
            escape_xml(&case.name),
            case.seconds
        );
        let body = match &case.outcome {
            Outcome::Pass => String::new(),
            Outcome::Fail(m) => format!("<failure message=\"{}\"/>", escape_xml(m)),
            Outcome::Error(m) => format!("<error message=\"{}\"/>", escape_xml(m)),
            Outcome::Skip(m) => format!("<skipped message=\"{}\"/>", escape_xml(m)),
        };
        if body.is_empty() {
            xml.push_str(&format!("{head}/>\n"));
        } else {
            xml.push_str(&format!("{head}>{body}</testcase>\n"));
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

fn tap(cases: &[Case]) -> String {
    let mut text = format!("TAP version 13\n1..{}\n", cases.len());
    for (i, case) in cases.iter().enumerate() {
        let name = case.name.replace('#', "\\#");
        let line = match &case.outcome {
            Outcome::Pass => format!("ok {} - {name}", i + 1),
            Outcome::Fail(m) | Outcome::Error(m) => {
                format!("not ok {} - {name}\n  # {}", i + 1, m.replace('\n', " "))
            }
            Outcome::Skip(m) => format!("ok {} - {name} # SKIP {m}", i + 1),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mc-verify-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["output", "verify/expected", "results"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        dir
    }

    #[test]
    fn checks_pass_fail_error_and_skip_and_the_report_replaces_forgeries() {
        let dir = scratch("report");
        std::fs::write(dir.join("output/answer.txt"), "42\n").unwrap();
        // The program is a shell script here: the runner appends its path to any interpreter.
        std::fs::write(
            dir.join("output/solution.mcs"),
            "echo x > RESULTS/forged.xml\necho 41\n"
                .replace("RESULTS", &dir.join("results").display().to_string()),
        )
        .unwrap();
        std::fs::write(dir.join("verify/expected/answer.txt"), "42").unwrap();
        std::fs::write(
            dir.join("verify/tests.json"),
            r#"{"tests": [
                {"name": "answer", "file": "answer.txt", "equals_file": "expected/answer.txt"},
                {"name": "runs", "run": "solution.mcs", "expect": "42"},
                {"name": "broken", "file": "answer.txt"},
                {"name": "later", "skip": "not yet"}
            ]}"#,
        )
        .unwrap();
        let places = Places {
            spec: dir.join("verify/tests.json"),
            output: dir.join("output"),
            results: dir.join("results"),
            interpreter: vec!["/bin/sh".into()],
        };
        assert_eq!(verify(&places), Ok(true));
        let entries: Vec<String> = std::fs::read_dir(dir.join("results"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(entries, ["junit.xml"], "the forged file is gone");
        let xml = std::fs::read_to_string(dir.join("results/junit.xml")).unwrap();
        assert!(
            xml.contains("tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("name=\"answer\" time="));
        assert!(
            xml.contains("printed &quot;41&quot;, expected &quot;42&quot;"),
            "{xml}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tap_marks_skips_and_failures() {
        let cases = vec![
            Case {
                name: "a".into(),
                outcome: Outcome::Pass,
                seconds: 0.0,
            },
            Case {
                name: "b".into(),
                outcome: Outcome::Fail("no".into()),
                seconds: 0.0,
            },
            Case {
                name: "c".into(),
                outcome: Outcome::Skip("later".into()),
                seconds: 0.0,
            },
        ];
        assert_eq!(
            tap(&cases),
            "TAP version 13\n1..3\nok 1 - a\nnot ok 2 - b\n  # no\nok 3 - c # SKIP later\n"
        );
    }
}
