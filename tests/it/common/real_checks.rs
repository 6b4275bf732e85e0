//! Checks of the real-CLI suite: what the stand-in saw, what the proxies allowed, that no login
//! byte reaches the cook folder while cells run, and the cells' logs for failure messages.

use std::path::Path;

use serde_json::Value;

use super::TestCook;

/// Runs a command to its end while scanning the cook folder: no login secret may appear in any
/// file outside `.auth/` at any time. Returns its output and how many scans ran.
pub(crate) fn run_scanning(
    mut command: std::process::Command,
    dir: &Path,
    secrets: &[String],
) -> (std::process::Output, usize) {
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the multicooker binary starts");
    let mut scans = 0;
    loop {
        let done = child.try_wait().unwrap().is_some();
        scan(dir, secrets);
        scans += 1;
        if done {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    (child.wait_with_output().unwrap(), scans)
}

pub(crate) fn scan(dir: &Path, secrets: &[String]) {
    let walk = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".auth");
    for entry in walk.flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        // A file may vanish or be replaced while the run writes: only what is read counts.
        let Ok(bytes) = fs_err::read(entry.path()) else {
            continue;
        };
        for secret in secrets {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "login bytes in {} while running",
                entry.path().display()
            );
        }
    }
}

/// The hosts a cell's proxy let through (`allow … CONNECT host:port` lines).
pub(crate) fn allowed_hosts(cook: &TestCook, cell: &str) -> std::collections::BTreeSet<String> {
    cook.text(&format!("logs/{cell}/proxy.log"))
        .lines()
        .filter(|l| l.starts_with("allow "))
        .filter_map(|l| l.split("CONNECT ").nth(1))
        .map(|t| t.split_whitespace().next().unwrap_or_default().to_owned())
        .collect()
}

/// What each CLI sent is what this suite was written against: a change fails here first.
pub(crate) fn assert_protocol(flavor: &str, requests: &[Value]) {
    let seen = |method: &str, path: &str| {
        requests.iter().any(|r| {
            r["method"] == method && r["path"].as_str().is_some_and(|p| p.starts_with(path))
        })
    };
    if flavor == "claude" {
        assert!(seen("POST", "/v1/messages?beta=true"), "{requests:?}");
        let oauth = requests
            .iter()
            .filter(|r| {
                r["path"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("/v1/messages"))
            })
            .all(|r| {
                r["headers"]["anthropic-beta"]
                    .as_str()
                    .is_some_and(|b| b.contains("oauth-2025-04-20"))
            });
        assert!(oauth, "every Messages call carries the OAuth beta header");
    } else {
        assert!(
            seen("GET", "/backend-api/wham/accounts/check"),
            "{requests:?}"
        );
        let zstd = requests
            .iter()
            .filter(|r| r["method"] == "POST" && r["path"] == "/backend-api/codex/responses")
            .all(|r| r["headers"]["content-encoding"] == "zstd" && r["body"]["input"].is_array());
        assert!(
            seen("POST", "/backend-api/codex/responses") && zstd,
            "{requests:?}"
        );
    }
}

/// A cell's logs, for a failure message.
pub(crate) fn cell_logs(cook: &TestCook, cell: &str) -> String {
    let mut text = String::new();
    for entry in walkdir::WalkDir::new(cook.dir().join("logs"))
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file() && entry.path().to_string_lossy().contains(cell) {
            let body = fs_err::read_to_string(entry.path()).unwrap_or_default();
            let tail: String = body
                .chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            text.push_str(&format!("--- {}\n{tail}\n", entry.path().display()));
        }
    }
    text
}
