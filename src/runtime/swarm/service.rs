//! A cell as a Swarm service: the hardening baseline ([`Hardening`], the same value a local
//! container renders) wherever Swarm can express it, and what it cannot, named.

use bollard::Docker;
use bollard::models::{
    EndpointSpec, EndpointSpecModeEnum, Limit, NetworkAttachmentConfig, ResourceObject,
    ServiceSpec, ServiceSpecMode, ServiceSpecModeReplicated, TaskSpec, TaskSpecContainerSpec,
    TaskSpecContainerSpecPrivileges, TaskSpecLogDriver, TaskSpecPlacement, TaskSpecResources,
    TaskSpecRestartPolicy, TaskSpecRestartPolicyConditionEnum,
};
use futures_util::StreamExt;

use super::super::docker::{area_mount, operation, ulimits};
use super::super::hardening::Hardening;
use super::super::{Area, CellSpec, LABEL_CELL, LABEL_ROLE, ObjectRef, RuntimeError, Unenforced};

/// A node labelled `io.multicooker.cells=false` runs no cell (a manager kept free, a node that
/// only carries egress).
pub const NODE_LABEL_CELLS: &str = "io.multicooker.cells";
/// A node labelled `io.multicooker.egress=false` runs no egress proxy (a node without a way
/// out, or one that must not hold an outside leg). Unlabelled nodes run both.
pub const NODE_LABEL_EGRESS: &str = "io.multicooker.egress";

/// Where a service may be placed: egress proxies on nodes that allow egress, every other
/// role on nodes that allow cells. A node without the label matches (`!=`), so an unlabelled
/// cluster places anything anywhere.
pub(super) fn constraints(spec: &CellSpec) -> Vec<String> {
    vec![format!("node.labels.{}!=false", placement_label(spec))]
}

/// The node label that decides where this service may run.
pub(super) fn placement_label(spec: &CellSpec) -> &'static str {
    if spec.labels.get(LABEL_ROLE) == Some("proxy") {
        NODE_LABEL_EGRESS
    } else {
        NODE_LABEL_CELLS
    }
}

/// What a Swarm service on API 1.41 cannot be made to do.
pub(super) const UNENFORCED: &[Unenforced] = &[
    Unenforced {
        property: "no-new-privileges is set",
        compensation: "Swarm on API 1.41 drops NoNewPrivileges from service specs; compensated by the cell's init starting the program as a non-root user with an empty capability bounding set (a set-uid file gains it no capability), a read-only root, and reported as not enforced",
    },
    Unenforced {
        property: "swap is off (memory + swap = memory)",
        compensation: "Swarm services cannot set memory-swap (it becomes twice the memory); run the nodes without swap",
    },
];

/// The internal overlay of a cell that has no network (Swarm has no `none`).
pub(super) fn alone_network(cell: &str) -> String {
    super::super::names::fit(&format!("{cell}-alone"))
}

/// The service of one cell.
pub(super) fn service_spec(
    spec: &CellSpec,
    image: &str,
    program: &[String],
    networks: &[String],
) -> ServiceSpec {
    let hardening = Hardening::of(spec);
    let labels = spec.labels.to_map();
    let volume_labels = spec.labels.clone().with(LABEL_CELL, &spec.name);
    // Swarm's tmpfs mounts ignore owner and mode: HOME and /tmp are in-memory volumes too.
    let scratch = spec.tmpfs.iter().map(|t| Area {
        target: t.target.clone(),
        size_bytes: t.size_bytes,
        owner: t.owner.unwrap_or((0, 0)),
        mode: t.mode,
    });
    let mounts = spec
        .areas
        .iter()
        .cloned()
        .chain(scratch)
        .map(|area| area_mount(&area, &volume_labels))
        .collect();
    #[expect(clippy::cast_possible_truncation, reason = "a few cores")]
    let nano_cpus = (spec.limits.cpus * 1e9).round() as i64;
    let memory = i64::try_from(spec.limits.memory_bytes).unwrap_or(i64::MAX);
    let container = TaskSpecContainerSpec {
        image: Some(image.to_owned()),
        labels: Some(labels.clone()),
        command: Some(spec.init.argv(&spec.user, program)),
        hostname: Some(hardening.hostname.into()),
        env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        dir: Some(spec.workdir.clone()),
        // As on Docker: init is root with INIT_CAPABILITIES only, the program runs as spec.user.
        user: Some(hardening.user.into()),
        // Sent for engines that honour it; 20.10 drops it (see UNENFORCED).
        privileges: Some(TaskSpecContainerSpecPrivileges {
            no_new_privileges: Some(hardening.no_new_privileges),
            ..Default::default()
        }),
        tty: Some(false),
        open_stdin: Some(hardening.stdin),
        read_only: Some(hardening.read_only_root),
        mounts: Some(mounts),
        stop_grace_period: Some(1_000_000_000),
        oom_score_adj: Some(hardening.oom_score_adj),
        init: Some(hardening.engine_init),
        capability_drop: Some(hardening.capabilities_dropped()),
        capability_add: Some(hardening.capabilities.clone()),
        ulimits: Some(ulimits(&hardening)),
        ..Default::default()
    };
    ServiceSpec {
        name: Some(spec.name.clone()),
        labels: Some(labels),
        task_template: Some(TaskSpec {
            container_spec: Some(container),
            resources: Some(TaskSpecResources {
                limits: Some(Limit {
                    nano_cpus: Some(nano_cpus),
                    memory_bytes: Some(memory),
                    pids: Some(hardening.pids_limit()),
                }),
                // Placed by what it may use: concurrency is bounded by the cluster's capacity.
                reservations: Some(ResourceObject {
                    nano_cpus: Some(nano_cpus),
                    memory_bytes: Some(memory),
                    generic_resources: None,
                }),
                ..Default::default()
            }),
            placement: Some(TaskSpecPlacement {
                constraints: Some(constraints(spec)),
                ..Default::default()
            }),
            restart_policy: Some(TaskSpecRestartPolicy {
                condition: Some(TaskSpecRestartPolicyConditionEnum::NONE),
                ..Default::default()
            }),
            networks: Some(
                networks
                    .iter()
                    .map(|n| NetworkAttachmentConfig {
                        target: Some(n.clone()),
                        ..Default::default()
                    })
                    .collect(),
            ),
            // As on Docker: the node's engine stores nothing a cell prints (a login it shows
            // would stay on the node until `clean`); its output is read through the attach
            // API of the node's engine, attached before the go file lets the program start.
            log_driver: Some(TaskSpecLogDriver {
                name: Some(hardening.log_driver.into()),
                options: None,
            }),
            ..Default::default()
        }),
        // A removed replicated-job keeps running on 20.10; a one-replica service does not.
        mode: Some(ServiceSpecMode {
            replicated: Some(ServiceSpecModeReplicated { replicas: Some(1) }),
            ..Default::default()
        }),
        // No IPVS in these kernels: DNS round robin, no virtual IP.
        endpoint_spec: Some(EndpointSpec {
            mode: Some(EndpointSpecModeEnum::DNSRR),
            ports: None,
        }),
        ..Default::default()
    }
}

/// Tags a local image into the registry, pushes it, and returns `registry/repo@digest`.
pub(super) async fn push(
    docker: &Docker,
    registry: &str,
    tag: &str,
) -> Result<String, RuntimeError> {
    let object = || ObjectRef::image(tag);
    let (repo, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
    let remote = format!("{registry}/{repo}");
    let options = bollard::query_parameters::TagImageOptionsBuilder::default()
        .repo(&remote)
        .tag(version)
        .build();
    docker
        .tag_image(tag, Some(options))
        .await
        .map_err(|e| operation("tag", object(), &e))?;
    let push_options = bollard::query_parameters::PushImageOptionsBuilder::default()
        .tag(version)
        .build();
    let mut stream = docker.push_image(&remote, Some(push_options), None);
    while let Some(item) = stream.next().await {
        let info = item.map_err(|e| operation("push", object(), &e))?;
        if let Some(message) = info.error_detail.and_then(|d| d.message) {
            return Err(RuntimeError::Operation {
                operation: "push",
                object: object(),
                status: None,
                message,
            });
        }
    }
    // The remote tag, not the local one: a concurrent rebuild may have moved the local tag.
    let digest = docker
        .inspect_image(&format!("{remote}:{version}"))
        .await
        .map_err(|e| operation("inspect", object(), &e))?
        .repo_digests
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.starts_with(&format!("{remote}@")));
    digest.ok_or_else(|| RuntimeError::Operation {
        operation: "push",
        object: object(),
        status: None,
        message: format!("the registry `{registry}` gave no digest"),
    })
}

/// Deletes a pushed manifest from the registry (the tag the push added goes with it), over
/// HTTPS, else plain HTTP as an insecure registry is. Best effort and bounded: a registry
/// that refuses deletion (`storage.delete.enabled` off, authentication) keeps it.
pub(super) async fn unpublish(registry: &str, repo: &str, digest: &str) {
    let urls: Vec<String> = ["https", "http"]
        .iter()
        .map(|scheme| format!("{scheme}://{registry}/v2/{repo}/manifests/{digest}"))
        .collect();
    let _ = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(std::time::Duration::from_secs(5)))
            .http_status_as_error(false)
            .build()
            .into();
        for url in urls {
            let accepted = agent
                .delete(&url)
                .header(
                    "Accept",
                    "application/vnd.docker.distribution.manifest.v2+json",
                )
                .call()
                .is_ok_and(|r| matches!(r.status().as_u16(), 202 | 404));
            if accepted {
                return;
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Init, Labels, Limits};

    /// A swarm service and a local container render the one baseline: the same user,
    /// capabilities, read-only root, no-new-privileges, pids, OOM score, ulimits and log driver.
    #[test]
    fn a_service_renders_the_same_baseline_as_a_container() {
        let spec = CellSpec {
            name: "mc-x-p-alpha".into(),
            image: "mc-x-dummy:latest".into(),
            network: None,
            labels: Labels::new("x", "participant"),
            user: "1000:1000".into(),
            env: Vec::new(),
            areas: Vec::new(),
            tmpfs: Vec::new(),
            limits: Limits {
                memory_bytes: 1 << 30,
                memory_swap_bytes: 1 << 30,
                cpus: 1.0,
                pids: 128,
            },
            workdir: "/work".into(),
            program: None,
            init: Init {
                wait_for_go: true,
                launch: false,
                hold: false,
                timeout: None,
                deadline: std::time::Duration::from_secs(60),
                task_root: false,
                go_dir: None,
            },
            task: None,
        };
        let host = super::super::super::docker::host_config(&spec);
        let body = super::super::super::docker::container_body(&spec, &[]);
        let service = service_spec(&spec, "registry/image@sha256:0", &[], &[]);
        let task = service.task_template.unwrap();
        let container = task.container_spec.unwrap();
        assert_eq!(container.user, body.user);
        assert_eq!(container.hostname, body.hostname);
        assert_eq!(container.capability_drop, host.cap_drop);
        assert_eq!(container.capability_add, host.cap_add);
        assert_eq!(container.read_only, host.readonly_rootfs);
        assert_eq!(container.read_only, Some(true));
        assert_eq!(
            container.privileges.unwrap().no_new_privileges,
            Some(true),
            "sent even where 20.10 drops it"
        );
        assert_eq!(container.oom_score_adj, host.oom_score_adj);
        assert_eq!(container.ulimits, host.ulimits);
        assert_eq!(container.open_stdin, body.open_stdin);
        assert_eq!(task.resources.unwrap().limits.unwrap().pids, Some(128));
        assert_eq!(host.pids_limit, Some(128));
        assert_eq!(task.log_driver.unwrap().name, host.log_config.unwrap().typ,);
    }
}
