//! `mc-cell program PATH`: a dummy participant's "code under test", a `.mcs` program of one
//! instruction per line, run by the dummy's test runner (`verify.rs`) as a subprocess, through
//! `$MULTICOOKER_LAUNCH` when the cell offers it. It prints to its own stdout (which the runner
//! captures and compares) and reports every failed attempt on stderr.
//!
//! Besides honest instructions (`print TEXT`, `read PATH`, `write PATH TEXT`, `sleep S`, `loop`) it has the
//! attacks a participant's code has tried on its verifier (issue 21), for the tests:
//! `forge-junit N` (a results/junit.xml of N passing cases, made read-only), `daemon` (a
//! double-forked daemon that stops the runner, swaps in an all-pass report and lets it go on),
//! `shout TEXT` (TEXT written to every other process's stdout it can open).

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The results area of a verifier cell.
const RESULTS: &str = "/work/results";
/// How long the daemon keeps at it.
const DAEMON_FOR: Duration = Duration::from_secs(30);
const SIGCONT: i32 = 18;
const SIGSTOP: i32 = 19;

unsafe extern "C" {
    fn fork() -> i32;
    fn setsid() -> i32;
    fn kill(pid: i32, signal: i32) -> i32;
    fn _exit(code: i32) -> !;
}

/// Entry point of `mc-cell program PATH` and of the daemon it leaves (`program --daemon`).
pub fn run(args: &[String]) -> ExitCode {
    match args.first().map(String::as_str) {
        Some("--daemon") => daemon(),
        Some(path) => match interpret(Path::new(path)) {
            Ok(printed) => {
                print!("{printed}");
                let _ = std::io::stdout().flush();
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("program: {error}");
                ExitCode::from(1)
            }
        },
        None => {
            eprintln!("usage: mc-cell program PATH");
            ExitCode::from(2)
        }
    }
}

/// Runs a program and returns what it printed. `loop` never returns: the verifier's timeout
/// is what ends it.
fn interpret(path: &Path) -> Result<String, String> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut printed = String::new();
    for line in source.lines().map(str::trim) {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "" | "#" => {}
            "print" => {
                printed.push_str(rest);
                printed.push('\n');
            }
            "read" => match std::fs::read_to_string(rest) {
                Ok(text) => printed.push_str(&text),
                Err(e) => printed.push_str(&format!("cannot read {rest}: {e}\n")),
            },
            "write" => {
                let (target, text) = rest.split_once(' ').unwrap_or((rest, ""));
                attempt(&format!("write {target}"), std::fs::write(target, text));
            }
            "forge-junit" => forge_junit(rest.parse().unwrap_or(10_000)),
            "daemon" => attempt("start a daemon", start_daemon()),
            "shout" => shout(rest),
            "sleep" => std::thread::sleep(Duration::from_secs_f64(
                rest.parse::<f64>().unwrap_or(1.0).clamp(0.0, 3600.0),
            )),
            "loop" => loop {
                std::thread::sleep(Duration::from_secs(1));
            },
            other => return Err(format!("unknown instruction `{other}`")),
        }
    }
    Ok(printed)
}

fn attempt<T>(what: &str, result: std::io::Result<T>) {
    if let Err(e) = result {
        eprintln!("program: cannot {what}: {e}");
    }
}

/// A `JUnit` report of `cases` passing tests.
fn all_pass(cases: usize) -> String {
    format!(
        "<?xml version=\"1.0\"?><testsuites><testsuite name=\"forged\" tests=\"{cases}\">{}</testsuite></testsuites>\n",
        "<testcase classname=\"forged\" name=\"pass\"/>".repeat(cases)
    )
}

/// Writes results/junit.xml with `cases` passing tests and makes it read-only, so that a runner
/// writing its own report after the code ran fails to.
fn forge_junit(cases: usize) {
    let path = format!("{RESULTS}/junit.xml");
    attempt(
        &format!("write {path}"),
        std::fs::write(&path, all_pass(cases)),
    );
    use std::os::unix::fs::PermissionsExt;
    attempt(
        &format!("make {path} read-only"),
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)),
    );
}

/// Starts `mc-cell program --daemon` with no stdout (the runner's capture pipe ends with the
/// program), which forks again and leaves.
fn start_daemon() -> std::io::Result<()> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["program", "--daemon"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()?;
    child.wait().map(|_| ())
}

/// The daemon: detached from the program, it keeps stopping every runner it finds, swapping in
/// an all-pass report and letting the runner go on, until [`DAEMON_FOR`] has passed. It says on
/// stderr that it is alive, so a test sees whether it outlived the call that started it.
fn daemon() -> ExitCode {
    // SAFETY: fork in a single-threaded process; the parent leaves at once.
    let pid = unsafe { fork() };
    if pid != 0 {
        // SAFETY: leaving the intermediate process without running anything else.
        unsafe { _exit(0) }
    }
    // SAFETY: no arguments; makes the daemon its own session.
    unsafe { setsid() };
    let started = Instant::now();
    let mut told = Instant::now() - Duration::from_secs(1);
    while started.elapsed() < DAEMON_FOR {
        if told.elapsed() >= Duration::from_millis(100) {
            eprintln!("program daemon: alive");
            told = Instant::now();
        }
        for runner in runners() {
            // SAFETY: plain signal calls on a pid; failures are reported.
            let stopped = unsafe { kill(runner, SIGSTOP) } == 0;
            if !stopped {
                eprintln!(
                    "program daemon: cannot stop the runner {runner}: {}",
                    std::io::Error::last_os_error()
                );
            }
            for (file, text) in [
                ("junit.xml", all_pass(3)),
                ("results.tap", "1..3\nok 1\nok 2\nok 3\n".to_owned()),
            ] {
                let path = format!("{RESULTS}/{file}");
                let _ = std::fs::remove_file(&path);
                attempt(&format!("swap {path}"), std::fs::write(&path, text));
            }
            if stopped {
                // SAFETY: as above.
                unsafe { kill(runner, SIGCONT) };
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    ExitCode::SUCCESS
}

/// The pids of the cell's `mc-cell verify` runners.
fn runners() -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).nth(1) == Some(b"verify"))
        })
        .collect()
}

/// Writes `text` to init's stdout and every runner's, where the runner's own summary line
/// would be read from.
fn shout(text: &str) {
    let mut targets = vec![1];
    targets.extend(runners());
    for pid in targets {
        let path = format!("/proc/{pid}/fd/1");
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{text}"));
        attempt(&format!("write {path}"), written);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_prints_reads_and_reports_what_it_could_not_do() {
        let dir = std::env::temp_dir().join(format!("mc-program-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("in.txt"), "42\n").unwrap();
        let program = dir.join("p.mcs");
        std::fs::write(
            &program,
            format!(
                "# comment\nprint a b\nread {}\nread /nonexistent/x\nwrite /nonexistent/y z\n",
                dir.join("in.txt").display()
            ),
        )
        .unwrap();
        let printed = interpret(&program).unwrap();
        assert!(
            printed.starts_with("a b\n42\ncannot read /nonexistent/x"),
            "{printed}"
        );
        std::fs::write(&program, "jump\n").unwrap();
        assert!(
            interpret(&program)
                .unwrap_err()
                .contains("unknown instruction `jump`")
        );
        let forged = all_pass(10_000);
        assert_eq!(forged.matches("<testcase ").count(), 10_000);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
