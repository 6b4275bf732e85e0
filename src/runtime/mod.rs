//! The engine layer: a backend-neutral [`Runtime`] trait, the specs it takes, labels, and the
//! [`Ledger`] that guarantees teardown.
//!
//! A backend runs *cells* (one isolated program each) on *networks* from *images*. The local
//! Docker engine ([`docker::DockerRuntime`]) is the first and default backend; a Swarm or
//! Kubernetes backend maps the same calls onto services or Jobs. The hardening baseline is not
//! part of [`CellSpec`]: it is one neutral value ([`Hardening`], derived from the spec's profile
//! and limits only) that every backend renders unconditionally, so no caller can loosen it, and
//! a backend's own failures reach callers as [`RuntimeError::Backend`] with their fix.
//!
//! This module knows labels, never cooks: callers pass names and labels in.

mod archive;
pub mod compose;
pub mod connect;
pub mod docker;
#[cfg(test)]
pub mod fake;
mod hardening;
mod labels;
mod ledger;
pub mod names;
mod spec;
pub mod swarm;

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;

pub use archive::Archive;
pub use hardening::{Hardening, Ulimit};
pub use labels::{
    LABEL_ACTOR, LABEL_CELL, LABEL_COOK, LABEL_DEADLINE, LABEL_FLAVOR, LABEL_NAMESPACE, LABEL_ROLE,
    LABEL_ROOT, LABEL_RUN, Labels, Selector,
};
pub use ledger::{Ledger, TeardownFailure};
pub use spec::{
    Area, CONTROL_AREA, CellSpec, GO_FILE, GO_NAME, INIT_CAPABILITIES, INIT_PATH, ImageSpec, Init,
    Limits, NetworkSpec, TASK_PROGRAM_CAPABILITIES, TaskProfile, Tmpfs, launch_identity,
};

use crate::error::Hint;

/// Which kind of engine runs the cells: the settings pick it (`--backend`, the environment or a
/// nightly config's `backend:`) and build the matching [`Runtime`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BackendKind {
    /// The local Docker engine.
    #[default]
    Docker,
    /// A Docker Swarm cluster.
    Swarm,
}

/// Kinds of engine objects multicooker creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKind {
    /// A running program (a container on Docker).
    Cell,
    /// A network.
    Network,
    /// An image.
    Image,
    /// A volume.
    Volume,
}

impl ObjectKind {
    /// Lower-case name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cell => "container",
            Self::Network => "network",
            Self::Image => "image",
            Self::Volume => "volume",
        }
    }
}

/// One engine object, by kind and deterministic name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// What it is.
    pub kind: ObjectKind,
    /// Its name (for images, `repository:tag`).
    pub name: String,
}

impl ObjectRef {
    /// A cell.
    pub fn cell(name: &str) -> Self {
        Self {
            kind: ObjectKind::Cell,
            name: name.to_owned(),
        }
    }
    /// A network.
    pub fn network(name: &str) -> Self {
        Self {
            kind: ObjectKind::Network,
            name: name.to_owned(),
        }
    }
    /// A volume.
    pub fn volume(name: &str) -> Self {
        Self {
            kind: ObjectKind::Volume,
            name: name.to_owned(),
        }
    }
    /// An image.
    pub fn image(name: &str) -> Self {
        Self {
            kind: ObjectKind::Image,
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} `{}`", self.kind.as_str(), self.name)
    }
}

/// What the engine says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    /// Backend name (`docker`).
    pub backend: &'static str,
    /// Engine version.
    pub version: String,
    /// Negotiated API version.
    pub api_version: String,
    /// Total memory the engine can use, in bytes.
    pub mem_total: u64,
    /// CPUs the engine can use.
    pub cpus: u64,
    /// Machines the capacity is spread over (1 for a single engine): one cell gets at most
    /// one machine's share.
    pub nodes: u64,
}

impl EngineInfo {
    /// The memory of one machine (what one cell's profile may size itself by).
    pub fn mem_per_node(&self) -> u64 {
        self.mem_total / self.nodes.max(1)
    }
}

/// How a cell ended, as the engine saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellExit {
    /// The program's exit code.
    pub code: i64,
    /// The memory limit killed it.
    pub oom_killed: bool,
}

/// A piece of a cell's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogChunk {
    /// From standard output.
    Stdout(bytes::Bytes),
    /// From standard error.
    Stderr(bytes::Bytes),
}

/// A property of the sandbox a backend cannot make hold, and what stands in for it. The
/// sandbox probe reports it as not enforced, never as holding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unenforced {
    /// The sandbox check's property, as the probe names it.
    pub property: &'static str,
    /// Why, and what compensates.
    pub compensation: &'static str,
}

/// A future an engine call returns (boxed, so the trait can be used as `dyn Runtime` and the
/// backend chosen at run time).
pub type EngineFuture<'a, T> = BoxFuture<'a, Result<T, RuntimeError>>;

/// The backend every command gets, chosen at run time.
pub type SharedRuntime = std::sync::Arc<dyn Runtime>;

/// An engine backend. Every method names the object it acts on; removing an object that is
/// already gone succeeds. Bytes move between the host and a cell only through [`Runtime::stage`]
/// and [`Runtime::collect`]: a backend never gives a cell a host path.
///
/// Any backend must pass the conformance suite in `tests/it/conformance.rs`.
pub trait Runtime: Send + Sync + 'static {
    /// The backend's name (`docker`, `swarm`).
    fn backend(&self) -> &'static str;
    /// Connects and reports the engine's version and capacity.
    fn info(&self) -> EngineFuture<'_, EngineInfo>;
    /// True when an image with this tag exists.
    fn image_exists<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, bool>;
    /// The labels of an image (`None` when no image has this tag).
    fn image_labels<'a>(
        &'a self,
        tag: &'a str,
    ) -> EngineFuture<'a, Option<std::collections::BTreeMap<String, String>>>;
    /// The engine's id of an image (`sha256:…`), for provenance; `None` when unknown.
    fn image_id<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, Option<String>>;
    /// Builds an image from a tar build context.
    fn build_image<'a>(&'a self, spec: &'a ImageSpec) -> EngineFuture<'a, ()>;
    /// Creates a network (an existing namesake is replaced).
    fn create_network<'a>(&'a self, spec: &'a NetworkSpec) -> EngineFuture<'a, ()>;
    /// Creates a cell with the hardening baseline applied and its areas (an existing namesake
    /// is replaced).
    fn create_cell<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, ()>;
    /// Attaches a created cell to one more network.
    fn connect_network<'a>(&'a self, network: &'a str, cell: &'a str) -> EngineFuture<'a, ()>;
    /// Starts a created cell.
    fn start_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()>;
    /// Unpacks an uncompressed tar into one of a running cell's areas (`target` is the area's
    /// path or a folder in it). The tar's owners and modes are kept.
    fn stage<'a>(
        &'a self,
        cell: &'a str,
        target: &'a str,
        archive: Archive,
    ) -> EngineFuture<'a, ()>;
    /// A running (or held) cell's folder as an uncompressed tar stream whose entries start
    /// with the folder's own name. The caller checks every entry; the backend only moves bytes.
    fn collect(
        &self,
        cell: &str,
        source: &str,
    ) -> BoxStream<'static, Result<bytes::Bytes, RuntimeError>>;
    /// Waits, through the engine's wait API, until the cell has exited.
    fn wait_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, CellExit>;
    /// Whether the memory limit killed a process of the cell (asked once its program ended).
    fn oom_killed<'a>(&'a self, name: &'a str) -> EngineFuture<'a, bool>;
    /// Kills a running cell at once.
    fn kill_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()>;
    /// The cell's output from its start, following it until the cell exits.
    fn cell_logs(&self, name: &str) -> BoxStream<'static, Result<LogChunk, RuntimeError>>;
    /// Removes an object (a cell with its areas); already gone is success.
    fn remove<'a>(&'a self, object: &'a ObjectRef) -> EngineFuture<'a, ()>;
    /// Objects whose labels match.
    fn list<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<ObjectRef>>;
    /// The program the cell's init runs: the spec's, else the image's own entrypoint and
    /// command.
    fn program<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, Vec<String>>;
    /// Members of an `isolated` network cannot reach each other on this backend (Docker
    /// bridges: yes; Swarm overlays: no, so each proxy gets an egress network of its own).
    fn isolates_network_members(&self) -> bool {
        true
    }
    /// Cells must run an image of the cook's own, built `FROM` the shared base and removed
    /// with the cook's objects (Swarm: it is pushed to the registry per cook and removed from
    /// the registry and every node at teardown). Elsewhere cells run the content-addressed base
    /// as it is: the cook's image would be that base plus labels, and the cell carries the
    /// cook's labels itself (issue 28: no image build per phase).
    fn needs_cook_images(&self) -> bool {
        false
    }
    /// Sandbox properties this backend cannot enforce (reported by the probe, not assumed).
    fn unenforced(&self) -> Vec<Unenforced> {
        Vec::new()
    }
    /// Where a cell runs (a cluster node's name), for provenance; `None` on a single host.
    fn placement_of<'a>(&'a self, name: &'a str) -> EngineFuture<'a, Option<String>> {
        let _ = name;
        Box::pin(async { Ok(None) })
    }
    /// Keeps a cell's file system as the image `tag` with `labels` (a Harbor participant's
    /// final state, which its task's verifier then runs on). Volumes (the cell's areas) are
    /// not part of it. Backends that cannot say so.
    fn commit_cell<'a>(
        &'a self,
        name: &'a str,
        tag: &'a str,
        labels: &'a Labels,
    ) -> EngineFuture<'a, ()> {
        let _ = labels;
        Box::pin(async move {
            Err(RuntimeError::Operation {
                operation: "commit",
                object: ObjectRef::cell(name),
                status: None,
                message: format!(
                    "the {} backend cannot keep a cell's file system as `{tag}` (Harbor tasks run on the docker backend)",
                    self.backend()
                ),
            })
        })
    }
    /// The user `image`'s configuration runs its processes as (its Dockerfile's last `USER`:
    /// a name, a uid, `uid:gid` or `name:group`, as written), empty when it names none (root).
    /// An image that does not exist is an error. Backends that cannot say so.
    fn image_user<'a>(&'a self, image: &'a str) -> EngineFuture<'a, String> {
        Box::pin(async move {
            Err(RuntimeError::Operation {
                operation: "inspect",
                object: ObjectRef::image(image),
                status: None,
                message: format!(
                    "the {} backend cannot read an image's configured user (Harbor tasks run on the docker backend)",
                    self.backend()
                ),
            })
        })
    }
    /// The files at `paths` (absolute) of `image` as it was built, nothing of it run: a cell
    /// named `cell` with `labels` is created from it, never started, its files are read
    /// through the engine and it is removed (the caller records it in its ledger first, so
    /// teardown covers a failure in between). A path the image does not have is `None`; a file
    /// over `cap` bytes or anything but a regular file is an error. Backends that cannot say so.
    fn read_image_files<'a>(
        &'a self,
        image: &'a str,
        (cell, labels): (&'a str, &'a Labels),
        paths: &'a [&'a str],
        cap: u64,
    ) -> EngineFuture<'a, Vec<Option<Vec<u8>>>> {
        let _ = (cell, labels, paths, cap);
        Box::pin(async move {
            Err(RuntimeError::Operation {
                operation: "read files of",
                object: ObjectRef::image(image),
                status: None,
                message: format!(
                    "the {} backend cannot read files of an image (Harbor tasks run on the docker backend)",
                    self.backend()
                ),
            })
        })
    }
    /// Cells whose labels match and that are still running (for `status` after a crash).
    fn running<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<String>>;
    /// Running cells whose labels match and whose deadline ([`LABEL_DEADLINE`]) has passed:
    /// their init should have ended them. A backend that cannot tell reports none.
    fn overdue<'a>(&'a self, selector: &'a Selector) -> EngineFuture<'a, Vec<String>> {
        let _ = selector;
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// Engine failures, each naming the operation and the object.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RuntimeError {
    /// The engine cannot be reached.
    #[error("cannot reach the Docker engine{}: {message}", .endpoint.as_ref().map(|e| format!(" at `{e}`")).unwrap_or_default())]
    Unreachable {
        /// Where we looked (e.g. `DOCKER_HOST`).
        endpoint: Option<String>,
        /// The client's message.
        message: String,
    },
    /// The engine refused or failed an operation.
    #[error("engine could not {operation} {object}: {message}")]
    Operation {
        /// `create`, `start`, `remove`, …
        operation: &'static str,
        /// The object.
        object: ObjectRef,
        /// HTTP status, when the engine gave one.
        status: Option<u16>,
        /// The engine's message.
        message: String,
    },
    /// An image build failed.
    #[error("building image `{image}` failed: {message}")]
    Build {
        /// The image tag.
        image: String,
        /// The builder's error and the last lines of its output.
        message: String,
    },
    /// A backend's own failure (`swarm::SwarmError`, …), as it said it, with its fix.
    #[error("{message}")]
    Backend {
        /// The backend (`swarm`).
        backend: &'static str,
        /// What went wrong.
        message: String,
        /// The fix.
        hint: String,
    },
    /// The node a cell ran on was lost (a cluster's manager marked it Down): an infrastructure
    /// failure, which the cell engine reports as such whatever the cluster backend.
    #[error("node `{node}` was lost while the cell ran")]
    NodeLost {
        /// The node's hostname.
        node: String,
    },
    /// No free subnet could be found for a network.
    #[error("no free subnet for network `{network}` in the pool `{pool}`")]
    NoSubnet {
        /// The network.
        network: String,
        /// The pool searched.
        pool: String,
    },
}

impl RuntimeError {
    /// True when the engine said the object does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::Operation {
                status: Some(404),
                ..
            }
        )
    }
}

crate::hint_source!(RuntimeError);

impl Hint for RuntimeError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::Unreachable { .. } => Some(
                "start the Docker engine (e.g. `sudo systemctl start docker`), make sure your user may use its socket, or set DOCKER_HOST; then run `multicooker doctor`".into(),
            ),
            Self::NoSubnet { .. } => Some(
                "remove stale networks with `multicooker clean --all`, or set MULTICOOKER_SUBNET_POOL to a free /16 such as `10.214.0.0/16`".into(),
            ),
            Self::Build { .. } => Some("run `multicooker doctor` to check that every flavor's image builds".into()),
            Self::Operation { .. } => None,
            Self::Backend { hint, .. } => Some(hint.clone()),
            Self::NodeLost { .. } => Some(
                "the cell is unscored, never 0: `multicooker resume <task>` runs it again once the node is back (or on another node)".into(),
            ),
        }
    }
}
