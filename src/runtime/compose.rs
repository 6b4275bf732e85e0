//! A compose file of a cook's cells, for an operator to audit and to replay one cell by hand
//! (`docker-compose -f compose/compose.yaml run --rm participant-ada`). It is rendered from the
//! very requests the engine gets ([`container_body`], [`NetworkSpec`]): the same image, user,
//! environment, mounts, tmpfs, capabilities, security options, limits, ulimits, logging and
//! network, so what an auditor reads is what runs. Subnets are left to the engine (multicooker
//! itself passes an explicit /28 from its pool when it creates a network).

use serde_json::{Map, Value, json};

use super::docker::{bridge_name, container_body};
use super::{CellSpec, NetworkSpec};

/// One compose service from a cell's engine request.
pub fn service(spec: &CellSpec) -> Value {
    let body = container_body(spec);
    let host = body.host_config.clone().unwrap_or_default();
    let mut service = Map::new();
    service.insert("image".into(), json!(body.image));
    service.insert("container_name".into(), json!(spec.name));
    service.insert("hostname".into(), json!(body.hostname));
    service.insert("user".into(), json!(body.user));
    service.insert("working_dir".into(), json!(body.working_dir));
    if let Some(command) = &body.cmd {
        service.insert("command".into(), json!(command));
    }
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
        .mounts
        .iter()
        .map(|m| {
            json!({"type": "bind", "source": m.source, "target": m.target, "read_only": m.read_only, "bind": {"propagation": "rprivate"}})
        })
        .collect();
    service.insert("volumes".into(), json!(volumes));
    match &spec.network {
        Some(network) => service.insert("networks".into(), json!([network])),
        None => service.insert("network_mode".into(), json!("none")),
    };
    if let Some(log) = host.log_config {
        service.insert(
            "logging".into(),
            json!({"driver": log.typ, "options": log.config}),
        );
    }
    Value::Object(service)
}

/// One compose network from the engine request's spec.
pub fn network(spec: &NetworkSpec) -> Value {
    json!({
        "name": spec.name,
        "driver": "bridge",
        "internal": spec.internal,
        "labels": spec.labels.to_map(),
        "driver_opts": {"com.docker.network.bridge.name": bridge_name(&spec.name)},
    })
}

/// A whole compose document: `(service name, cell, its network)` in order.
pub fn document(project: &str, cells: &[(String, CellSpec, Option<NetworkSpec>)]) -> Value {
    let mut services = Map::new();
    let mut networks = Map::new();
    for (name, spec, net) in cells {
        services.insert(name.clone(), service(spec));
        if let Some(net) = net {
            networks.insert(net.name.clone(), network(net));
        }
    }
    json!({"x-multicooker-project": project, "services": services, "networks": networks})
}
