//! The Docker Swarm backend: cells as services on a cluster, driven through the manager's API,
//! with each node's own engine used for what the manager cannot do (docs/ENGINE.md §4, §4b).
//!
//! - **Images** are built on the manager's engine, then pushed to the cluster's registry the
//!   first time a cell uses them and run by digest on every node.
//! - **A cell** is a `replicated` service with one replica and no restart (on 20.10 a removed
//!   `replicated-job` keeps running), `dnsrr` endpoints (no IPVS in these kernels), the same
//!   hardening as a local container where Swarm can express it, and its areas (HOME and /tmp
//!   too: Swarm's own tmpfs mounts ignore owner and mode) as in-memory engine volumes labelled
//!   with the cell. `create_cell` only prepares the service; `start_cell` creates it, so
//!   networks connected in between (a proxy's second leg) are part of it from the start.
//! - **Networks** are overlays with explicit subnets, attachable, internal for cells; a cell
//!   with no network gets an internal overlay of its own (Swarm has no `none`).
//! - **Stage, collect, logs, wait, kill** go to the engine of the node the task runs on,
//!   through the same archive and container calls as the local backend, so a cell's bytes
//!   reach the host only through the same checked collect.
//! - **Output** is read as on Docker: cells log to the `none` driver (no node's engine keeps
//!   what a cell prints) and are read through the attach API of their node's engine. A
//!   service's container starts at once, so every cell waits for its go file: a cell is
//!   attached before anything is staged into it, and a cell that asked for no go file (a
//!   proxy, a canary) is given one by `start_cell` once it is attached.
//! - **Deadlines**: each service carries the Unix second its init ends it by
//!   ([`super::LABEL_DEADLINE`]); [`Runtime::overdue`] names a running cell past it (counted
//!   from when its task started, so time queued for room does not count).
//! - **A node that does not answer** costs only its own cells (`nodes.rs`): every call to a
//!   node's engine is bounded, an error reaching it is confirmed against the manager, and a
//!   node the manager marks Down (or that stays silent) turns its cells into
//!   [`RuntimeError::NodeLost`]: an infrastructure failure, never a score. Listing and removal
//!   skip it with one warning naming it; what is left there is removed once it answers
//!   (`left.rs`). A node silent at the start is left out; only a swarm where no node answers
//!   is refused.
//! - **What Swarm cannot enforce** (no-new-privileges on API 1.41, swap equal to memory) is
//!   named by [`Runtime::unenforced`] so the sandbox probe reports it instead of assuming it.

mod error;
mod left;
mod nodes;
mod objects;
mod service;

pub use error::SwarmError;
pub use nodes::{CONFIRM, NODE_TIMEOUT_S, Warn};
pub use service::{NODE_LABEL_CELLS, NODE_LABEL_EGRESS};

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bollard::Docker;
use futures_util::FutureExt;
use futures_util::stream::{BoxStream, StreamExt};

use super::connect::{DockerEnv, client_for, connect_with};
use super::docker::{DockerRuntime, SubnetPool, operation, status};
use super::{
    Archive, Area, CellExit, CellSpec, EngineFuture, EngineInfo, GO_FILE, GO_NAME, ImageSpec,
    LABEL_DEADLINE, LogChunk, NetworkSpec, ObjectRef, Runtime, RuntimeError, Selector, Unenforced,
};

/// Default pool of the overlays' subnets (apart from the local backend's).
pub const DEFAULT_SWARM_POOL: &str = "10.214.0.0/16";
/// How often the manager is asked about a task or a node (Swarm has no task events).
const POLL: Duration = Duration::from_millis(250);
/// How long a task may take to get a container on its node.
const PLACEMENT_TIMEOUT: Duration = Duration::from_secs(600);
/// What a task rejected by the swarm's constraint enforcer says (an over-committed node).
const ENFORCER_REJECTED: &str = "no longer meets constraints";
/// What a task whose container never started says (its node could not set it up: a network
/// attachment, a mount). The container exits 128 at once; nothing of the cell ran.
const START_FAILED: &str = "starting container failed";
/// How often a cell whose task was rejected before it started is placed again.
const REPLACEMENTS: u32 = 3;

/// Where the cluster is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwarmConfig {
    /// The manager's address (`unix://…`, `tcp://…`), as `DOCKER_HOST` would say it.
    pub manager: String,
    /// Each node's hostname and its engine's address (stage, collect and logs go there).
    pub nodes: Vec<(String, String)>,
    /// The registry every node pulls from (`host:port`).
    pub registry: String,
    /// Pool of the overlays' subnets.
    pub subnet_pool: String,
    /// The Docker variables every address is reached with (`DOCKER_TLS_VERIFY`,
    /// `DOCKER_CERT_PATH`, `HOME`; `DOCKER_HOST` is not used), and `HOME` for the file of
    /// objects left on lost nodes.
    pub docker: DockerEnv,
}

/// A cell prepared by `create_cell`, created as a service by `start_cell`.
#[derive(Debug, Clone)]
struct Pending {
    spec: CellSpec,
    networks: Vec<String>,
    /// The cell asked for no go file: `start_cell` stages it into this folder once the cell
    /// is attached.
    releases_go: Option<&'static str>,
}

/// A cell's output attached on its node (once): the node and the container, or why not.
type Attachment = Arc<tokio::sync::OnceCell<Result<(String, String), RuntimeError>>>;

/// The area given to a cell that asked for no go file, to hold it.
const GO_AREA_BYTES: u64 = 1 << 20;

/// The folder of the go file by default (its area).
fn go_area() -> &'static str {
    GO_FILE.rsplit_once('/').map_or("/", |(dir, _)| dir)
}

/// The swarm backend (cheap to share: streams of a cell keep a handle on it).
#[derive(Debug, Clone)]
pub struct SwarmRuntime {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    manager: DockerRuntime,
    nodes: nodes::Nodes,
    registry: String,
    pool: SubnetPool,
    pending: Mutex<HashMap<String, Pending>>,
    /// Local image tag → `registry/repo@digest`, pushed once per process.
    pushed: tokio::sync::Mutex<HashMap<String, String>>,
    /// Node id → hostname.
    hostnames: Mutex<HashMap<String, String>>,
    /// Each started cell's output, attached on its node before its program may start.
    attachments: Mutex<HashMap<String, Attachment>>,
}

/// Where a cell's task runs.
#[derive(Debug, Clone)]
struct Placement {
    node_id: String,
    container: Option<String>,
    terminal: Option<String>,
    /// Waiting for a node with room: the swarm's scheduler is the queue.
    queued: bool,
    /// The task's state (`running`, `failed`, …).
    state: String,
}

impl SwarmRuntime {
    /// Connects to the manager and every node, and checks that the manager is one; warnings
    /// (a node that does not answer) go to stderr.
    pub async fn connect(config: &SwarmConfig) -> Result<Self, RuntimeError> {
        Self::connect_warning(config, Warn::default()).await
    }

    /// [`SwarmRuntime::connect`], with warnings going to `warn`. A node whose engine does not
    /// answer is left out with a warning; refused only when no node answers.
    pub async fn connect_warning(config: &SwarmConfig, warn: Warn) -> Result<Self, RuntimeError> {
        let env = |host: &str| DockerEnv {
            host: Some(host.to_owned()),
            ..config.docker.clone()
        };
        let (manager, _) = connect_with(&env(&config.manager)).await?;
        let info = manager
            .info()
            .await
            .map_err(|e| RuntimeError::Unreachable {
                endpoint: Some(config.manager.clone()),
                message: e.to_string(),
            })?;
        if !info
            .swarm
            .as_ref()
            .and_then(|s| s.control_available)
            .unwrap_or(false)
        {
            return Err(SwarmError::NotAManager {
                endpoint: config.manager.clone(),
            }
            .into());
        }
        let version = manager.client_version();
        let mut engines = BTreeMap::new();
        for (host, address) in &config.nodes {
            let (client, _) = client_for(&env(address), NODE_TIMEOUT_S, &version)?;
            engines.insert(
                host.clone(),
                (address.clone(), DockerRuntime::from_client(client, address)),
            );
        }
        let nodes = nodes::Nodes::new(
            engines,
            left::Left::open(&config.manager, config.docker.home.as_deref()),
            warn,
            manager.clone(),
        );
        nodes.left_out_silent(&config.manager).await?;
        nodes.fence_answering().await;
        let pool =
            SubnetPool::parse(&config.subnet_pool).ok_or_else(|| RuntimeError::NoSubnet {
                network: "(any)".into(),
                pool: format!(
                    "{} (not an IPv4 CIDR between /8 and /28)",
                    config.subnet_pool
                ),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                manager: DockerRuntime::from_client(manager, &config.manager),
                nodes,
                registry: config.registry.clone(),
                pool,
                pending: Mutex::default(),
                pushed: tokio::sync::Mutex::default(),
                hostnames: Mutex::default(),
                attachments: Mutex::default(),
            }),
        })
    }

    /// The nodes' hostnames.
    pub fn node_names(&self) -> Vec<String> {
        self.inner.nodes.names().map(str::to_owned).collect()
    }

    /// Nodes declared lost (or left out at the start) in this process, by hostname.
    pub fn lost_nodes(&self) -> Vec<String> {
        self.inner.nodes.lost()
    }
}

impl Inner {
    fn docker(&self) -> &Docker {
        self.manager.client()
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The newest task of a cell's service, if it has one.
    async fn placement(&self, cell: &str) -> Result<Option<Placement>, RuntimeError> {
        let mut filters = HashMap::new();
        filters.insert("service".to_owned(), vec![cell.to_owned()]);
        let options = bollard::query_parameters::ListTasksOptionsBuilder::default()
            .filters(&filters)
            .build();
        let tasks = match self.docker().list_tasks(Some(options)).await {
            Ok(tasks) => tasks,
            Err(e) if status(&e) == Some(404) => return Ok(None),
            Err(e) => return Err(operation("list tasks of", ObjectRef::cell(cell), &e)),
        };
        let newest = tasks
            .into_iter()
            .max_by_key(|t| t.version.as_ref().and_then(|v| v.index).unwrap_or(0));
        Ok(newest.map(|task| {
            let status = task.status.unwrap_or_default();
            let state = status.state.map(|s| s.to_string()).unwrap_or_default();
            let terminal = objects::ENDED.contains(&state.as_str()).then(|| {
                format!(
                    "{state}: {}",
                    status.err.or(status.message).unwrap_or_default()
                )
            });
            Placement {
                node_id: task.node_id.unwrap_or_default(),
                container: status.container_status.and_then(|c| c.container_id),
                terminal,
                queued: state == "pending",
                state,
            }
        }))
    }

    /// The engine of a node, by the manager's node id.
    async fn node(&self, node_id: &str) -> Result<(&str, &DockerRuntime), RuntimeError> {
        let known = self
            .hostnames
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(node_id)
            .cloned();
        let hostname = if let Some(hostname) = known {
            hostname
        } else {
            {
                let node = self
                    .docker()
                    .inspect_node(node_id)
                    .await
                    .map_err(|e| operation("inspect node", ObjectRef::cell(node_id), &e))?;
                let hostname = node
                    .description
                    .and_then(|d| d.hostname)
                    .unwrap_or_default();
                self.hostnames
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(node_id.to_owned(), hostname.clone());
                hostname
            }
        };
        self.nodes
            .get(hostname.as_str())
            .ok_or_else(|| SwarmError::UnknownNode { node: hostname }.into())
    }

    /// The node, engine and container of a cell whose output is attached: the first caller
    /// attaches (waiting until the task has a container), later ones get the same answer.
    /// Staging waits for this, so the program (which waits for the go file, staged last)
    /// prints nothing before the cell is attached.
    async fn attached(&self, cell: &str) -> Result<(&str, &DockerRuntime, String), RuntimeError> {
        let once = self
            .attachments
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(cell.to_owned())
            .or_default()
            .clone();
        let (host, container) = once.get_or_init(|| self.attach(cell)).await.clone()?;
        let (host, engine) = self
            .nodes
            .get(&host)
            .ok_or_else(|| RuntimeError::from(SwarmError::UnknownNode { node: host }))?;
        Ok((host, engine, container))
    }

    async fn attach(&self, cell: &str) -> Result<(String, String), RuntimeError> {
        let (host, engine, container) = self.started(cell).await?;
        let attached = engine.attach(&container).await;
        self.checked(host, attached).await?;
        Ok((host.to_owned(), container))
    }

    /// Stages the go file of a cell that asked for none into `folder`, once its output is
    /// attached.
    async fn release(&self, cell: &str, folder: &str) -> Result<(), RuntimeError> {
        let (host, engine, container) = self.attached(cell).await?;
        let staged = engine.engine_stage(&container, folder, go_archive()).await;
        self.checked(host, staged).await
    }

    /// The node's engine, if calls may go to it now (see [`nodes::Nodes::usable`]).
    async fn usable_node(&self, node_id: &str) -> Result<(&str, &DockerRuntime), RuntimeError> {
        let (host, engine) = self.node(node_id).await?;
        self.nodes.usable(host).await?;
        Ok((host, engine))
    }

    /// A node call's result, its error confirmed: a node that is not reached is lost.
    async fn checked<T>(
        &self,
        host: &str,
        result: Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        match result {
            Err(e) => Err(self.nodes.confirm(self.docker(), host, e).await),
            ok => ok,
        }
    }

    /// Waits until the cell's task has a container on its node (Swarm has no task events).
    /// The node engine and container running `cell`, once placed. A task queued for room
    /// waits as long as it takes (cells of this run free it); any other stall fails after
    /// `PLACEMENT_TIMEOUT`.
    async fn container(&self, cell: &str) -> Result<(&str, &DockerRuntime, String), RuntimeError> {
        let mut started = std::time::Instant::now();
        let mut replaced = 0;
        loop {
            if let Some(placement) = self.placement(cell).await? {
                if placement.queued {
                    started = std::time::Instant::now();
                }
                if let Some(container) = placement.container.filter(|c| !c.is_empty()) {
                    let (host, engine) = self.usable_node(&placement.node_id).await?;
                    return Ok((host, engine, container));
                }
                if let Some(terminal) = placement.terminal {
                    // The swarm's constraint enforcer counts a killed task's reservation
                    // until its service is gone, so a task placed into that room can be
                    // rejected before it ever had a container: nothing ran, place it again.
                    if terminal.contains(ENFORCER_REJECTED) && replaced < REPLACEMENTS {
                        replaced += 1;
                        self.replace(cell).await?;
                        started = std::time::Instant::now();
                        continue;
                    }
                    return Err(RuntimeError::Operation {
                        operation: "place",
                        object: ObjectRef::cell(cell),
                        status: None,
                        message: terminal,
                    });
                }
            }
            if started.elapsed() > PLACEMENT_TIMEOUT {
                return Err(RuntimeError::Operation {
                    operation: "place",
                    object: ObjectRef::cell(cell),
                    status: None,
                    message: "no node took the task (not enough free CPUs or memory?)".into(),
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The node engine and container of a cell once its task runs: staging waits for this,
    /// so a container that fails to start (its node could not attach its network or mount
    /// its areas) is never staged into. A task that fails so is placed again (nothing of the
    /// cell ran), at most `REPLACEMENTS` times; then the cell fails with the node's reason.
    async fn started(&self, cell: &str) -> Result<(&str, &DockerRuntime, String), RuntimeError> {
        let mut replaced = 0;
        loop {
            let (host, engine, container) = self.container(cell).await?;
            let Some(placement) = self.placement(cell).await? else {
                continue;
            };
            if placement.state == "running" {
                return Ok((host, engine, container));
            }
            if let Some(terminal) = placement.terminal {
                if terminal.contains(START_FAILED) && replaced < REPLACEMENTS {
                    replaced += 1;
                    self.nodes.warn(&format!(
                        "cell `{cell}` did not start on node `{host}` ({terminal}): placed again ({replaced} of {REPLACEMENTS})"
                    ));
                    self.replace(cell).await?;
                    continue;
                }
                return Err(RuntimeError::Operation {
                    operation: "start",
                    object: ObjectRef::cell(cell),
                    status: Some(500),
                    message: format!("its task on node `{host}` ended before it ran: {terminal}"),
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Removes a service whose task never started, and creates it again from its spec.
    async fn replace(&self, cell: &str) -> Result<(), RuntimeError> {
        match self.docker().delete_service(cell).await {
            Err(e) if status(&e) != Some(404) => {
                return Err(operation("remove", ObjectRef::cell(cell), &e));
            }
            _ => {}
        }
        self.start(cell).await
    }

    /// Resolves once the manager marks the node Down or Disconnected, or another call has
    /// declared it lost (a stream from a silent node would otherwise wait forever).
    async fn node_lost(&self, host: &str) -> RuntimeError {
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            if self.nodes.lost().iter().any(|h| h == host) {
                return RuntimeError::NodeLost {
                    node: host.to_owned(),
                };
            }
            if let Some(state) = nodes::node_state(self.docker(), host).await
                && matches!(state.as_str(), "down" | "disconnected")
            {
                self.nodes
                    .declare_lost(host, &format!("the manager marks it {state}"));
                return RuntimeError::NodeLost {
                    node: host.to_owned(),
                };
            }
        }
    }

    /// Refuses a cell no single node could ever hold (it would wait in the queue forever).
    async fn fits(&self, spec: &CellSpec) -> Result<(), RuntimeError> {
        let label = service::placement_label(spec);
        let (cpus, memory) = objects::largest_node(self.docker(), label).await?;
        #[expect(clippy::cast_possible_truncation, reason = "a few cores")]
        let wanted_cpus = (spec.limits.cpus * 1e9).round() as i64;
        let wanted_memory = i64::try_from(spec.limits.memory_bytes).unwrap_or(i64::MAX);
        if wanted_cpus <= cpus && wanted_memory <= memory {
            return Ok(());
        }
        Err(RuntimeError::Operation {
            operation: "place",
            object: ObjectRef::cell(&spec.name),
            status: None,
            message: format!(
                "it needs {:.1} CPUs and {} MiB, the largest Ready node not labelled `{label}=false` has {:.1} CPUs and {} MiB: lower `resources.cpus`/`resources.mem_limit` in brief.yaml, add a larger node, or remove the label (`docker node update --label-rm {label} NODE`)",
                spec.limits.cpus,
                wanted_memory >> 20,
                f64::from(u32::try_from(cpus / 1_000_000).unwrap_or(u32::MAX)) / 1e3,
                memory >> 20
            ),
        })
    }

    /// The image as every node pulls it: pushed to the registry once, run by digest.
    async fn registry_image(&self, tag: &str) -> Result<String, RuntimeError> {
        let mut pushed = self.pushed.lock().await;
        if let Some(reference) = pushed.get(tag) {
            return Ok(reference.clone());
        }
        let reference = service::push(self.docker(), &self.registry, tag).await?;
        pushed.insert(tag.to_owned(), reference.clone());
        Ok(reference)
    }

    async fn start(&self, name: &str) -> Result<(), RuntimeError> {
        let pending =
            self.lock_pending()
                .get(name)
                .cloned()
                .ok_or_else(|| RuntimeError::Operation {
                    operation: "start",
                    object: ObjectRef::cell(name),
                    status: Some(404),
                    message: "no such cell was created".into(),
                })?;
        let mut networks = pending.networks.clone();
        if let Some(own) = &pending.spec.network {
            networks.insert(0, own.clone());
        } else {
            // Swarm has no `none`: an internal overlay with only this cell on it.
            let own = NetworkSpec {
                name: service::alone_network(name),
                labels: pending.spec.labels.clone(),
                internal: true,
                isolated: false,
            };
            self.make_network(&own).await?;
            networks.push(own.name);
        }
        self.fits(&pending.spec).await?;
        let image = self.registry_image(&pending.spec.image).await?;
        let program = match &pending.spec.program {
            Some(program) => program.clone(),
            None => self.manager.image_program(&pending.spec.image).await?,
        };
        let mut cell = pending.spec.clone();
        if cell.labels.get(LABEL_DEADLINE).is_none() {
            // When init ends the cell at the latest, counted from now (a second of slack for
            // its start); `overdue` adds the time its task waited for room.
            let ends_by = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                + cell.init.deadline
                + Duration::from_secs(1);
            cell.labels = cell
                .labels
                .with(LABEL_DEADLINE, &ends_by.as_secs().to_string());
        }
        let spec = service::service_spec(&cell, &image, &program, &networks);
        match self.docker().create_service(spec.clone(), None).await {
            Ok(_) => Ok(()),
            Err(e) if status(&e) == Some(409) => {
                // A stale namesake from a killed run: replace it.
                self.remove_cell(name).await?;
                self.docker()
                    .create_service(spec, None)
                    .await
                    .map(drop)
                    .map_err(|e| operation("create service", ObjectRef::cell(name), &e))
            }
            Err(e) => Err(operation("create service", ObjectRef::cell(name), &e)),
        }
    }

    async fn wait(&self, name: &str) -> Result<CellExit, RuntimeError> {
        let (host, engine, container) = self.container(name).await?;
        let exit = tokio::select! {
            exit = engine.engine_wait_cell(&container) => exit,
            lost = self.node_lost(host) => Err(lost),
        };
        let exit = self.checked(host, exit).await?;
        if exit.code != 0
            && let Ok(Some(placement)) = self.placement(name).await
            && let Some(terminal) = placement.terminal.filter(|t| t.contains(START_FAILED))
        {
            // Exit 128 at once: the node never started the container. Not the cell's failure.
            return Err(RuntimeError::Operation {
                operation: "start",
                object: ObjectRef::cell(name),
                status: Some(500),
                message: format!("node `{host}` could not start it: {terminal}"),
            });
        }
        Ok(exit)
    }

    async fn make_network(&self, spec: &NetworkSpec) -> Result<(), RuntimeError> {
        objects::create_overlay(self.docker(), &self.pool, spec).await
    }

    async fn remove_cell(&self, name: &str) -> Result<(), RuntimeError> {
        self.lock_pending().remove(name);
        let attachment = self
            .attachments
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(name);
        if let Some(Ok((host, container))) = attachment.as_ref().and_then(|a| a.get())
            && let Some((_, engine)) = self.nodes.get(host)
        {
            engine.forget_attached(container);
        }
        let placement = self.placement(name).await.ok().flatten();
        // The service goes first: its task's reservation is released at once (a task killed
        // while its service stays still counts for the swarm's constraint enforcer).
        match self.docker().delete_service(name).await {
            Err(e) if status(&e) != Some(404) => {
                return Err(operation("remove", ObjectRef::cell(name), &e));
            }
            _ => {}
        }
        // Then killed on its node, so removal does not wait out a stop grace period.
        if let Some(placement) = placement
            && let Some(container) = placement.container
            && let Ok((_, engine)) = self.usable_node(&placement.node_id).await
        {
            let _ = engine.engine_kill_cell(&container).await;
        }
        let hosts: Vec<String> = self.nodes.names().map(str::to_owned).collect();
        for host in hosts {
            self.sweep_on(&host, name).await?;
        }
        objects::remove_network(self.docker(), &service::alone_network(name)).await
    }

    /// Removes what `host` keeps of a cell; a node that is not reached is left it, recorded.
    async fn sweep_on(&self, host: &str, cell: &str) -> Result<(), RuntimeError> {
        let Some((_, engine)) = self.nodes.get(host) else {
            return Ok(());
        };
        let swept = match self.nodes.usable(host).await {
            Ok(()) => objects::sweep_cell(engine, cell).await,
            Err(e) => Err(e),
        };
        match swept {
            Err(e) if nodes::unreached(&e) => {
                self.nodes.leave(host, ObjectRef::cell(cell));
                self.nodes.skipped(host, "removing cells");
                Ok(())
            }
            other => other,
        }
    }
}

impl Runtime for SwarmRuntime {
    fn backend(&self) -> &'static str {
        "swarm"
    }
    fn info(&self) -> EngineFuture<'_, EngineInfo> {
        objects::info(self.inner.docker()).boxed()
    }
    fn image_exists<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, bool> {
        self.inner.manager.engine_image_exists(tag).boxed()
    }
    fn image_labels<'a>(
        &'a self,
        tag: &'a str,
    ) -> EngineFuture<'a, Option<BTreeMap<String, String>>> {
        self.inner.manager.engine_image_labels(tag).boxed()
    }
    fn image_id<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, Option<String>> {
        self.inner.manager.engine_image_id(tag).boxed()
    }
    /// The manager builds every image, so its engine knows their configuration.
    fn image_user<'a>(&'a self, image: &'a str) -> EngineFuture<'a, String> {
        self.inner.manager.engine_image_user(image).boxed()
    }
    fn build_image<'a>(&'a self, spec: &'a ImageSpec) -> EngineFuture<'a, ()> {
        async move {
            self.inner.manager.engine_build_image(spec).await?;
            // Rebuilt: the next cell pushes the new content.
            self.inner.pushed.lock().await.remove(&spec.tag);
            Ok(())
        }
        .boxed()
    }
    fn create_network<'a>(&'a self, spec: &'a NetworkSpec) -> EngineFuture<'a, ()> {
        self.inner.make_network(spec).boxed()
    }
    fn create_cell<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, ()> {
        async move {
            if spec.task.is_some() {
                return Err(SwarmError::TaskProfile {
                    cell: spec.name.clone(),
                }
                .into());
            }
            let mut spec = spec.clone();
            // A service's container starts before anyone can attach to it: a cell that would
            // start its program at once waits for a go file instead, which `start_cell`
            // stages once the cell's output is attached (nothing it prints is missed).
            let releases_go =
                (!spec.init.wait_for_go).then(|| spec.init.go_dir.unwrap_or(go_area()));
            if let Some(folder) = releases_go {
                spec.init.wait_for_go = true;
                if !spec.areas.iter().any(|a| a.target == folder) {
                    spec.areas.push(Area {
                        target: folder.to_owned(),
                        size_bytes: GO_AREA_BYTES,
                        owner: (0, 0),
                        mode: 0o755,
                    });
                }
            }
            self.inner.lock_pending().insert(
                spec.name.clone(),
                Pending {
                    spec,
                    networks: Vec::new(),
                    releases_go,
                },
            );
            Ok(())
        }
        .boxed()
    }
    fn connect_network<'a>(&'a self, network: &'a str, cell: &'a str) -> EngineFuture<'a, ()> {
        async move {
            match self.inner.lock_pending().get_mut(cell) {
                Some(pending) => {
                    pending.networks.push(network.to_owned());
                    Ok(())
                }
                None => Err(RuntimeError::Operation {
                    operation: "connect",
                    object: ObjectRef::network(network),
                    status: None,
                    message: format!("`{cell}` is already running: connect before start"),
                }),
            }
        }
        .boxed()
    }
    fn start_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()> {
        async move {
            let releases_go = self
                .inner
                .lock_pending()
                .get(name)
                .and_then(|p| p.releases_go);
            self.inner.start(name).await?;
            if let Some(folder) = releases_go {
                self.inner.release(name, folder).await?;
            }
            Ok(())
        }
        .boxed()
    }
    fn stage<'a>(
        &'a self,
        cell: &'a str,
        target: &'a str,
        archive: Archive,
    ) -> EngineFuture<'a, ()> {
        async move {
            // Attached first: the go file, staged last, lets the program start.
            let (host, engine, container) = self.inner.attached(cell).await?;
            let staged = engine.engine_stage(&container, target, archive).await;
            self.inner.checked(host, staged).await
        }
        .boxed()
    }
    fn collect(
        &self,
        cell: &str,
        source: &str,
    ) -> BoxStream<'static, Result<bytes::Bytes, RuntimeError>> {
        let (cell, source) = (cell.to_owned(), source.to_owned());
        let this = self.inner.clone();
        futures_util::stream::once(async move {
            match this.container(&cell).await {
                Ok((host, engine, container)) => {
                    let stream = engine.engine_collect(&container, &source);
                    guarded(this.clone(), host.to_owned(), stream)
                }
                Err(e) => futures_util::stream::once(async { Err(e) }).boxed(),
            }
        })
        .flatten()
        .boxed()
    }
    fn wait_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, CellExit> {
        self.inner.wait(name).boxed()
    }
    fn oom_killed<'a>(&'a self, name: &'a str) -> EngineFuture<'a, bool> {
        async move {
            let (host, engine, container) = self.inner.container(name).await?;
            let oom = engine.engine_oom_killed(&container).await;
            self.inner.checked(host, oom).await
        }
        .boxed()
    }
    fn kill_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()> {
        async move {
            match self.inner.placement(name).await? {
                Some(Placement {
                    node_id,
                    container: Some(container),
                    ..
                }) => {
                    let (host, engine) = self.inner.usable_node(&node_id).await?;
                    let killed = engine.engine_kill_cell(&container).await;
                    self.inner.checked(host, killed).await
                }
                _ => Ok(()),
            }
        }
        .boxed()
    }
    fn cell_logs(&self, name: &str) -> BoxStream<'static, Result<LogChunk, RuntimeError>> {
        let name = name.to_owned();
        let this = self.inner.clone();
        futures_util::stream::once(async move {
            match this.attached(&name).await {
                Ok((host, engine, container)) => {
                    // A broken stream is confirmed before it ends: the cell's end is then
                    // known as a lost node, not as a program that stopped.
                    let (inner, host) = (this.clone(), host.to_owned());
                    let (last, on) = (this.clone(), host.clone());
                    // An attached stream whose engine died ends like one whose cell ended
                    // (end of file, no error): its end is confirmed when the engine is silent.
                    let end = futures_util::stream::once(async move {
                        if last.nodes.answers(&on).await {
                            return None;
                        }
                        let silent = RuntimeError::Unreachable {
                            endpoint: None,
                            message: format!(
                                "the output of a cell on node `{on}` ended and its engine does not answer"
                            ),
                        };
                        Some(Err(last.nodes.confirm(last.docker(), &on, silent).await))
                    })
                    .filter_map(futures_util::future::ready);
                    engine
                        .engine_cell_logs(&container)
                        .then(move |item| {
                            let (inner, host) = (inner.clone(), host.clone());
                            async move {
                                match item {
                                    Err(e) => {
                                        Err(inner.nodes.confirm(inner.docker(), &host, e).await)
                                    }
                                    ok => ok,
                                }
                            }
                        })
                        .chain(end)
                        .boxed()
                }
                Err(e) => futures_util::stream::once(async { Err(e) }).boxed(),
            }
        })
        .flatten()
        .boxed()
    }
    fn remove<'a>(&'a self, object: &'a ObjectRef) -> EngineFuture<'a, ()> {
        objects::remove(&self.inner, object).boxed()
    }
    fn list<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<ObjectRef>> {
        objects::list(&self.inner, selector).boxed()
    }
    fn running<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<String>> {
        objects::running(&self.inner, selector).boxed()
    }
    fn overdue<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<String>> {
        objects::overdue(&self.inner, selector).boxed()
    }
    fn program<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, Vec<String>> {
        async move {
            match &spec.program {
                Some(program) => Ok(program.clone()),
                None => self.inner.manager.image_program(&spec.image).await,
            }
        }
        .boxed()
    }
    fn isolates_network_members(&self) -> bool {
        false
    }
    fn needs_cook_images(&self) -> bool {
        true
    }
    fn unenforced(&self) -> Vec<Unenforced> {
        service::UNENFORCED.to_vec()
    }
    fn placement_of<'a>(&'a self, name: &'a str) -> EngineFuture<'a, Option<String>> {
        async move {
            Ok(match self.inner.placement(name).await? {
                Some(p) => self
                    .inner
                    .node(&p.node_id)
                    .await
                    .ok()
                    .map(|(h, _)| h.to_owned()),
                None => None,
            })
        }
        .boxed()
    }
}

/// A tar holding the empty go file (root's, read-only).
fn go_archive() -> Archive {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(0);
    header.set_mode(0o444);
    header.set_uid(0);
    header.set_gid(0);
    header.set_cksum();
    let mut builder = tar::Builder::new(Vec::new());
    builder
        .append_data(&mut header, GO_NAME, std::io::empty())
        .and_then(|()| builder.into_inner())
        .map(Archive::from_bytes)
        .expect("a tar in memory cannot fail")
}

/// A node's stream that ends with [`RuntimeError::NodeLost`] once its node is lost (a silent
/// node never closes it), its errors confirmed.
fn guarded<T: Send + 'static>(
    inner: Arc<Inner>,
    host: String,
    stream: BoxStream<'static, Result<T, RuntimeError>>,
) -> BoxStream<'static, Result<T, RuntimeError>> {
    futures_util::stream::unfold(Some(stream), move |state| {
        let (inner, host) = (inner.clone(), host.clone());
        async move {
            let mut stream = state?;
            let item = tokio::select! {
                item = stream.next() => item?,
                lost = inner.node_lost(&host) => return Some((Err(lost), None)),
            };
            match item {
                Err(e) => Some((
                    Err(inner.nodes.confirm(inner.docker(), &host, e).await),
                    None,
                )),
                ok => Some((ok, Some(stream))),
            }
        }
    })
    .boxed()
}
