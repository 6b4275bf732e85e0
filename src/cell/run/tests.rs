//! Orchestration logic on the fake runtime: timeouts, classification, cancellation, staging,
//! collection and teardown, in real time with short durations (the log pump writes files on
//! blocking threads, which a paused clock would race). Real containers are covered by tests/it.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::brief::Profile;
use crate::cell::names::Names;
use crate::cell::plan::{CellUser, PlanContext};
use crate::runtime::fake::{FakeCell, FakeRuntime};
use crate::state::CookPaths;

struct Recorder {
    started: Mutex<Vec<String>>,
}

impl CellHooks for Recorder {
    type Output = (String, CellOutcome);
    fn starting(&self, _: &CellPlan) {}
    fn started(&self, plan: &CellPlan, _: &str) {
        self.started.lock().unwrap().push(plan.actor.clone());
    }
    fn finished(&self, plan: &CellPlan, outcome: CellOutcome) -> Self::Output {
        (plan.actor.clone(), outcome)
    }
}

fn plans(dir: &Path, names: &[&str], timeout_s: u64) -> Vec<CellPlan> {
    let yaml = format!(
        "name: t\ntimeout_s: {timeout_s}\nparticipants:\n{}",
        names
            .iter()
            .map(|n| format!("  - {{name: {n}, flavor: dummy}}\n"))
            .collect::<String>()
    );
    let brief = crate::brief::parse(Path::new("b.yaml"), yaml.as_bytes())
        .unwrap()
        .brief;
    let paths = CookPaths::new(dir.join("251122-t"));
    let engine_names = Names::for_cook(paths.name(), "r00t");
    let context = PlanContext {
        paths: &paths,
        names: &engine_names,
        brief: &brief,
        user: CellUser::resolve(Some("1000:1000")).unwrap(),
        profile: Profile::Medium,
        run_id: "run",
        grace: crate::cell::plan::CELL_GRACE,
    };
    let settings = crate::settings::test_run_settings();
    brief
        .participants
        .iter()
        .map(|p| crate::cook::plan::participant_plan(&context, p, "go".into(), &settings))
        .collect()
}

async fn run(
    runtime: &Arc<FakeRuntime>,
    plans: Vec<CellPlan>,
    cancel: CancellationToken,
) -> Vec<(String, CellOutcome)> {
    run_budgeted(
        runtime,
        plans,
        cancel,
        crate::cell::budget::Budgets::default(),
    )
    .await
}

async fn run_with(
    runtime: &Arc<FakeRuntime>,
    plans: Vec<CellPlan>,
    budgets: crate::cell::budget::Budgets,
) -> Vec<(String, CellOutcome)> {
    run_budgeted(runtime, plans, CancellationToken::new(), budgets).await
}

async fn run_budgeted(
    runtime: &Arc<FakeRuntime>,
    plans: Vec<CellPlan>,
    cancel: CancellationToken,
    budgets: crate::cell::budget::Budgets,
) -> Vec<(String, CellOutcome)> {
    run_full(runtime, plans, (cancel, budgets), images_ready_now()).await
}

async fn run_full(
    runtime: &Arc<FakeRuntime>,
    plans: Vec<CellPlan>,
    (cancel, budgets): (CancellationToken, crate::cell::budget::Budgets),
    images: ImagesReady,
) -> Vec<(String, CellOutcome)> {
    let ledger = Arc::new(Ledger::new(false));
    let hooks = Arc::new(Recorder {
        started: Mutex::new(Vec::new()),
    });
    let shared: crate::runtime::SharedRuntime = runtime.clone();
    let outcomes = run_cells(
        &shared,
        &ledger,
        &hooks,
        plans,
        &RunOptions {
            cancel,
            max_parallel: 4,
            images,
            egress: None,
            redactor: Arc::default(),
            serial: Vec::new(),
            user: CellUser::resolve(Some("1000:1000")).unwrap(),
            home: std::env::temp_dir(),
            budgets,
        },
    )
    .await;
    assert!(
        ledger.outstanding().is_empty(),
        "every cell is removed once it ends"
    );
    outcomes
}

/// Issue 25: one flavor's failed build made every cell of the phase `start_failed` with that
/// error (one shared build future). Each cell now waits on its own image's build: the healthy
/// cell runs, even though its image is built after the other failed.
#[tokio::test]
async fn a_cell_waits_on_its_own_image_and_another_images_failed_build_never_stops_it() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let mut plans = plans(tmp.path(), &["healthy", "broken"], 60);
    plans[0].spec.image = "mc-healthy:1".into();
    plans[1].spec.image = "mc-broken:1".into();
    runtime.script(
        "mc-251122-t-r00t-p-healthy",
        FakeCell {
            runs_for: Duration::from_millis(5),
            ..FakeCell::default()
        },
    );
    let build = |after_ms: u64, result: Result<(), Arc<String>>| -> ImageBuild {
        async move {
            tokio::time::sleep(Duration::from_millis(after_ms)).await;
            result
        }
        .boxed()
        .shared()
    };
    let images = ImagesReady::new(
        [
            ("mc-healthy:1".to_owned(), build(300, Ok(()))),
            (
                "mc-broken:1".to_owned(),
                build(10, Err(Arc::new("COPY missing-file: not found".into()))),
            ),
        ]
        .into(),
    );
    let outcomes = run_full(
        &runtime,
        plans,
        (
            CancellationToken::new(),
            crate::cell::budget::Budgets::default(),
        ),
        images.clone(),
    )
    .await;
    let (healthy, broken) = (&outcomes[0].1, &outcomes[1].1);
    assert_eq!(healthy.state, CellState::Ok, "{healthy:?}");
    assert_eq!(broken.state, CellState::StartFailed);
    assert_eq!(
        broken.error.as_deref(),
        Some("image build failed: COPY missing-file: not found"),
        "its own image's error"
    );
    assert_eq!(
        images.all().await.unwrap_err().as_str(),
        "COPY missing-file: not found",
        "the phase still reports the failed build"
    );
}

/// A gate (a Harbor task's verifier user, resolved in its built environment image) runs after
/// the builds, and its failure stops every cell before it is created, whatever its image.
#[tokio::test]
async fn a_failed_gate_stops_every_cell_before_it_is_created() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let mut plans = plans(tmp.path(), &["env", "other"], 60);
    plans[0].spec.image = "mc-env:1".into();
    plans[1].spec.image = "mc-other:1".into();
    let finished = Arc::new(Mutex::new(false));
    let build: ImageBuild = {
        let finished = finished.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            *finished.lock().unwrap() = true;
            Ok(())
        }
        .boxed()
        .shared()
    };
    let gate: ImageBuild = {
        let (build, finished) = (build.clone(), finished.clone());
        async move {
            build.await?;
            assert!(
                *finished.lock().unwrap(),
                "the gate runs once the image is finished"
            );
            Err(Arc::new("no user `ghost`".to_owned()))
        }
        .boxed()
        .shared()
    };
    let images = ImagesReady::new([("mc-env:1".to_owned(), build)].into()).gated(gate);
    let outcomes = run_full(
        &runtime,
        plans,
        (
            CancellationToken::new(),
            crate::cell::budget::Budgets::default(),
        ),
        images.clone(),
    )
    .await;
    for (actor, outcome) in &outcomes {
        assert_eq!(outcome.state, CellState::StartFailed, "{actor}");
        assert_eq!(
            outcome.error.as_deref(),
            Some("image build failed: no user `ghost`"),
            "{actor}"
        );
    }
    assert!(
        !runtime
            .created()
            .iter()
            .any(|o| o.kind == crate::runtime::ObjectKind::Cell),
        "no cell was created: {:?}",
        runtime.created()
    );
    assert_eq!(images.all().await.unwrap_err().as_str(), "no user `ghost`");
}

#[tokio::test]
async fn each_cell_is_classified_and_one_failure_stops_no_other() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let prefix = "mc-251122-t-r00t-p-";
    runtime.script(
        &format!("{prefix}ok"),
        FakeCell {
            runs_for: Duration::from_millis(5),
            ..FakeCell::default()
        },
    );
    runtime.script(
        &format!("{prefix}fails"),
        FakeCell {
            code: 3,
            ..FakeCell::default()
        },
    );
    runtime.script(
        &format!("{prefix}oom"),
        FakeCell {
            code: 137,
            oom_killed: true,
            ..FakeCell::default()
        },
    );
    runtime.script(
        &format!("{prefix}limited"),
        FakeCell {
            stdout: "rate limit exceeded, retry after 9".into(),
            ..FakeCell::default()
        },
    );
    runtime.script(
        &format!("{prefix}broken"),
        FakeCell {
            fail_create: true,
            ..FakeCell::default()
        },
    );
    let outcomes = run(
        &runtime,
        plans(tmp.path(), &["ok", "fails", "oom", "limited", "broken"], 60),
        CancellationToken::new(),
    )
    .await;
    let states: Vec<(&str, CellState, Option<i64>)> = outcomes
        .iter()
        .map(|(a, o)| (a.as_str(), o.state, o.exit_code))
        .collect();
    assert_eq!(
        states,
        [
            ("ok", CellState::Ok, Some(0)),
            ("fails", CellState::NonZeroExit, Some(3)),
            ("oom", CellState::OomKilled, Some(137)),
            ("limited", CellState::RateLimited, Some(0)),
            ("broken", CellState::StartFailed, None),
        ]
    );
    assert_eq!(outcomes[3].1.rate_limit.as_ref().unwrap().retry_after_s, 9);
    assert!(
        outcomes[4]
            .1
            .error
            .as_ref()
            .unwrap()
            .contains("scripted failure")
    );
}

#[tokio::test]
async fn a_cell_past_its_timeout_is_killed_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    runtime.script(
        "mc-251122-t-r00t-p-slow",
        FakeCell {
            runs_for: Duration::from_secs(3600),
            ..FakeCell::default()
        },
    );
    let outcomes = run(
        &runtime,
        plans(tmp.path(), &["slow"], 1),
        CancellationToken::new(),
    )
    .await;
    let outcome = &outcomes[0].1;
    assert_eq!(outcome.state, CellState::TimedOut);
    assert!(outcome.timed_out);
    assert_eq!(
        runtime.killed(),
        ["mc-251122-t-r00t-p-slow"],
        "killed after its output was collected"
    );
    assert!(
        runtime
            .removed()
            .contains(&"mc-251122-t-r00t-p-slow".to_owned())
    );
}

#[tokio::test]
async fn cancelling_kills_running_cells_and_starts_no_new_one() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    runtime.script(
        "mc-251122-t-r00t-p-a",
        FakeCell {
            runs_for: Duration::from_secs(600),
            ..FakeCell::default()
        },
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.cancel();
    });
    let outcomes = run(&runtime, plans(tmp.path(), &["a"], 60), cancel.clone()).await;
    assert_eq!(outcomes[0].1.state, CellState::Cancelled);
    assert_eq!(runtime.killed(), ["mc-251122-t-r00t-p-a"]);

    let runtime = Arc::new(FakeRuntime::default());
    let outcomes = run(&runtime, plans(tmp.path(), &["b"], 60), cancel).await;
    assert_eq!(outcomes[0].1.state, CellState::Cancelled);
    assert!(
        runtime.created().is_empty(),
        "a cancelled run creates nothing"
    );
}

#[tokio::test]
async fn inputs_and_the_go_file_go_in_as_one_upload_and_the_output_comes_back_through_collect() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(4);
    header.set_mode(0o644);
    tar.append_data(&mut header, "out/RESULT.md", &b"done"[..])
        .unwrap();
    let mut link = tar::Header::new_gnu();
    link.set_entry_type(tar::EntryType::Symlink);
    link.set_size(0);
    tar.append_link(&mut link, "out/mapping", "../../judging/_mapping.json")
        .unwrap();
    runtime.script(
        "mc-251122-t-r00t-p-a",
        FakeCell {
            runs_for: Duration::from_millis(5),
            collected: tar.into_inner().unwrap(),
            ..FakeCell::default()
        },
    );
    let outcomes = run(
        &runtime,
        plans(tmp.path(), &["a"], 60),
        CancellationToken::new(),
    )
    .await;
    let outcome = &outcomes[0].1;
    assert_eq!(outcome.state, CellState::Ok);
    let targets: Vec<String> = runtime.staged().into_iter().map(|(_, t, _)| t).collect();
    assert_eq!(
        targets,
        ["/work"],
        "one upload: the inputs, the go file as its last entry (issue 28)"
    );
    let out = tmp.path().join("251122-t/work/a/out");
    assert_eq!(
        std::fs::read_to_string(out.join("RESULT.md")).unwrap(),
        "done"
    );
    assert!(!out.join("mapping").exists(), "a link is never recreated");
    assert_eq!(outcome.collected[0].1.copy.skipped[0].path, "mapping");
    let spec = runtime.spec("mc-251122-t-r00t-p-a").unwrap();
    assert!(spec.init.hold && spec.init.wait_for_go);
    let areas: Vec<&str> = spec.areas.iter().map(|a| a.target.as_str()).collect();
    assert_eq!(
        areas,
        ["/work", "/work/out"],
        "no control area: a participant's init serves no launch"
    );
}

/// Issue 22: a node lost while a cell's output was collected (after init's exit record) left
/// the cell `ok` with a collect error, sealed and judged on half an output. It is `node_lost`:
/// unscored, named with its node, run again.
#[tokio::test]
async fn a_node_lost_during_collect_ends_the_cell_node_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(4096);
    header.set_mode(0o644);
    tar.append_data(&mut header, "out/RESULT.md", &[b'x'; 4096][..])
        .unwrap();
    runtime.script(
        "mc-251122-t-r00t-p-a",
        FakeCell {
            runs_for: Duration::from_millis(5),
            collected: tar.into_inner().unwrap(),
            lost_in_collect: Some("n2".into()),
            ..FakeCell::default()
        },
    );
    let outcomes = run(
        &runtime,
        plans(tmp.path(), &["a"], 60),
        CancellationToken::new(),
    )
    .await;
    let outcome = &outcomes[0].1;
    assert_eq!(outcome.state, CellState::NodeLost, "{outcome:?}");
    assert!(!outcome.state.is_judged());
    assert_eq!(outcome.node.as_deref(), Some("n2"));
    assert_eq!(outcome.exit_code, Some(0), "the program's own end is kept");
    let error = outcome.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("node `n2` was lost") && error.contains("collected"),
        "{error}"
    );
}

/// Regression (issue "The cell boundary"): a Ctrl-C after the containers were created but
/// before they started still started them.
#[tokio::test]
async fn a_ctrl_c_between_create_and_start_never_starts_the_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let cancel = CancellationToken::new();
    runtime.script(
        "mc-251122-t-r00t-p-a",
        FakeCell {
            cancel_on_create: Some(cancel.clone()),
            ..FakeCell::default()
        },
    );
    let outcomes = run(&runtime, plans(tmp.path(), &["a"], 60), cancel).await;
    assert_eq!(outcomes[0].1.state, CellState::Cancelled);
    assert!(runtime.started().is_empty(), "{:?}", runtime.started());
    assert!(
        runtime
            .removed()
            .contains(&"mc-251122-t-r00t-p-a".to_owned())
    );
}

#[test]
fn secrets_are_redacted_wherever_they_appear() {
    let secrets = vec!["sk-ant-oat01-SECRET".to_owned(), "rt.other".to_owned()];
    let text = b"token=sk-ant-oat01-SECRET and rt.other, again sk-ant-oat01-SECRET.";
    let redact = |bytes: &[u8]| {
        crate::redact::Redactor::new(&secrets)
            .bytes(bytes)
            .into_owned()
    };
    assert_eq!(
        redact(text),
        b"token=[REDACTED] and [REDACTED], again [REDACTED].".to_vec()
    );
    assert_eq!(redact(b"nothing here"), b"nothing here".to_vec());
}

#[tokio::test]
async fn a_serial_flavor_is_locked_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let held = host_lock(dir.path(), "agy", &cancel)
        .await
        .expect("the lock is free");
    // A second open file description (as another process would have) must wait.
    let waiting = CancellationToken::new();
    let stop = waiting.clone();
    let waiter = tokio::spawn({
        let dir = dir.path().to_path_buf();
        async move { host_lock(&dir, "agy", &waiting).await.is_some() }
    });
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!waiter.is_finished(), "the second holder waits");
    stop.cancel();
    assert!(!waiter.await.unwrap(), "cancelled while waiting");
    assert!(
        host_lock(dir.path(), "codex", &cancel).await.is_some(),
        "other flavors are independent"
    );
    drop(held);
    assert!(host_lock(dir.path(), "agy", &cancel).await.is_some());
}

/// Budgets on the fake runtime: a cell whose reported usage reaches its cap is killed at once
/// (not at its timeout) and classified `budget_exhausted`; a reached shared budget starts no
/// cell.
#[tokio::test]
async fn a_cell_at_its_budget_is_killed_and_a_reached_pool_starts_nothing() {
    use crate::cell::budget::{Budgets, Pool};
    use crate::flavor::meter::Spend;
    let tmp = tempfile::tempdir().unwrap();
    let runtime = Arc::new(FakeRuntime::default());
    let usage = r#"{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":5000,"output_tokens":1}}}"#;
    runtime.script(
        "mc-251122-t-r00t-p-spender",
        FakeCell {
            runs_for: Duration::from_secs(60),
            stdout: format!("{usage}\n"),
            ..FakeCell::default()
        },
    );
    let mut capped = plans(tmp.path(), &["spender"], 60);
    capped[0].budget = Some(crate::brief::Budget {
        tokens: Some(1000),
        usd: None,
    });
    let started = std::time::Instant::now();
    let outcomes = run(&runtime, capped, CancellationToken::new()).await;
    let outcome = &outcomes[0].1;
    assert_eq!(outcome.state, CellState::BudgetExhausted, "{outcome:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.spend.map(|s| s.tokens), Some(5001));
    assert_eq!(
        outcome.error.as_deref(),
        Some("its budget is used up (spent 5 001 / 1 000 tokens)")
    );
    assert!(runtime.killed().iter().any(|k| k.ends_with("spender")));

    let reached = Pool::new(
        crate::cell::budget::COOK,
        crate::brief::Budget {
            tokens: Some(10),
            usd: None,
        },
        true,
        Spend {
            tokens: 10,
            usd: 0.0,
        },
    );
    let runtime = Arc::new(FakeRuntime::default());
    let outcomes = run_with(
        &runtime,
        plans(tmp.path(), &["late"], 60),
        Budgets {
            pools: vec![reached],
        },
    )
    .await;
    let outcome = &outcomes[0].1;
    assert_eq!(outcome.state, CellState::BudgetExhausted);
    assert_eq!(outcome.started_at, None, "never started");
    assert_eq!(
        outcome.error.as_deref(),
        Some("not started: the cook's budget is used up (spent 10 / 10 tokens)")
    );
}
