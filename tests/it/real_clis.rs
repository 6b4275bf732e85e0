//! The real CLIs (Claude Code and codex from the pinned `PyPI` wheels) in multicooker's cells,
//! built from the packaged Dockerfiles with only `BASE_IMAGE` and `<CLI>_SOURCE` swapped, with
//! logins in their real layouts and the cells' own CONNECT proxies, against the stand-in model
//! API (`crates/mc-standin`) reached by the vendors' hostnames. A CLI upgrade that changes what
//! it sends or how it reports fails here, not in a user's night.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::real_checks::{allowed_hosts, assert_protocol, cell_logs, run_scanning};
use crate::common::real_clis::{RealClis, StandIn, prepare};
use crate::common::{TestCook, show};

/// The fake tokens the stand-in accepts (no real login is ever used).
const CLAUDE_TOKEN: &str = "sk-ant-oat01-multicooker-test-token-CLAUDE";
const CODEX_ACCOUNT: &str = "acct-multicooker-test";

/// What a participant's tool call runs: one file in out/.
const PARTICIPANT_COMMAND: &str =
    "mkdir -p /work/out && printf 'hello from the stand-in\\n' > /work/out/RESULT.md";
/// What a judge's tool call runs: a score for every submission.
const JUDGE_COMMAND: &str = "mkdir -p /work/outbox && python3 -c 'import os,json; l=sorted(os.listdir(\"/work/submissions\")); json.dump({\"scores\":{x:{\"correctness\":4,\"clarity\":3} for x in l}}, open(\"/work/outbox/scores.json\",\"w\"))'";

fn brief(flavor: &str) -> String {
    format!(
        "name: test\ntimeout_s: 240\njudge_timeout_s: 240\n\
         network: {{mode: allowlist, allow: [], allow_private: true}}\n\
         participants:\n  - {{name: alice, flavor: {flavor}}}\n\
         judges:\n  - {{name: referee, flavor: {flavor}}}\n\
         rubric:\n  scale: [0, 5]\n  dimensions:\n    - {{id: correctness, weight: 60}}\n    - {{id: clarity, weight: 40}}\n\
         judging: {{policy: allow_self}}\n"
    )
}

fn jwt(claims: &Value) -> String {
    use base64::Engine;
    let e = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.c2ln",
        e(&json!({"alg": "RS256", "typ": "JWT"})),
        e(claims)
    )
}

/// A home with both CLIs' logins in their real layouts; returns (home, secrets in it).
fn logins() -> (tempfile::TempDir, Vec<String>) {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".claude");
    fs_err::create_dir_all(&claude).unwrap();
    let far = 4_102_444_800_000_i64; // 2100-01-01
    fs_err::write(
        claude.join(".credentials.json"),
        json!({"claudeAiOauth": {"accessToken": CLAUDE_TOKEN, "expiresAt": far,
               "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}})
        .to_string(),
    )
    .unwrap();
    let auth = json!({"chatgpt_plan_type": "pro", "chatgpt_account_id": CODEX_ACCOUNT,
                      "chatgpt_user_id": "user-multicooker-test"});
    let id_token = jwt(
        &json!({"email": "cell@multicooker.invalid", "exp": far / 1000,
                              "https://api.openai.com/auth": auth}),
    );
    let access = jwt(
        &json!({"exp": far / 1000, "https://api.openai.com/auth": auth,
                            "marker": "CODEXACCESS"}),
    );
    let codex = home.path().join(".codex");
    fs_err::create_dir_all(&codex).unwrap();
    fs_err::write(
        codex.join("auth.json"),
        json!({"OPENAI_API_KEY": null, "tokens": {"id_token": id_token, "access_token": access,
               "refresh_token": "", "account_id": CODEX_ACCOUNT},
               "last_refresh": "2026-11-20T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
    (home, vec![CLAUDE_TOKEN.to_owned(), access, id_token])
}

fn command(
    cook: &TestCook,
    clis: &RealClis,
    stand_in: &StandIn,
    home: &Path,
    args: &[&str],
) -> std::process::Command {
    let mut command = cook.command(args);
    command
        .env("MULTICOOKER_BUILD_ARGS", clis.build_args())
        .env("MULTICOOKER_EGRESS_NETWORK", &stand_in.network)
        .env("MULTICOOKER_HOST_HOME", home);
    command
}

fn run(
    cook: &TestCook,
    clis: &RealClis,
    stand_in: &StandIn,
    home: &Path,
    args: &[&str],
) -> std::process::Output {
    command(cook, clis, stand_in, home, args)
        .output()
        .expect("the multicooker binary runs")
}

/// The usage the stand-in reported, summed over its replies.
fn sent_usage(stand_in: &StandIn, field: &str) -> u64 {
    stand_in
        .requests()
        .iter()
        .filter_map(|r| r["sent_usage"][field].as_u64())
        .sum()
}

fn participant_and_judge(flavor: &str, token_field: &str) {
    let clis = prepare();
    let cook = TestCook::new(&format!("real-{flavor}"), &brief(flavor));
    let stand_in = StandIn::start(&cook, clis, &format!("real-{flavor}"));
    let (home, secrets) = logins();
    let token = if flavor == "claude" {
        CLAUDE_TOKEN.to_owned()
    } else {
        secrets[1].clone()
    };
    // codex's participant talks over its preferred transport, the WebSocket, and its judge
    // over the fallback (`POST` with SSE), so one cook proves both (claude ignores `transport`).
    stand_in.script(
        &json!({"mode": "ok", "token": token, "command": PARTICIPANT_COMMAND,
        "transport": "websocket",
        "usage": {"input_tokens": 1234, "output_tokens": 56, "cached_input_tokens": 7,
                  "cache_read_input_tokens": 7}}),
    );
    // Both run as a uid without a passwd entry (the default one multicooker picks is free too);
    // a gid the host uses (such as 20, dialout) is refused (issue 21).
    let mut cook_command = command(&cook, clis, &stand_in, home.path(), &["cook", cook.name()]);
    cook_command.env("MULTICOOKER_HARDENING_USER", "501:501");
    let (output, scans) = run_scanning(cook_command, &cook.dir(), &secrets);
    assert!(
        scans > 3,
        "the cook folder was scanned while the cell ran ({scans} scans)"
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "cook: {}\n{}\nstand-in saw: {:?}",
        show(&output),
        cell_logs(&cook, "alice"),
        stand_in.requests()
    );
    check_participant(flavor, token_field, &cook, clis, &stand_in);
    let participant_requests = stand_in.requests().len();
    // The judge, the report, and `doctor --live` on the same cook.
    stand_in.script(
        &json!({"mode": "ok", "token": token, "command": JUDGE_COMMAND, "transport": "sse"}),
    );
    let (output, _) = run_scanning(
        command(&cook, clis, &stand_in, home.path(), &["judge", cook.name()]),
        &cook.dir(),
        &secrets,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "judge: {}\n{}",
        show(&output),
        cell_logs(&cook, "referee")
    );
    let output = run(
        &cook,
        clis,
        &stand_in,
        home.path(),
        &["report", cook.name()],
    );
    assert_eq!(output.status.code(), Some(0), "report: {}", show(&output));
    let leaderboard = cook.text("leaderboard.md");
    assert!(leaderboard.contains("alice"), "{leaderboard}");
    assert_protocol(flavor, &stand_in.requests());
    if flavor == "codex" {
        let requests = stand_in.requests();
        let (cook_phase, judge_phase) = requests.split_at(participant_requests);
        assert_transport(cook_phase, "websocket");
        assert_transport(judge_phase, "sse");
    }
    stand_in.script(&json!({"mode": "ok", "token": token, "command": PARTICIPANT_COMMAND}));
    let args = ["doctor", cook.name(), "--live", "--json"];
    let output = run(&cook, clis, &stand_in, home.path(), &args);
    let answered = format!("live: flavor `{flavor}` answered");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    let live_ok = report["checks"].as_array().is_some_and(|checks| {
        checks.iter().any(|c| {
            c["level"] == "OK" && c["check"].as_str().is_some_and(|t| t.contains(&answered))
        })
    });
    assert!(live_ok, "doctor --live: {}", show(&output));
    drop(stand_in);
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// codex's Responses calls in `requests` all went over `transport`: `websocket` is an accepted
/// upgrade (101) and request frames (`method: WEBSOCKET`, `type: response.create`) with no
/// `POST` fallback; `sse` is a refused upgrade (404) and zstd `POST`s.
fn assert_transport(requests: &[Value], transport: &str) {
    const RESPONSES: &str = "/backend-api/codex/responses";
    let upgrades: Vec<&Value> = requests
        .iter()
        .filter(|r| r["method"] == "GET" && r["path"] == RESPONSES)
        .collect();
    let frames = requests.iter().filter(|r| r["method"] == "WEBSOCKET");
    let posts = requests
        .iter()
        .filter(|r| r["method"] == "POST" && r["path"] == RESPONSES)
        .count();
    let upgrade_status = if transport == "websocket" { 101 } else { 404 };
    assert!(
        !upgrades.is_empty()
            && upgrades.iter().all(|r| r["status"] == upgrade_status
                && r["headers"]["upgrade"]
                    .as_str()
                    .is_some_and(|u| u.eq_ignore_ascii_case("websocket"))),
        "codex asked for a WebSocket first, answered {upgrade_status}: {upgrades:?}"
    );
    if transport == "websocket" {
        let frames: Vec<&Value> = frames.collect();
        // codex 0.163.0 opens with a prewarm (`generate: false`), then sends the turn, then the
        // tool's output alone on top of `previous_response_id`.
        let turns = frames
            .iter()
            .filter(|f| f["body"]["generate"] != false)
            .count();
        assert!(
            turns >= 2
                && frames
                    .iter()
                    .all(|f| f["body"]["type"] == "response.create"),
            "the tool call and the final answer over the socket: {frames:?}"
        );
        assert_eq!(posts, 0, "no fallback to POST: {requests:?}");
    } else {
        assert_eq!(frames.count(), 0, "{requests:?}");
        assert!(posts >= 2, "the turn over POST with SSE: {requests:?}");
    }
}

/// The participant's record: its output, usage as sent, the proxy's hosts, version and image.
fn check_participant(
    flavor: &str,
    token_field: &str,
    cook: &TestCook,
    clis: &RealClis,
    stand_in: &StandIn,
) {
    assert_eq!(
        cook.text("work/alice/out/RESULT.md"),
        "hello from the stand-in\n"
    );
    let run_result = cook.json("RUN_RESULT.json");
    let alice = &run_result["participants"][0];
    assert_eq!(alice["status"], "ok", "{run_result}");
    assert_eq!(
        alice["usage"][token_field].as_u64(),
        Some(sent_usage(stand_in, "input")),
        "input tokens as the stand-in sent them: {}",
        alice["usage"]
    );
    assert_eq!(
        alice["usage"]["output_tokens"].as_u64(),
        Some(sent_usage(stand_in, "output"))
    );
    if flavor == "claude" {
        // The live meter keys claude's tokens on each message's id; the stand-in's ids are
        // fresh per reply as the real API's are (a fixed one hid a double count, issue 25), so
        // the spend read live is every reply's tokens once.
        let sent: u64 = ["input", "output", "cache_creation", "cache_read"]
            .iter()
            .map(|field| sent_usage(stand_in, field))
            .sum();
        assert_eq!(
            alice["spend"]["tokens"].as_u64(),
            Some(sent),
            "the live spend counts each of the stand-in's replies once: {alice}"
        );
    }
    let hosts = allowed_hosts(cook, "alice");
    let main_host = if flavor == "claude" {
        "api.anthropic.com:443"
    } else {
        "chatgpt.com:443"
    };
    assert!(hosts.contains(main_host), "{hosts:?}");
    for host in &hosts {
        assert!(
            multicooker::flavor::api_hosts(flavor).contains(&host.as_str()),
            "the proxy allowed only {flavor}'s hosts: {hosts:?}"
        );
    }
    let version = format!("{flavor}_version");
    assert_eq!(
        alice["cli_version"].as_str(),
        Some(clis.values[&version].as_str())
    );
    // One pin per CLI: the wheel the suite ran is the version the packaged image pins.
    assert_eq!(
        clis.values[&version],
        image_pin(flavor),
        "the real-CLI suite runs the version images/{flavor}/Dockerfile pins"
    );
    // Built with the test's arguments: never under the tag the packaged image has without them.
    let normal =
        multicooker::cell::images::base_specs(&[flavor.to_owned()], None, &crate::common::images())
            .unwrap();
    let image = alice["image"].as_str().unwrap_or_default();
    assert!(
        image.starts_with(&format!("multicooker-base-{flavor}:"))
            && !image.starts_with(&normal[0].tag),
        "{image} vs {}",
        normal[0].tag
    );
}

/// The version `images/<flavor>/Dockerfile` pins (`CLAUDE_CODE_VERSION`, `CODEX_VERSION`).
fn image_pin(flavor: &str) -> String {
    let arg = if flavor == "claude" {
        "ARG CLAUDE_CODE_VERSION="
    } else {
        "ARG CODEX_VERSION="
    };
    let dockerfile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("images/{flavor}/Dockerfile"));
    fs_err::read_to_string(dockerfile)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(arg))
        .unwrap_or_else(|| panic!("images/{flavor}/Dockerfile has no `{arg}`"))
        .to_owned()
}

/// A CLI source that is not the pinned version fails the image's build with what to do, not
/// with a bare `grep` exit status (issue 25).
#[test]
fn a_cli_that_is_not_the_pin_fails_the_image_build_with_what_to_do() {
    let clis = prepare();
    for (flavor, arg) in [
        ("claude", "CLAUDE_CODE_VERSION"),
        ("codex", "CODEX_VERSION"),
    ] {
        let cook = TestCook::empty(&format!("real-{flavor}-wrong-pin"));
        let output = cook
            .command(&["build-base", flavor])
            .env(
                "MULTICOOKER_BUILD_ARGS",
                format!("{},{arg}=0.0.1", clis.build_args()),
            )
            .output()
            .unwrap();
        let text = show(&output);
        assert_eq!(output.status.code(), Some(2), "{text}");
        assert!(
            text.contains(&format!("but this image pins {arg}=0.0.1"))
                && text.contains(".ci/pin-drift --check"),
            "the failed version check says what to do: {text}"
        );
        assert!(
            cook.leftovers().is_empty(),
            "left behind: {:?}",
            cook.leftovers()
        );
    }
}

#[test]
fn claude_participant_and_judge_through_the_real_cli() {
    participant_and_judge("claude", "input_tokens");
}

#[test]
fn codex_participant_and_judge_through_the_real_cli() {
    participant_and_judge("codex", "input_tokens");
}

/// One participant-only cook against a stand-in answering in `mode`; its participant's result.
fn cook_with_mode(flavor: &str, mode: &str) -> (Value, String, Vec<u64>) {
    cook_with(flavor, mode, &json!({}))
}

/// As `cook_with_mode`, with more script fields (`transport`, `refresh`: what codex's token
/// refresh at `auth.openai.com` is answered).
fn cook_with(flavor: &str, mode: &str, extra: &Value) -> (Value, String, Vec<u64>) {
    let clis = prepare();
    let mut yaml = brief(flavor);
    if mode == "rate_limit" {
        // claude backs off for about 3 minutes before it gives up: room for a loaded machine.
        yaml = yaml.replacen("timeout_s: 240", "timeout_s: 420", 1);
    }
    let tag = match extra["refresh"].as_u64() {
        Some(status) => format!("{flavor}-{mode}-{status}"),
        None => format!("{flavor}-{mode}"),
    };
    let cook = TestCook::new(&format!("real-{tag}"), &yaml);
    let stand_in = StandIn::start(&cook, clis, &tag);
    let (home, secrets) = logins();
    let token = if flavor == "claude" {
        CLAUDE_TOKEN.to_owned()
    } else {
        secrets[1].clone()
    };
    let mut script = json!({"mode": mode, "token": token, "command": PARTICIPANT_COMMAND});
    for (field, value) in extra.as_object().into_iter().flatten() {
        script[field] = value.clone();
    }
    stand_in.script(&script);
    let output = run(&cook, clis, &stand_in, home.path(), &["cook", cook.name()]);
    let result = cook.json("RUN_RESULT.json")["participants"][0].clone();
    let logs = format!("{}\n{}", show(&output), cell_logs(&cook, "alice"));
    let statuses: Vec<u64> = stand_in
        .requests()
        .iter()
        .filter_map(|r| r["status"].as_u64())
        .collect();
    assert!(
        statuses.contains(&if mode == "unauthorized" { 401 } else { 429 }),
        "{statuses:?}"
    );
    drop(stand_in);
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
    (result, logs, statuses)
}

/// A used-up plan, a momentary rate limit and a refused login, as the CLI reports them, each
/// classified: `usage_exhausted` (not retried), `rate_limited` (retryable), and a failed run
/// that is no limit at all.
fn limits_are_classified(flavor: &str) {
    // codex's per-minute 429 arrives as an `error` event on its WebSocket (the stand-in's other
    // refusals of codex go over `POST` with SSE); claude ignores `transport`.
    let over_socket = json!({"transport": "websocket"});
    let (result, logs, statuses) = cook_with(flavor, "rate_limit", &over_socket);
    assert_eq!(result["status"], "rate_limited", "{result}\n{logs}");
    assert_eq!(result["limit_kind"], "rate_limited", "{result}\n{logs}");
    // The stand-in's per-minute 429 carries the real APIs' retry headers (claude's:
    // `x-should-retry: true`, `retry-after`, the `anthropic-ratelimit-*` buckets), so the CLI
    // retries it before giving up, as it would against the real API (measured: claude 2.1.294
    // asks 11 times over about 181 s, whatever `retry-after` says; codex 0.163.0 6 times over
    // about 14 s). It still ends `rate_limited`, retryable, and inside its timeout.
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert!(
        refused >= 2,
        "{flavor} retried the per-minute 429 ({refused} answered 429): {result}"
    );
    if flavor == "codex" {
        codex_refused_logins_are_named();
    } else {
        let (result, logs, _) = cook_with_mode(flavor, "unauthorized");
        refused_login_is_named(&result, &logs);
    }
    // Last: claude's used-up 5-hour window reads `usage_exhausted` only once its limit is read
    // from the structured fields (`api_error: usage_limit_reached`, issue 16's findings).
    let (result, logs, _) = cook_with_mode(flavor, "usage_limit");
    assert_eq!(result["status"], "rate_limited", "{result}\n{logs}");
    assert_eq!(
        result["limit_kind"], "usage_exhausted",
        "a used-up plan: {result}\n{logs}"
    );
}

/// codex refreshes its token after a 401 and reports its login failing in words that depend on
/// what the token endpoint answers (issue 25; measured: a 401 there is final, a 404 or a 400 is
/// retried five times, `Reconnecting... n/5 (…)`, before its last `error`). Each is named by
/// codex's final word. The 401 at the `POST` (the upgrade refused), the others at the upgrade.
fn codex_refused_logins_are_named() {
    for (refresh, transport, words) in [
        (401, "sse", "Your access token could not be refreshed"),
        (404, "websocket", "Failed to refresh token: 404 Not Found"),
        (400, "websocket", "Failed to refresh token: 400 Bad Request"),
    ] {
        let extra = json!({"refresh": refresh, "transport": transport});
        let (result, logs, statuses) = cook_with("codex", "unauthorized", &extra);
        assert!(
            statuses.contains(&refresh),
            "the refresh was answered {refresh}: {statuses:?}"
        );
        refused_login_is_named(&result, &logs);
        assert!(
            result["login_failure"]
                .as_str()
                .is_some_and(|s| s.starts_with(words)),
            "named by codex's final word, `{words}…`: {result}"
        );
    }
}

/// A refused login: a failed run, no limit, the failure named in the CLI's words.
fn refused_login_is_named(result: &Value, logs: &str) {
    assert_eq!(
        result["status"], "non_zero_exit",
        "a refused login: {result}\n{logs}"
    );
    assert!(
        result.get("limit_kind").is_none_or(Value::is_null),
        "{result}"
    );
    assert!(
        result["login_failure"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "a refused login is named as one, in the CLI's words: {result}\n{logs}"
    );
}

#[test]
fn claude_limits_and_a_refused_login_are_classified() {
    limits_are_classified("claude");
}

#[test]
fn codex_limits_and_a_refused_login_are_classified() {
    limits_are_classified("codex");
}

/// A budget enforced live on the real claude: the stand-in reports 40 000 input tokens on its
/// first reply, the participant's cap is 10 000, so the cell is stopped while the CLI still runs
/// (a program that ended by itself keeps its own outcome), ends `budget_exhausted`, unscored,
/// with the spend read from the CLI's stream.
#[test]
fn claude_is_stopped_live_at_its_budget() {
    let clis = prepare();
    let yaml = brief("claude").replace(
        "  - {name: alice, flavor: claude}",
        "  - {name: alice, flavor: claude, budget: {tokens: 10000}}",
    );
    let cook = TestCook::new("real-claude-budget", &yaml);
    let stand_in = StandIn::start(&cook, clis, "claude-budget");
    let (home, _) = logins();
    stand_in.script(
        &json!({"mode": "ok", "token": CLAUDE_TOKEN, "command": PARTICIPANT_COMMAND,
                            "usage": {"input_tokens": 40000, "output_tokens": 5}}),
    );
    let started = std::time::Instant::now();
    let output = run(&cook, clis, &stand_in, home.path(), &["cook", cook.name()]);
    let seconds = started.elapsed().as_secs();
    let result = cook.json("RUN_RESULT.json")["participants"][0].clone();
    let logs = format!("{}\n{}", show(&output), cell_logs(&cook, "alice"));
    assert_eq!(result["status"], "budget_exhausted", "{result}\n{logs}");
    assert!(
        result["spend"]["tokens"].as_u64().unwrap_or(0) >= 40_000,
        "the spend read from the CLI's own stream: {result}"
    );
    assert!(
        seconds < 200,
        "stopped well before its 240 s timeout ({seconds} s)"
    );
    drop(stand_in);
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// What the participant's tool call runs inside a Harbor task: one file, by a relative path,
/// so it lands only if the CLI works in the task's `workdir`.
const TASK_COMMAND: &str = "printf 'hello from the stand-in\\n' > hello.txt";

/// A Harbor task in exactly Harbor's format whose environment starts `FROM` the suite's
/// Debian base (no registry is reachable here): the agent must leave `hello.txt` in `/app`;
/// test.sh writes reward 1 when it says the right thing, else 0.
fn hello_task(dir: &Path, base: &str) -> std::path::PathBuf {
    let task = dir.join("hello-task");
    let files = [
        (
            "task.toml",
            "version = \"1.0\"\n\n[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 240.0\n\n[environment]\nallow_internet = false\ncpus = 1\nmemory = \"1G\"\nstorage = \"2G\"\n".to_owned(),
        ),
        (
            "instruction.md",
            "Write the line `hello from the stand-in` to `hello.txt` in your working folder.\n"
                .to_owned(),
        ),
        ("environment/Dockerfile", format!("FROM {base}\nWORKDIR /app\n")),
        (
            "tests/test.sh",
            "#!/bin/bash\nmkdir -p /logs/verifier\nif [ \"$(cat /app/hello.txt 2>/dev/null)\" = 'hello from the stand-in' ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n".to_owned(),
        ),
    ];
    for (path, text) in files {
        let path = task.join(path);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, text).unwrap();
    }
    task
}

/// The real CLI inside a Harbor task's own environment (issue 26): layered on the task's image,
/// it reads `instruction.md`, works in `/app` through its own tool call, reaches only its
/// vendor's API through its cell's proxy with its read-only login, and the task's verifier
/// gives the reward from what it left.
fn solves_a_harbor_task(flavor: &str) {
    let clis = prepare();
    let scratch = tempfile::tempdir().unwrap();
    let task = hello_task(scratch.path(), &clis.base);
    let cook = TestCook::empty(&format!("real-{flavor}-harbor"));
    let stand_in = StandIn::start(&cook, clis, &format!("{flavor}-harbor"));
    let (home, secrets) = logins();
    let token = if flavor == "claude" {
        CLAUDE_TOKEN.to_owned()
    } else {
        secrets[1].clone()
    };
    let participants = format!("alice={flavor}");
    let args = [
        "new",
        cook.name(),
        "--from",
        task.to_str().unwrap(),
        "--participants",
        &participants,
    ];
    let made = run(&cook, clis, &stand_in, home.path(), &args);
    assert_eq!(made.status.code(), Some(0), "{}", show(&made));
    // The stand-in listens on a private address: the cook lets the proxy reach it, as the
    // suite's other briefs do.
    let yaml = cook.dir().join("brief.yaml");
    let text = fs_err::read_to_string(&yaml).unwrap();
    assert!(text.contains("network: {mode: allowlist}"), "{text}");
    fs_err::write(
        &yaml,
        text.replace(
            "network: {mode: allowlist}",
            "network: {mode: allowlist, allow_private: true}",
        ),
    )
    .unwrap();
    stand_in.script(&json!({"mode": "ok", "token": token, "command": TASK_COMMAND}));
    let (output, _) = run_scanning(
        command(&cook, clis, &stand_in, home.path(), &["cook", cook.name()]),
        &cook.dir(),
        &secrets,
    );
    let verdict: Value = fs_err::read(cook.dir().join("verification/alice/reward.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    assert_eq!(
        verdict["reward"].as_f64(),
        Some(1.0),
        "cook: {}\n{}\nstand-in saw: {:?}",
        show(&output),
        cell_logs(&cook, "alice"),
        stand_in.requests()
    );
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        !stand_in.requests().is_empty(),
        "the CLI talked to the stand-in"
    );
    // The jury gets what the agent said when it stopped (the stand-in's last words), beside
    // what it changed.
    let said = cook.text("judging/_inbox/alice/out/FINAL_MESSAGE.md");
    assert!(
        said.contains("a claim, not evidence") && said.trim_end().ends_with("Done."),
        "{said}"
    );
    let hosts = allowed_hosts(&cook, "alice");
    for host in &hosts {
        assert!(
            multicooker::flavor::api_hosts(flavor).contains(&host.as_str()),
            "the proxy allowed only {flavor}'s hosts: {hosts:?}"
        );
    }
    drop(stand_in);
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn claude_solves_a_harbor_task_in_its_own_environment() {
    solves_a_harbor_task("claude");
}

#[test]
fn codex_solves_a_harbor_task_in_its_own_environment() {
    solves_a_harbor_task("codex");
}
