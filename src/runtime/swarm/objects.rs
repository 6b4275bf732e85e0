//! The cluster's objects: overlays, listing and removal by label on the manager and on every
//! node (what nodes keep after a service is gone: task containers, the areas' volume records,
//! pulled images), and the cluster's capacity. A node that does not answer is skipped with one
//! warning naming it, and what could not be removed there is recorded (`left.rs`). An image
//! goes from the manager, from every node that pulled it, and from the registry.

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use bollard::models::{Ipam, IpamConfig, NetworkCreateRequest};
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, ListNodesOptionsBuilder,
    ListServicesOptionsBuilder, ListTasksOptionsBuilder, ListVolumesOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveVolumeOptionsBuilder,
};

use super::super::docker::{DockerRuntime, SubnetPool, engine_message, operation, status};
use super::super::{EngineInfo, LABEL_CELL, ObjectKind, ObjectRef, RuntimeError, Selector};
use super::Inner;

/// Names of objects that live on one node: `node/<host>/<name>`.
const NODE_PREFIX: &str = "node/";

/// Creates an attachable overlay with an explicit subnet from the pool.
pub(super) async fn create_overlay(
    docker: &Docker,
    pool: &SubnetPool,
    spec: &super::super::NetworkSpec,
) -> Result<(), RuntimeError> {
    let object = ObjectRef::network(&spec.name);
    let mut replaced = false;
    for subnet in pool.candidates(&spec.name).take(64) {
        let request = NetworkCreateRequest {
            name: spec.name.clone(),
            driver: Some("overlay".into()),
            internal: Some(spec.internal),
            attachable: Some(true),
            ipam: Some(Ipam {
                driver: Some("default".into()),
                config: Some(vec![IpamConfig {
                    subnet: Some(subnet),
                    ..Default::default()
                }]),
                options: None,
            }),
            labels: Some(spec.labels.to_map()),
            ..Default::default()
        };
        match docker.create_network(request).await {
            Ok(_) => return Ok(()),
            Err(e) if engine_message(&e).contains("overlap") => {}
            Err(e) if status(&e) == Some(409) && !replaced => {
                remove_network(docker, &spec.name).await?;
                replaced = true;
            }
            Err(e) => return Err(operation("create", object, &e)),
        }
    }
    Err(RuntimeError::NoSubnet {
        network: spec.name.clone(),
        pool: "the swarm pool".into(),
    })
}

/// Removes an overlay (tasks leave it a moment after their service is gone: a few tries).
pub(super) async fn remove_network(docker: &Docker, name: &str) -> Result<(), RuntimeError> {
    for attempt in 0..40 {
        match docker.remove_network(name).await {
            Ok(()) => {
                // The manager removes an overlay a moment after saying so: wait until it has.
                for _ in 0..40 {
                    match docker
                        .inspect_network(
                            name,
                            None::<bollard::query_parameters::InspectNetworkOptions>,
                        )
                        .await
                    {
                        Err(e) if status(&e) == Some(404) => break,
                        _ => tokio::time::sleep(Duration::from_millis(250)).await,
                    }
                }
                return Ok(());
            }
            Err(e) if status(&e) == Some(404) => return Ok(()),
            Err(e) if attempt < 39 && engine_message(&e).contains("active endpoints") => {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(operation("remove", ObjectRef::network(name), &e)),
        }
    }
    Ok(())
}

/// Removes what a node keeps of a cell: its task containers and its areas' volumes.
pub(super) async fn sweep_cell(engine: &DockerRuntime, cell: &str) -> Result<(), RuntimeError> {
    sweep_cell_but(engine, cell, &[]).await
}

/// [`sweep_cell`], sparing the tasks of the services in `live` (ids): a cell of the same name
/// created again since (the same cook resumed, the same night run again) is not the one left
/// behind. With services to spare, only volumes no container uses are removed.
pub(super) async fn sweep_cell_but(
    engine: &DockerRuntime,
    cell: &str,
    live: &[String],
) -> Result<(), RuntimeError> {
    let docker = engine.client();
    let mut filters = HashMap::new();
    filters.insert(
        "label".to_owned(),
        vec![format!("com.docker.swarm.service.name={cell}")],
    );
    let options = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filters)
        .build();
    let containers = docker
        .list_containers(Some(options))
        .await
        .map_err(|e| operation("list", ObjectRef::cell(cell), &e))?;
    for container in containers {
        let service = container
            .labels
            .as_ref()
            .and_then(|l| l.get("com.docker.swarm.service.id"));
        if service.is_some_and(|s| live.contains(s)) {
            continue;
        }
        if let Some(id) = container.id {
            let options = RemoveContainerOptionsBuilder::default()
                .force(true)
                .v(true)
                .build();
            match docker.remove_container(&id, Some(options)).await {
                Err(e) if !matches!(status(&e), Some(404 | 409)) => {
                    return Err(operation("remove", ObjectRef::cell(&id), &e));
                }
                _ => {}
            }
        }
    }
    let mut filters = HashMap::new();
    filters.insert("label".to_owned(), vec![format!("{LABEL_CELL}={cell}")]);
    if !live.is_empty() {
        filters.insert("dangling".to_owned(), vec!["true".to_owned()]);
    }
    let options = ListVolumesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let volumes = docker
        .list_volumes(Some(options))
        .await
        .map_err(|e| operation("list", ObjectRef::cell(cell), &e))?;
    for volume in volumes.volumes.unwrap_or_default() {
        remove_volume(docker, &volume.name).await?;
    }
    Ok(())
}

pub(super) async fn remove_volume(docker: &Docker, name: &str) -> Result<(), RuntimeError> {
    // A volume is released a moment after its container is removed.
    for attempt in 0..20 {
        let options = RemoveVolumeOptionsBuilder::default().force(true).build();
        match docker.remove_volume(name, Some(options)).await {
            Ok(()) => return Ok(()),
            Err(e) if status(&e) == Some(404) => return Ok(()),
            Err(e) if attempt < 19 && status(&e) == Some(409) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(operation("remove", ObjectRef::volume(name), &e)),
        }
    }
    Ok(())
}

/// Removes any object: a cell (service, containers, volumes), an overlay, an image on the
/// manager, or a `node/<host>/…` object on its node.
pub(super) async fn remove(inner: &Inner, object: &ObjectRef) -> Result<(), RuntimeError> {
    if let Some(rest) = object.name.strip_prefix(NODE_PREFIX)
        && let Some((host, name)) = rest.split_once('/')
    {
        let local = ObjectRef {
            kind: object.kind,
            name: name.to_owned(),
        };
        return remove_on(inner, host, &local).await;
    }
    match object.kind {
        ObjectKind::Cell => inner.remove_cell(&object.name).await,
        ObjectKind::Network => remove_network(inner.docker(), &object.name).await,
        ObjectKind::Image => remove_image(inner, &object.name).await,
        ObjectKind::Volume => inner.manager.engine_remove(object).await,
    }
}

/// Removes an object from one node's engine; a node that is not reached is left it, recorded.
async fn remove_on(inner: &Inner, host: &str, object: &ObjectRef) -> Result<(), RuntimeError> {
    let Some((_, engine)) = inner.nodes.get(host) else {
        return Ok(());
    };
    let removed = match inner.nodes.usable(host).await {
        Ok(()) => match object.kind {
            ObjectKind::Volume => remove_volume(engine.client(), &object.name).await,
            _ => engine.engine_remove(object).await,
        },
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if super::nodes::unreached(&e) => {
            inner.nodes.leave(host, object.clone());
            inner.nodes.skipped(host, "removing objects");
            Ok(())
        }
        other => other,
    }
}

/// Removes an image everywhere a cell's use put it: its tag on the manager, the registry tag
/// the push added (on the manager and in the registry), and every node's pulled copy.
async fn remove_image(inner: &Inner, tag: &str) -> Result<(), RuntimeError> {
    // Listing finds the registry tag too (it carries the cook's labels): the same image.
    let tag = tag
        .strip_prefix(&format!("{}/", inner.registry))
        .unwrap_or(tag);
    let (repo, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
    let remote = format!("{}/{repo}", inner.registry);
    let pushed = inner
        .docker()
        .inspect_image(&format!("{remote}:{version}"))
        .await
        .ok()
        .and_then(|i| i.repo_digests)
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.starts_with(&format!("{remote}@")));
    inner.manager.engine_remove(&ObjectRef::image(tag)).await?;
    inner
        .manager
        .engine_remove(&ObjectRef::image(&format!("{remote}:{version}")))
        .await?;
    inner.pushed.lock().await.remove(tag);
    let Some(reference) = pushed else {
        return Ok(());
    };
    let hosts: Vec<String> = inner.nodes.names().map(str::to_owned).collect();
    for host in hosts {
        remove_on(inner, &host, &ObjectRef::image(&reference)).await?;
    }
    if let Some((_, digest)) = reference.split_once('@') {
        super::service::unpublish(&inner.registry, repo, digest).await;
    }
    Ok(())
}

/// Objects whose labels match, on the manager (services, overlays, images) and on every node
/// (task containers, volumes, pulled images).
pub(super) async fn list(
    inner: &Inner,
    selector: &Selector,
) -> Result<Vec<ObjectRef>, RuntimeError> {
    let mut filters = HashMap::new();
    filters.insert("label".to_owned(), selector.engine_filters());
    let fail = |what: &str, e: &bollard::errors::Error| operation("list", ObjectRef::cell(what), e);
    let docker = inner.docker();
    let mut found = Vec::new();
    let services = docker
        .list_services(Some(
            ListServicesOptionsBuilder::default()
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|e| fail("services", &e))?;
    found.extend(
        services
            .into_iter()
            .filter_map(|s| s.spec.and_then(|s| s.name))
            .map(|n| ObjectRef::cell(&n)),
    );
    let networks = docker
        .list_networks(Some(
            ListNetworksOptionsBuilder::default()
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|e| fail("networks", &e))?;
    found.extend(
        networks
            .into_iter()
            .filter_map(|n| n.name)
            .map(|n| ObjectRef::network(&n)),
    );
    for object in inner.manager.engine_list(selector).await? {
        if object.kind == ObjectKind::Image {
            found.push(object);
        }
    }
    inner.nodes.fence_answering().await;
    let hosts: Vec<String> = inner.nodes.names().map(str::to_owned).collect();
    for host in hosts {
        let Some((_, engine)) = inner.nodes.get(&host) else {
            continue;
        };
        let listed = match inner.nodes.usable(&host).await {
            Ok(()) => engine.engine_list(selector).await,
            Err(e) => Err(e),
        };
        let listed = match listed {
            Err(e) if super::nodes::unreached(&e) => {
                inner.nodes.skipped(&host, "listing");
                continue;
            }
            other => other?,
        };
        // A cell's area volumes outlive its service when a run was killed: listed as their
        // cell too (whose removal sweeps every node for them), so a sweep selects them by the
        // cell's name, never another cell's.
        let volumes = cell_volumes(engine.client(), selector).await;
        for object in listed {
            if object.kind == ObjectKind::Network {
                continue;
            }
            found.push(ObjectRef {
                kind: object.kind,
                name: format!("{NODE_PREFIX}{host}/{}", object.name),
            });
        }
        found.extend(volumes.into_iter().map(|(_, cell)| ObjectRef::cell(&cell)));
    }
    found.sort();
    found.dedup();
    Ok(found)
}

/// A node's volumes whose labels match and name their cell: (volume, cell).
async fn cell_volumes(docker: &Docker, selector: &Selector) -> Vec<(String, String)> {
    let mut filters = HashMap::new();
    filters.insert("label".to_owned(), selector.engine_filters());
    let options = ListVolumesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let Ok(listed) = docker.list_volumes(Some(options)).await else {
        return Vec::new();
    };
    listed
        .volumes
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| {
            let cell = v.labels.get(LABEL_CELL)?.clone();
            Some((v.name, cell))
        })
        .collect()
}

/// Task states a task never leaves.
pub(super) const ENDED: &[&str] = &[
    "complete", "shutdown", "failed", "rejected", "orphaned", "remove",
];

/// A selected service with a task that has not ended.
struct Live {
    name: String,
    /// Its [`LABEL_DEADLINE`](super::super::LABEL_DEADLINE), when it has one.
    deadline: Option<u64>,
    /// When the service was created, and when its task last changed state (Unix seconds).
    created: Option<i64>,
    changed: Option<i64>,
    /// The task's state (`running`, `pending`, …).
    state: String,
}

/// The services whose labels match, with each task that has not ended.
async fn live(inner: &Inner, selector: &Selector) -> Result<Vec<Live>, RuntimeError> {
    // Tasks do not carry the service's labels: select the services, then their tasks.
    let mut filters = HashMap::new();
    filters.insert("label".to_owned(), selector.engine_filters());
    let services = inner
        .docker()
        .list_services(Some(
            ListServicesOptionsBuilder::default()
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|e| operation("list", ObjectRef::cell("services"), &e))?;
    let by_id: HashMap<String, (String, Option<u64>, Option<i64>)> = services
        .into_iter()
        .filter_map(|s| {
            let created = unix_seconds(s.created_at.as_deref());
            let spec = s.spec?;
            let deadline = spec
                .labels
                .as_ref()
                .and_then(|l| l.get(super::super::LABEL_DEADLINE))
                .and_then(|d| d.parse::<u64>().ok());
            Some((s.id?, (spec.name?, deadline, created)))
        })
        .collect();
    if by_id.is_empty() {
        return Ok(Vec::new());
    }
    let mut filters = HashMap::new();
    filters.insert("service".to_owned(), by_id.keys().cloned().collect());
    filters.insert("desired-state".to_owned(), vec!["running".to_owned()]);
    let tasks = inner
        .docker()
        .list_tasks(Some(
            ListTasksOptionsBuilder::default().filters(&filters).build(),
        ))
        .await
        .map_err(|e| operation("list", ObjectRef::cell("tasks"), &e))?;
    Ok(tasks
        .into_iter()
        .filter_map(|t| {
            let status = t.status?;
            let state = status.state?.to_string();
            if ENDED.contains(&state.as_str()) {
                return None;
            }
            let (name, deadline, created) = by_id.get(&t.service_id?)?.clone();
            Some(Live {
                name,
                deadline,
                created,
                changed: unix_seconds(status.timestamp.as_deref()),
                state,
            })
        })
        .collect())
}

/// An engine timestamp (RFC 3339) as Unix seconds.
fn unix_seconds(text: Option<&str>) -> Option<i64> {
    text?
        .parse::<jiff::Timestamp>()
        .ok()
        .map(jiff::Timestamp::as_second)
}

/// Services whose labels match and whose task still runs.
pub(super) async fn running(
    inner: &Inner,
    selector: &Selector,
) -> Result<Vec<String>, RuntimeError> {
    // Not yet ended: the manager hears of a task's start a moment after the node.
    let mut names: Vec<String> = live(inner, selector)
        .await?
        .into_iter()
        .map(|l| l.name)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Services whose labels match and whose task runs past its deadline: the label's, moved by
/// the time the task waited for room (its deadline counts from its start).
pub(super) async fn overdue(
    inner: &Inner,
    selector: &Selector,
) -> Result<Vec<String>, RuntimeError> {
    let now = jiff::Timestamp::now().as_second();
    let mut names: Vec<String> = live(inner, selector)
        .await?
        .into_iter()
        .filter(|l| l.state == "running")
        .filter(|l| {
            let Some(deadline) = l.deadline.and_then(|d| i64::try_from(d).ok()) else {
                return false;
            };
            let waited = match (l.created, l.changed) {
                (Some(created), Some(started)) => (started - created).max(0),
                _ => 0,
            };
            deadline + waited < now
        })
        .map(|l| l.name)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The largest CPUs (nano) and memory (bytes) one Ready node offers.
pub(super) async fn largest_node(docker: &Docker, label: &str) -> Result<(i64, i64), RuntimeError> {
    let nodes = docker
        .list_nodes(Some(ListNodesOptionsBuilder::default().build()))
        .await
        .map_err(|e| RuntimeError::Unreachable {
            endpoint: None,
            message: e.to_string(),
        })?;
    Ok(nodes
        .into_iter()
        .filter(|n| {
            n.status
                .as_ref()
                .and_then(|s| s.state)
                .is_some_and(|s| s.to_string() == "ready")
        })
        // Nodes the placement constraint excludes (`label=false`) take no such service.
        .filter(|n| {
            n.spec
                .as_ref()
                .and_then(|s| s.labels.as_ref())
                .and_then(|l| l.get(label))
                .is_none_or(|v| v != "false")
        })
        .filter_map(|n| n.description.and_then(|d| d.resources))
        .fold((0, 0), |(cpus, memory), r| {
            (
                cpus.max(r.nano_cpus.unwrap_or(0)),
                memory.max(r.memory_bytes.unwrap_or(0)),
            )
        }))
}

/// The manager's version and the capacity of the Ready nodes.
pub(super) async fn info(docker: &Docker) -> Result<EngineInfo, RuntimeError> {
    let unreachable = |e: bollard::errors::Error| RuntimeError::Unreachable {
        endpoint: None,
        message: e.to_string(),
    };
    let version = docker.version().await.map_err(unreachable)?;
    let nodes = docker
        .list_nodes(Some(ListNodesOptionsBuilder::default().build()))
        .await
        .map_err(unreachable)?;
    let (mut cpus, mut memory, mut count) = (0u64, 0u64, 0u64);
    for node in nodes {
        let ready = node
            .status
            .as_ref()
            .and_then(|s| s.state)
            .is_some_and(|s| s.to_string() == "ready");
        let resources = node
            .description
            .and_then(|d| d.resources)
            .unwrap_or_default();
        if ready {
            count += 1;
            cpus += u64::try_from(resources.nano_cpus.unwrap_or(0) / 1_000_000_000).unwrap_or(0);
            memory += u64::try_from(resources.memory_bytes.unwrap_or(0)).unwrap_or(0);
        }
    }
    Ok(EngineInfo {
        backend: "swarm",
        version: version.version.unwrap_or_default(),
        api_version: docker.client_version().to_string(),
        mem_total: memory,
        cpus: cpus.max(1),
        nodes: count.max(1),
    })
}
