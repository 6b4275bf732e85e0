//! Egress control against the real engine (no internet needed): a fake "model API" and a decoy
//! run on their own network; an allowlisted participant reaches only the allowed one, only
//! through its proxy, and never a sibling, a port the host publishes, or the Docker socket.

use std::collections::HashMap;

use multicooker::runtime::{LABEL_ROOT, Labels, NetworkSpec, ObjectRef, Runtime};
use multicooker::state::root_id;
use serde_json::Value;

use crate::common::cells::TestCell;
use crate::common::{TestCook, block_on, engine, show};

/// Test doubles on their own network, labelled with the cook so cleanup covers them.
struct Doubles {
    network: String,
    servers: Vec<String>,
    published: String,
    _work: tempfile::TempDir,
}

fn double(cook: &TestCook, work: &std::path::Path, name: &str, network: &str) -> TestCell {
    let mut cell = TestCell::new(
        name,
        &base_image(),
        Some(network),
        Labels::new(cook.name(), "test-double").with(LABEL_ROOT, &root_id(cook.root())),
        "listen:8080,sleep:300",
        &work.join(name),
    );
    cell.spec.limits.memory_bytes = 64 << 20;
    cell.spec.limits.memory_swap_bytes = 64 << 20;
    cell.spec.limits.cpus = 0.2;
    cell.spec.limits.pids = 32;
    cell
}

fn base_image() -> String {
    let context =
        multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
            .unwrap();
    multicooker::flavor::base_tag("dummy", &context.digest)
}

fn ip_of(container: &str, network: &str) -> String {
    block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        let inspect = docker.inspect_container(container, None).await.unwrap();
        inspect.network_settings.unwrap().networks.unwrap()[network]
            .ip_address
            .clone()
            .unwrap()
    })
}

/// Starts `fakeapi` and `decoy` on a private network, and a server publishing a host port.
fn start_doubles(cook: &TestCook, tag: &str) -> Doubles {
    let work = tempfile::tempdir().unwrap();
    let network = format!("mc-test-{tag}-apinet");
    let servers = vec![
        format!("mc-test-{tag}-fakeapi"),
        format!("mc-test-{tag}-decoy"),
        format!("mc-test-{tag}-published"),
    ];
    block_on(async {
        let runtime = engine().await;
        let labels =
            Labels::new(cook.name(), "test-double").with(LABEL_ROOT, &root_id(cook.root()));
        runtime
            .create_network(&NetworkSpec {
                name: network.clone(),
                labels,
                internal: false,
                isolated: false,
            })
            .await
            .unwrap();
        for server in &servers[..2] {
            double(cook, work.path(), server, &network)
                .start(&runtime)
                .await;
        }
        // A server that publishes a port on the host, as `docker run -p` would.
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        let mut published = double(cook, work.path(), &servers[2], "bridge");
        let archives = published.prepare();
        let program = published.spec.program.clone().unwrap();
        let mut body = multicooker::runtime::docker::container_body(&published.spec, &program);
        let binding = bollard::models::PortBinding {
            host_ip: Some("0.0.0.0".into()),
            host_port: Some(String::new()),
        };
        let mut ports = HashMap::new();
        ports.insert("8080/tcp".to_owned(), Some(vec![binding]));
        body.host_config.as_mut().unwrap().port_bindings = Some(ports);
        body.exposed_ports = Some(vec!["8080/tcp".to_owned()]);
        let options = bollard::query_parameters::CreateContainerOptionsBuilder::default()
            .name(&servers[2])
            .build();
        docker.create_container(Some(options), body).await.unwrap();
        published.stage(&runtime, archives).await;
    });
    let published = block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        let inspect = docker.inspect_container(&servers[2], None).await.unwrap();
        let ports = inspect.network_settings.unwrap().ports.unwrap();
        ports["8080/tcp"].as_ref().unwrap()[0]
            .host_port
            .clone()
            .unwrap()
    });
    Doubles {
        network,
        servers,
        published,
        _work: work,
    }
}

fn stop_doubles(doubles: &Doubles) {
    block_on(async {
        let runtime = engine().await;
        for server in &doubles.servers {
            runtime.remove(&ObjectRef::cell(server)).await.unwrap();
        }
        runtime
            .remove(&ObjectRef::network(&doubles.network))
            .await
            .unwrap();
    });
}

#[test]
fn an_allowlisted_participant_reaches_only_its_allowed_host_through_its_proxy() {
    let tag = format!("egress{}", std::process::id());
    let cook = TestCook::empty("egress");
    let doubles = start_doubles(&cook, &tag);
    let (fakeapi, decoy) = (&doubles.servers[0], &doubles.servers[1]);
    let fakeapi_ip = ip_of(fakeapi, &doubles.network);
    let sibling = crate::common::cell_name(&cook, multicooker::state::Role::Participant, "sibling");
    let probes = [
        format!("via-proxy:{fakeapi}:8080"),
        format!("via-proxy:{decoy}:8080"),
        format!("via-proxy:{sibling}:8080"),
        format!("via-proxy:{fakeapi_ip}:8080"),
        format!("connect:{fakeapi}:8080"),
        format!("connect:{fakeapi_ip}:8080"),
        format!("connect:{}:8080", ip_of(decoy, &doubles.network)),
        format!("connect:172.17.0.1:{}", doubles.published),
        "read:/var/run/docker.sock".to_owned(),
    ];
    let yaml = format!(
        "name: egress\ntimeout_s: 60\n\
network: {{mode: allowlist, allow: [\"{fakeapi}:8080\"], allow_private: true}}\n\
participants:\n  - {{name: reach, flavor: dummy, model: \"{}\"}}\n  - {{name: sibling, flavor: dummy, model: \"listen:8080,sleep:20\"}}\n",
        probes.join(",")
    );
    let cook = cook.with_files(&yaml);
    let output = cook
        .command(&["cook", cook.name(), "--participants", "reach,sibling"])
        .env("MULTICOOKER_EGRESS_NETWORK", &doubles.network)
        .env("MULTICOOKER_CANARY_DIRECT", format!("{fakeapi_ip}:8080"))
        .output()
        .unwrap();
    stop_doubles(&doubles);
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let lines: Vec<String> = cook
        .text("work/reach/out/PROBES.txt")
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        lines[0],
        format!("via-proxy {fakeapi}:8080 200 hello from mc-cell"),
        "the allowed host, through the proxy"
    );
    assert_eq!(
        lines[1],
        format!("via-proxy {decoy}:8080 403"),
        "a host not on the list"
    );
    assert_eq!(
        lines[2],
        format!("via-proxy {sibling}:8080 403"),
        "a sibling, through the proxy"
    );
    assert_eq!(
        lines[3],
        format!("via-proxy {fakeapi_ip}:8080 403"),
        "the allowed host's IP is not its name"
    );
    for (line, what) in lines[4..].iter().zip([
        "name without proxy",
        "IP without proxy",
        "decoy IP",
        "published host port",
        "docker socket",
    ]) {
        assert!(
            line.contains(" error "),
            "{what} must be unreachable: {line}"
        );
    }
    assert_egress_recorded(&cook, fakeapi, decoy);
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

/// `RUN_RESULT.json` records the mode and a passed canary, and the proxy logged its decisions.
fn assert_egress_recorded(cook: &TestCook, fakeapi: &str, decoy: &str) {
    let run = cook.json("RUN_RESULT.json");
    let reach = run["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "reach")
        .unwrap()
        .clone();
    assert_eq!(reach["status"], "ok");
    assert_eq!(reach["egress"]["mode"], "allowlist");
    let canary = &reach["egress"]["canary"];
    for check in ["denied_refused", "allowed_reachable", "direct_blocked"] {
        assert_eq!(canary[check]["ok"], true, "canary {check}: {canary}");
    }
    let proxy_log = cook.text("logs/reach/proxy.log");
    let logged = |verdict: &str, host: &str| {
        proxy_log
            .lines()
            .any(|l| l.starts_with(verdict) && l.contains(&format!("CONNECT {host}:8080")))
    };
    assert!(
        logged("allow", fakeapi) && logged("deny", decoy),
        "every decision is logged: {proxy_log}"
    );
    let sibling_result: &Value = run["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "sibling")
        .unwrap();
    assert_eq!(sibling_result["egress"]["canary"]["passed"], true);
}

#[test]
fn a_failed_canary_stops_the_cell_with_its_reason() {
    let yaml = "name: canary\ntimeout_s: 60\n\
network: {mode: allowlist, allow: [\"nowhere.invalid:443\"]}\n\
participants:\n  - {name: blocked, flavor: dummy}\n";
    let cook = TestCook::new("canary", yaml);
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(1), "{}", show(&output));
    let run = cook.json("RUN_RESULT.json");
    let blocked = &run["participants"][0];
    assert_eq!(blocked["status"], "start_failed");
    let error = blocked["error"].as_str().unwrap();
    assert!(
        error.starts_with("egress canary failed: allowed_reachable"),
        "{error}"
    );
    assert_eq!(blocked["egress"]["canary"]["denied_refused"]["ok"], true);
    assert!(
        cook.leftovers().is_empty(),
        "left behind: {:?}",
        cook.leftovers()
    );
}

#[test]
fn a_cell_without_network_has_only_loopback() {
    let yaml = "name: none\ntimeout_s: 60\nnetwork: none\nparticipants:\n  - {name: isolated, flavor: dummy, model: \"probe,connect:1.1.1.1:443\"}\n";
    let cook = TestCook::new("nonet", yaml);
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let probes = cook.text("work/isolated/out/PROBES.txt");
    assert!(probes.contains("connect 1.1.1.1:443 error"), "{probes}");
    let run = cook.json("RUN_RESULT.json");
    assert_eq!(run["participants"][0]["egress"]["mode"], "none");
    assert!(cook.leftovers().is_empty());
}
