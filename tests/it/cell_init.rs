//! Issue 21, the cell side: a cell's init is not its program's peer. Each test plays the hostile
//! cell with a dummy directive against the real engine: forged and half exit records, attempts
//! to freeze or kill init, and `mc-cell launch` used by a runner on hostile code under test.

use std::time::{Duration, Instant};

use multicooker::runtime::{LABEL_ROOT, Labels, ObjectRef, Runtime, Selector};
use multicooker::state::root_id;

use crate::common::cells::TestCell;
use crate::common::{TestCook, block_on, engine};

fn image() -> String {
    let context = multicooker::flavor::build_context("dummy", None).unwrap();
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
