//! The headless browser the HTML tests drive: Debian's chromium. Found on PATH, else installed
//! once (as root, with apt-get) the way `.ci/run` used to, else the test fails with the exact
//! command that fixes it (issue 17: the README's test command must do its own set-up on a
//! fresh machine with Docker and Rust, and never panic without saying why).

use std::process::Command;
use std::sync::OnceLock;

/// The names chromium goes by.
const NAMES: [&str; 4] = ["chromium", "chromium-browser", "google-chrome", "chrome"];

/// What installs it on Debian and Ubuntu (about 150 MB download, 500 MB on disk).
pub(crate) const INSTALL: &str =
    "apt-get update && apt-get install -y --no-install-recommends chromium";

fn found() -> Option<&'static str> {
    NAMES.into_iter().find(|name| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// True for root: `/proc/self` belongs to the process's effective user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Installs Debian's chromium when this process may (root, apt-get present). Returns what went
/// wrong otherwise.
#[expect(
    clippy::print_stderr,
    reason = "a minute-long install in a test run says what it is doing"
)]
fn install() -> Result<(), String> {
    if !is_root() {
        return Err(format!(
            "not root, so it was not installed; run `sudo sh -c '{INSTALL}'`"
        ));
    }
    if Command::new("apt-get").arg("--version").output().is_err() {
        return Err(
            "no apt-get here; install chromium (or google-chrome) with this system's package manager"
                .into(),
        );
    }
    eprintln!("the HTML tests need chromium; installing it: {INSTALL}");
    for args in [
        &["update", "-qq"][..],
        &[
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
        ][..],
    ] {
        let output = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .map_err(|e| format!("apt-get could not run: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "`apt-get {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    Ok(())
}

/// The browser's command name, installing it first if it is missing and this process may.
pub(crate) fn chromium() -> &'static str {
    static BROWSER: OnceLock<Result<&'static str, String>> = OnceLock::new();
    let found = BROWSER.get_or_init(|| {
        if let Some(name) = found() {
            return Ok(name);
        }
        install()?;
        found().ok_or_else(|| "apt-get installed chromium, but it does not start".to_owned())
    });
    match found {
        Ok(name) => name,
        Err(problem) => panic!(
            "the HTML tests need a headless chromium ({} on PATH): {problem}. Fix: `{INSTALL}` (as root)",
            NAMES.join(", ")
        ),
    }
}
