//! The dummy's attack on `mc-cell launch` (directive `launch-attack`), for the tests: the
//! dummy plays a verifier's runner and launches `mc-cell launch-probe`, which plays hostile
//! code under test. Everything either side saw is a line of out/PROBES.txt.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

/// Where every image multicooker runs has mc-cell (the runtime's `INIT_PATH`).
const INIT_PATH: &str = "/opt/multicooker/mc-cell";

/// The runner's side: makes a 0700 folder of its own, launches the probe, then checks that the
/// probe's daemon is dead once `launch` returned.
pub fn attack(out: &Path) {
    let private = Path::new("/tmp/runner-only");
    let _ = std::fs::create_dir(private);
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(private, std::fs::Permissions::from_mode(0o700));
    let launched = Command::new(INIT_PATH)
        .args(["launch", "--", INIT_PATH, "launch-probe"])
        .arg(private)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output();
    let mut lines = vec![format!("runner uid {}", crate::sys::uid())];
    match launched {
        Ok(output) => {
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            lines.push(format!("launch exit {:?}", output.status.code()));
            for line in text.lines() {
                lines.push(format!("probe {line}"));
                if let Some(pid) = line.strip_prefix("daemon ") {
                    lines.push(format!("daemon alive after launch {}", alive(pid)));
                }
            }
        }
        Err(e) => lines.push(format!("launch failed {e}")),
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("PROBES.txt"));
    if let Ok(mut file) = file {
        let _ = writeln!(file, "{}", lines.join("\n"));
    }
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("State:"))
            .is_some_and(|state| !state.trim_start().starts_with('Z'))
    })
}

/// `mc-cell launch-probe DIR` (the code under test's side): reports its uid, tries to write
/// into DIR, to launch in turn, and to signal init; leaves a daemon and prints its pid.
pub fn run(args: &[String]) -> ExitCode {
    let dir = Path::new(args.first().map_or("/tmp/runner-only", String::as_str));
    println!("uid {}", crate::sys::uid());
    let write = std::fs::write(dir.join("forged.xml"), b"<testsuite tests=\"10000\"/>");
    println!("write {}", if write.is_ok() { "ok" } else { "denied" });
    let nested = Command::new(INIT_PATH)
        .args(["launch", "--", INIT_PATH, "dummy-sleep", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    println!(
        "nested launch {}",
        if nested.is_ok_and(|s| s.success()) {
            "ok"
        } else {
            "refused"
        }
    );
    let daemon = Command::new(INIT_PATH)
        .args(["dummy-sleep", "600"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match daemon {
        Ok(child) => println!("daemon {}", child.id()),
        Err(e) => println!("no daemon {e}"),
    }
    let _ = std::io::stdout().flush();
    ExitCode::SUCCESS
}
