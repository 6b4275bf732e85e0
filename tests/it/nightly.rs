//! Nightly comparisons against the real engine: every brief × repeat cooked, judged and folded
//! into history with intervals; what changed between nights; unequal arms flagged; one night
//! at a time; a night cut short resumed without re-running cells that ended ok; a webhook that
//! carries the summary and no secret.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{JUDGE_BRIEF, TestCook, show};

struct Setup {
    cook: TestCook,
    config: PathBuf,
}

fn template(dir: &Path, name: &str) {
    let brief = dir.join(name);
    fs_err::create_dir_all(brief.join("raw")).unwrap();
    fs_err::write(
        brief.join("brief.yaml"),
        "name: t\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n  - {name: x, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 60}\n    - {id: clarity, weight: 40}\n",
    )
    .unwrap();
    fs_err::write(brief.join("BRIEF.md"), format!("# {name}\n\nSay hello.\n")).unwrap();
    fs_err::write(brief.join("JUDGE_BRIEF.md"), JUDGE_BRIEF).unwrap();
}

fn setup(tag: &str, participants: &str, extra: &str) -> Setup {
    let cook = TestCook::empty(tag);
    let root = cook.root().to_path_buf();
    template(&root, "brief-a");
    template(&root, "brief-b");
    let config = root.join("nightly.yaml");
    write_config(&config, &root, participants, extra);
    Setup { cook, config }
}

fn write_config(config: &Path, root: &Path, participants: &str, extra: &str) {
    fs_err::write(
        config,
        format!(
            "name: nt\nbriefs: [brief-a, brief-b]\nparticipants:\n{participants}judges:\n  - {{name: j1, flavor: dummy}}\n  - {{name: j2, flavor: dummy}}\nrepeats: 2\nhistory: {}/h.sqlite\ncooks_root: {}\njudging: {{policy: allow_self}}\n{extra}",
            root.display(),
            root.display()
        ),
    )
    .unwrap();
}

const TWO: &str = "  - {name: a, flavor: dummy, model: \"quality:4\"}\n  - {name: b, flavor: dummy, model: \"quality:2\"}\n";

impl Setup {
    fn nightly(&self, night: &str) -> std::process::Output {
        self.cook
            .run_args(&["nightly", self.config.to_str().unwrap(), "--night", night])
    }

    fn history(&self) -> Value {
        let output = self
            .cook
            .run_args(&["history", self.config.to_str().unwrap(), "--json"]);
        assert_eq!(output.status.code(), Some(0), "{}", show(&output));
        serde_json::from_slice(&output.stdout).unwrap()
    }
}

/// Accepts one HTTP request and returns its body.
fn webhook() -> (String, std::thread::JoinHandle<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let mut stream = stream;
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
        String::from_utf8(body).unwrap()
    });
    (url, handle)
}

#[test]
fn a_night_cooks_every_brief_and_repeat_and_history_shows_trends_and_changes() {
    let (url, hook) = webhook();
    let setup = setup("nightly", TWO, &format!("webhook: {{url: \"{url}\"}}\n"));
    let output = setup.nightly("2026-11-21");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let body: Value = serde_json::from_str(&hook.join().unwrap()).unwrap();
    assert_eq!(body["night"], "2026-11-21");
    assert_eq!(body["ranking"][0]["participant"], "a");
    let text = body.to_string();
    assert!(
        !text.contains(".auth") && !text.contains("_mapping") && !text.contains("token"),
        "{text}"
    );
    let cooks: Vec<_> = fs_err::read_dir(setup.cook.root())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("summary.json").is_file())
        .collect();
    assert_eq!(cooks.len(), 4, "2 briefs × 2 repeats");

    let history = setup.history();
    let night = &history["nights"][0];
    assert_eq!(night["status"], "ok");
    assert_eq!(night["comparable"], true);
    assert_eq!(night["method"], "additive+cluster_jackknife_t");
    let a = &night["participants"][0];
    assert_eq!(a["participant"].as_str(), Some("a"));
    assert!((a["estimate"].as_f64().unwrap() - 80.0).abs() < 1e-9, "{a}");
    // The dummy scores the same on every brief: no spread, so no interval is claimed (a
    // zero-width one would claim certainty) and no pair is tested.
    assert_eq!(a["lo"], Value::Null, "{a}");
    assert_eq!(
        night["seed"].as_str().map(|s| s.parse::<u64>().is_ok()),
        Some(true)
    );
    assert!(
        a["image"].as_str().unwrap().contains("@sha256:"),
        "the engine's image id is on record: {a}"
    );
    assert!((night["participants"][1]["estimate"].as_f64().unwrap() - 40.0).abs() < 1e-9);
    assert_eq!(night["tied_groups"], Value::Null);

    fs_err::write(
        setup.cook.root().join("brief-b/BRIEF.md"),
        "# brief-b\n\nSay hello twice.\n",
    )
    .unwrap();
    let again = setup.nightly("2026-11-22");
    assert_eq!(again.status.code(), Some(0), "{}", show(&again));
    let history = setup.history();
    let changes = history["nights"][1]["changes"].as_array().unwrap();
    assert!(
        changes
            .iter()
            .any(|c| c["kind"] == "brief" && c["to"].as_str().unwrap().starts_with("brief-b@")),
        "{changes:?}"
    );
    assert!(
        !changes
            .iter()
            .any(|c| c["kind"] == "brief" && c["to"].as_str().unwrap().starts_with("brief-a@"))
    );
    let page = setup.cook.root().join("history.html");
    let html = setup.cook.run_args(&[
        "history",
        setup.config.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(html.status.code(), Some(0), "{}", show(&html));
    assert!(fs_err::read_to_string(&page).unwrap().contains("<polyline"));
    let log = fs_err::read_to_string(setup.cook.root().join("h.log.jsonl")).unwrap();
    assert!(
        log.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "JSON lines"
    );
    assert!(log.contains("\"event\":\"night.finished\""));
    assert!(
        setup.cook.leftovers_under_root().is_empty(),
        "{:?}",
        setup.cook.leftovers_under_root()
    );
}

#[test]
fn unequal_arms_are_not_comparable_and_two_nights_never_overlap() {
    let arms = "  - {name: a, flavor: dummy, model: \"quality:4\", timeout_s: 30}\n  - {name: b, flavor: dummy, model: \"quality:2\"}\n";
    let setup = setup("unequal", arms, "");
    let lock = multicooker::state::RunLock::acquire_file(
        &setup.cook.root().join("h.lock"),
        "test",
        "nightly",
    )
    .unwrap();
    let busy = setup.nightly("2026-11-21");
    assert_eq!(busy.status.code(), Some(4), "{}", show(&busy));
    assert!(
        String::from_utf8_lossy(&busy.stderr).contains("is busy"),
        "{}",
        show(&busy)
    );
    drop(lock);
    let output = setup.nightly("2026-11-21");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("NOT COMPARABLE"),
        "{}",
        show(&output)
    );
    let night = &setup.history()["nights"][0];
    assert_eq!(night["comparable"], false);
    assert!(
        night["not_comparable_reasons"][0]
            .as_str()
            .unwrap()
            .contains("arms differ in limits"),
        "{night}"
    );
}

#[test]
fn a_night_cut_short_is_resumed_without_rerunning_cells_that_ended_ok() {
    let broken = "  - {name: a, flavor: dummy, model: \"quality:4\"}\n  - {name: b, flavor: dummy, model: \"exit:1\"}\n";
    let setup = setup("resumed", broken, "");
    let first = setup.nightly("2026-11-21");
    assert_eq!(first.status.code(), Some(3), "partial: {}", show(&first));
    let cook = setup.cook.root().join("20261121-nt-brief-a-r1");
    let before: Value =
        serde_json::from_str(&fs_err::read_to_string(cook.join("status.json")).unwrap()).unwrap();
    write_config(&setup.config, setup.cook.root(), TWO, "");
    let second = setup.nightly("2026-11-21");
    assert_eq!(second.status.code(), Some(0), "{}", show(&second));
    let after: Value =
        serde_json::from_str(&fs_err::read_to_string(cook.join("status.json")).unwrap()).unwrap();
    assert_eq!(
        after["cells"]["a"]["started_at"], before["cells"]["a"]["started_at"],
        "a ended ok and never ran again"
    );
    assert_eq!(after["cells"]["b"]["state"], "ok");
    let history = setup.history();
    assert_eq!(
        history["nights"].as_array().unwrap().len(),
        1,
        "the same night, stored once"
    );
    assert_eq!(history["nights"][0]["status"], "ok");
}

/// Issue 17: a night whose every cook is refused reads as failed, with the reason, in the
/// text and JSON of `nightly` and `history`, and `history` exits 1 when the latest night failed.
#[test]
fn a_failed_night_says_so_and_why_everywhere() {
    let setup = setup("nightly-failed", TWO, "");
    for brief in ["brief-a", "brief-b"] {
        // `clarity` is a rubric dimension the judging brief never names: lint refuses the cook.
        fs_err::write(
            setup.cook.root().join(brief).join("JUDGE_BRIEF.md"),
            "Score correctness from 0 to 5.\n",
        )
        .unwrap();
    }
    let output = setup.nightly("2026-11-23");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("night 2026-11-23 of `nt`: FAILED (no ranking)"),
        "{text}"
    );
    assert!(text.contains("  because cook `"), "{text}");
    assert!(
        text.contains("clarity"),
        "the reason names the problem: {text}"
    );
    assert!(!text.contains("tied groups:"), "{text}");

    let json = setup
        .cook
        .run_args(&["history", setup.config.to_str().unwrap(), "--json"]);
    assert_eq!(json.status.code(), Some(1), "{}", show(&json));
    let history: Value = serde_json::from_slice(&json.stdout).unwrap();
    let night = &history["nights"][0];
    assert_eq!(night["status"], "failed");
    let failures = night["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 4, "one line per refused cook: {failures:?}");
    let text = setup
        .cook
        .run_args(&["history", setup.config.to_str().unwrap()]);
    assert_eq!(text.status.code(), Some(1), "{}", show(&text));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("2026-11-23 FAILED (no ranking)"), "{text}");
    assert!(text.contains("because cook `"), "{text}");
    assert!(setup.cook.leftovers_under_root().is_empty());
}

/// Issue 14: a brief with hidden tests is verified in every cook of the night (the config's
/// `verify:` defaults apply), and the night keeps each participant's pass rate, pooled across
/// briefs, with its interval.
#[test]
fn a_night_verifies_briefs_with_hidden_tests_and_keeps_pooled_pass_rates() {
    let participants = "  - {name: a, flavor: dummy, model: \"quality:4,solve:42\"}\n  - {name: b, flavor: dummy, model: \"quality:2,solve:7\"}\n";
    let setup = setup(
        "nverify",
        participants,
        "verify: {image: dummy, timeout_s: 30}\n",
    );
    let hidden = setup.cook.root().join("brief-a/verify");
    fs_err::create_dir_all(&hidden).unwrap();
    fs_err::write(
        hidden.join("tests.json"),
        r#"{"tests": [{"name": "answer", "file": "answer.txt", "equals": "42"}, {"name": "result", "file": "RESULT.md", "exists": true}]}"#,
    )
    .unwrap();
    let output = setup.nightly("2026-11-20");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let history = setup.history();
    let rates = history["nights"][0]["pass_rates"]
        .as_array()
        .unwrap()
        .clone();
    let rate = |who: &str| {
        rates
            .iter()
            .find(|r| r["participant"] == who)
            .unwrap()
            .clone()
    };
    // Brief a, two repeats, two tests each: a passes 4 of 4, b 2 of 4; brief b has no tests.
    assert_eq!(
        (rate("a")["passed"].as_u64(), rate("a")["counted"].as_u64()),
        (Some(4), Some(4)),
        "{rates:?}"
    );
    assert_eq!(rate("b")["estimate"], 50.0, "{rates:?}");
    assert_eq!(
        (rate("b")["briefs"].as_u64(), rate("b")["method"].as_str()),
        (Some(1), Some("wilson"))
    );
    assert!(rate("b")["lo"].as_f64().unwrap() < 50.0 && rate("b")["hi"].as_f64().unwrap() > 50.0);
    let text = setup
        .cook
        .run_args(&["history", setup.config.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("hidden tests: a 100.0 %"),
        "{}",
        show(&text)
    );
    assert!(
        setup.cook.leftovers_under_root().is_empty(),
        "{:?}",
        setup.cook.leftovers_under_root()
    );
}
