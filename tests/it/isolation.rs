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
    let mut cell = TestCell::new(
        &format!("{}-probe", names.project()),
        &names.image("dummy"),
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

#[test]
fn a_participant_cannot_reach_a_sibling_by_name_or_ip() {
    let cook = TestCook::new(
        "isolation",
        &dummy_brief(
            &[
                ("alpha", "listen:8080,sleep:40"),
                ("bravo", "listen:8080,sleep:40"),
            ],
            "",
        ),
    );
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
        ["/run/mc-cell", "/work", "/work/out"],
        "its input area, its own out/ and its control area: {described:#?}"
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
