//! What a backend is asked to create. Backend-neutral: Docker containers, Swarm services and
//! Kubernetes Jobs can all be made from these. The hardening baseline is deliberately absent:
//! backends always apply it.

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

/// A file system of the cell's own, given by the backend and capped by the engine while the cell
/// runs (Docker: an anonymous tmpfs volume). Nothing of the host is in it: the host fills it only
/// through [`Runtime::stage`](super::Runtime::stage) and reads it only through
/// [`Runtime::collect`](super::Runtime::collect), both through the engine. It ends with the cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    /// Path inside the cell.
    pub target: String,
    /// Size cap in bytes.
    pub size_bytes: u64,
    /// Owner uid and gid of its root (root for inputs, the cell user for writable areas).
    pub owner: (u32, u32),
    /// Permission bits of its root.
    pub mode: u32,
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

/// How the cell's first process, `mc-cell init` (from a layer multicooker adds to every image it
/// runs), drives the program. The deadline holds even when multicooker is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Init {
    /// The program starts only once the host has staged the inputs, the go file ([`GO_FILE`])
    /// last; without this it starts at once.
    pub wait_for_go: bool,
    /// Init serves `mc-cell launch` on a socket in the control area ([`CONTROL_AREA`]), which
    /// the cell then needs (verifier cells: the code under test runs with less power).
    pub launch: bool,
    /// After the program ends, the cell stays up (its writable areas with it) until the host
    /// collects and removes it, or until the deadline.
    pub hold: bool,
    /// The program is killed after this long (counted from go).
    pub timeout: Option<std::time::Duration>,
    /// The cell ends after this long whatever happens (counted from its start).
    pub deadline: std::time::Duration,
    /// The program runs as root with [`TASK_PROGRAM_CAPABILITIES`] (the task profile) instead
    /// of as the cell user with none.
    pub task_root: bool,
    /// The folder of the go file when the cell's inputs are not in `/work` (a Harbor task's
    /// `/tests` or `/solution`); `None` is [`GO_FILE`].
    pub go_dir: Option<&'static str>,
}

/// Where every image multicooker runs has its init (a layer multicooker adds on top).
pub const INIT_PATH: &str = "/opt/multicooker/mc-cell";
/// The cell's control area, where init listens for `mc-cell launch` (cells with
/// [`Init::launch`] only); the program never writes here.
pub const CONTROL_AREA: &str = "/run/mc-cell";
/// The file whose arrival lets init start the program: the last entry of the inputs' tar, so
/// one upload stages the inputs and says go (issue 28). It is in the input area, which the
/// program cannot write; it stays there, empty (init must not remove it: the engine sets its
/// owner and times after creating it, and a removal in between fails the upload).
pub const GO_FILE: &str = "/work/.mc-cell-go";
/// [`GO_FILE`]'s name inside the input area.
pub const GO_NAME: &str = ".mc-cell-go";

/// The capabilities a cell's init keeps (the container runs as root with only these, and
/// `no-new-privileges`): enough to start the program as the cell user with an empty bounding
/// set (SETUID, SETGID, SETPCAP) and to end every process of the cell (KILL). The program
/// itself has none.
pub const INIT_CAPABILITIES: [&str; 4] = ["SETUID", "SETGID", "SETPCAP", "KILL"];

/// The task profile (SECURITY.md, "The task profile"): what a Harbor task's environment needs
/// and the default profile refuses. The root file system is writable (bounded by `storage_bytes`
/// where the engine's storage driver can enforce a size), and the program runs as root with
/// exactly [`TASK_PROGRAM_CAPABILITIES`], Docker's default set without `MKNOD`, `NET_RAW`,
/// `SETFCAP`, `NET_BIND_SERVICE` and `SYS_CHROOT`; `no-new-privileges`, seccomp, the limits and
/// the cell's own network stay. Every other cell runs the default profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskProfile {
    /// The cap on the writable root, where the storage driver enforces one.
    pub storage_bytes: u64,
}

/// The capabilities a task-profile program keeps, by name (the engine's spelling) and number
/// (linux/capability.h): installing packages (`CHOWN`, `DAC_OVERRIDE`, `FOWNER`, `FSETID`),
/// running code as another user as task verifiers do (`SETUID`, `SETGID`, `AUDIT_WRITE` for
/// `runuser`'s PAM session) and ending its own processes of other users (`KILL`).
pub const TASK_PROGRAM_CAPABILITIES: [(&str, u32); 8] = [
    ("CHOWN", 0),
    ("DAC_OVERRIDE", 1),
    ("FOWNER", 3),
    ("FSETID", 4),
    ("KILL", 5),
    ("SETGID", 6),
    ("SETUID", 7),
    ("AUDIT_WRITE", 29),
];

/// The identity programs started with `mc-cell launch` get in a cell whose program runs as
/// `user` (`uid:gid`): the next uid and gid, neither root's nor the program's.
pub fn launch_identity(user: &str) -> Option<(u32, u32)> {
    let (uid, gid) = user.split_once(':')?;
    Some((
        uid.trim().parse::<u32>().ok()?.checked_add(1)?,
        gid.trim().parse::<u32>().ok()?.checked_add(1)?,
    ))
}

impl Init {
    /// The init command line placed before the program's own, which runs as `user`
    /// (`uid:gid`) while init keeps root with [`INIT_CAPABILITIES`].
    pub fn argv(&self, user: &str, program: &[String]) -> Vec<String> {
        let mut argv = vec![INIT_PATH.to_owned(), "init".to_owned()];
        if self.task_root {
            let numbers: Vec<String> = TASK_PROGRAM_CAPABILITIES
                .iter()
                .map(|(_, n)| n.to_string())
                .collect();
            argv.extend(["--task-root".to_owned(), numbers.join(",")]);
        } else {
            argv.extend(["--user".to_owned(), user.to_owned()]);
            if let Some((uid, gid)) = launch_identity(user).filter(|_| self.launch) {
                argv.extend(["--launch-as".to_owned(), format!("{uid}:{gid}")]);
            }
        }
        if self.wait_for_go {
            let go = self
                .go_dir
                .map_or_else(|| GO_FILE.to_owned(), |dir| format!("{dir}/{GO_NAME}"));
            argv.extend(["--go".to_owned(), go]);
        }
        if let Some(timeout) = self.timeout {
            argv.extend(["--timeout".to_owned(), format_seconds(timeout)]);
        }
        argv.extend(["--deadline".to_owned(), format_seconds(self.deadline)]);
        if self.hold {
            argv.push("--hold".to_owned());
        }
        argv.push("--".to_owned());
        argv.extend(program.iter().cloned());
        argv
    }
}

fn format_seconds(duration: std::time::Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// One cell: a program in its own network with exactly these areas and environment.
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
    /// `uid:gid` the program runs as, never root (its init runs as root with only
    /// [`INIT_CAPABILITIES`]).
    pub user: String,
    /// The complete environment (nothing is inherited from the host).
    pub env: Vec<(String, String)>,
    /// Areas the host stages into or collects from.
    pub areas: Vec<Area>,
    /// Scratch in-memory file systems (HOME, /tmp): never staged, never collected.
    pub tmpfs: Vec<Tmpfs>,
    /// Resource limits.
    pub limits: Limits,
    /// Working directory.
    pub workdir: String,
    /// The program and its arguments; `None` runs the image's own entrypoint and command.
    pub program: Option<Vec<String>>,
    /// How init drives the program.
    pub init: Init,
    /// The task profile instead of the default one (Harbor tasks only).
    pub task: Option<TaskProfile>,
}
