//! The hardening baseline every cell gets, whatever its spec says, as one backend-neutral value
//! ([`Hardening`]) that each backend renders into its own request (a container's host config, a
//! swarm service's task spec). It is decided here once: a backend may only say what it cannot
//! express (`Runtime::unenforced`), never choose a weaker value. See SECURITY.md.

use super::spec::{CellSpec, INIT_CAPABILITIES, TASK_PROGRAM_CAPABILITIES};

/// A resource limit of the cell's processes (`setrlimit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ulimit {
    /// The limit's name as engines spell it (`nofile`, `core`).
    pub name: &'static str,
    /// The soft limit.
    pub soft: i64,
    /// The hard limit.
    pub hard: i64,
}

/// Open files: enough for a CLI and its tools, not for exhausting the host's table.
const NOFILE: Ulimit = Ulimit {
    name: "nofile",
    soft: 4096,
    hard: 8192,
};

/// No core dumps: a crashed CLI's memory (its tokens) never lands on a disk.
const CORE: Ulimit = Ulimit {
    name: "core",
    soft: 0,
    hard: 0,
};

/// The hardening of one cell, in no engine's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hardening {
    /// The container starts as this user: root, for the cell's init, which keeps only
    /// [`Hardening::capabilities`] and starts the program as the spec's user.
    pub user: &'static str,
    /// Every capability is dropped before [`Hardening::capabilities`] are added back.
    pub drop_all_capabilities: bool,
    /// The capabilities kept: init's ([`INIT_CAPABILITIES`]), plus the task program's
    /// ([`TASK_PROGRAM_CAPABILITIES`]) in the task profile when its program runs as root.
    pub capabilities: Vec<String>,
    /// `no-new-privileges`: a set-uid file gains its program nothing.
    pub no_new_privileges: bool,
    /// Privileged mode: never.
    pub privileged: bool,
    /// The root file system is read-only (all but the task profile, whose root is writable).
    pub read_only_root: bool,
    /// The cap on a writable root, in bytes, where the storage driver can enforce one (the
    /// task profile only).
    pub root_storage_bytes: Option<u64>,
    /// The most processes and threads the cell may have.
    pub pids: u64,
    /// The kernel's OOM killer picks a cell before the host's own processes.
    pub oom_score_adj: i64,
    /// Resource limits of every process in the cell.
    pub ulimits: [Ulimit; 2],
    /// The engine's log driver: `none`, so the engine keeps no copy of what a cell prints (a
    /// login it shows would stay on the host until `clean`); output is read through the attach
    /// API only.
    pub log_driver: &'static str,
    /// The cell's host name, the same for every cell (it names nothing of the host).
    pub hostname: &'static str,
    /// Standard input is closed and no terminal is allocated.
    pub stdin: bool,
    /// The engine's own init process: never (the cell's init is multicooker's).
    pub engine_init: bool,
}

impl Hardening {
    /// The baseline for `spec`: the default profile, or the task profile when the spec asks
    /// for it (writable root bounded by its storage cap, the task program's capabilities).
    pub fn of(spec: &CellSpec) -> Self {
        let mut capabilities: Vec<String> =
            INIT_CAPABILITIES.iter().map(|c| (*c).to_owned()).collect();
        // A task cell whose program runs as another user (a Harbor `[verifier] user`) keeps
        // the writable root but not the root program's capabilities.
        if spec.task.is_some() && spec.init.task_root {
            for (name, _) in TASK_PROGRAM_CAPABILITIES {
                if !capabilities.iter().any(|c| c == name) {
                    capabilities.push(name.to_owned());
                }
            }
        }
        Self {
            user: "0:0",
            drop_all_capabilities: true,
            capabilities,
            no_new_privileges: true,
            privileged: false,
            read_only_root: spec.task.is_none(),
            root_storage_bytes: spec.task.map(|task| task.storage_bytes),
            pids: spec.limits.pids,
            oom_score_adj: 500,
            ulimits: [NOFILE, CORE],
            log_driver: "none",
            hostname: "cell",
            stdin: false,
            engine_init: false,
        }
    }

    /// The dropped capabilities as engines spell them.
    pub fn capabilities_dropped(&self) -> Vec<String> {
        if self.drop_all_capabilities {
            vec!["ALL".to_owned()]
        } else {
            Vec::new()
        }
    }

    /// [`Hardening::pids`] as engines take it.
    pub fn pids_limit(&self) -> i64 {
        i64::try_from(self.pids).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Init, Labels, Limits, TaskProfile};

    fn spec(task: Option<TaskProfile>) -> CellSpec {
        CellSpec {
            name: "c".into(),
            image: "i".into(),
            network: None,
            labels: Labels::new("cook", "participant"),
            user: "1000:1000".into(),
            env: Vec::new(),
            areas: Vec::new(),
            tmpfs: Vec::new(),
            limits: Limits {
                memory_bytes: 1 << 30,
                memory_swap_bytes: 1 << 30,
                cpus: 1.0,
                pids: 256,
            },
            workdir: "/work".into(),
            program: None,
            init: Init {
                wait_for_go: false,
                launch: false,
                hold: false,
                timeout: None,
                deadline: std::time::Duration::from_secs(60),
                task_root: false,
                go_dir: None,
            },
            task,
        }
    }

    #[test]
    fn the_default_profile_keeps_only_inits_capabilities_and_a_read_only_root() {
        let hardening = Hardening::of(&spec(None));
        assert_eq!(hardening.capabilities, INIT_CAPABILITIES.to_vec());
        assert_eq!(hardening.capabilities_dropped(), ["ALL"]);
        assert!(hardening.no_new_privileges && !hardening.privileged);
        assert!(hardening.read_only_root);
        assert_eq!(hardening.root_storage_bytes, None);
        assert_eq!(hardening.pids_limit(), 256);
        assert_eq!(hardening.log_driver, "none");
    }

    #[test]
    fn the_task_profile_adds_the_task_programs_capabilities_once_and_a_bounded_writable_root() {
        let mut task = spec(Some(TaskProfile {
            storage_bytes: 10 << 30,
        }));
        task.init.task_root = true;
        let hardening = Hardening::of(&task);
        for (name, _) in TASK_PROGRAM_CAPABILITIES {
            assert_eq!(
                hardening.capabilities.iter().filter(|c| *c == name).count(),
                1,
                "{name} once in {:?}",
                hardening.capabilities
            );
        }
        assert!(!hardening.read_only_root);
        assert_eq!(hardening.root_storage_bytes, Some(10 << 30));
        assert!(
            hardening.no_new_privileges,
            "the task profile keeps no-new-privileges"
        );
        // Its program as another user (a Harbor `[verifier] user`): the root, not the powers.
        task.init.task_root = false;
        let as_user = Hardening::of(&task);
        assert_eq!(as_user.capabilities, INIT_CAPABILITIES.to_vec());
        assert!(!as_user.read_only_root);
        assert_eq!(as_user.root_storage_bytes, Some(10 << 30));
    }
}
