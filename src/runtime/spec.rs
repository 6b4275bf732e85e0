//! What a backend is asked to create. Backend-neutral: Docker containers, Swarm services and
//! Kubernetes Jobs can all be made from these. The hardening baseline is deliberately absent:
//! backends always apply it.

use std::path::PathBuf;

use super::Labels;

/// An image to build from a tar build context.
#[derive(Debug, Clone)]
pub struct ImageSpec {
    /// `repository:tag`.
    pub tag: String,
    /// Labels of the image.
    pub labels: Labels,
    /// The build context as an uncompressed tar holding a `Dockerfile`.
    pub context: Vec<u8>,
}

/// A network of its own for one cell.
#[derive(Debug, Clone)]
pub struct NetworkSpec {
    /// Deterministic name.
    pub name: String,
    /// Labels.
    pub labels: Labels,
    /// No route out (egress only through a proxy).
    pub internal: bool,
    /// Members cannot talk to each other (an egress network shared by proxies).
    pub isolated: bool,
}

/// A bind mount of a host path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Absolute host path; must exist.
    pub source: PathBuf,
    /// Path inside the cell.
    pub target: String,
    /// Mounted read-only.
    pub read_only: bool,
}

/// An in-memory file system inside the cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tmpfs {
    /// Path inside the cell.
    pub target: String,
    /// Size cap in bytes (counts against the memory limit).
    pub size_bytes: u64,
    /// Permission bits of its root.
    pub mode: u32,
    /// Owner uid and gid of its root.
    pub owner: Option<(u32, u32)>,
}

/// Resource limits; every cell has all of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Memory in bytes.
    pub memory_bytes: u64,
    /// Memory plus swap in bytes (equal to memory: no swap).
    pub memory_swap_bytes: u64,
    /// CPUs (fractional).
    pub cpus: f64,
    /// Processes and threads.
    pub pids: u64,
}

/// One cell: a program in its own network with exactly these mounts and environment.
#[derive(Debug, Clone)]
pub struct CellSpec {
    /// Deterministic name.
    pub name: String,
    /// Image to run.
    pub image: String,
    /// The cell's own network; `None` means no network at all (only loopback).
    pub network: Option<String>,
    /// Labels.
    pub labels: Labels,
    /// `uid:gid`, never root.
    pub user: String,
    /// The complete environment (nothing is inherited from the host).
    pub env: Vec<(String, String)>,
    /// Bind mounts.
    pub mounts: Vec<Mount>,
    /// In-memory file systems (HOME, /tmp).
    pub tmpfs: Vec<Tmpfs>,
    /// Resource limits.
    pub limits: Limits,
    /// Working directory.
    pub workdir: String,
    /// Arguments replacing the image's command, if any.
    pub command: Option<Vec<String>>,
}
