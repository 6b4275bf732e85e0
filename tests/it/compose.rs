//! `compose` renders the cells from the same specs the engine gets: `docker-compose config`
//! accepts the file, and a real cell's mounts, capabilities, limits and network, as the engine
//! reports them, are exactly the compose service's.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

use crate::common::{TestCook, block_on, cell_name, dummy_brief, show};

#[test]
fn the_compose_export_matches_a_real_cell_and_docker_compose_accepts_it() {
    let cook = TestCook::new("compose", &dummy_brief(&[("ada", "quality:3")], ""));
    let cooked = cook
        .command(&["cook", cook.name()])
        .env("MULTICOOKER_KEEP", "1")
        .output()
        .unwrap();
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let output = cook.run_args(&["compose", cook.name(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let file = cook.dir().join("compose/compose.yaml");
    let config = Command::new("docker-compose")
        .args(["-f", file.to_str().unwrap(), "config", "-q"])
        .output()
        .expect("docker-compose is installed (Debian's package)");
    assert!(config.status.success(), "{}", show(&config));

    let service = &document["services"]["participant-ada"];
    let name = cell_name(&cook, multicooker::state::Role::Participant, "ada");
    assert_eq!(service["container_name"], name.as_str());
    let inspected = block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        docker.inspect_container(&name, None).await.unwrap()
    });
    let host = inspected.host_config.unwrap();
    // Every area is an engine volume with the same driver options as the composed volume.
    let mounts: BTreeSet<(String, String)> = host
        .mounts
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            assert!(
                m.source.is_none(),
                "an anonymous volume, no host path: {m:?}"
            );
            let options = m
                .volume_options
                .and_then(|o| o.driver_config)
                .and_then(|d| d.options)
                .unwrap_or_default();
            (m.target.unwrap(), options["o"].clone())
        })
        .collect();
    let composed: BTreeSet<(String, String)> = service["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            assert_eq!(v["type"], "volume");
            let volume = &document["volumes"][v["source"].as_str().unwrap()];
            (
                v["target"].as_str().unwrap().to_owned(),
                volume["driver_opts"]["o"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(mounts, composed, "areas");
    let entrypoint: Vec<String> = inspected
        .config
        .as_ref()
        .unwrap()
        .entrypoint
        .clone()
        .unwrap();
    assert_eq!(
        serde_json::json!(entrypoint),
        service["entrypoint"],
        "the same init and program"
    );
    assert_eq!(host.cap_drop.unwrap(), ["ALL"]);
    assert_eq!(service["cap_drop"], serde_json::json!(["ALL"]));
    assert_eq!(host.readonly_rootfs, service["read_only"].as_bool());
    assert_eq!(host.security_opt.unwrap(), ["no-new-privileges:true"]);
    assert_eq!(host.memory, service["mem_limit"].as_i64());
    assert_eq!(host.memory_swap, service["memswap_limit"].as_i64());
    assert_eq!(host.pids_limit, service["pids_limit"].as_i64());
    #[expect(clippy::cast_possible_truncation, reason = "a few cores")]
    let nano = (service["cpus"].as_f64().unwrap() * 1e9).round() as i64;
    assert_eq!(host.nano_cpus, Some(nano));
    let tmpfs: BTreeSet<String> = host.tmpfs.unwrap_or_default().into_keys().collect();
    let composed_tmpfs: BTreeSet<String> = service["tmpfs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().split(':').next().unwrap().to_owned())
        .collect();
    assert_eq!(tmpfs, composed_tmpfs);
    let config = inspected.config.unwrap();
    assert_eq!(config.user.as_deref(), service["user"].as_str());
    assert_eq!(config.image.as_deref(), service["image"].as_str());
    let networks: Vec<String> = inspected
        .network_settings
        .unwrap()
        .networks
        .unwrap_or_default()
        .into_keys()
        .collect();
    // Issue 28: an allowlisted cell with nothing allowed reaches nothing, so it has no
    // network at all (not even an internal one), and the compose file says the same.
    assert_eq!(networks, ["none"], "no network: {networks:?}");
    assert_eq!(service["network_mode"], "none");
    assert!(service.get("networks").is_none(), "{service}");

    assert_eq!(cook.run("clean").status.code(), Some(0));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn the_nightly_deployment_file_is_valid_compose() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/compose/nightly.yaml");
    let config = Command::new("docker-compose")
        .args(["-f", file, "config"])
        .env("HOME", "/home/someone")
        .env("MULTICOOKER_DATA", "/srv/mc")
        .output()
        .expect("docker-compose is installed (Debian's package)");
    assert!(config.status.success(), "{}", show(&config));
    let text = String::from_utf8_lossy(&config.stdout);
    assert!(
        text.contains("/srv/mc:/srv/mc"),
        "the data folder keeps its path: {text}"
    );
    assert!(
        text.contains("/home/someone/.claude:/home/runner/.claude:ro"),
        "{text}"
    );
}

/// Regression (issue "The cell boundary", item 5): the export's proxy was a clone of the
/// participant's spec (2 GiB, 1 CPU, role participant) while the engine ran 128 MiB, 0.5 CPU,
/// role proxy. Both now come from the same spec function: the real proxy a cook creates is the
/// composed one.
#[test]
fn the_composed_proxy_is_the_proxy_the_engine_runs() {
    let brief = dummy_brief(&[("ada", "quality:3")], "").replace(
        "judging: {policy: allow_self}\n",
        "judging: {policy: allow_self}\nnetwork: {allow: [\"unreachable.invalid:443\"]}\n",
    );
    let cook = TestCook::new("composeproxy", &brief);
    // The canary cannot reach the allowed host here, so the cell never starts; the proxy ran.
    let cooked = cook
        .command(&["cook", cook.name(), "--skip-sandbox-check"])
        .env("MULTICOOKER_KEEP", "1")
        .output()
        .unwrap();
    assert_eq!(cooked.status.code(), Some(1), "{}", show(&cooked));
    let output = cook.run_args(&["compose", cook.name(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let service = &document["services"]["proxy-ada"];
    let name = multicooker::cell::plan::proxy_name(&cell_name(
        &cook,
        multicooker::state::Role::Participant,
        "ada",
    ));
    assert_eq!(service["container_name"], name.as_str());
    let inspected = block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        docker.inspect_container(&name, None).await.unwrap()
    });
    let host = inspected.host_config.unwrap();
    assert_eq!(host.memory, service["mem_limit"].as_i64());
    assert_eq!(host.memory, Some(128 << 20), "the proxy's own limits");
    #[expect(clippy::cast_possible_truncation, reason = "a fraction of a core")]
    let nano = (service["cpus"].as_f64().unwrap() * 1e9).round() as i64;
    assert_eq!(host.nano_cpus, Some(nano));
    let config = inspected.config.unwrap();
    assert_eq!(
        serde_json::json!(config.entrypoint.unwrap()),
        service["entrypoint"]
    );
    assert_eq!(service["labels"]["io.multicooker.role"], "proxy");
    assert_eq!(
        config.labels.unwrap()["io.multicooker.role"],
        "proxy",
        "the engine's proxy is labelled as one"
    );
    let networks: BTreeSet<String> = inspected
        .network_settings
        .unwrap()
        .networks
        .unwrap_or_default()
        .into_keys()
        .collect();
    let composed: BTreeSet<String> = service["networks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(networks, composed, "the egress network and the cell's own");
    let egress = networks.iter().find(|n| n.ends_with("-egress")).unwrap();
    assert_eq!(
        document["networks"][egress]["driver_opts"]["com.docker.network.bridge.enable_icc"],
        "false",
        "proxies on the egress network cannot reach each other"
    );
    assert_eq!(cook.run("clean").status.code(), Some(0));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Issue 25: `compose` worked only while a run was in progress (it asked the engine for the
/// cook's own image, which exists only between a run's build and teardown). On a fresh cook and
/// on a finished one it renders every cell, with the program its flavor's image runs, and
/// docker-compose accepts the file; nothing of the cook's is left in the engine.
#[test]
fn compose_renders_a_fresh_and_a_finished_cook() {
    let cook = TestCook::new("composefresh", &dummy_brief(&[("ada", "quality:3")], ""));
    let mut programs = Vec::new();
    for moment in ["fresh", "finished"] {
        if moment == "finished" {
            assert_eq!(cook.run("cook").status.code(), Some(0));
        }
        let output = cook.run_args(&["compose", cook.name(), "--json"]);
        assert_eq!(output.status.code(), Some(0), "{moment}: {}", show(&output));
        let document: Value = serde_json::from_slice(&output.stdout).unwrap();
        let services = document["services"].as_object().unwrap();
        let names: BTreeSet<&str> = services.keys().map(String::as_str).collect();
        assert!(
            names.contains("participant-ada") && names.contains("judge-referee"),
            "{moment}: {names:?}"
        );
        programs.push(services["participant-ada"]["entrypoint"].clone());
        let file = cook.dir().join("compose/compose.yaml");
        let config = Command::new("docker-compose")
            .args(["-f", file.to_str().unwrap(), "config", "-q"])
            .output()
            .expect("docker-compose is installed (Debian's package)");
        assert!(config.status.success(), "{moment}: {}", show(&config));
    }
    assert!(
        programs[0].as_array().is_some_and(|p| !p.is_empty()),
        "{programs:?}"
    );
    assert_eq!(
        programs[0], programs[1],
        "the same program before and after a run"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
