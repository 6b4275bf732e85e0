//! The entrypoint of every real flavor's image: `mc-cell run <flavor>`.
//!
//! It seeds the writable tmpfs HOME (in a Harbor task's cell, the task image's own HOME, as
//! root) from the read-only login snapshot at `/run/mc-auth/<cli>/`
//! (so CLIs that rewrite their files, such as claude's atomic rename of `~/.claude.json`, work,
//! and nothing is ever written back to the host), writes minimal config (web tools off unless
//! `MULTICOOKER_WEB_TOOLS=1`, no self-update), and replaces itself with the CLI, headless, with
//! its permission bypass (the container is the sandbox), the participant's model, structured
//! output on stdout, and the prompt from `/work/PROMPT.txt` on stdin (so stdin always ends).
//! codex alone runs as a child, so that its session files can be read after it exits.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use crate::members::members;

/// Where the read-only login snapshot is mounted.
pub const STAGING: &str = "/run/mc-auth";
/// The prompt every cell reads, unless `MULTICOOKER_PROMPT` names another file.
pub const PROMPT: &str = "/work/PROMPT.txt";
/// Where the CLI works, unless `MULTICOOKER_WORKDIR` names another folder.
pub const WORKDIR: &str = "/work";

/// The prompt's file: `MULTICOOKER_PROMPT` (a Harbor task's cell, whose inputs are staged
/// outside the task's own folders), else [`PROMPT`].
pub fn prompt_path() -> PathBuf {
    std::env::var_os("MULTICOOKER_PROMPT")
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from(PROMPT), PathBuf::from)
}

/// The folder the CLI works in: `MULTICOOKER_WORKDIR` (a Harbor task's `workdir`; `.` is the
/// folder init started the program in, the image's own `WORKDIR`), else [`WORKDIR`].
pub fn workdir() -> PathBuf {
    match std::env::var_os("MULTICOOKER_WORKDIR").filter(|w| !w.is_empty()) {
        Some(dir) if dir == "." => std::env::current_dir().unwrap_or_else(|_| WORKDIR.into()),
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(WORKDIR),
    }
}

unsafe extern "C" {
    fn umask(mask: u32) -> u32;
}

/// What the entrypoint knows from its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// HOME (a tmpfs; in a Harbor task's cell, the image's).
    pub home: PathBuf,
    /// `MULTICOOKER_MODEL`, if set.
    pub model: Option<String>,
    /// `MULTICOOKER_WEB_TOOLS=1`.
    pub web_tools: bool,
    /// `MULTICOOKER_TIMEOUT_S`.
    pub timeout_s: u64,
    /// `MULTICOOKER_JUDGE` is set.
    pub judge: bool,
    /// The prompt's file ([`prompt_path`]).
    pub prompt: PathBuf,
    /// Where the CLI works ([`workdir`]).
    pub workdir: String,
}

impl Context {
    fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self {
            home: PathBuf::from(var("HOME").unwrap_or_else(|| "/home/mc".into())),
            model: var("MULTICOOKER_MODEL"),
            web_tools: var("MULTICOOKER_WEB_TOOLS").as_deref() == Some("1"),
            timeout_s: var("MULTICOOKER_TIMEOUT_S")
                .and_then(|t| t.parse().ok())
                .unwrap_or(1800),
            judge: var("MULTICOOKER_JUDGE").is_some(),
            prompt: prompt_path(),
            workdir: workdir().to_string_lossy().into_owned(),
        }
    }
}

fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(from, to).map(drop)
}

fn write_if_absent(path: &Path, text: &str) -> std::io::Result<()> {
    if path.exists() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// Copies one CLI's staged login into HOME and writes its minimal config; returns extra
/// environment for the CLI process only.
pub fn seed(
    cli: &str,
    staging: &Path,
    context: &Context,
) -> std::io::Result<Vec<(String, String)>> {
    let home = &context.home;
    let staged = staging.join(cli);
    let mut env = Vec::new();
    match cli {
        "claude" => {
            let token = staged.join("oauth-token");
            if token.is_file() {
                env.push((
                    "CLAUDE_CODE_OAUTH_TOKEN".into(),
                    std::fs::read_to_string(token)?.trim().to_owned(),
                ));
            } else if staged.join(".credentials.json").is_file() {
                copy(
                    &staged.join(".credentials.json"),
                    &home.join(".claude/.credentials.json"),
                )?;
            }
            std::fs::create_dir_all(home.join(".claude/projects"))?;
            write_if_absent(
                &home.join(".claude.json"),
                "{\"hasCompletedOnboarding\": true}\n",
            )?;
        }
        "codex" => {
            if staged.join("auth.json").is_file() {
                copy(&staged.join("auth.json"), &home.join(".codex/auth.json"))?;
            }
            let search = if context.web_tools {
                "live"
            } else {
                "disabled"
            };
            write_if_absent(
                &home.join(".codex/config.toml"),
                &format!("web_search = \"{search}\"\ncli_auth_credentials_store = \"file\"\n"),
            )?;
        }
        "agy" => {
            let file = "antigravity-oauth-token";
            if staged.join(file).is_file() {
                copy(
                    &staged.join(file),
                    &home.join(".gemini/antigravity-cli").join(file),
                )?;
            }
            if !context.web_tools {
                let deny = "{\"permissions\": {\"deny\": [\"google_web_search\", \"web_fetch\", \"read_url(*)\"]}}\n";
                write_if_absent(&home.join(".gemini/antigravity-cli/settings.json"), deny)?;
            }
        }
        "grok" => {
            if staged.join("auth.json").is_file() {
                copy(&staged.join("auth.json"), &home.join(".grok/auth.json"))?;
            }
            write_if_absent(
                &home.join(".grok/config.toml"),
                "[cli]\nauto_update = false\n",
            )?;
        }
        _ => {}
    }
    Ok(env)
}

/// The CLIs whose login [`seed`] copies into a file under HOME, and that file.
const SEEDED_LOGINS: [(&str, &str); 4] = [
    ("claude", ".claude/.credentials.json"),
    ("codex", ".codex/auth.json"),
    ("agy", ".gemini/antigravity-cli/antigravity-oauth-token"),
    ("grok", ".grok/auth.json"),
];

/// The login files [`seed`] may have written into `home` (and the CLI may have rewritten
/// there): one per CLI whose snapshot is staged under `staging`.
pub fn seeded_logins(staging: &Path, home: &Path) -> Vec<PathBuf> {
    SEEDED_LOGINS
        .iter()
        .filter(|(cli, _)| staging.join(cli).is_dir())
        .map(|(_, file)| home.join(file))
        .collect()
}

/// Removes the login files [`seed`] wrote into HOME once the program and everything it
/// started have ended. A Harbor task's cell keeps the image's HOME on its writable root, and
/// its file system is kept as an image the task's verifier runs on: without this, the login
/// would be in it. A link in their place is removed, never followed.
pub fn scrub_logins(staging: &Path, home: &Path) {
    for file in seeded_logins(staging, home) {
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => eprintln!("mc-cell init: cannot remove {}: {e}", file.display()),
        }
    }
}

/// The headless command line of a flavor's lead CLI.
pub fn argv(flavor: &str, context: &Context, prompt: &str) -> Vec<String> {
    let model = |flag: &str| {
        context
            .model
            .iter()
            .flat_map(|m| [flag.to_owned(), m.clone()])
            .collect::<Vec<_>>()
    };
    let mut args: Vec<String> = match flavor {
        "claude" | "triad" => {
            let mut a: Vec<String> = [
                "claude",
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ]
            .map(String::from)
            .to_vec();
            a.extend(model("--model"));
            if !context.web_tools {
                a.extend(["--disallowedTools", "WebSearch", "WebFetch"].map(String::from));
            }
            a
        }
        "codex" => {
            let mut a: Vec<String> = [
                "codex",
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                "--cd",
                &context.workdir,
            ]
            .map(String::from)
            .to_vec();
            a.extend(model("-m"));
            if !context.web_tools {
                a.extend(["-c", "web_search=\"disabled\""].map(String::from));
            }
            a.push("-".into());
            a
        }
        "agy" => {
            let budget = context.timeout_s.saturating_sub(30).max(30);
            let mut a: Vec<String> = [
                "agy",
                "--output-format",
                "stream-json",
                "--dangerously-skip-permissions",
                "--add-dir",
                &context.workdir,
            ]
            .map(String::from)
            .to_vec();
            a.extend(["--print-timeout".to_owned(), format!("{budget}s")]);
            a.extend(model("--model"));
            a.extend(["--print".to_owned(), prompt.to_owned()]);
            a
        }
        "grok" => {
            let prompt_file = context.prompt.to_string_lossy();
            let mut a: Vec<String> = [
                "grok",
                "--prompt-file",
                &prompt_file,
                "--output-format",
                "streaming-json",
                "--always-approve",
                "--no-auto-update",
                "--cwd",
                &context.workdir,
            ]
            .map(String::from)
            .to_vec();
            a.extend(model("-m"));
            if !context.web_tools {
                a.push("--disable-web-search".into());
            }
            a
        }
        _ => Vec::new(),
    };
    args.retain(|a| !a.is_empty());
    args
}

/// The reviewer protocol the composite `triad` prepends for its lead (not for judges).
pub const TRIAD_PROTOCOL: &str = "You are the lead engineer. Two reviewers are available through your shell: \
`codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \"<question>\"` and \
`grok --always-approve -p \"<question>\"`. Draft your answer, ask both reviewers for a critique, apply \
what is right, and write the final result.\n\n---\n\n";

/// Entry point of `mc-cell run <flavor>`.
pub fn run(flavor: &str) -> ExitCode {
    // SAFETY: umask only changes this process's file-creation mask.
    unsafe {
        umask(0o077);
    }
    let context = Context::from_env();
    let prompt = match std::fs::read_to_string(&context.prompt) {
        Ok(prompt) => prompt,
        Err(_) => {
            eprintln!("mc-entrypoint: {} not present", context.prompt.display());
            return ExitCode::from(64);
        }
    };
    let mut env = Vec::new();
    for cli in members(flavor) {
        match seed(cli, Path::new(STAGING), &context) {
            Ok(extra) => env.extend(extra),
            Err(error) => {
                eprintln!("mc-entrypoint: cannot seed {cli}'s HOME: {error}");
                return ExitCode::from(70);
            }
        }
    }
    let prompt_file = if flavor == "triad" && !context.judge {
        let path = PathBuf::from("/tmp/triad-prompt.txt");
        if let Err(error) = std::fs::write(&path, format!("{TRIAD_PROTOCOL}{prompt}")) {
            eprintln!("mc-entrypoint: {error}");
            return ExitCode::from(70);
        }
        path
    } else {
        context.prompt.clone()
    };
    let args = argv(flavor, &context, &prompt);
    let Some((program, rest)) = args.split_first() else {
        eprintln!("mc-entrypoint: unknown flavor `{flavor}`");
        return ExitCode::from(2);
    };
    let stdin = match std::fs::File::open(&prompt_file) {
        Ok(file) => Stdio::from(file),
        Err(error) => {
            eprintln!("mc-entrypoint: {error}");
            return ExitCode::from(70);
        }
    };
    let mut command = Command::new(program);
    command
        .args(rest)
        .envs(
            env.iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        )
        .current_dir(&context.workdir)
        .stdin(stdin);
    if flavor == "codex" {
        return run_codex(&mut command, &context.home);
    }
    let error = command.exec();
    eprintln!("mc-entrypoint: cannot run {program}: {error}");
    ExitCode::from(127)
}

/// codex runs as a child, not in this process's place: once it exits, and before the cell (and
/// its tmpfs HOME) is gone, the models its session files name are reported on stdout
/// ([`crate::rollout`]). Its exit code is passed on (a signal as 128 + the signal).
fn run_codex(command: &mut Command, home: &Path) -> ExitCode {
    use std::io::Write as _;
    use std::os::unix::process::ExitStatusExt as _;
    let status = match command.status() {
        Ok(status) => status,
        Err(error) => {
            eprintln!("mc-entrypoint: cannot run codex: {error}");
            return ExitCode::from(127);
        }
    };
    if let Some(line) = crate::rollout::report_line(&crate::rollout::models(home)) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> Context {
        Context {
            home: std::env::temp_dir(),
            model: Some("opus".into()),
            web_tools: false,
            timeout_s: 600,
            judge: false,
            prompt: PathBuf::from(PROMPT),
            workdir: WORKDIR.to_owned(),
        }
    }

    #[test]
    fn each_flavor_runs_headless_with_bypass_model_and_web_tools_off() {
        let claude = argv("claude", &context(), "p").join(" ");
        assert_eq!(
            claude,
            "claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model opus --disallowedTools WebSearch WebFetch"
        );
        let codex = argv("codex", &context(), "p").join(" ");
        assert!(
            codex.ends_with("-m opus -c web_search=\"disabled\" -"),
            "{codex}"
        );
        let agy = argv("agy", &context(), "the prompt");
        assert_eq!(
            agy[agy.len() - 2..],
            ["--print".to_owned(), "the prompt".to_owned()]
        );
        assert!(
            agy.contains(&"570s".to_owned()),
            "print timeout under the cell's: {agy:?}"
        );
        let grok = argv(
            "grok",
            &Context {
                web_tools: true,
                ..context()
            },
            "p",
        )
        .join(" ");
        assert!(
            !grok.contains("--disable-web-search")
                && grok.contains("--prompt-file /work/PROMPT.txt"),
            "{grok}"
        );
    }

    #[test]
    fn seeding_copies_the_login_into_home_and_prefers_a_long_lived_token() {
        let root = std::env::temp_dir().join(format!("mc-seed-{}", std::process::id()));
        let staging = root.join("staging");
        std::fs::create_dir_all(staging.join("claude")).unwrap();
        std::fs::write(staging.join("claude/.credentials.json"), "{}").unwrap();
        let context = Context {
            home: root.join("home"),
            ..context()
        };
        assert!(seed("claude", &staging, &context).unwrap().is_empty());
        assert!(context.home.join(".claude/.credentials.json").is_file());
        assert!(context.home.join(".claude.json").is_file());
        std::fs::write(staging.join("claude/oauth-token"), "sk-ant-oat01-long\n").unwrap();
        let env = seed("claude", &staging, &context).unwrap();
        assert_eq!(
            env,
            [(
                "CLAUDE_CODE_OAUTH_TOKEN".to_owned(),
                "sk-ant-oat01-long".to_owned()
            )]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// What seeding copies into HOME is exactly what scrubbing removes: each staged CLI's
    /// login file, and nothing of a CLI whose login was not staged.
    #[test]
    fn scrubbing_removes_every_login_seeding_wrote_and_nothing_else() {
        let root = std::env::temp_dir().join(format!("mc-scrub-{}", std::process::id()));
        let staging = root.join("staging");
        let context = Context {
            home: root.join("home"),
            ..context()
        };
        for (cli, file) in [
            ("claude", ".credentials.json"),
            ("codex", "auth.json"),
            ("agy", "antigravity-oauth-token"),
            ("grok", "auth.json"),
        ] {
            std::fs::create_dir_all(staging.join(cli)).unwrap();
            std::fs::write(staging.join(cli).join(file), "secret").unwrap();
            seed(cli, &staging, &context).unwrap();
        }
        let holding = |dir: &Path| -> Vec<PathBuf> {
            let mut found = Vec::new();
            let mut stack = vec![dir.to_path_buf()];
            while let Some(d) = stack.pop() {
                for entry in std::fs::read_dir(&d).unwrap().flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if std::fs::read_to_string(&path).unwrap_or_default() == "secret" {
                        found.push(path);
                    }
                }
            }
            found.sort();
            found
        };
        let mut seeded = seeded_logins(&staging, &context.home);
        seeded.sort();
        assert_eq!(holding(&context.home), seeded);
        std::fs::remove_dir_all(staging.join("codex")).unwrap();
        scrub_logins(&staging, &context.home);
        assert_eq!(
            holding(&context.home),
            [context.home.join(".codex/auth.json")],
            "a login not staged in this cell is not this cell's to remove"
        );
        assert!(context.home.join(".grok/config.toml").is_file());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
