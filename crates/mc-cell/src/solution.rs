//! What a dummy participant writes for the hidden tests to check: an answer and a program
//! (`solve`), a program that never ends (`loop-forever`), every known way to game a test
//! harness from its output (`cheat`), or one attack of its code on the verifier that runs it
//! (`sabotage:KIND`). The verifier must see through the last two.

use std::path::Path;

use crate::script::Directive;

/// A JUnit report claiming that everything passed.
const FORGED_JUNIT: &str = "<?xml version=\"1.0\"?><testsuites><testsuite name=\"forged\" tests=\"100\" failures=\"0\" errors=\"0\">\
<testcase name=\"everything\"/></testsuite></testsuites>";

/// pytest's hook, rewritten so that every test reports a pass.
const CONFTEST: &str = "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    report.outcome = \"passed\"\n";

/// A spec under which anything passes.
const EASY_SPEC: &str =
    "{\"tests\": [{\"name\": \"anything\", \"file\": \"RESULT.md\", \"exists\": true}]}\n";

/// Writes the files of one directive into `out`.
pub fn write(directive: &Directive, out: &Path) -> Result<(), String> {
    match directive {
        Directive::Solve(answer) => {
            put(out, "answer.txt", &format!("{answer}\n"))?;
            put(out, "solution.mcs", &format!("print {answer}\n"))
        }
        Directive::LoopForever => put(out, "solution.mcs", "# never ends\nloop\n"),
        Directive::Cheat => cheat(out),
        Directive::Sabotage(kind) => {
            put(out, "answer.txt", "0\n")?;
            put(out, "solution.mcs", &sabotage(kind))
        }
        _ => Ok(()),
    }
}

fn cheat(out: &Path) -> Result<(), String> {
    put(out, "answer.txt", "0\n")?;
    put(out, "conftest.py", CONFTEST)?;
    put(out, "tests.json", EASY_SPEC)?;
    put(out, "verify/tests.json", EASY_SPEC)?;
    put(out, "junit.xml", FORGED_JUNIT)?;
    put(out, "results/junit.xml", FORGED_JUNIT)?;
    put(out, "results.tap", "1..1\nok 1 - everything\n")?;
    put(
        out,
        "run-tests.sh",
        "#!/bin/sh\necho '100 passed, 0 failed'\n",
    )?;
    // Run by the hidden tests inside the verifier: forge its results, edit its tests and the
    // output under test, then print a wrong answer.
    let program = [
        format!("write /work/results/junit.xml {FORGED_JUNIT}"),
        format!("write /work/results/forged.xml {FORGED_JUNIT}"),
        format!("write /work/verify/tests.json {}", EASY_SPEC.trim()),
        "write /work/output/answer.txt 42".to_owned(),
        "print 100 passed, 0 failed".to_owned(),
        "print 0".to_owned(),
    ];
    put(out, "solution.mcs", &(program.join("\n") + "\n"))
}

/// The program of one attack; each prints a wrong answer after it.
fn sabotage(kind: &str) -> String {
    let attack = match kind {
        "junit" => "forge-junit 10000",
        // The daemon gets half a second at the runner while the program still runs.
        "daemon" => "daemon\nsleep 0.5",
        // The expected answer, read from the hidden folder instead of computed.
        "peek" => "read /work/verify/expected/answer.txt",
        "tap" => "write /work/results/results.tap 1..3000000",
        _ => "shout 100 passed, 0 failed",
    };
    let wrong = if kind == "peek" { "" } else { "print 0\n" };
    format!("# sabotage:{kind}\n{attack}\n{wrong}")
}

fn put(out: &Path, relative: &str, text: &str) -> Result<(), String> {
    let path = out.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
