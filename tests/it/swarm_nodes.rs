//! Across the swarm's nodes (run by `tests/it/swarm.rs` on its swarm): cells on different
//! nodes cannot reach each other while one overlay does span nodes, and the egress proxy on one
//! node serves a cell on another. Where each service lands is pinned by what an operator would
//! use: paused nodes (no new tasks, running ones stay) and the `io.multicooker.cells` /
//! `io.multicooker.egress` node labels.

use std::io::Read as _;
use std::sync::Arc;
use std::time::Duration;

use multicooker::runtime::swarm::{NODE_LABEL_CELLS, NODE_LABEL_EGRESS, SwarmRuntime};
use multicooker::runtime::{LABEL_ROOT, Labels, NetworkSpec, ObjectRef, SharedRuntime};
use multicooker::state::{Role, root_id};

use crate::common::cells::TestCell;
use crate::common::swarm::Swarm;
use crate::common::{TestCook, block_on, cell_name, show};

async fn connect(swarm: &Swarm) -> SharedRuntime {
    Arc::new(SwarmRuntime::connect(&swarm.config()).await.unwrap())
}

fn image() -> String {
    let context =
        multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
            .unwrap();
    multicooker::flavor::base_tag("dummy", &context.digest)
}

fn labels(cook: &TestCook, role: &str) -> Labels {
    Labels::new(cook.name(), role).with(LABEL_ROOT, &root_id(cook.root()))
}

/// A dummy cell of this test (`out/` collected into `work/<name>`).
fn cell(
    cook: &TestCook,
    work: &std::path::Path,
    name: &str,
    network: &str,
    model: &str,
) -> TestCell {
    TestCell::new(
        name,
        &image(),
        Some(network),
        labels(cook, "participant"),
        model,
        &work.join(name),
    )
}

/// The address of a service's task on `network`, read from the engine of the node it runs on.
fn address_on(swarm: &Swarm, node: &str, service: &str, network: &str) -> String {
    block_on(async {
        let engine = swarm.engine(node);
        let containers = engine
            .list_containers(None::<bollard::query_parameters::ListContainersOptions>)
            .await
            .unwrap();
        let id = containers
            .iter()
            .find(|c| {
                c.names
                    .iter()
                    .flatten()
                    .any(|n| n.trim_start_matches('/').starts_with(service))
            })
            .and_then(|c| c.id.clone())
            .unwrap();
        let inspect = engine.inspect_container(&id, None).await.unwrap();
        let networks = inspect.network_settings.unwrap().networks.unwrap();
        networks[network].ip_address.clone().unwrap()
    })
}

fn network(cook: &TestCook, name: &str, internal: bool) -> NetworkSpec {
    NetworkSpec {
        name: name.to_owned(),
        labels: labels(cook, "test-double"),
        internal,
        isolated: false,
    }
}

/// Two cells on their own overlays, pinned to different nodes, cannot reach each other by name
/// or address; a third on the first cell's overlay, on the other node, can (the control: an
/// overlay does span nodes, so the refusal is isolation, not distance).
pub(crate) fn cells_on_different_nodes_cannot_reach_each_other(swarm: &Swarm) {
    let cook = TestCook::empty("swarm-apart");
    let work = tempfile::tempdir().unwrap();
    let tag = format!("mc-test-apart{}", std::process::id());
    let (near, far) = (format!("{tag}-near"), format!("{tag}-far"));
    let server = format!("{tag}-server");
    // Only n1 takes new tasks: the server lands there.
    swarm.set_node("n2", "pause", &[]);
    swarm.set_node("n3", "pause", &[]);
    block_on(async {
        let runtime = connect(swarm).await;
        runtime
            .create_network(&network(&cook, &near, true))
            .await
            .unwrap();
        runtime
            .create_network(&network(&cook, &far, true))
            .await
            .unwrap();
        let model = "listen:8080,sleep:120";
        cell(&cook, work.path(), &server, &near, model)
            .start(&*runtime)
            .await;
    });
    assert_eq!(swarm.node_running(&server), Some("n1"));
    let address = address_on(swarm, "n1", &server, &near);
    // Now only n2 does: both probes land there.
    swarm.set_node("n2", "active", &[]);
    swarm.set_node("n1", "pause", &[]);
    let probes = format!("connect:{server}:8080,connect:{address}:8080,sleep:15");
    let (control, apart) = (format!("{tag}-control"), format!("{tag}-apart"));
    let mut cells = vec![
        cell(&cook, work.path(), &control, &near, &probes),
        cell(&cook, work.path(), &apart, &far, &probes),
    ];
    block_on(async {
        let runtime = connect(swarm).await;
        for c in &mut cells {
            c.start(&*runtime).await;
        }
    });
    for c in &cells {
        assert_eq!(swarm.node_running(&c.spec.name), Some("n2"));
    }
    block_on(async {
        let runtime = connect(swarm).await;
        for c in &cells {
            let (code, _) = c.finish(&*runtime).await;
            assert_eq!(code, Some(0));
        }
        runtime.remove(&ObjectRef::cell(&server)).await.unwrap();
        for n in [&near, &far] {
            runtime.remove(&ObjectRef::network(n)).await.unwrap();
        }
    });
    for node in ["n1", "n2", "n3"] {
        swarm.set_node(node, "active", &[]);
    }
    let read =
        |name: &str| fs_err::read_to_string(work.path().join(name).join("PROBES.txt")).unwrap();
    let (control, apart) = (read(&control), read(&apart));
    let lines: Vec<&str> = control.lines().collect();
    assert!(
        lines.len() == 2 && lines.iter().all(|l| l.ends_with(" ok")),
        "control: the same overlay reaches across nodes, by name and address: {control}"
    );
    let lines: Vec<&str> = apart.lines().collect();
    assert!(
        lines.len() == 2 && lines.iter().all(|l| l.contains(" error ")),
        "a cell on another node and overlay is unreachable by name and address: {apart}"
    );
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the cells apart: {left:?}");
}

/// With n1 labelled to run no cells and n2, n3 to run no proxies, a cook's allowlisted cell
/// (on n2 or n3) reaches its allowed host only through its proxy on n1, and nothing directly.
pub(crate) fn a_proxy_on_one_node_serves_a_cell_on_another(swarm: &Swarm) {
    swarm.set_node("n1", "active", &[(NODE_LABEL_CELLS, "false")]);
    swarm.set_node("n2", "active", &[(NODE_LABEL_EGRESS, "false")]);
    swarm.set_node("n3", "active", &[(NODE_LABEL_EGRESS, "false")]);
    let cook = TestCook::empty("swarm-egress");
    let work = tempfile::tempdir().unwrap();
    let tag = format!("mc-test-egress{}", std::process::id());
    let (apinet, fakeapi) = (format!("{tag}-apinet"), format!("{tag}-fakeapi"));
    block_on(async {
        let runtime = connect(swarm).await;
        runtime
            .create_network(&network(&cook, &apinet, false))
            .await
            .unwrap();
        let mut api = cell(
            &cook,
            work.path(),
            &fakeapi,
            &apinet,
            "listen:8080,sleep:300",
        );
        api.spec.labels = labels(&cook, "test-double");
        api.start(&*runtime).await;
    });
    let api_node = swarm.node_running(&fakeapi).unwrap();
    let api_address = address_on(swarm, api_node, &fakeapi, &apinet);
    let model = format!(
        "via-proxy:{fakeapi}:8080,connect:{fakeapi}:8080,connect:{api_address}:8080,sleep:20"
    );
    let cook = cook.with_files(&format!(
        "name: swarm-egress\ntimeout_s: 180\n\
network: {{mode: allowlist, allow: [\"{fakeapi}:8080\"], allow_private: true}}\n\
participants:\n  - {{name: reach, flavor: dummy, model: \"{model}\"}}\n"
    ));
    let child = cook
        .command(&["cook", cook.name(), "--backend", "swarm"])
        .envs(swarm.env())
        .env("MULTICOOKER_EGRESS_NETWORK", &apinet)
        .env("MULTICOOKER_CANARY_DIRECT", format!("{api_address}:8080"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = child;
    running_or_explain(&cook, &mut child, "reach", Duration::from_secs(420));
    let cell = cell_name(&cook, Role::Participant, "reach");
    let proxy = multicooker::cell::plan::proxy_name(&cell);
    // A task's container is `<service>.<slot>.<task>`: the dot keeps `<cell>-proxy` apart.
    let (cell_node, proxy_node) = (
        swarm.node_running(&format!("{cell}.")),
        swarm.node_running(&format!("{proxy}.")),
    );
    let output = child.wait_with_output().unwrap();
    block_on(async {
        let runtime = connect(swarm).await;
        runtime.remove(&ObjectRef::cell(&fakeapi)).await.unwrap();
        runtime.remove(&ObjectRef::network(&apinet)).await.unwrap();
    });
    for node in ["n1", "n2", "n3"] {
        swarm.set_node(node, "active", &[]);
    }
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!(
        proxy_node,
        Some("n1"),
        "proxies only where egress is allowed"
    );
    assert!(
        matches!(cell_node, Some("n2" | "n3")),
        "cells only where cells are allowed: {cell_node:?}"
    );
    let probes = cook.text("work/reach/out/PROBES.txt");
    let lines: Vec<&str> = probes.lines().collect();
    assert_eq!(
        lines[0],
        format!("via-proxy {fakeapi}:8080 200 hello from mc-cell"),
        "the allowed host, through the proxy on the other node: {probes}"
    );
    assert!(
        lines[1..].iter().all(|l| l.contains(" error ")),
        "nothing without the proxy: {probes}"
    );
    let run = cook.json("RUN_RESULT.json");
    let canary = &run["participants"][0]["egress"]["canary"];
    assert_eq!(canary["passed"], true, "{canary}");
    let clean = cook
        .command(&["clean", cook.name(), "--backend", "swarm"])
        .envs(swarm.env())
        .output()
        .unwrap();
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the proxy across nodes: {left:?}");
}

/// Waits until `cell` runs; if the cook ends first or the deadline passes, fails with what the
/// cook said (a swarm under load is slow to place, pull and run the canary; a failure says why).
fn running_or_explain(
    cook: &TestCook,
    child: &mut std::process::Child,
    cell: &str,
    deadline: Duration,
) {
    let start = std::time::Instant::now();
    loop {
        let state = fs_err::read_to_string(cook.dir().join("status.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|s| s["cells"][cell]["state"].clone());
        if state.as_ref().is_some_and(|s| s == "running") {
            return;
        }
        let ended = child.try_wait().unwrap().is_some();
        if ended || start.elapsed() > deadline {
            let _ = child.kill();
            let mut said = String::new();
            for pipe in [
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn std::io::Read>),
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn std::io::Read>),
            ]
            .into_iter()
            .flatten()
            {
                let mut pipe = pipe;
                let _ = pipe.read_to_string(&mut said);
            }
            panic!(
                "cell `{cell}` never ran (state {state:?}, cook ended: {ended}, {:?}):\n{said}",
                start.elapsed()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
