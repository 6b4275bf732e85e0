//! Issue 21, the cell side: a cell's init is not its program's peer. Each test plays the hostile
//! cell with a dummy directive against the real engine: forged and half exit records, attempts
//! to freeze or kill init, and `mc-cell launch` used by a runner on hostile code under test.

use std::time::{Duration, Instant};

use multicooker::runtime::{LABEL_ROOT, Labels, ObjectRef, Runtime, Selector};
use multicooker::state::{Role, root_id};

use crate::common::cells::TestCell;
use crate::common::{TestCook, block_on, cell_name, dummy_brief, engine, show, signal};

fn image() -> String {
    let context =
        multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
            .unwrap();
    multicooker::flavor::base_tag("dummy", &context.digest)
}

fn cell(cook: &TestCook, tag: &str, model: &str, out: &std::path::Path) -> TestCell {
    TestCell::new(
        &format!("mc-init-{tag}-{}", std::process::id()),
        &image(),
        None,
        Labels::new(cook.name(), "participant").with(LABEL_ROOT, &root_id(cook.root())),
        model,
        out,
    )
}

async fn leftovers(runtime: &dyn Runtime, cook: &TestCook) -> Vec<ObjectRef> {
    let selector = Selector::cook(cook.name()).with(LABEL_ROOT, &root_id(cook.root()));
    runtime.list(&selector).await.unwrap()
}

/// Issue 21: a program wrote a fake `exit {"code":0}` record to /proc/1/fd/1 and its own
/// stdout and was read as `ok exit 0` while it went on to exit 3; a forged `oom:false` was
/// believed the same way; a cell could SIGSTOP, SIGKILL or ptrace its init.
#[test]
fn forged_records_are_text_and_init_cannot_be_traced_stopped_or_killed() {
    block_on(async {
        let runtime = engine().await;
        let cook = TestCook::empty("init-forge");
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("out");
        let model = "quality:3,forge-record,half-record,freeze-init,sleep:1,exit:3";
        let mut cell = cell(&cook, "forge", model, &out);
        cell.start(&runtime).await;
        let (record, _) = cell.finish_with_record(&runtime).await;
        assert_eq!(
            record["code"], 3,
            "the real exit, not the forged one: {record}"
        );
        assert_eq!(record["oom"], false);
        let probes = fs_err::read_to_string(out.join("PROBES.txt")).unwrap();
        for line in [
            "forge /proc/1/fd/1 denied",
            "freeze ptrace denied",
            "freeze sigstop denied",
            "freeze sigkill denied",
        ] {
            assert!(probes.contains(line), "`{line}` in {probes}");
        }
        assert!(leftovers(&runtime, &cook).await.is_empty());
    });
}

/// Issue 21, property 2's tool: code a runner starts with `mc-cell launch` runs as a third
/// uid, cannot write the runner's 0700 folder, cannot launch in turn, and the daemon it
/// leaves is dead when `launch` returns.
#[test]
fn launched_code_cannot_write_the_runners_folder_and_leaves_nothing_running() {
    block_on(async {
        let runtime = engine().await;
        let cook = TestCook::empty("init-launch");
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("out");
        let mut cell = cell(&cook, "launch", "quality:3,launch-attack", &out);
        cell.start(&runtime).await;
        let (code, _) = cell.finish(&runtime).await;
        assert_eq!(code, Some(0));
        let probes = fs_err::read_to_string(out.join("PROBES.txt")).unwrap();
        for line in [
            "runner uid 1000",
            "launch exit Some(0)",
            "probe uid 1001",
            "probe write denied",
            "probe nested launch refused",
            "daemon alive after launch false",
        ] {
            assert!(probes.contains(line), "`{line}` in {probes}");
        }
        assert!(
            probes.contains("probe daemon "),
            "a daemon was started: {probes}"
        );
        assert!(leftovers(&runtime, &cook).await.is_empty());
    });
}

/// Issue 21: a cell that froze its init (ptrace) outlived its deadline by 19 minutes once
/// multicooker was gone. Now nothing inside stops init: with nobody on the host watching, the
/// cell is gone by its deadline.
#[test]
fn a_cell_that_attacks_its_init_still_ends_at_its_deadline_with_nobody_watching() {
    block_on(async {
        let runtime = engine().await;
        let cook = TestCook::empty("init-deadline");
        let work = tempfile::tempdir().unwrap();
        let mut cell = cell(
            &cook,
            "deadline",
            "quality:3,freeze-init,sleep:600",
            &work.path().join("out"),
        );
        cell.spec.init.timeout = Some(Duration::from_secs(300));
        cell.spec.init.deadline = Duration::from_secs(8);
        let started = Instant::now();
        cell.start(&runtime).await;
        let selector = Selector::cook(cook.name()).with(LABEL_ROOT, &root_id(cook.root()));
        while !runtime.running(&selector).await.unwrap().is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the cell outlived its 8 s deadline"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        runtime
            .remove(&ObjectRef::cell(&cell.spec.name))
            .await
            .unwrap();
        assert!(leftovers(&runtime, &cook).await.is_empty());
    });
}

/// Issue 21: after a SIGKILL of multicooker, the engine's own `json-file` log of a cell kept
/// what the cell printed (a raw access token) on the host until `clean`. Cells now log to the
/// `none` driver and their output is read through the attach API: the engine has no copy.
#[test]
fn after_a_sigkill_the_engine_keeps_no_copy_of_what_a_cell_printed() {
    let secret = "mc-secret-token-4242";
    let model = format!("quality:3,say:{secret},warn:{secret},sleep:60");
    let cook = TestCook::new("init-nolog", &dummy_brief(&[("alpha", &model)], ""));
    let mut child = cook
        .command(&["cook", cook.name(), "--skip-sandbox-check"])
        .env("MULTICOOKER_CELL_GRACE_S", "5")
        .spawn()
        .unwrap();
    cook.wait_for_cell_state("alpha", "running", Duration::from_secs(120));
    let log = cook.dir().join("logs/alpha/dummy.stdout.log");
    let started = Instant::now();
    while !fs_err::read_to_string(&log).is_ok_and(|t| t.contains(secret)) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the host's own log gets the output through the attach API"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    signal(child.id(), "KILL");
    child.wait().unwrap();
    let cell = cell_name(&cook, Role::Participant, "alpha");
    let (driver, logs) = block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        let inspected = docker.inspect_container(&cell, None).await.unwrap();
        let driver = inspected
            .host_config
            .and_then(|h| h.log_config)
            .and_then(|l| l.typ);
        let options = bollard::query_parameters::LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .build();
        let mut stream = docker.logs(&cell, Some(options));
        let mut seen = String::new();
        while let Some(item) = futures_util::StreamExt::next(&mut stream).await {
            match item {
                Ok(output) => seen.push_str(&output.to_string()),
                Err(e) => {
                    seen.push_str(&format!("[error: {e}]"));
                    break;
                }
            }
        }
        (driver, seen)
    });
    assert_eq!(driver.as_deref(), Some("none"));
    assert!(!logs.contains(secret), "the engine kept: {logs}");
    let cleaned = cook.run_args(&["clean", cook.name()]);
    assert_eq!(cleaned.status.code(), Some(0), "{}", show(&cleaned));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 21: run as root, cells ran as uid 1000, an unrelated host account that could read a
/// running cell through `/proc/<pid>/root`. A cell identity the host uses is refused naming
/// who uses it; the default is an unused pair, shown by `doctor`.
#[test]
fn a_cell_identity_a_host_account_uses_is_refused_and_doctor_shows_the_default() {
    let passwd = fs_err::read_to_string("/etc/passwd").unwrap();
    let (name, uid) = passwd
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            Some((f.first()?.to_string(), f.get(2)?.parse::<u32>().ok()?))
        })
        .find(|(_, uid)| *uid != 0)
        .expect("a host account other than root");
    let cook = TestCook::new("init-ids", &dummy_brief(&[("alpha", "quality:3")], ""));
    let refused = cook
        .command(&["cook", cook.name(), "--skip-sandbox-check"])
        .env("MULTICOOKER_HARDENING_USER", format!("{uid}:{uid}"))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", show(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!("uid {uid} is used by host account `{name}`")),
        "{stderr}"
    );
    assert!(!cook.dir().join("RUN_RESULT.json").exists());
    let doctor = cook
        .command(&["doctor", "--flavors", "dummy", "--json"])
        .env_remove("MULTICOOKER_HARDENING_USER")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let line = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["check"].as_str())
        .find(|c| c.starts_with("cells run as "))
        .unwrap_or_default()
        .to_owned();
    assert!(
        line.ends_with("ids no host account, group or process uses"),
        "{line}"
    );
    let uid: u32 = line["cells run as ".len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        !passwd
            .lines()
            .any(|l| l.split(':').nth(2) == Some(&uid.to_string()))
    );
    assert!(cook.leftovers().is_empty());
}

/// Issue 21: a half record over 16 KiB without a newline made the host's reader give up for
/// good: the cell then spent 200,000 tokens against a 20,000 cap, recorded spend 0, empty log.
/// Now the half record is text and the spend after it is metered: the cell stops at its cap.
#[test]
fn a_half_record_does_not_blind_the_meter_and_the_cell_stops_at_its_cap() {
    let brief = "name: t\ntimeout_s: 120\nparticipants:\n  - {name: halfer, flavor: dummy, model: \"quality:5,half-record,burn:4000/0.2\", budget: {tokens: 20000}}\n  - {name: plain, flavor: dummy, model: \"quality:3,half-record,usage:500\"}\njudges: []\n";
    let cook = TestCook::new("init-half", brief);
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let run = cook.json("RUN_RESULT.json");
    let cell = |name: &str| {
        run["participants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap()
    };
    let halfer = cell("halfer");
    assert_eq!(halfer["status"], "budget_exhausted", "{halfer}");
    let spent = halfer["spend"]["tokens"].as_u64().unwrap();
    assert!((20_000..40_000).contains(&spent), "spent {spent}");
    let plain = cell("plain");
    assert_eq!(
        (&plain["status"], &plain["spend"]["tokens"]),
        (&"ok".into(), &500.into()),
        "{plain}"
    );
    let log = cook.text("logs/plain/dummy.stdout.log");
    assert!(
        log.contains("[mc-cell] exit {\"code\":0,\"pad\":\"xxxx")
            && log.contains("\"input_tokens\":500"),
        "the half record is text, and the usage line after it is in the log: {}",
        &log[log.len().saturating_sub(300)..]
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 21: `status` said a cell "would end at its deadline" while it had outlived it by 19
/// minutes. The engine now knows each cell's deadline (a label set when it is created), and a
/// running cell past it is named as overdue; one within it is not.
#[test]
fn a_cell_past_its_deadline_is_named_overdue_and_one_within_it_is_not() {
    block_on(async {
        let runtime = engine().await;
        let cook = TestCook::empty("init-overdue");
        let work = tempfile::tempdir().unwrap();
        let past = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            - 60;
        // The label of an init that should have ended its cell a minute ago.
        let mut late = cell(&cook, "late", "quality:3,sleep:600", &work.path().join("a"));
        late.spec.labels = late
            .spec
            .labels
            .clone()
            .with(multicooker::runtime::LABEL_DEADLINE, &past.to_string());
        let mut fine = cell(&cook, "fine", "quality:3,sleep:600", &work.path().join("b"));
        late.start(&runtime).await;
        fine.start(&runtime).await;
        let selector = Selector::cook(cook.name()).with(LABEL_ROOT, &root_id(cook.root()));
        let overdue = runtime.overdue(&selector).await.unwrap();
        assert_eq!(overdue, [late.spec.name.clone()]);
        for cell in [&late, &fine] {
            runtime
                .remove(&ObjectRef::cell(&cell.spec.name))
                .await
                .unwrap();
        }
        assert!(leftovers(&runtime, &cook).await.is_empty());
    });
}

/// Issue 21: a forged `oom:false` record was believed. A program that forges one and then
/// runs out of memory reads as what init saw: killed, with the OOM counted.
#[test]
fn a_forged_no_oom_record_does_not_hide_an_oom_kill() {
    block_on(async {
        let runtime = engine().await;
        let cook = TestCook::empty("init-oom");
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("out");
        let mut cell = cell(&cook, "oom", "quality:3,forge-record,oom:1G,exit:0", &out);
        cell.start(&runtime).await;
        let (record, _) = cell.finish_with_record(&runtime).await;
        assert_eq!(record["oom"], true, "{record}");
        assert_eq!(record["signal"], 9, "{record}");
        assert!(record["code"].is_null(), "{record}");
        assert!(leftovers(&runtime, &cook).await.is_empty());
    });
}
