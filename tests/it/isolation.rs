//! Isolation against the real engine: a participant cannot reach a sibling by name or IP,
//! cannot mount or read a sibling's output, and hostile entries it plants in its output are
//! never followed into a sealed copy or a judge's inbox.

use std::time::Duration;

use multicooker::cell::names::Names;
use multicooker::runtime::docker::DockerRuntime;
use multicooker::runtime::{LABEL_ROOT, Labels};
use multicooker::state::{Role, root_id};
use serde_json::Value;

use crate::common::cells::TestCell;
use crate::common::{TestCook, block_on, dummy_brief, engine, mounts_of, show};

/// Runs a probe cell with the cook's image on `network`, returns its PROBES.txt.
async fn probe_from(
    runtime: &DockerRuntime,
    cook: &TestCook,
    network: &str,
    model: &str,
) -> String {
    let names = Names::for_cook(cook.name(), &root_id(cook.root()));
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    // The shared base the cook's cells run (issue 28: no image of the cook's own on Docker).
    let image = multicooker::cell::images::base_specs(
        &["dummy".to_owned()],
        None,
        &crate::common::images(),
    )
    .unwrap()
    .remove(0)
    .tag;
    let mut cell = TestCell::new(
        &format!("{}-probe", names.project()),
        &image,
        Some(network),
        Labels::new(cook.name(), "participant").with(LABEL_ROOT, &root_id(cook.root())),
        model,
        &out,
    );
    cell.start(runtime).await;
    let (code, _) = cell.finish(runtime).await;
    assert_eq!(code, Some(0));
    fs_err::read_to_string(out.join("PROBES.txt")).unwrap()
}

async fn container_ip(container: &str) -> String {
    let docker = bollard::Docker::connect_with_local_defaults().unwrap();
    let inspect = docker.inspect_container(container, None).await.unwrap();
    let networks = inspect.network_settings.unwrap().networks.unwrap();
    networks
        .values()
        .next()
        .unwrap()
        .ip_address
        .clone()
        .unwrap()
}

/// Siblings that have networks (`open`: each its own bridge with a route out) cannot reach each
/// other. Under the default `allowlist` a dummy cell reaches nothing and has no network at all
/// (issue 28), which `the_hardening_baseline_holds_inside_the_cell` and the sandbox probe check.
#[test]
fn a_participant_cannot_reach_a_sibling_by_name_or_ip() {
    let brief = dummy_brief(
        &[
            ("alpha", "listen:8080,sleep:40"),
            ("bravo", "listen:8080,sleep:40"),
        ],
        "",
    )
    .replacen(
        "participants:\n",
        "network: {mode: open}\nparticipants:\n",
        1,
    );
    let cook = TestCook::new("isolation", &brief);
    let child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("alpha", "running", Duration::from_secs(60));
    cook.wait_for_cell_state("bravo", "running", Duration::from_secs(60));
    let names = Names::for_cook(cook.name(), &root_id(cook.root()));
    let (alpha, bravo) = (
        names.cell(Role::Participant, "alpha"),
        names.cell(Role::Participant, "bravo"),
    );
    let probes = block_on(async {
        let runtime = engine().await;
        let bravo_ip = container_ip(&bravo).await;
        let model = format!("connect:{alpha}:8080,connect:{bravo}:8080,connect:{bravo_ip}:8080");
        probe_from(
            &runtime,
            &cook,
            &names.network(Role::Participant, "alpha"),
            &model,
        )
        .await
    });
    let lines: Vec<&str> = probes.lines().collect();
    assert!(
        lines[0].ends_with(" ok"),
        "control: the same network is reachable: {probes}"
    );
    assert!(
        lines[1].contains(" error "),
        "a sibling's name does not resolve: {probes}"
    );
    assert!(
        lines[2].contains(" error "),
        "a sibling's IP is unreachable: {probes}"
    );
    crate::common::signal(child.id(), "INT");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", show(&output));
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// Issue 28: a cell whose plan reaches nothing (a dummy under the default `allowlist`, nothing
/// allowed) gets no network at all: while it runs the engine holds no network of the cook's,
/// the cell's network mode is `none`, its direct connection fails, the run records its egress
/// as `allowlist`, and the sandbox probe beside it (also without a network) passes.
#[test]
fn a_cell_that_reaches_nothing_has_no_network_and_no_route_out() {
    let cook = TestCook::new(
        "nonet",
        &dummy_brief(&[("alpha", "connect:203.0.113.7:80,sleep:4")], ""),
    );
    let child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("alpha", "running", Duration::from_secs(60));
    let names = Names::for_cook(cook.name(), &root_id(cook.root()));
    let (mode, networks) = block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        let inspect = docker
            .inspect_container(&names.cell(Role::Participant, "alpha"), None)
            .await
            .unwrap();
        let mode = inspect
            .host_config
            .unwrap()
            .network_mode
            .unwrap_or_default();
        let networks: Vec<String> = inspect
            .network_settings
            .unwrap()
            .networks
            .unwrap_or_default()
            .into_keys()
            .collect();
        (mode, networks)
    });
    let during = cook.leftovers();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    assert_eq!((mode.as_str(), networks), ("none", vec!["none".to_owned()]));
    assert!(
        !during.iter().any(|o| o.starts_with("network")),
        "no network of the cook's while it ran: {during:?}"
    );
    let probes = cook.text("work/alpha/out/PROBES.txt");
    assert!(
        probes.contains("connect 203.0.113.7:80 error"),
        "no route out: {probes}"
    );
    let run = cook.json("RUN_RESULT.json");
    assert_eq!(run["participants"][0]["egress"]["mode"], "allowlist");
    assert_eq!(
        run["sandbox_check"]["passed"], true,
        "{}",
        run["sandbox_check"]
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn a_participant_cell_has_no_host_folder_only_its_own_areas() {
    let cook = TestCook::new(
        "mounts",
        &dummy_brief(&[("alpha", "sleep:5"), ("bravo", "sleep:5")], ""),
    );
    let child = cook.spawn(&["cook", cook.name()]);
    cook.wait_for_cell_state("alpha", "running", Duration::from_secs(60));
    let names = Names::for_cook(cook.name(), &root_id(cook.root()));
    let mounts = mounts_of(&names.cell(Role::Participant, "alpha"));
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    let described: Vec<String> = mounts
        .iter()
        .map(|m| format!("{:?} {:?} -> {:?}", m.typ, m.source, m.destination))
        .collect();
    let mut targets: Vec<&str> = mounts
        .iter()
        .filter_map(|m| m.destination.as_deref())
        .collect();
    targets.sort_unstable();
    assert_eq!(
        targets,
        ["/work", "/work/out"],
        "its input area (the go file staged last in it) and its own out/: {described:#?}"
    );
    for mount in &mounts {
        assert_eq!(
            mount.typ.as_deref(),
            Some("volume"),
            "an engine volume, never a bind of a host folder: {described:#?}"
        );
        assert!(
            !mount
                .source
                .as_deref()
                .unwrap_or_default()
                .contains(cook.root().to_str().unwrap()),
            "{described:#?}"
        );
    }
    assert!(cook.leftovers().is_empty());
}

/// What the dummy's `escape` directive plants in its output.
const PLANTED: [&str; 6] = [
    "passwd",
    "rootdir",
    "sibling",
    "sibling-result",
    "fifo",
    "socket",
];

#[test]
fn planted_symlinks_and_special_files_are_never_followed_into_an_inbox() {
    let cook = TestCook::new(
        "escape",
        &dummy_brief(
            &[
                ("alpha", "escape:bravo"),
                ("bravo", "quality:5,say:bravo-secret"),
            ],
            "",
        ),
    );
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let sealed = cook.dir().join("judging/_inbox/alpha/out");
    for planted in PLANTED {
        assert!(
            fs_err::symlink_metadata(sealed.join(planted)).is_err(),
            "{planted} reached the sealed copy"
        );
    }
    assert!(
        sealed.join("nested/ok.txt").is_file(),
        "ordinary files are sealed"
    );
    let trace = cook.json("work/alpha/trace.json");
    let skipped: Vec<&str> = trace["collect"]["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    // A socket cannot be put in a tar at all: the engine leaves it out, so it never arrives.
    for planted in PLANTED.iter().filter(|p| **p != "socket") {
        assert!(
            skipped.contains(planted),
            "{planted} is recorded as refused: {skipped:?}"
        );
    }
    assert_eq!(cook.run("judge").status.code(), Some(0));
    for entry in walkdir::WalkDir::new(cook.dir().join("judging"))
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        assert!(
            !entry.path_is_symlink(),
            "no link anywhere under judging/: {}",
            entry.path().display()
        );
        if entry.file_type().is_file() && entry.path().to_string_lossy().contains("_work-") {
            let text = fs_err::read_to_string(entry.path()).unwrap_or_default();
            assert!(
                !text.contains("root:x:0:0"),
                "host /etc/passwd leaked into {}",
                entry.path().display()
            );
        }
    }
    let inbox_of_alpha: Value = cook.json("judging/_mapping.json");
    assert!(
        inbox_of_alpha["judges"]["referee"]["labels"]
            .as_object()
            .unwrap()
            .len()
            == 2
    );
    assert!(cook.leftovers().is_empty());
}
