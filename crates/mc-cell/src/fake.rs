//! Fake CLIs for tests without logins or internet (docs/FLAVORS.md §10). When mc-cell is invoked
//! as `claude`, `codex`, `agy` or `grok`, it behaves like that CLI where multicooker depends
//! on it: it answers `--version`, parses and rejects argv the same way, works in the folder the
//! real CLI would (`--cd`, `--cwd`, else where it started), reads its login from the same HOME paths,
//! fails the same way on a read-only HOME, rewrites `~/.claude.json` by atomic rename,
//! "refreshes" an expired token by writing a new credentials file, prints the real CLI's
//! structured output (with usage and model), and prints the real limit messages.
//!
//! Scenarios come from the prompt text, as the real CLIs would see it: `FAKE:rate_limit`,
//! `FAKE:usage_limit` and `FAKE:auth_401` (the real CLIs' shapes, in `fake_errors`),
//! `FAKE:leak` (prints its access token, to test redaction; with `FAKE:encode` also writes it
//! base64, base64url, hex and URL-encoded into `ENCODED.txt`), `FAKE:hang`, `FAKE:steal-hang`
//! (copies its token into its output, then hangs).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::json::{self, Json};

fn has(args: &[String], flag: &str) -> bool {
    args.iter().any(|a| a == flag)
}

fn value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// HOME, or `MC_FAKE_HOME` (tests only: runs the fake on a HOME the entrypoint did not seed,
/// such as the read-only login mount the reference used).
fn home() -> PathBuf {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    PathBuf::from(
        var("MC_FAKE_HOME")
            .or_else(|| var("HOME"))
            .unwrap_or_else(|| "/home/mc".into()),
    )
}

fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("{message}");
    ExitCode::from(code)
}

/// What `<cli> --version` prints: the version the fake images label (`0.0.0-fake`), in the
/// real CLI's shape where it is known (claude, codex).
fn version_line(cli: &str) -> String {
    match cli {
        "claude" => format!("{FAKE_VERSION} (Claude Code)"),
        "codex" => format!("codex-cli {FAKE_VERSION}"),
        _ => format!("{cli} {FAKE_VERSION}"),
    }
}

/// The version of every fake CLI (tests/fixtures/fake-flavors/*/Dockerfile label it).
const FAKE_VERSION: &str = "0.0.0-fake";

/// The folder the CLI works in, as the real one chooses it: codex's `--cd`, grok's `--cwd`,
/// else the folder it was started in (claude, agy). The prompt's relative paths
/// (`./out/RESULT.md`) are relative to it.
fn work_dir(cli: &str, args: &[String]) -> PathBuf {
    let flag = match cli {
        "codex" => value(args, "--cd"),
        "grok" => value(args, "--cwd"),
        _ => None,
    };
    flag.map_or_else(
        || std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/work")),
        PathBuf::from,
    )
}

/// Entry point when mc-cell runs as `cli`.
pub fn run(cli: &str, args: &[String]) -> ExitCode {
    if args.first().is_some_and(|a| a == "--version") {
        // Needs no login, no prompt and no HOME, as the real CLIs' own check.
        println!("{}", version_line(cli));
        return ExitCode::SUCCESS;
    }
    if let Err((message, code)) = check_argv(cli, args) {
        return fail(&message, code);
    }
    let prompt = match read_prompt(cli, args) {
        Ok(prompt) => prompt,
        Err(error) => return fail(&format!("{cli}: cannot read the prompt: {error}"), 1),
    };
    let token = match login(cli) {
        Ok(token) => token,
        Err(message) => return fail(&message, 1),
    };
    if let Err(message) = touch_home(cli) {
        return fail(&message, 1);
    }
    if prompt.contains("FAKE:steal-hang") {
        // A prompt-injected CLI copies its login into its output, then runs on until killed.
        let stolen = format!("stolen token: {token}\n");
        let _ = std::fs::write(work_dir(cli, args).join("out/stolen.txt"), stolen);
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if prompt.contains("FAKE:hang") {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if prompt.contains("FAKE:leak") {
        // A careless CLI's debug dump: its token, and the login it was given.
        println!("debug: using token {token}");
        println!("debug: argv {}", args.join(" "));
        for entry in std::fs::read_dir(Path::new("/run/mc-auth").join(cli))
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            println!(
                "debug: staged {}: {}",
                entry.file_name().to_string_lossy(),
                text.replace('\n', " ")
            );
        }
    }
    if let Some(code) = crate::fake_errors::scenario(cli, &prompt) {
        return code;
    }
    if prompt.contains("FAKE:rate_limit") {
        print_limit(cli);
        return ExitCode::SUCCESS;
    }
    let model = value(
        args,
        if cli == "claude" || cli == "agy" {
            "--model"
        } else {
            "-m"
        },
    )
    .unwrap_or_else(|| format!("{cli}-fake-1"));
    // FAKE:leak also writes the token into the output, as a prompt-injected CLI could.
    let leak = prompt.contains("FAKE:leak").then_some(token.as_str());
    if let Err(message) = write_output(cli, (&prompt, &work_dir(cli, args)), &model, leak) {
        return fail(&message, 1);
    }
    if cli == "codex"
        && let Err(message) = write_rollout(&model)
    {
        return fail(&message, 1);
    }
    print_success(cli, &model);
    ExitCode::SUCCESS
}

/// codex's session file, as the real one writes it: the model is only there, in `turn_context`
/// (its `--json` output never names it).
fn write_rollout(model: &str) -> Result<(), String> {
    let path = home().join(format!(
        ".codex/sessions/2026/11/22/rollout-2026-11-22T10-00-00-fake-{}.jsonl",
        std::process::id()
    ));
    let text = format!(
        "{{\"timestamp\":\"2026-11-22T10:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"fake-thread\",\"cwd\":\"/work\",\"originator\":\"codex_exec\",\"cli_version\":\"0.0.0-fake\"}}}}\n{{\"timestamp\":\"2026-11-22T10:00:01.000Z\",\"type\":\"turn_context\",\"payload\":{{\"cwd\":\"/work\",\"approval_policy\":\"never\",\"model\":{},\"effort\":\"medium\"}}}}\n",
        json::quote(model)
    );
    std::fs::write(&path, text).map_err(|e| format!("failed to write the rollout file: {e}"))
}

/// The argv mistakes the real CLIs refuse (docs/FLAVORS.md §1.3, §2.3, §3.3).
fn check_argv(cli: &str, args: &[String]) -> Result<(), (String, u8)> {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:\t0\t"));
    match cli {
        "claude" if value(args, "--output-format").as_deref() == Some("stream-json") && !has(args, "--verbose") => {
            Err(("Error: When using --print, --output-format=stream-json requires --verbose".into(), 1))
        }
        "claude" if has(args, "--dangerously-skip-permissions") && root && std::env::var("IS_SANDBOX").as_deref() != Ok("1") => {
            Err(("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons".into(), 1))
        }
        "codex" if args.first().map(String::as_str) != Some("exec") => Err(("fake codex: only `codex exec` is supported".into(), 2)),
        "codex" if !has(args, "--skip-git-repo-check") && !Path::new(".git").exists() => {
            Err(("Not inside a trusted directory and --skip-git-repo-check was not specified.".into(), 1))
        }
        "codex" if std::env::var_os("OPENAI_API_KEY").is_some() => {
            Err(("OPENAI_API_KEY is set: this would bill the API instead of your ChatGPT plan".into(), 1))
        }
        "agy" if value(args, "--print-timeout").is_some_and(|t| t.chars().last().is_some_and(|c| c.is_ascii_digit())) => {
            Err(("error: invalid value for --print-timeout: a duration needs a unit (e.g. 20s)".into(), 2))
        }
        _ => Ok(()),
    }
}

fn read_prompt(cli: &str, args: &[String]) -> std::io::Result<String> {
    match cli {
        "agy" => Ok(value(args, "--print").unwrap_or_default()),
        "grok" => std::fs::read_to_string(value(args, "--prompt-file").unwrap_or_default()),
        // claude -p and `codex exec -` read stdin to its end (an open pipe blocks, as with the
        // real CLIs).
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            Ok(text)
        }
    }
}

fn read_json(path: &Path) -> Result<Json, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    json::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn str_at<'a>(value: &'a Json, keys: &[&str]) -> Option<&'a str> {
    let mut node = value;
    for key in keys {
        node = node.get(key)?;
    }
    match node {
        Json::Str(s) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// Reads the login from HOME, refreshing an expired claude token the way the CLI does.
fn login(cli: &str) -> Result<String, String> {
    let home = home();
    match cli {
        "claude" => {
            if let Ok(token) = std::env::var("CLAUDE_CODE_OAUTH_TOKEN") {
                return Ok(token);
            }
            let path = home.join(".claude/.credentials.json");
            let creds = read_json(&path)
                .map_err(|e| format!("Invalid API key · Please run /login ({e})"))?;
            let token = str_at(&creds, &["claudeAiOauth", "accessToken"])
                .ok_or("Invalid API key · Please run /login")?
                .to_owned();
            let expires = creds
                .get("claudeAiOauth")
                .and_then(|o| o.get("expiresAt"))
                .and_then(Json::as_i64)
                .unwrap_or(0);
            if expires > now_ms() {
                return Ok(token);
            }
            if str_at(&creds, &["claudeAiOauth", "refreshToken"]).is_none() {
                return Err("API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"OAuth token has expired\"}}".into());
            }
            let fresh = format!("sk-ant-oat01-refreshed-{}", now_ms());
            let text = format!(
                "{{\"claudeAiOauth\": {{\"accessToken\": \"{fresh}\", \"refreshToken\": \"sk-ant-ort01-rotated\", \"expiresAt\": {}}}}}\n",
                now_ms() + 3_600_000
            );
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot save refreshed credentials: {e}"))?;
            Ok(fresh)
        }
        "codex" => {
            let creds = read_json(&home.join(".codex/auth.json"))
                .map_err(|e| format!("Not logged in. Run `codex login`. ({e})"))?;
            str_at(&creds, &["tokens", "access_token"])
                .map(str::to_owned)
                .ok_or_else(|| "Not logged in. Run `codex login`.".into())
        }
        "agy" => match read_json(&home.join(".gemini/antigravity-cli/antigravity-oauth-token")) {
            Ok(token) => str_at(&token, &["token", "access_token"])
                .map(str::to_owned)
                .ok_or_else(|| "authentication timed out".into()),
            Err(_) => {
                println!(
                    "Please visit https://accounts.google.com/o/oauth2/auth?client_id=fake to sign in"
                );
                std::thread::sleep(std::time::Duration::from_secs(2));
                Err("authentication timed out".into())
            }
        },
        "grok" => {
            let creds = read_json(&home.join(".grok/auth.json"))
                .map_err(|e| format!("Not authenticated. Run `grok login`. ({e})"))?;
            let Json::Object(entries) = &creds else {
                return Err("Not authenticated. Run `grok login`.".into());
            };
            entries
                .iter()
                .find(|(_, e)| str_at(e, &["auth_mode"]) == Some("oidc"))
                .and_then(|(_, e)| str_at(e, &["key"]))
                .map(str::to_owned)
                .ok_or_else(|| "Not authenticated. Run `grok login`.".into())
        }
        _ => Err(format!("unknown fake CLI {cli}")),
    }
}

/// The HOME writes each CLI makes at start; a read-only HOME fails here as it does for real.
fn touch_home(cli: &str) -> Result<(), String> {
    let home = home();
    let fail =
        |what: &str, e: std::io::Error| format!("Error: {e}, {what} (Bash tool unavailable)");
    match cli {
        "claude" => {
            std::fs::create_dir_all(home.join(".claude/session-env"))
                .map_err(|e| fail("mkdir '~/.claude/session-env'", e))?;
            // ~/.claude.json is replaced by atomic rename, under a lock directory.
            let lock = home.join(".claude.json.lock");
            std::fs::create_dir(&lock).map_err(|e| fail("mkdir '~/.claude.json.lock'", e))?;
            let temp = home.join(format!(
                ".claude.json.tmp.{}.{}",
                std::process::id(),
                now_ms()
            ));
            let result = std::fs::write(
                &temp,
                "{\"hasCompletedOnboarding\": true, \"numStartups\": 1}\n",
            )
            .and_then(|()| std::fs::rename(&temp, home.join(".claude.json")));
            let _ = std::fs::remove_dir(&lock);
            result.map_err(|e| fail("rename '~/.claude.json'", e))?;
            let projects = home.join(".claude/projects/-work");
            std::fs::create_dir_all(&projects).map_err(|e| fail("mkdir '~/.claude/projects'", e))
        }
        "codex" => std::fs::create_dir_all(home.join(".codex/sessions/2026/11/22"))
            .map_err(|e| format!("failed to create session directory: {e}")),
        "agy" => std::fs::write(home.join(".gemini/projects.json"), "{}")
            .map_err(|e| format!("failed to save projects: {e}")),
        "grok" => std::fs::create_dir_all(home.join(".grok/sessions"))
            .map_err(|e| format!("failed to create sessions: {e}")),
        _ => Ok(()),
    }
}

/// The answer: `out/RESULT.md` (and `out/ENCODED.txt` for FAKE:encode) where the CLI works.
fn write_output(
    cli: &str,
    (prompt, dir): (&str, &Path),
    model: &str,
    leak: Option<&str>,
) -> Result<(), String> {
    if std::env::var("MULTICOOKER_JUDGE").is_ok_and(|j| !j.is_empty()) {
        return crate::dummy::judge_outputs(&[]);
    }
    let quality = model
        .rsplit_once("-q")
        .and_then(|(_, q)| q.parse::<i64>().ok());
    let mut text = format!("# {cli} (fake) answer\n\n{prompt}\n");
    if let Some(quality) = quality {
        text.push_str(&format!("\ndummy-quality: {quality}\n"));
    }
    if let Some(token) = leak {
        text.push_str(&format!("\nmy token: {token}\n"));
    }
    let out = dir.join("out");
    std::fs::create_dir_all(&out)
        .and_then(|()| std::fs::write(out.join("RESULT.md"), text))
        .map_err(|e| format!("cannot write out/RESULT.md: {e}"))?;
    match leak {
        Some(token) if prompt.contains("FAKE:encode") => {
            std::fs::write(out.join("ENCODED.txt"), encoded(token))
                .map_err(|e| format!("cannot write out/ENCODED.txt: {e}"))
        }
        _ => Ok(()),
    }
}

/// FAKE:encode: the token smuggled out encoded, one form per line: base64 after 0, 1 and 2
/// bytes of prefix (each alignment), base64url, hex in both cases, URL-encoded.
fn encoded(token: &str) -> String {
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    let url: String = token
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let mut lines = Vec::new();
    for prefix in ["", "a", "ab"] {
        lines.push(base64(format!("{prefix}{token}!").as_bytes(), false));
    }
    lines.push(base64(format!("x{token}").as_bytes(), true));
    lines.push(hex.to_ascii_uppercase());
    lines.push(hex);
    lines.push(format!("https://example.invalid/?t={url}"));
    lines.join("\n") + "\n"
}

/// Base64 (RFC 4648, padded), or base64url without padding.
fn base64(bytes: &[u8], url: bool) -> String {
    let alphabet: &[u8; 64] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[(n >> (18 - 6 * i) & 63) as usize]));
        }
        if !url {
            out.push_str(&"=".repeat(3 - chunk.len()));
        }
    }
    out
}

fn emit(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
}

/// The real CLI's success output, with usage.
fn print_success(cli: &str, model: &str) {
    match cli {
        "claude" => {
            emit(&format!(
                r#"{{"type":"system","subtype":"init","model":"{model}","session_id":"fake-session"}}"#
            ));
            emit(&format!(
                r#"{{"type":"assistant","message":{{"model":"{model}","usage":{{"input_tokens":1200,"output_tokens":345,"cache_creation_input_tokens":100,"cache_read_input_tokens":50}}}}}}"#
            ));
            emit(
                r#"{"type":"result","subtype":"success","is_error":false,"num_turns":3,"total_cost_usd":0.0123,"usage":{"input_tokens":1200,"output_tokens":345,"cache_creation_input_tokens":100,"cache_read_input_tokens":50}}"#,
            );
        }
        "codex" => {
            emit(r#"{"type":"thread.started","thread_id":"fake-thread"}"#);
            emit(r#"{"type":"turn.started"}"#);
            emit(r#"{"type":"item.completed","item":{"type":"agent_message","text":"done"}}"#);
            emit(
                r#"{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":200}}"#,
            );
        }
        "agy" => {
            emit(&format!(r#"{{"type":"init","model":"{model}"}}"#));
            emit(
                r#"{"type":"result","status":"SUCCESS","num_turns":2,"usage":{"input_tokens":700,"output_tokens":150,"thinking_tokens":40,"cache_read_tokens":10,"total_tokens":900}}"#,
            );
        }
        _ => {
            emit(r#"{"type":"text","text":"done"}"#);
            emit(&format!(
                r#"{{"type":"end","model":"{model}","usage":{{"input_tokens":500,"output_tokens":120,"cache_read_tokens":30,"reasoning_tokens":20}},"total_cost_usd":0.004}}"#
            ));
        }
    }
}

/// The real CLI's limit message (docs/FLAVORS.md §1.4 item 10, §2.4 item 5, §3.4 item 2,
/// §4.4 item 4).
fn print_limit(cli: &str) {
    match cli {
        "claude" => emit("Claude AI usage limit reached|1893456000"),
        "codex" => emit(
            "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 3:28 PM.",
        ),
        "agy" => emit(
            r#"{"type":"result","status":"ERROR","error":"RESOURCE_EXHAUSTED (code 429): Individual quota reached. Resets in 2h39m52s."}"#,
        ),
        _ => emit("Error: rate limit exceeded (429 Too Many Requests), retry after 60"),
    }
}
