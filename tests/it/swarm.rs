//! The Docker Swarm backend on a real three-node swarm started for this test (three `dockerd`
//! in network namespaces, Debian's registry; `tests/swarm/swarm.sh`): the conformance suite
//! unchanged, a night of 2 briefs × 2 repeats × 3 participants × 2 judges whose cells spread
//! over the nodes, and a node lost while its cell runs (the cell is `node_lost`, the others go
//! on, `resume` re-runs it once the node is back); a node down at the start, and a night that
//! loses a node's engine, then a node's link (`tests/it/swarm_lost.rs`). Nothing labelled with
//! a cook is left on any node. Cells pinned to different nodes are isolated, and a proxy on one
//! node serves a cell on another (`tests/it/swarm_nodes.rs`). One test, in order, because the swarm is costly to
//! start (about 20 s) and shared.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::common::swarm::{NODES, Swarm};
use crate::common::{JUDGE_BRIEF, TestCook, block_on, cell_name, show};

fn run(cook: &TestCook, swarm: &Swarm, args: &[&str]) -> std::process::Output {
    cook.command(args)
        .envs(swarm.env())
        .output()
        .expect("the multicooker binary runs")
}

#[test]
fn swarm_three_real_nodes_pass_conformance_run_a_night_and_survive_a_lost_node() {
    let swarm = Swarm::up();
    let base = TestCook::empty("swarm-base");
    let built = run(
        &base,
        &swarm,
        &["build-base", "dummy", "--backend", "swarm"],
    );
    assert_eq!(built.status.code(), Some(0), "{}", show(&built));
    // A worker is no manager: refused before anything is created, the fix named.
    let worker = base
        .command(&[
            "doctor",
            "--flavors",
            "dummy",
            "--sandbox",
            "--backend",
            "swarm",
        ])
        .envs(swarm.env())
        .env("MULTICOOKER_SWARM_MANAGER", &swarm.config().nodes[1].1)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&worker.stdout),
        String::from_utf8_lossy(&worker.stderr)
    );
    assert_ne!(worker.status.code(), Some(0), "{}", show(&worker));
    assert!(
        said.contains("not a swarm manager") && said.contains("MULTICOOKER_SWARM_MANAGER"),
        "{}",
        show(&worker)
    );
    let doctor = run(
        &base,
        &swarm,
        &[
            "doctor",
            "--flavors",
            "dummy",
            "--sandbox",
            "--backend",
            "swarm",
        ],
    );
    let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert_eq!(doctor.status.code(), Some(0), "{}", show(&doctor));
    assert!(
        text.contains("not enforced") && text.contains("no-new-privileges"),
        "what a swarm cannot enforce is said, not hidden: {text}"
    );
    assert!(
        text.contains("swap is off") && text.contains("is not enforced on this backend"),
        "the swap limit, which has no probe, is listed too: {text}"
    );
    assert!(
        text.contains(&format!(
            "engine reachable at {} (swarm manager)",
            swarm.env()["MULTICOOKER_SWARM_MANAGER"]
        )),
        "the engine is the manager's: {text}"
    );
    assert!(
        !text.contains("iptables"),
        "the local bridge's advice does not apply to overlays: {text}"
    );

    block_on(async {
        let runtime: multicooker::runtime::SharedRuntime = Arc::new(
            multicooker::runtime::swarm::SwarmRuntime::connect(&swarm.config())
                .await
                .unwrap(),
        );
        crate::conformance::all("swarm", &runtime).await;
    });
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the conformance suite: {left:?}");

    crate::swarm_logs::a_container_its_node_cannot_start_is_refused_with_the_reason(&swarm);
    crate::swarm_logs::a_cell_past_its_deadline_is_named_overdue(&swarm);
    crate::swarm_logs::a_node_keeps_no_copy_of_what_a_cell_printed(&swarm);
    crate::swarm_nodes::cells_on_different_nodes_cannot_reach_each_other(&swarm);
    crate::swarm_nodes::a_proxy_on_one_node_serves_a_cell_on_another(&swarm);
    a_night_spreads_over_the_nodes(&swarm);
    a_lost_node_loses_only_its_cell_and_resume_reruns_it(&swarm);
    crate::swarm_lost::a_node_down_at_the_start_is_left_out(&swarm);
    crate::swarm_lost::a_night_survives_a_lost_node(&swarm, crate::swarm_lost::Loss::Kill);
    crate::swarm_lost::a_night_survives_a_lost_node(&swarm, crate::swarm_lost::Loss::Cut);
    // The nodes now hold pulled copies of the base image: in use, not stale.
    let doctor = run(
        &base,
        &swarm,
        &["doctor", "--flavors", "dummy", "--backend", "swarm"],
    );
    let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(
        !text.contains("does not use"),
        "a node's copy of the base image in use is not stale: {text}"
    );
}

fn a_night_spreads_over_the_nodes(swarm: &Swarm) {
    let cook = TestCook::empty("swarm-night");
    let root = cook.root().to_path_buf();
    for brief in ["brief-a", "brief-b"] {
        let dir = root.join(brief);
        fs_err::create_dir_all(dir.join("raw")).unwrap();
        fs_err::write(
            dir.join("brief.yaml"),
            "name: t\ntimeout_s: 120\njudge_timeout_s: 120\nparticipants:\n  - {name: x, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 60}\n    - {id: clarity, weight: 40}\n",
        )
        .unwrap();
        fs_err::write(dir.join("BRIEF.md"), format!("# {brief}\n\nSay hello.\n")).unwrap();
        fs_err::write(dir.join("JUDGE_BRIEF.md"), JUDGE_BRIEF).unwrap();
    }
    let config = root.join("nightly.yaml");
    // `backend: swarm` in the config: no flag, no MULTICOOKER_BACKEND.
    fs_err::write(
        &config,
        format!(
            "name: sw\nbackend: swarm\nbriefs: [brief-a, brief-b]\nparticipants:\n  - {{name: a, flavor: dummy, model: \"quality:5\"}}\n  - {{name: b, flavor: dummy, model: \"quality:3\"}}\n  - {{name: c, flavor: dummy, model: \"quality:1\"}}\njudges:\n  - {{name: j1, flavor: dummy}}\n  - {{name: j2, flavor: dummy}}\nrepeats: 2\nhistory: {0}/h.sqlite\ncooks_root: {0}\njudging: {{policy: allow_self}}\n",
            root.display()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let night = run(&cook, swarm, &["nightly", config, "--night", "2026-11-25"]);
    assert_eq!(night.status.code(), Some(0), "{}", show(&night));
    assert!(
        !String::from_utf8_lossy(&night.stderr).contains("killed earlier run"),
        "each phase removed what it made: nothing is swept as a killed run's: {}",
        show(&night)
    );
    let history = run(&cook, swarm, &["history", config, "--json"]);
    assert_eq!(history.status.code(), Some(0), "{}", show(&history));
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    let night = &history["nights"][0];
    assert_eq!(night["status"], "ok", "{night}");
    let participants = night["participants"].as_array().unwrap();
    assert_eq!(participants.len(), 3, "{night}");
    let mut nodes = std::collections::BTreeSet::new();
    for p in participants {
        assert_eq!(p["backend"], "swarm", "{p}");
        assert_eq!(p["scored_cells"], 4, "every brief × repeat scored: {p}");
        for node in p["nodes"].as_array().unwrap() {
            nodes.insert(node.as_str().unwrap().to_owned());
        }
    }
    assert!(
        nodes.len() >= 2 && nodes.iter().all(|n| NODES.contains(&n.as_str())),
        "the night's cells ran on several nodes: {nodes:?}"
    );
    let estimate = |who: &str| {
        participants
            .iter()
            .find(|p| p["participant"] == who)
            .and_then(|p| p["estimate"].as_f64())
            .unwrap()
    };
    assert!(
        estimate("a") > estimate("b") && estimate("b") > estimate("c"),
        "{night}"
    );
    let clean = run(&cook, swarm, &["clean", "--all", "--backend", "swarm"]);
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the night: {left:?}");
}

fn a_lost_node_loses_only_its_cell_and_resume_reruns_it(swarm: &Swarm) {
    let participants = [
        ("a", "quality:4,sleep:30"),
        ("b", "quality:3,sleep:30"),
        ("c", "quality:2,sleep:30"),
    ];
    let cook = TestCook::new(
        "swarm-lost",
        &crate::common::dummy_brief(&participants, "quality:3"),
    );
    let child = cook
        .command(&["cook", cook.name(), "--backend", "swarm"])
        .envs(swarm.env())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for (actor, _) in participants {
        cook.wait_for_cell_state(actor, "running", Duration::from_secs(120));
    }
    // Where each cell runs; a worker that runs one is cut (the manager must stay to tell).
    let placed: Vec<(&str, &str)> = participants
        .iter()
        .map(|(actor, _)| {
            let prefix = cell_name(&cook, multicooker::state::Role::Participant, actor);
            let node = swarm
                .node_running(&prefix)
                .expect("a running cell has a node");
            (*actor, node)
        })
        .collect();
    let node = placed
        .iter()
        .map(|(_, n)| *n)
        .find(|n| *n != NODES[0])
        .unwrap_or_else(|| panic!("three cells, all on the manager: {placed:?}"));
    swarm.cut(node);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let result = cook.json("RUN_RESULT.json");
    let mut lost = Vec::new();
    for entry in result["participants"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let on = placed.iter().find(|(a, _)| *a == name).unwrap().1;
        if on == node {
            assert_eq!(entry["status"], "node_lost", "{entry}");
            assert_eq!(entry["node"], node, "{entry}");
            lost.push(name.to_owned());
        } else {
            assert_eq!(
                entry["status"], "ok",
                "cells on other nodes went on: {entry}"
            );
        }
    }
    let status = run(&cook, swarm, &["status", cook.name()]);
    assert!(
        String::from_utf8_lossy(&status.stderr).contains("next: multicooker resume"),
        "status points at resume: {}",
        show(&status)
    );
    swarm.heal(node);
    let resumed = run(&cook, swarm, &["resume", cook.name(), "--backend", "swarm"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", show(&resumed));
    let result = cook.json("RUN_RESULT.json");
    for entry in result["participants"].as_array().unwrap() {
        assert_eq!(
            entry["status"], "ok",
            "after resume ({lost:?} re-ran): {entry}"
        );
    }
    let clean = run(&cook, swarm, &["clean", cook.name(), "--backend", "swarm"]);
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(left.is_empty(), "after the lost node: {left:?}");
}
