//! Issue 21 on the swarm of `tests/it/swarm.rs`: no node's engine keeps what a cell printed
//! (cells log to the `none` driver and are read through the attach API of their node's
//! engine), and a cell still running past its deadline is named as overdue, as on Docker;
//! a container its node cannot start is never staged into, nor read as the program's exit.
//! Both run inside the swarm test (one swarm for all); `swarm_logs_alone` runs them on a swarm
//! of their own (`--ignored`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use multicooker::runtime::{LABEL_DEADLINE, LABEL_ROOT, Labels, ObjectRef, Selector};
use multicooker::state::{Role, root_id};

use crate::common::cells::TestCell;
use crate::common::swarm::Swarm;
use crate::common::{TestCook, block_on, cell_name, dummy_brief, show, signal};

fn run(cook: &TestCook, swarm: &Swarm, args: &[&str]) -> std::process::Output {
    cook.command(args)
        .envs(swarm.env())
        .output()
        .expect("the multicooker binary runs")
}

/// What a node's engine says of a container: its log driver, and what its log holds.
async fn driver_and_log(engine: &bollard::Docker, id: &str) -> (Option<String>, String) {
    let inspected = engine.inspect_container(id, None).await.unwrap();
    let driver = inspected
        .host_config
        .and_then(|h| h.log_config)
        .and_then(|l| l.typ);
    let options = bollard::query_parameters::LogsOptionsBuilder::default()
        .stdout(true)
        .stderr(true)
        .build();
    let mut stream = engine.logs(id, Some(options));
    let mut seen = String::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(output) => seen.push_str(&output.to_string()),
            Err(e) => {
                seen.push_str(&format!("[error: {e}]"));
                break;
            }
        }
    }
    (driver, seen)
}

/// Issue 21: after a SIGKILL of multicooker, a swarm cell's node kept what it printed (a
/// login token) in the engine's `json-file` log until `clean`. The cell's output reaches the
/// host's log through the attach API; the node keeps none of it; `status` names the cell
/// still running; `clean` ends it and leaves nothing.
pub(crate) fn a_node_keeps_no_copy_of_what_a_cell_printed(swarm: &Swarm) {
    let secret = "mc-swarm-secret-4242";
    let model = format!("quality:3,say:{secret},warn:{secret},sleep:120");
    let cook = TestCook::new("swarm-nolog", &dummy_brief(&[("alpha", &model)], ""));
    let mut child = cook
        .command(&[
            "cook",
            cook.name(),
            "--backend",
            "swarm",
            "--skip-sandbox-check",
        ])
        .envs(swarm.env())
        .env("MULTICOOKER_CELL_GRACE_S", "5")
        .spawn()
        .unwrap();
    cook.wait_for_cell_state("alpha", "running", Duration::from_secs(180));
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
    let node = swarm
        .node_running(&cell)
        .expect("the cell outlives multicooker");
    let engine = swarm.engine(node);
    let (driver, logs) = block_on(async {
        let containers = engine
            .list_containers(None::<bollard::query_parameters::ListContainersOptions>)
            .await
            .unwrap();
        let id = containers
            .into_iter()
            .find(|c| {
                c.names
                    .iter()
                    .flatten()
                    .any(|n| n.trim_start_matches('/').starts_with(&cell))
            })
            .and_then(|c| c.id)
            .unwrap();
        driver_and_log(&engine, &id).await
    });
    assert_eq!(driver.as_deref(), Some("none"), "on node {node}");
    assert!(!logs.contains(secret), "node {node}'s engine kept: {logs}");
    let status = run(&cook, swarm, &["status", cook.name(), "--backend", "swarm"]);
    let said = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        said.contains("still run") && said.contains(&cell),
        "status names the cell that outlived multicooker: {}",
        show(&status)
    );
    let cleaned = run(&cook, swarm, &["clean", cook.name(), "--backend", "swarm"]);
    assert_eq!(cleaned.status.code(), Some(0), "{}", show(&cleaned));
    assert_eq!(swarm.node_running(&cell), None, "clean ended the cell");
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the killed cook: {left:?}");
}

/// Issue 21: `status` said a cell would end at its deadline while it had outlived it; on a
/// swarm the engine could not tell at all. Each service carries its deadline; a running cell
/// past it is named overdue, one within it is not, and removal ends it.
pub(crate) fn a_cell_past_its_deadline_is_named_overdue(swarm: &Swarm) {
    block_on(async {
        let runtime: multicooker::runtime::SharedRuntime = Arc::new(
            multicooker::runtime::swarm::SwarmRuntime::connect(&swarm.config())
                .await
                .unwrap(),
        );
        let cook = TestCook::empty("swarm-overdue");
        let work = tempfile::tempdir().unwrap();
        let image = {
            let context = multicooker::flavor::build_context(
                "dummy",
                None,
                &crate::common::images().build_args,
            )
            .unwrap();
            multicooker::flavor::base_tag("dummy", &context.digest)
        };
        let labels =
            Labels::new(cook.name(), "participant").with(LABEL_ROOT, &root_id(cook.root()));
        let past = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            - 60;
        // The label of an init that should have ended its cell a minute ago.
        let mut late = TestCell::new(
            &format!("mc-swod-late-{}", std::process::id()),
            &image,
            None,
            labels.clone().with(LABEL_DEADLINE, &past.to_string()),
            "quality:3,sleep:600",
            &work.path().join("a"),
        );
        let mut fine = TestCell::new(
            &format!("mc-swod-fine-{}", std::process::id()),
            &image,
            None,
            labels,
            "quality:3,sleep:600",
            &work.path().join("b"),
        );
        late.start(runtime.as_ref()).await;
        fine.start(runtime.as_ref()).await;
        let selector = Selector::cook(cook.name()).with(LABEL_ROOT, &root_id(cook.root()));
        // The manager hears of a task's start a moment after its node.
        let started = Instant::now();
        let overdue = loop {
            let overdue = runtime.overdue(&selector).await.unwrap();
            if !overdue.is_empty() || started.elapsed() > Duration::from_secs(30) {
                break overdue;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert_eq!(overdue, [late.spec.name.clone()]);
        let mut running = runtime.running(&selector).await.unwrap();
        running.sort();
        let mut both = vec![late.spec.name.clone(), fine.spec.name.clone()];
        both.sort();
        assert_eq!(running, both, "both still run; only one is overdue");
        for cell in [&late, &fine] {
            runtime
                .remove(&ObjectRef::cell(&cell.spec.name))
                .await
                .unwrap();
        }
        assert!(runtime.running(&selector).await.unwrap().is_empty());
    });
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the overdue cells: {left:?}");
}

/// The flaky re-run of a night (issue 22: a cell "exited 128 after 0.1 s"): a task whose
/// container its node cannot start was staged into before it ran, and its 128 read as the
/// program's exit. Staging now waits for a running task; one that fails to start is placed
/// again, then refused with the node's own reason (here runc refusing a mount under /proc).
pub(crate) fn a_container_its_node_cannot_start_is_refused_with_the_reason(swarm: &Swarm) {
    block_on(async {
        let runtime: multicooker::runtime::SharedRuntime = Arc::new(
            multicooker::runtime::swarm::SwarmRuntime::connect(&swarm.config())
                .await
                .unwrap(),
        );
        let cook = TestCook::empty("swarm-nostart");
        let work = tempfile::tempdir().unwrap();
        let image = {
            let context = multicooker::flavor::build_context(
                "dummy",
                None,
                &crate::common::images().build_args,
            )
            .unwrap();
            multicooker::flavor::base_tag("dummy", &context.digest)
        };
        let labels =
            Labels::new(cook.name(), "participant").with(LABEL_ROOT, &root_id(cook.root()));
        let mut cell = TestCell::new(
            &format!("mc-swns-{}", std::process::id()),
            &image,
            None,
            labels,
            "quality:3",
            &work.path().join("a"),
        );
        let mut archives = cell.prepare();
        cell.spec.areas.push(multicooker::runtime::Area {
            target: "/proc/mc-nostart".into(),
            size_bytes: 1 << 20,
            owner: (0, 0),
            mode: 0o755,
        });
        runtime.create_cell(&cell.spec).await.unwrap();
        runtime.start_cell(&cell.spec.name).await.unwrap();
        let (target, archive) = archives.remove(0);
        let staged = runtime.stage(&cell.spec.name, &target, archive).await;
        let error = staged
            .expect_err("a cell that never started is not staged into")
            .to_string();
        assert!(
            error.contains("starting container failed") && error.contains("node `"),
            "the node's own reason is named: {error}"
        );
        runtime
            .remove(&ObjectRef::cell(&cell.spec.name))
            .await
            .unwrap();
    });
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(
        left.is_empty(),
        "after the cell that never started: {left:?}"
    );
}

/// Both checks on a swarm of their own, for a focused run:
/// `cargo test --test it -- --ignored swarm_logs_alone`.
#[test]
#[ignore = "runs inside swarm_three_real_nodes_pass_conformance_run_a_night_and_survive_a_lost_node"]
fn swarm_logs_alone() {
    let swarm = Swarm::up();
    let base = TestCook::empty("swarm-logs-base");
    let built = run(
        &base,
        &swarm,
        &["build-base", "dummy", "--backend", "swarm"],
    );
    assert_eq!(built.status.code(), Some(0), "{}", show(&built));
    a_container_its_node_cannot_start_is_refused_with_the_reason(&swarm);
    a_cell_past_its_deadline_is_named_overdue(&swarm);
    a_node_keeps_no_copy_of_what_a_cell_printed(&swarm);
}
