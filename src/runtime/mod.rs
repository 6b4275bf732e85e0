//! The engine layer: a backend-neutral [`Runtime`] trait, the specs it takes, labels, and the
//! [`Ledger`] that guarantees teardown.
//!
//! A backend runs *cells* (one isolated program each) on *networks* from *images*. The local
//! Docker engine ([`docker::DockerRuntime`]) is the first and default backend; a Swarm or
//! Kubernetes backend maps the same calls onto services or Jobs. The hardening baseline is not
//! part of [`CellSpec`]: every backend applies it unconditionally, so no caller can loosen it.
//!
//! This module knows labels, never cooks: callers pass names and labels in.

pub mod compose;
pub mod connect;
pub mod docker;
#[cfg(test)]
pub mod fake;
mod labels;
mod ledger;
mod spec;

use std::future::Future;

use futures_util::stream::BoxStream;

pub use labels::{
    LABEL_ACTOR, LABEL_COOK, LABEL_FLAVOR, LABEL_ROLE, LABEL_ROOT, LABEL_RUN, Labels, Selector,
};
pub use ledger::{Ledger, TeardownFailure};
pub use spec::{CellSpec, ImageSpec, Limits, Mount, NetworkSpec, Tmpfs};

use crate::error::Hint;

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

/// An engine backend. Every method names the object it acts on; removing an object that is
/// already gone succeeds.
pub trait Runtime: Send + Sync + 'static {
    /// Connects and reports the engine's version and capacity.
    fn info(&self) -> impl Future<Output = Result<EngineInfo, RuntimeError>> + Send;
    /// True when an image with this tag exists.
    fn image_exists(&self, tag: &str) -> impl Future<Output = Result<bool, RuntimeError>> + Send;
    /// The labels of an image (`None` when no image has this tag).
    fn image_labels(
        &self,
        tag: &str,
    ) -> impl Future<
        Output = Result<Option<std::collections::BTreeMap<String, String>>, RuntimeError>,
    > + Send;
    /// The engine's id of an image (`sha256:…`), for provenance; `None` when unknown.
    fn image_id(
        &self,
        tag: &str,
    ) -> impl Future<Output = Result<Option<String>, RuntimeError>> + Send {
        let _ = tag;
        async { Ok(None) }
    }
    /// Builds an image from a tar build context.
    fn build_image(
        &self,
        spec: &ImageSpec,
    ) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// Creates a network (an existing namesake is replaced).
    fn create_network(
        &self,
        spec: &NetworkSpec,
    ) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// Creates a cell with the hardening baseline applied (an existing namesake is replaced).
    fn create_cell(&self, spec: &CellSpec)
    -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// Attaches a created cell to one more network.
    fn connect_network(
        &self,
        network: &str,
        cell: &str,
    ) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// Starts a created cell.
    fn start_cell(&self, name: &str) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// Waits, through the engine's wait API, until the cell has exited.
    fn wait_cell(&self, name: &str) -> impl Future<Output = Result<CellExit, RuntimeError>> + Send;
    /// Kills a running cell at once.
    fn kill_cell(&self, name: &str) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// The cell's output from its start, following it until the cell exits.
    fn cell_logs(&self, name: &str) -> BoxStream<'static, Result<LogChunk, RuntimeError>>;
    /// Removes an object (and a cell's anonymous volumes); already gone is success.
    fn remove(&self, object: &ObjectRef) -> impl Future<Output = Result<(), RuntimeError>> + Send;
    /// Objects whose labels match.
    fn list(
        &self,
        selector: &Selector,
    ) -> impl Future<Output = Result<Vec<ObjectRef>, RuntimeError>> + Send;
}

/// Engine failures, each naming the operation and the object.
#[derive(Debug, thiserror::Error)]
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
        }
    }
}
