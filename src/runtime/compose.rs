//! A compose file of a cook's cells, for an operator to audit. It is rendered from the very
//! requests the engine gets ([`container_body`], [`NetworkSpec`]): the same image, entrypoint
//! (the cell's init, then its program), user, environment, areas, tmpfs, capabilities, security
//! options, limits, ulimits, logging and network, so what an auditor reads is what runs.
//! Subnets are left to the engine (multicooker itself passes an explicit /28 from its pool).
//!
//! Areas are in-memory volumes the host fills through the engine's archive API: a cell started
//! from this file by hand waits for its inputs (its init's go file) until its deadline.

use serde_json::{Map, Value, json};

use super::docker::{bridge_name, container_body};
use super::{CellSpec, NetworkSpec};

/// One compose service from a cell's engine request.
pub fn service(spec: &CellSpec, program: &[String]) -> Value {
    let body = container_body(spec, program);
    let host = body.host_config.clone().unwrap_or_default();
    let mut service = Map::new();
    service.insert("image".into(), json!(body.image));
    service.insert("container_name".into(), json!(spec.name));
    service.insert("hostname".into(), json!(body.hostname));
    service.insert("user".into(), json!(body.user));
    service.insert("working_dir".into(), json!(body.working_dir));
    service.insert("entrypoint".into(), json!(body.entrypoint));
    let environment: Map<String, Value> = spec
        .env
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    service.insert("environment".into(), Value::Object(environment));
    service.insert("labels".into(), json!(spec.labels.to_map()));
    service.insert(
        "read_only".into(),
        json!(host.readonly_rootfs.unwrap_or(false)),
    );
    service.insert("privileged".into(), json!(host.privileged.unwrap_or(false)));
    service.insert("cap_drop".into(), json!(host.cap_drop.unwrap_or_default()));
    service.insert(
        "security_opt".into(),
        json!(host.security_opt.unwrap_or_default()),
    );
    service.insert("mem_limit".into(), json!(host.memory));
    service.insert("memswap_limit".into(), json!(host.memory_swap));
    #[expect(clippy::cast_precision_loss, reason = "nano-CPUs of a few cores")]
    let cpus = host.nano_cpus.unwrap_or(0) as f64 / 1e9;
    service.insert("cpus".into(), json!(cpus));
    service.insert("pids_limit".into(), json!(host.pids_limit));
    service.insert("oom_score_adj".into(), json!(host.oom_score_adj));
    let ulimits: Map<String, Value> = host
        .ulimits
        .unwrap_or_default()
        .into_iter()
        .filter_map(|u| Some((u.name?, json!({"soft": u.soft, "hard": u.hard}))))
        .collect();
    service.insert("ulimits".into(), Value::Object(ulimits));
    let mut tmpfs: Vec<String> = host
        .tmpfs
        .unwrap_or_default()
        .into_iter()
        .map(|(target, options)| format!("{target}:{options}"))
        .collect();
    tmpfs.sort();
    service.insert("tmpfs".into(), json!(tmpfs));
    let volumes: Vec<Value> = spec
        .areas
        .iter()
        .enumerate()
        .map(|(index, area)| {
            json!({"type": "volume", "source": area_volume(spec, index), "target": area.target, "volume": {"nocopy": true}})
        })
        .collect();
    service.insert("volumes".into(), json!(volumes));
    match &spec.network {
        Some(network) => service.insert("networks".into(), json!([network])),
        None => service.insert("network_mode".into(), json!("none")),
    };
    if let Some(log) = host.log_config {
        // Compose wants `options` as a mapping or not at all (the `none` driver has none).
        let mut logging = serde_json::Map::new();
        logging.insert("driver".into(), json!(log.typ));
        if let Some(options) = log.config {
            logging.insert("options".into(), json!(options));
        }
        service.insert("logging".into(), Value::Object(logging));
    }
    Value::Object(service)
}

/// The compose name of a cell's area (the engine's is anonymous).
fn area_volume(spec: &CellSpec, index: usize) -> String {
    format!("{}-area{index}", spec.name)
}

/// The compose volumes of a cell's areas, with the engine's driver options.
fn area_volumes(spec: &CellSpec) -> Map<String, Value> {
    let host = super::docker::host_config(spec);
    spec.areas
        .iter()
        .enumerate()
        .zip(host.mounts.unwrap_or_default())
        .map(|((index, _), mount)| {
            let options = mount
                .volume_options
                .and_then(|o| o.driver_config)
                .and_then(|d| d.options)
                .unwrap_or_default();
            (
                area_volume(spec, index),
                json!({"driver": "local", "driver_opts": options, "labels": spec.labels.to_map()}),
            )
        })
        .collect()
}

/// One compose network from the engine request's spec.
pub fn network(spec: &NetworkSpec) -> Value {
    json!({
        "name": spec.name,
        "driver": "bridge",
        "internal": spec.internal,
        "labels": spec.labels.to_map(),
        "driver_opts": network_options(spec),
    })
}

fn network_options(spec: &NetworkSpec) -> Value {
    let mut options = json!({"com.docker.network.bridge.name": bridge_name(&spec.name)});
    if spec.isolated {
        options["com.docker.network.bridge.enable_icc"] = json!("false");
    }
    options
}

/// One service of a compose document: its name, the cell, the program its init runs, and
/// the networks it joins (the first is its own).
#[derive(Debug, Clone)]
pub struct Service {
    /// Compose service name.
    pub name: String,
    /// The cell as the engine gets it.
    pub spec: CellSpec,
    /// The program after init.
    pub program: Vec<String>,
    /// Networks it is on.
    pub networks: Vec<NetworkSpec>,
}

/// A whole compose document.
pub fn document(project: &str, cells: &[Service]) -> Value {
    let mut services = Map::new();
    let mut networks = Map::new();
    let mut volumes = Map::new();
    for cell in cells {
        let mut rendered = service(&cell.spec, &cell.program);
        if cell.networks.len() > 1 {
            let names: Vec<&str> = cell.networks.iter().map(|n| n.name.as_str()).collect();
            rendered["networks"] = json!(names);
        }
        services.insert(cell.name.clone(), rendered);
        for net in &cell.networks {
            networks.insert(net.name.clone(), network(net));
        }
        volumes.extend(area_volumes(&cell.spec));
    }
    json!({"x-multicooker-project": project, "services": services, "networks": networks, "volumes": volumes})
}
