//! Real flavors with their own logins, proven with faithful fake CLIs (docs/FLAVORS.md §10) in
//! real containers: each fake reads its login from the same HOME paths as the real CLI, rewrites
//! `~/.claude.json` by atomic rename, prints the real structured output and limit messages.
//!
//! Shown here: the CLIs work from a snapshot seeded into a tmpfs HOME; the host's login files
//! are byte-identical afterwards; no other cell can read a login; no credential byte reaches any
//! file the tool writes outside `.auth/`, or its own output; a missing or expired login stops
//! the flavor before launch with one sentence naming the host command.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use sha2::Digest;

use crate::common::{TestCook, show};

/// The fake CLIs' images, copied into a cook as its own `flavors/<cli>/`.
const FAKES: &[&str] = &["claude", "codex", "agy", "grok"];

/// A host home with a subscription login for every CLI, each secret a unique canary.
pub(crate) struct FakeHost {
    home: tempfile::TempDir,
    tokens: tempfile::TempDir,
    /// Every secret planted in the logins (access, refresh and id tokens).
    canaries: Vec<String>,
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl FakeHost {
    pub(crate) fn new() -> Self {
        let home = tempfile::Builder::new()
            .prefix("mc-host-")
            .tempdir()
            .unwrap();
        let tokens = tempfile::tempdir().unwrap();
        let tag = format!("{:x}", std::process::id());
        let canary = |what: &str| format!("CANARY{what}{tag}x7Q");
        let now = jiff::Timestamp::now().as_second();
        let day = now + 86_400;
        let write = |relative: &str, text: String| {
            let path = home.path().join(relative);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        };
        write(
            ".claude/.credentials.json",
            format!(
                r#"{{"claudeAiOauth": {{"accessToken": "sk-ant-oat01-{}", "refreshToken": "sk-ant-ort01-{}", "expiresAt": {}, "scopes": ["user:inference"], "subscriptionType": "max"}}}}"#,
                canary("claudeaccess"),
                canary("clauderefresh"),
                day * 1000
            ),
        );
        let jwt = |claims: String| {
            format!(
                "eyJhbGciOiJSUzI1NiJ9.{}.c2ln",
                base64_url(claims.as_bytes())
            )
        };
        let codex_access = jwt(format!(
            r#"{{"exp":{day},"sub":"{}"}}"#,
            canary("codexaccess")
        ));
        let codex_id = jwt(format!(r#"{{"exp":{day},"sub":"{}"}}"#, canary("codexid")));
        write(
            ".codex/auth.json",
            format!(
                r#"{{"OPENAI_API_KEY": null, "tokens": {{"id_token": "{codex_id}", "access_token": "{codex_access}", "refresh_token": "rt_{}", "account_id": "acct"}}, "last_refresh": "2026-11-22T00:00:00Z"}}"#,
                canary("codexrefresh")
            ),
        );
        let expiry = jiff::Timestamp::from_second(day).unwrap();
        write(
            ".gemini/antigravity-cli/antigravity-oauth-token",
            format!(
                r#"{{"token": {{"access_token": "ya29.{}", "token_type": "Bearer", "refresh_token": "1//{}", "expiry": "{expiry}"}}, "auth_method": "consumer"}}"#,
                canary("agyaccess"),
                canary("agyrefresh")
            ),
        );
        write(
            ".grok/auth.json",
            format!(
                r#"{{"https://auth.x.ai::cli": {{"key": "xai-{}", "auth_mode": "oidc", "refresh_token": "{}", "expires_at": "{expiry}", "email": "me@example.com"}}, "xai::api_key": {{"key": "xai-{}", "auth_mode": "api_key"}}}}"#,
                canary("grokaccess"),
                canary("grokrefresh"),
                canary("grokapikey")
            ),
        );
        let canaries = [
            "claudeaccess",
            "clauderefresh",
            "codexaccess",
            "codexid",
            "codexrefresh",
            "agyaccess",
            "agyrefresh",
            "grokaccess",
            "grokrefresh",
            "grokapikey",
        ]
        .iter()
        .map(|w| canary(w))
        .collect();
        Self {
            home,
            tokens,
            canaries,
        }
    }

    /// SHA-256 of every login file under the host home (not multicooker's own `.cache/`).
    fn hashes(&self) -> BTreeMap<PathBuf, String> {
        walkdir::WalkDir::new(self.home.path())
            .into_iter()
            .filter_entry(|e| e.file_name() != ".cache")
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let bytes = fs_err::read(e.path()).unwrap();
                let digest = sha2::Sha256::digest(&bytes);
                (
                    e.path().to_path_buf(),
                    digest.iter().map(|b| format!("{b:02x}")).collect(),
                )
            })
            .collect()
    }

    /// Runs the binary against this host's logins and token store.
    pub(crate) fn run(&self, cook: &TestCook, args: &[&str]) -> Output {
        cook.command(args)
            .env("MULTICOOKER_HOST_HOME", self.home.path())
            .env(
                "MULTICOOKER_TOKEN_STORE",
                format!("file:{}", self.tokens.path().display()),
            )
            .output()
            .unwrap()
    }
}

/// Copies the fake CLIs' images into the cook as its own flavors.
pub(crate) fn install_fakes(cook: &TestCook, clis: &[&str]) {
    for cli in clis {
        install_fake_as(cook, cli, cli);
    }
}

/// Installs the fixture image `fixture` as the cook's flavor `flavor`.
fn install_fake_as(cook: &TestCook, fixture: &str, flavor: &str) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-flavors");
    cook.install_flavor(flavor, &fixtures.join(fixture).join("Dockerfile"));
}

pub(crate) fn brief(participants: &[(&str, &str, &str)], judges: &[(&str, &str)]) -> String {
    let mut yaml = String::from(
        "name: logins\ntimeout_s: 120\njudge_timeout_s: 120\nnetwork: {mode: none}\nparticipants:\n",
    );
    for (name, flavor, model) in participants {
        yaml.push_str(&format!(
            "  - {{name: {name}, flavor: {flavor}, model: \"{model}\"}}\n"
        ));
    }
    yaml.push_str("judges:\n");
    for (name, flavor) in judges {
        yaml.push_str(&format!("  - {{name: {name}, flavor: {flavor}}}\n"));
    }
    yaml.push_str("rubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 60}\n    - {id: clarity, weight: 40}\n");
    yaml
}

/// Every file under `dir` (except `.auth/`) that holds one of `needles`, with the needle.
fn files_holding(dir: &Path, needles: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".auth")
        .flatten()
        .filter(|e| e.file_type().is_file())
    {
        let bytes = fs_err::read(entry.path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for needle in needles {
            if text.contains(needle.as_str()) {
                found.push(format!("{} holds {needle}", entry.path().display()));
            }
        }
    }
    found
}

#[test]
fn fake_clis_cook_and_judge_on_their_own_logins_and_leak_nothing() {
    let host = FakeHost::new();
    let before = host.hashes();
    // Every participant is asked to print its token (FAKE:leak): redaction must catch it.
    let yaml = brief(
        &[
            ("cl", "claude", "opus-q4"),
            ("cx", "codex", "gpt-5-q3"),
            ("ag", "agy", "gemini-3-pro-q2"),
            ("gk", "grok", "grok-build-q5"),
            ("spy", "dummy", "read:/run/mc-auth read:/home/mc/.claude"),
        ],
        &[("jc", "claude"), ("jx", "codex"), ("jspy", "dummy")],
    );
    // The dummy judge probes for logins too (judges carry no model in `brief`, so add one).
    let yaml = yaml.replace(
        "{name: jspy, flavor: dummy}",
        "{name: jspy, flavor: dummy, model: \"read:/run/mc-auth read:/run/mc-auth/claude\"}",
    );
    let yaml = yaml.replace(
        "{name: gk, flavor: grok, model: \"grok-build-q5\"}",
        "{name: gk, flavor: grok, model: \"grok-build-q5\", network: {mode: none, web_tools: true}}",
    );
    let cook = TestCook::new("logins", &yaml);
    fs_err::write(
        cook.dir().join("BRIEF.md"),
        "# Brief\n\nSay hello. FAKE:leak\n",
    )
    .unwrap();
    install_fakes(&cook, FAKES);

    let cooked = host.run(&cook, &["cook", cook.name(), "--json"]);
    assert!(cooked.status.success(), "{}", show(&cooked));
    let result = cook.json("RUN_RESULT.json");
    let participants = result["participants"].as_array().unwrap();
    for entry in participants {
        assert_eq!(entry["status"], "ok", "{entry}");
    }
    for (name, entry) in ["cl", "cx", "ag", "gk"].iter().zip(participants) {
        let answer = cook.text(&format!("work/{name}/out/RESULT.md"));
        assert!(answer.contains("(fake) answer"), "{name}: {answer}");
        // The fake wrote its token into its output; it was redacted before sealing.
        assert!(answer.contains("my token: [REDACTED]"), "{name}: {answer}");
        assert_eq!(
            entry["redacted_outputs"],
            serde_json::json!([{"path": "RESULT.md", "action": "redacted"}]),
            "{entry}"
        );
    }
    assert_usage_parsed(participants);
    // The spy has no login mounted and cannot see another cell's HOME.
    let probes = cook.text("work/spy/out/PROBES.txt");
    assert!(
        probes.lines().all(|l| l.contains(" error ")),
        "a participant without a login must find none: {probes}"
    );

    let judged = host.run(&cook, &["judge", cook.name(), "--json"]);
    assert!(judged.status.success(), "{}", show(&judged));
    let probes = cook.text("judging/jspy/PROBES.txt");
    assert!(
        probes.lines().count() == 2 && probes.lines().all(|l| l.contains(" error ")),
        "a judge of another flavor must find no login: {probes}"
    );
    let reported = host.run(&cook, &["report", cook.name(), "--json"]);
    assert!(reported.status.success(), "{}", show(&reported));
    let board = cook.text("leaderboard.md");
    assert!(
        board.contains("web tools: ON for gk")
            && board.contains(
                "CLIs: agy 0.0.0-fake, claude 0.0.0-fake, codex 0.0.0-fake, grok 0.0.0-fake"
            ),
        "{board}"
    );
    assert_costs_labelled(&cook, &board);
    assert_eq!(
        cook.json("summary.json")["cli_versions"]["grok"],
        "0.0.0-fake"
    );
    for name in ["cl", "cx", "ag", "gk"] {
        assert!(
            board.contains(&format!("| {name} |")),
            "{name} ranked:\n{board}"
        );
    }

    assert_eq!(
        host.hashes(),
        before,
        "the host's login files are never written"
    );
    assert_nothing_leaked(&host, &cook, &[&cooked, &judged, &reported]);
    assert_cells_saw_what_they_should(&cook);
    // A snapshot lives no longer than its cell.
    let left = files_holding_all(&cook.dir().join(".auth"), &host.canaries);
    assert!(left.is_empty(), "{left:?}");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// No canary in any file the tool wrote (outside `.auth/`) or in its own output, although the
/// fakes tried to print their tokens.
fn assert_nothing_leaked(host: &FakeHost, cook: &TestCook, outputs: &[&Output]) {
    let mut leaks = files_holding(&cook.dir(), &host.canaries);
    for output in outputs {
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            leaks.extend(
                host.canaries
                    .iter()
                    .filter(|c| text.contains(c.as_str()))
                    .map(|c| format!("the tool's own output holds {c}")),
            );
        }
    }
    assert!(
        leaks.is_empty(),
        "credential bytes escaped:\n{}",
        leaks.join("\n")
    );
    // The leak was attempted (so redaction had something to catch).
    let log = cook.text("logs/cl/claude.stdout.log");
    assert!(log.contains("debug: using token [REDACTED]"), "{log}");
}

/// What each cell was given and ran with, from its fake's (redacted) debug dump: rotating
/// refresh tokens and API keys never reach a cell; agy's hour-long Google token ships its
/// refresh token (its cells run one at a time); web tools are off unless asked for.
fn assert_cells_saw_what_they_should(cook: &TestCook) {
    let staged = |name: &str, cli: &str| cook.text(&format!("logs/{name}/{cli}.stdout.log"));
    let claude = staged("cl", "claude");
    assert!(
        claude.contains("--disallowedTools WebSearch WebFetch"),
        "{claude}"
    );
    assert!(
        !staged("gk", "grok").contains("--disable-web-search"),
        "web tools asked for"
    );
    assert!(
        claude.contains("\"accessToken\": \"[REDACTED]\"") && !claude.contains("refreshToken"),
        "{claude}"
    );
    let codex = staged("cx", "codex");
    assert!(codex.contains("\"refresh_token\": \"\""), "{codex}");
    let grok = staged("gk", "grok");
    assert!(
        grok.contains("\"key\": \"[REDACTED]\"")
            && !grok.contains("refresh_token")
            && !grok.contains("api_key"),
        "{grok}"
    );
    let agy = staged("ag", "agy");
    assert!(agy.contains("\"refresh_token\": \"[REDACTED]\""), "{agy}");
}

/// Each fake's structured output became the cell's usage (fake.rs prints these numbers).
fn assert_usage_parsed(participants: &[serde_json::Value]) {
    let usage = &participants[0]["usage"];
    assert_eq!(
        (
            &usage["source_path"],
            &usage["total_tokens"],
            &usage["cost_usd"],
            &usage["models"]
        ),
        (
            &serde_json::json!("logs/cl/claude.stdout.log"),
            &serde_json::json!(1695),
            &serde_json::json!(0.0123),
            &serde_json::json!(["opus-q4"])
        ),
        "claude's usage from its stream-json: {usage}"
    );
    assert_eq!(
        usage["cost_basis"], "list_price_estimate",
        "claude's cost is a list-price estimate: {usage}"
    );
    assert_eq!(
        participants[1]["usage"]["total_tokens"], 1100,
        "codex: input (cache included) + output"
    );
    assert_eq!(participants[2]["usage"]["total_tokens"], 900, "agy");
    assert_eq!(participants[3]["usage"]["total_tokens"], 670, "grok");
}

/// Issue 16: a list-price estimate is shown as one, and summary.json says what each cost is.
fn assert_costs_labelled(cook: &TestCook, board: &str) {
    assert!(
        board.contains("| Tokens | API-equiv. cost |")
            && board.contains("API-equiv. cost: the CLIs' own estimate at API list prices"),
        "a list-price estimate is labelled as one: {board}"
    );
    let ranking = cook.json("summary.json")["ranking"].clone();
    let costs: Vec<bool> = ranking
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["cost_usd"].is_null())
        .map(|r| r["cost_basis"] == "list_price_estimate")
        .collect();
    assert!(!costs.is_empty() && costs.iter().all(|b| *b), "{ranking}");
}

/// Like [`files_holding`], inside `.auth/` itself.
fn files_holding_all(dir: &Path, needles: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
    {
        let text = fs_err::read_to_string(entry.path()).unwrap_or_default();
        found.extend(
            needles
                .iter()
                .filter(|n| text.contains(n.as_str()))
                .map(|n| format!("{} holds {n}", entry.path().display())),
        );
    }
    found
}

#[test]
fn a_missing_or_expired_login_stops_before_launch_naming_the_host_command() {
    let host = FakeHost::new();
    fs_err::remove_file(host.home.path().join(".grok/auth.json")).unwrap();
    let cook = TestCook::new(
        "nologin",
        &brief(
            &[("gk", "grok", "m"), ("d", "dummy", "quality:3")],
            &[("j", "dummy")],
        ),
    );
    install_fakes(&cook, &["grok"]);
    let output = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no grok login at") && stderr.contains("grok login"),
        "{stderr}"
    );
    assert!(!cook.dir().join("work/gk/out/RESULT.md").exists());

    let expired = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() - 60).unwrap();
    fs_err::write(
        host.home.path().join(".grok/auth.json"),
        format!(r#"{{"s": {{"key": "xai-old", "auth_mode": "oidc", "expires_at": "{expired}"}}}}"#),
    )
    .unwrap();
    let output = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the grok login expired at"), "{stderr}");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 17: with several logins missing, one run names them all, each with its host command.
#[test]
fn every_missing_login_is_named_in_one_run() {
    let host = FakeHost::new();
    fs_err::remove_file(host.home.path().join(".grok/auth.json")).unwrap();
    fs_err::remove_file(host.home.path().join(".codex/auth.json")).unwrap();
    let cook = TestCook::new(
        "nologins",
        &brief(
            &[("gk", "grok", "m"), ("cx", "codex", "m")],
            &[("j", "dummy")],
        ),
    );
    install_fakes(&cook, &["grok", "codex"]);
    let output = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(output.status.code(), Some(2), "{}", show(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for needle in [
        "2 logins cannot be used",
        "no codex login at",
        "no grok login at",
        "codex: `codex login`",
        "grok: `grok login`",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn a_long_lived_token_from_login_is_preferred_and_never_leaks() {
    use std::io::Write as _;
    let host = FakeHost::new();
    fs_err::remove_file(host.home.path().join(".claude/.credentials.json")).unwrap();
    let cook = TestCook::new(
        "longlived",
        &brief(&[("cl", "claude", "opus-q4")], &[("j", "dummy")]),
    );
    fs_err::write(
        cook.dir().join("BRIEF.md"),
        "# Brief\n\nSay hello. FAKE:leak\n",
    )
    .unwrap();
    install_fakes(&cook, &["claude"]);
    let token = format!("sk-ant-oat01-CANARYlonglived{:x}Zq", std::process::id());

    let mut login = cook.command(&["login", "claude"]);
    login
        .env(
            "MULTICOOKER_TOKEN_STORE",
            format!("file:{}", host.tokens.path().display()),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = login.spawn().unwrap();
    writeln!(child.stdin.take().unwrap(), "{token}").unwrap();
    let stored = child.wait_with_output().unwrap();
    assert!(stored.status.success(), "{}", show(&stored));
    assert!(!String::from_utf8_lossy(&stored.stdout).contains(&token));
    assert!(!String::from_utf8_lossy(&stored.stderr).contains(&token));

    let cooked = host.run(&cook, &["cook", cook.name()]);
    assert!(cooked.status.success(), "{}", show(&cooked));
    let result = cook.json("RUN_RESULT.json");
    assert_eq!(result["participants"][0]["status"], "ok", "{result}");
    let log = cook.text("logs/cl/claude.stdout.log");
    assert!(
        log.contains("debug: using token [REDACTED]")
            && log.contains("debug: staged oauth-token: [REDACTED]"),
        "the cell got the long-lived token, not a host login: {log}"
    );
    assert!(
        walkdir::WalkDir::new(cook.dir().join(".auth"))
            .into_iter()
            .flatten()
            .all(|e| !e.file_type().is_file()),
        "a snapshot lives no longer than its cell"
    );
    let leaks = files_holding(&cook.dir(), std::slice::from_ref(&token));
    assert!(leaks.is_empty(), "{leaks:?}");

    let removed = host.run(&cook, &["login", "claude", "--remove"]);
    assert!(removed.status.success(), "{}", show(&removed));
    let refused = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(refused.status.code(), Some(2), "{}", show(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("claude /login"),
        "{}",
        show(&refused)
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn doctor_checks_each_flavors_login_image_and_live_answer() {
    let host = FakeHost::new();
    fs_err::remove_file(host.home.path().join(".codex/auth.json")).unwrap();
    let cook = TestCook::new(
        "doctor",
        &brief(
            &[("cl", "claude", "opus"), ("cx", "codex", "gpt")],
            &[("j", "dummy")],
        ),
    );
    install_fakes(&cook, &["claude", "codex"]);
    let output = host.run(&cook, &["doctor", cook.name(), "--live", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let lines: Vec<String> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["level"].as_str().unwrap(),
                c["check"].as_str().unwrap()
            )
        })
        .collect();
    let has = |prefix: &str, needle: &str| {
        lines
            .iter()
            .any(|l| l.starts_with(prefix) && l.contains(needle))
    };
    assert!(has("OK", "flavor `claude`: claude login: "), "{lines:#?}");
    assert!(
        has("FAIL", "flavor `codex`: no codex login at"),
        "{lines:#?}"
    );
    assert!(
        has("FAIL", "run `codex login`") || has("FAIL", "`codex login`"),
        "{lines:#?}"
    );
    assert!(has("OK", "flavor `claude`: base image"), "{lines:#?}");
    assert!(has("OK", "live: flavor `claude` answered"), "{lines:#?}");
    assert!(
        !lines.iter().any(|l| l.contains("live: flavor `codex`")),
        "{lines:#?}"
    );
    assert_eq!(report["failures"], 1, "{lines:#?}");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Login writes and first-start state land in a writable HOME; a read-only one (the reference's
/// mount of the login itself) breaks the CLI the way docs/FLAVORS.md §1.4 describes.
#[test]
fn a_read_only_home_breaks_the_cli_as_the_real_one_breaks() {
    let host = FakeHost::new();
    let token = "sk-ant-oat01-readonlyhomedemo0000000000";
    fs_err::create_dir_all(host.tokens.path()).unwrap();
    fs_err::write(host.tokens.path().join("claude"), token).unwrap();
    let cook = TestCook::new(
        "rohome",
        &brief(&[("cl", "claude", "opus-q4")], &[("j", "dummy")]),
    );
    install_fake_as(&cook, "claude-ro-home", "claude");
    let cooked = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(cooked.status.code(), Some(1), "{}", show(&cooked));
    let result = cook.json("RUN_RESULT.json");
    assert_eq!(
        result["participants"][0]["status"], "non_zero_exit",
        "{result}"
    );
    let stderr = cook.text("logs/cl/claude.stderr.log");
    // The login area is the cell user's, 0500: not writable, as a read-only mount was not.
    assert!(
        (stderr.contains("Read-only file system") || stderr.contains("Permission denied"))
            && stderr.contains("Bash tool unavailable"),
        "{stderr}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// A vendor's limit message is classified: usage exhausted (not retryable in this run) or a
/// momentary rate limit (retryable), with the reset time read from the message.
#[test]
fn limit_messages_are_classified_per_vendor() {
    let host = FakeHost::new();
    let cook = TestCook::new(
        "limits",
        &brief(
            &[
                ("cl", "claude", "m"),
                ("ag", "agy", "m"),
                ("gk", "grok", "m"),
            ],
            &[("j", "dummy")],
        ),
    );
    fs_err::write(cook.dir().join("BRIEF.md"), "# Brief\n\nFAKE:rate_limit\n").unwrap();
    install_fakes(&cook, &["claude", "agy", "grok"]);
    let cooked = host.run(&cook, &["cook", cook.name()]);
    assert_eq!(cooked.status.code(), Some(1), "{}", show(&cooked));
    let result = cook.json("RUN_RESULT.json");
    let kinds: Vec<(&str, &str, bool)> = result["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["status"].as_str().unwrap(),
                e["limit_kind"].as_str().unwrap_or("none"),
                e["retry_after_s"].as_u64().unwrap_or(0) > 0,
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("rate_limited", "usage_exhausted", true),
            ("rate_limited", "usage_exhausted", true),
            ("rate_limited", "rate_limited", true),
        ],
        "{result}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Regression (issue "The cell boundary", high finding): a cell copied its login into `out/`,
/// then multicooker was killed (SIGKILL); the live token stayed in `out/` after `clean`, plain
/// `archive` copied it and `resume` moved it unredacted to `attempts/`. Now a cell's bytes
/// reach the host only through collect, which redacts: a killed run leaves nothing of it.
#[test]
fn a_login_a_cell_stole_never_reaches_the_host_even_when_multicooker_is_killed() {
    let host = FakeHost::new();
    let cook = TestCook::new(
        "stolen",
        &brief(&[("cl", "claude", "opus")], &[("j", "dummy")])
            .replace("\ntimeout_s: 120\n", "\ntimeout_s: 20\n"),
    );
    install_fakes(&cook, &["claude"]);
    fs_err::write(cook.dir().join("BRIEF.md"), "# Brief\n\nFAKE:steal-hang\n").unwrap();
    let mut child = cook
        .command(&["cook", cook.name(), "--skip-sandbox-check"])
        .env("MULTICOOKER_HOST_HOME", host.home.path())
        .env(
            "MULTICOOKER_TOKEN_STORE",
            format!("file:{}", host.tokens.path().display()),
        )
        .env("MULTICOOKER_CELL_GRACE_S", "5")
        .spawn()
        .unwrap();
    cook.wait_for_cell_state("cl", "running", std::time::Duration::from_secs(120));
    // The fake copies its token into out/stolen.txt at once; give it a moment, then kill.
    std::thread::sleep(std::time::Duration::from_secs(2));
    crate::common::signal(child.id(), "KILL");
    child.wait().unwrap();
    let leaks = files_holding_all(&cook.dir(), &host.canaries);
    assert!(leaks.is_empty(), "after SIGKILL: {leaks:?}");
    let cleaned = host.run(&cook, &["clean", cook.name()]);
    assert_eq!(cleaned.status.code(), Some(0), "{}", show(&cleaned));
    let archived = host.run(
        &cook,
        &[
            "archive",
            cook.name(),
            "--include-operator",
            "--format",
            "dir",
        ],
    );
    assert_eq!(archived.status.code(), Some(0), "{}", show(&archived));
    // The resumed cell steals again and hangs to its timeout; its output comes back redacted.
    let resumed = host.run(&cook, &["resume", cook.name()]);
    assert_eq!(resumed.status.code(), Some(1), "{}", show(&resumed));
    let stolen = cook.text("work/cl/out/stolen.txt");
    assert!(stolen.contains("stolen token: [REDACTED]"), "{stolen}");
    let leaks = files_holding_all(&cook.dir(), &host.canaries);
    assert!(
        leaks.is_empty(),
        "after clean, archive and resume: {leaks:?}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// A cell that smuggles its token out encoded (base64 at each alignment, base64url, hex in
/// both cases, URL-encoded) gets nothing past redaction: no form of any login secret is in its
/// collected output, the sealed and normalized copies, the judges' copies or the archive.
#[test]
fn a_token_written_encoded_reaches_no_judge_copy_and_no_archive() {
    let host = FakeHost::new();
    let yaml = brief(
        &[("cl", "claude", "opus-q4"), ("d", "dummy", "quality:2")],
        &[("jd", "dummy")],
    );
    let cook = TestCook::new("encoded-leak", &yaml);
    fs_err::write(
        cook.dir().join("BRIEF.md"),
        "# Brief\n\nSay hello. FAKE:leak FAKE:encode\n",
    )
    .unwrap();
    install_fakes(&cook, &["claude"]);
    for command in ["cook", "judge", "report"] {
        let output = host.run(&cook, &[command, cook.name()]);
        assert!(output.status.success(), "{command}: {}", show(&output));
    }
    let tarball = cook.dir().join("public.tar.gz");
    let archived = host.run(
        &cook,
        &[
            "archive",
            cook.name(),
            "--format",
            "tar",
            "--out",
            tarball.to_str().unwrap(),
        ],
    );
    assert!(archived.status.success(), "{}", show(&archived));
    let encoded = cook.text("work/cl/out/ENCODED.txt");
    assert_eq!(encoded.lines().count(), 7, "{encoded}");
    assert!(
        encoded.lines().all(|l| l.contains("[REDACTED]")),
        "every form caught: {encoded}"
    );
    let needles: Vec<String> = host
        .canaries
        .iter()
        .flat_map(|c| std::iter::once(c.clone()).chain(multicooker::redact::encodings(c)))
        .collect();
    assert!(
        needles.len() >= 9 * host.canaries.len(),
        "each secret, base64 and base64url at three alignments, hex in two cases"
    );
    assert_eq!(files_holding(&cook.dir(), &needles), Vec::<String>::new());
    assert!(
        cook.dir()
            .join("judging/_normalized/cl/out/ENCODED.txt")
            .is_file(),
        "the judges' copy was searched"
    );
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(
        fs_err::File::open(&tarball).unwrap(),
    ));
    let mut members = 0;
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap_or_default();
        members += 1;
        for needle in &needles {
            assert!(
                !text.contains(needle.as_str()),
                "{} holds {needle}",
                entry.path().unwrap().display()
            );
        }
    }
    assert!(members > 3, "{members}");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
