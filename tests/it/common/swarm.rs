//! A real three-node Docker Swarm for the swarm backend's test: three `dockerd` in network
//! namespaces and Debian's `docker-registry` (`tests/swarm/swarm.sh`), brought up in a folder of
//! its own and torn down when the fixture drops, whatever the test did. multicooker reaches the
//! engines over TCP through the nodes' network (a cut node is cut for it too); the test's own
//! observations go through each node's unix socket, which a cut does not touch. The host's
//! engine is never touched.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::NodeSpecAvailabilityEnum;
use multicooker::runtime::swarm::SwarmConfig;

use super::{block_on, show};

/// The nodes, by hostname; `n1` is the manager.
pub(crate) const NODES: [&str; 3] = ["n1", "n2", "n3"];

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/swarm/swarm.sh");

/// A running swarm.
pub(crate) struct Swarm {
    dir: PathBuf,
    env: BTreeMap<String, String>,
    _parent: tempfile::TempDir,
}

impl Swarm {
    /// Starts the swarm, or fails saying what it needs.
    pub(crate) fn up() -> Self {
        // Unix socket paths are short: keep the folder near the root.
        let parent = tempfile::Builder::new()
            .prefix("mcsw")
            .tempdir_in("/tmp")
            .unwrap();
        let dir = parent.path().join("s");
        let mut swarm = Self {
            dir: dir.clone(),
            env: BTreeMap::new(),
            _parent: parent,
        };
        let output = script(&["up", dir.to_str().unwrap()]);
        assert!(
            output.status.success(),
            "the swarm did not come up (needs root, iproute2, dockerd and Debian's docker-registry package, fetched with apt-get):\n{}",
            show(&output)
        );
        let text = fs_err::read_to_string(dir.join("env")).unwrap();
        swarm.env = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        swarm
    }

    /// The variables that point multicooker at this swarm.
    pub(crate) fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// What `--backend swarm` reads from those variables.
    pub(crate) fn config(&self) -> SwarmConfig {
        SwarmConfig {
            manager: self.env["MULTICOOKER_SWARM_MANAGER"].clone(),
            nodes: NODES
                .iter()
                .map(|n| ((*n).to_owned(), self.address(n)))
                .collect(),
            registry: self.env["MULTICOOKER_SWARM_REGISTRY"].clone(),
            subnet_pool: multicooker::runtime::swarm::DEFAULT_SWARM_POOL.to_owned(),
            docker: multicooker::settings::Env::from_process().docker(),
        }
    }

    /// A node's engine address as multicooker reaches it (TCP through the node's network).
    fn address(&self, node: &str) -> String {
        self.env["MULTICOOKER_SWARM_NODES"]
            .split(',')
            .find_map(|item| item.strip_prefix(&format!("{node}=")))
            .unwrap_or_else(|| panic!("no address for `{node}`"))
            .to_owned()
    }

    /// Kills a node's engine (SIGKILL: its cells' processes go on without it).
    pub(crate) fn kill(&self, node: &str) {
        let output = script(&["kill", self.dir.to_str().unwrap(), node]);
        assert!(output.status.success(), "{}", show(&output));
    }

    /// Starts a killed node's engine again and waits until the manager has it Ready.
    pub(crate) fn revive(&self, node: &str) {
        let output = script(&["revive", self.dir.to_str().unwrap(), node]);
        assert!(output.status.success(), "{}", show(&output));
        self.wait_for_node(node, "ready", Duration::from_secs(120));
    }

    /// Tags the registry still holds for images that are not base images (`repo:tag`).
    pub(crate) fn registry_tags(&self) -> Vec<String> {
        let registry = &self.env["MULTICOOKER_SWARM_REGISTRY"];
        let get = |path: &str| -> serde_json::Value {
            ureq::get(&format!("http://{registry}{path}"))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default()
        };
        let catalog = get("/v2/_catalog");
        let mut tags = Vec::new();
        for repo in catalog["repositories"].as_array().into_iter().flatten() {
            let repo = repo.as_str().unwrap_or_default();
            if repo.starts_with("multicooker-base-") {
                continue;
            }
            let listed = get(&format!("/v2/{repo}/tags/list"));
            for tag in listed["tags"].as_array().into_iter().flatten() {
                tags.push(format!("{repo}:{}", tag.as_str().unwrap_or_default()));
            }
        }
        tags
    }

    /// A node's own engine.
    pub(crate) fn engine(&self, node: &str) -> Docker {
        let socket = self.dir.join(node).join("docker.sock");
        Docker::connect_with_unix(socket.to_str().unwrap(), 60, bollard::API_DEFAULT_VERSION)
            .unwrap()
    }

    /// Takes a node's link down: the manager loses it, its engine keeps running.
    pub(crate) fn cut(&self, node: &str) {
        let output = script(&["cut", self.dir.to_str().unwrap(), node]);
        assert!(output.status.success(), "{}", show(&output));
    }

    /// Brings a node's link back and waits until the manager has it Ready again.
    pub(crate) fn heal(&self, node: &str) {
        let output = script(&["heal", self.dir.to_str().unwrap(), node]);
        assert!(output.status.success(), "{}", show(&output));
        self.wait_for_node(node, "ready", Duration::from_secs(120));
    }

    /// Waits until the manager reports `node` in `state` (`ready`, `down`).
    pub(crate) fn wait_for_node(&self, node: &str, state: &str, deadline: Duration) {
        let manager = self.engine(NODES[0]);
        let start = Instant::now();
        while start.elapsed() < deadline {
            let nodes =
                block_on(manager.list_nodes(None::<bollard::query_parameters::ListNodesOptions>))
                    .unwrap_or_default();
            let now = nodes
                .iter()
                .find(|n| n.description.as_ref().and_then(|d| d.hostname.as_deref()) == Some(node))
                .and_then(|n| n.status.as_ref()?.state)
                .map(|s| s.to_string());
            if now.as_deref() == Some(state) {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("node `{node}` was not `{state}` within {deadline:?}");
    }

    /// Every object labelled with a multicooker cook on any node: services on the manager;
    /// containers (running or not), volumes, networks and images on each node.
    pub(crate) fn labelled_objects(&self) -> Vec<String> {
        let label = vec![multicooker::runtime::LABEL_COOK.to_owned()];
        let mut filters = std::collections::HashMap::new();
        filters.insert("label".to_owned(), label);
        let mut found = Vec::new();
        block_on(async {
            let manager = self.engine(NODES[0]);
            let services = manager
                .list_services(Some(
                    bollard::query_parameters::ListServicesOptionsBuilder::default()
                        .filters(&filters)
                        .build(),
                ))
                .await
                .unwrap();
            found.extend(services.into_iter().map(|s| {
                format!(
                    "service {}",
                    s.spec.and_then(|s| s.name).unwrap_or_default()
                )
            }));
            for node in NODES {
                let engine = self.engine(node);
                let containers = engine
                    .list_containers(Some(
                        bollard::query_parameters::ListContainersOptionsBuilder::default()
                            .all(true)
                            .filters(&filters)
                            .build(),
                    ))
                    .await
                    .unwrap();
                found.extend(
                    containers
                        .into_iter()
                        .map(|c| format!("{node}: container {:?}", c.names.unwrap_or_default())),
                );
                let volumes = engine
                    .list_volumes(Some(
                        bollard::query_parameters::ListVolumesOptionsBuilder::default()
                            .filters(&filters)
                            .build(),
                    ))
                    .await
                    .unwrap();
                found.extend(
                    volumes
                        .volumes
                        .unwrap_or_default()
                        .into_iter()
                        .map(|v| format!("{node}: volume {}", v.name)),
                );
                let networks = engine
                    .list_networks(Some(
                        bollard::query_parameters::ListNetworksOptionsBuilder::default()
                            .filters(&filters)
                            .build(),
                    ))
                    .await
                    .unwrap();
                found.extend(
                    networks
                        .into_iter()
                        .map(|n| format!("{node}: network {}", n.name.unwrap_or_default())),
                );
                // A cook's own images (base images carry no cook label: the cache stays).
                let images = engine
                    .list_images(Some(
                        bollard::query_parameters::ListImagesOptionsBuilder::default()
                            .all(true)
                            .filters(&filters)
                            .build(),
                    ))
                    .await
                    .unwrap();
                found.extend(
                    images
                        .into_iter()
                        .map(|i| format!("{node}: image {:?} {:?}", i.repo_tags, i.repo_digests)),
                );
            }
        });
        found
    }

    /// Waits up to `deadline` for [`Self::labelled_objects`] to be empty (a node's copy of
    /// a removed overlay goes a moment after the manager's), and returns what is left.
    pub(crate) fn leftovers_after(&self, deadline: Duration) -> Vec<String> {
        let start = Instant::now();
        loop {
            let found = self.labelled_objects();
            if found.is_empty() || start.elapsed() > deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Sets a node's availability (`active`, `pause`: no new tasks, running ones stay) and
    /// replaces its labels, through the manager.
    pub(crate) fn set_node(&self, node: &str, availability: &str, labels: &[(&str, &str)]) {
        block_on(async {
            let manager = self.engine(NODES[0]);
            let current = manager.inspect_node(node).await.unwrap();
            let version = current.version.and_then(|v| v.index).unwrap();
            let mut spec = current.spec.unwrap();
            spec.availability = Some(match availability {
                "pause" => NodeSpecAvailabilityEnum::PAUSE,
                "active" => NodeSpecAvailabilityEnum::ACTIVE,
                other => panic!("availability {other}"),
            });
            spec.labels = Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            );
            let options = bollard::query_parameters::UpdateNodeOptionsBuilder::default()
                .version(i64::try_from(version).unwrap())
                .build();
            manager.update_node(node, spec, options).await.unwrap();
        });
    }

    /// How many running containers of a cook's `role` a node's engine has, or why its engine
    /// could not say.
    pub(crate) fn running_with_role(&self, node: &str, role: &str) -> Result<usize, String> {
        let mut filters = std::collections::HashMap::new();
        filters.insert(
            "label".to_owned(),
            vec![format!("{}={role}", multicooker::runtime::LABEL_ROLE)],
        );
        let options = bollard::query_parameters::ListContainersOptionsBuilder::default()
            .filters(&filters)
            .build();
        block_on(self.engine(node).list_containers(Some(options)))
            .map(|c| c.len())
            .map_err(|e| e.to_string())
    }

    /// What the swarm looks like now, for a failure's message: each node as the manager sees
    /// it, every service's tasks (node, desired and current state, error), each node's cook
    /// containers, and each node engine's last warnings and errors. Every call is bounded: a
    /// stuck engine is itself named.
    pub(crate) fn describe(&self) -> String {
        let mut out = block_on(self.manager_view());
        out.push_str(&block_on(self.containers_view()));
        for node in NODES {
            let log =
                fs_err::read_to_string(self.dir.join(node).join("dockerd.log")).unwrap_or_default();
            // Warnings and errors, without those every start of an engine in a namespace
            // prints (no IPVS, no bridge VLAN).
            let lines: Vec<&str> = log
                .lines()
                .filter(|l| l.contains("level=error") || l.contains("level=warning"))
                .filter(|l| {
                    !l.contains("kernel parameter net.ipv4.vs") && !l.contains("default vlan")
                })
                .collect();
            out.push_str(&format!(
                "--- `{node}`'s last warnings and errors (dockerd.log)\n"
            ));
            for line in &lines[lines.len().saturating_sub(25)..] {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// The node whose engine runs a container whose name starts with `prefix`.
    pub(crate) fn node_running(&self, prefix: &str) -> Option<&'static str> {
        NODES.into_iter().find(|node| {
            let engine = self.engine(node);
            block_on(
                engine.list_containers(None::<bollard::query_parameters::ListContainersOptions>),
            )
            .unwrap_or_default()
            .iter()
            .flat_map(|c| c.names.clone().unwrap_or_default())
            .any(|n| n.trim_start_matches('/').starts_with(prefix))
        })
    }

    /// The nodes and every service's tasks, as the manager sees them.
    async fn manager_view(&self) -> String {
        let mut out = String::new();
        let manager = self.engine(NODES[0]);
        let mut hostnames = BTreeMap::new();
        out.push_str("--- nodes (manager's view)\n");
        match bounded(manager.list_nodes(None::<bollard::query_parameters::ListNodesOptions>)).await
        {
            Ok(Ok(nodes)) => {
                for n in nodes {
                    let host = n
                        .description
                        .as_ref()
                        .and_then(|d| d.hostname.clone())
                        .unwrap_or_default();
                    let status = n.status.unwrap_or_default();
                    let availability = n.spec.and_then(|s| s.availability);
                    out.push_str(&format!(
                        "{host}: {:?} {:?} {}\n",
                        status.state,
                        availability,
                        status.message.unwrap_or_default()
                    ));
                    hostnames.insert(n.id.unwrap_or_default(), host);
                }
            }
            other => out.push_str(&format!("(the manager did not say: {other:?})\n")),
        }
        let mut services = BTreeMap::new();
        match bounded(manager.list_services(None::<bollard::query_parameters::ListServicesOptions>))
            .await
        {
            Ok(Ok(listed)) => {
                for s in listed {
                    let name = s.spec.and_then(|s| s.name).unwrap_or_default();
                    services.insert(s.id.unwrap_or_default(), name);
                }
            }
            other => out.push_str(&format!("(the manager did not list services: {other:?})\n")),
        }
        out.push_str("--- services' tasks (manager's view)\n");
        match bounded(manager.list_tasks(None::<bollard::query_parameters::ListTasksOptions>)).await
        {
            Ok(Ok(tasks)) => {
                for t in tasks {
                    let service = t.service_id.unwrap_or_default();
                    let service = services.get(&service).unwrap_or(&service);
                    let node = t
                        .node_id
                        .as_ref()
                        .and_then(|id| hostnames.get(id).cloned())
                        .unwrap_or_default();
                    let status = t.status.unwrap_or_default();
                    out.push_str(&format!(
                        "{service} on `{node}`: desired {:?}, {:?} since {} {} {}\n",
                        t.desired_state,
                        status.state,
                        status.timestamp.unwrap_or_default(),
                        status.message.unwrap_or_default(),
                        status.err.unwrap_or_default()
                    ));
                }
            }
            other => out.push_str(&format!("(the manager did not say: {other:?})\n")),
        }
        out
    }

    /// Each node's cook containers, as its own engine lists them.
    async fn containers_view(&self) -> String {
        let mut out = String::new();
        for node in NODES {
            out.push_str(&format!("--- `{node}`'s cook containers\n"));
            let mut filters = std::collections::HashMap::new();
            filters.insert(
                "label".to_owned(),
                vec![multicooker::runtime::LABEL_COOK.to_owned()],
            );
            let options = bollard::query_parameters::ListContainersOptionsBuilder::default()
                .all(true)
                .filters(&filters)
                .build();
            match bounded(self.engine(node).list_containers(Some(options))).await {
                Ok(Ok(containers)) => {
                    for c in containers {
                        out.push_str(&format!(
                            "{:?} {} {}\n",
                            c.names.unwrap_or_default(),
                            c.state.map(|s| s.to_string()).unwrap_or_default(),
                            c.status.unwrap_or_default()
                        ));
                    }
                }
                other => out.push_str(&format!("(its engine did not say: {other:?})\n")),
            }
        }
        out
    }
}

impl Drop for Swarm {
    fn drop(&mut self) {
        let output = script(&["down", self.dir.to_str().unwrap()]);
        // A teardown that fails fails the test (unless it is already failing).
        assert!(
            output.status.success() || std::thread::panicking(),
            "the swarm did not come down cleanly:\n{}",
            show(&output)
        );
    }
}

fn script(args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(SCRIPT)
        .args(args)
        .output()
        .expect("bash runs")
}

/// An engine call bounded for a failure's report (a stuck engine is named, not waited for).
fn bounded<F: std::future::Future>(future: F) -> tokio::time::Timeout<F> {
    tokio::time::timeout(Duration::from_secs(10), future)
}
