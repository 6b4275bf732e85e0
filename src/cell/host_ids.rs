//! Cells run as ids the host does not use (issue 21): a host account whose uid matched the
//! cells' (uid 1000 is often a real user) could read a running cell through `/proc/<pid>/root`.
//!
//! Contract: [`check`] refuses a cell user when its uid or gid, or the launch identity's (the
//! next pair, `mc-cell launch`), belongs to a host account (`/etc/passwd`), a host group
//! (`/etc/group`) or a running host process (any of its real, effective, saved or file-system
//! ids; processes in another pid namespace or a container's cgroup are cells, not the host).
//! [`pick`] chooses the first free pair from [`FIRST_ID`] on.

use super::plan::CellUser;

/// Where the default cell identity is looked for (then every second id, for the launch pair).
pub const FIRST_ID: u32 = 30_000;
/// How many pairs [`pick`] tries.
const TRIES: u32 = 512;

/// What the host uses, read once.
#[derive(Debug, Default)]
pub struct HostIds {
    passwd: String,
    group: String,
    /// `(pid, name, uids, gids)` of the host's own processes.
    processes: Vec<(u32, String, Vec<u32>, Vec<u32>)>,
}

impl HostIds {
    /// Reads `/etc/passwd`, `/etc/group` and `/proc`.
    pub fn read() -> Self {
        Self {
            passwd: std::fs::read_to_string("/etc/passwd").unwrap_or_default(),
            group: std::fs::read_to_string("/etc/group").unwrap_or_default(),
            processes: host_processes(),
        }
    }

    /// Who on the host uses `uid` as a user id, if anyone.
    fn uid_user(&self, uid: u32) -> Option<String> {
        if let Some(name) = entry_with_id(&self.passwd, 2, uid) {
            return Some(format!("host account `{name}`"));
        }
        self.processes
            .iter()
            .find(|(_, _, uids, _)| uids.contains(&uid))
            .map(|(pid, name, _, _)| format!("host process {pid} ({name})"))
    }

    /// Who on the host uses `gid` as a group id, if anyone.
    fn gid_user(&self, gid: u32) -> Option<String> {
        if let Some(name) = entry_with_id(&self.group, 2, gid) {
            return Some(format!("host group `{name}`"));
        }
        if let Some(name) = entry_with_id(&self.passwd, 3, gid) {
            return Some(format!("the primary group of host account `{name}`"));
        }
        self.processes
            .iter()
            .find(|(_, _, _, gids)| gids.contains(&gid))
            .map(|(pid, name, _, _)| format!("host process {pid} ({name})"))
    }

    /// Why `user` (with its launch pair) cannot be the cells' identity, if it cannot.
    pub fn problem(&self, user: CellUser) -> Option<String> {
        let launch = (user.uid.checked_add(1)?, user.gid.checked_add(1)?);
        let ids = [
            ("uid", user.uid, self.uid_user(user.uid)),
            ("launch uid", launch.0, self.uid_user(launch.0)),
            ("gid", user.gid, self.gid_user(user.gid)),
            ("launch gid", launch.1, self.gid_user(launch.1)),
        ];
        ids.into_iter()
            .find_map(|(what, id, used)| used.map(|who| format!("{what} {id} is used by {who}")))
    }

    /// The first free pair from [`FIRST_ID`] on.
    pub fn pick(&self) -> Option<CellUser> {
        (0..TRIES)
            .map(|k| FIRST_ID + 2 * k)
            .map(|id| CellUser { uid: id, gid: id })
            .find(|user| self.problem(*user).is_none())
    }
}

/// The first field of the `name:…` line whose field `index` is `id`.
fn entry_with_id(text: &str, index: usize, id: u32) -> Option<String> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        let value = fields.get(index)?.trim().parse::<u32>().ok()?;
        (value == id).then(|| fields[0].to_owned())
    })
}

/// The host's own processes (not those of containers) with their ids.
fn host_processes() -> Vec<(u32, String, Vec<u32>, Vec<u32>)> {
    let own_namespace = std::fs::read_link("/proc/self/ns/pid").ok();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let path = entry.path();
            let namespace = std::fs::read_link(path.join("ns/pid")).ok();
            if namespace.is_some() && own_namespace.is_some() && namespace != own_namespace {
                return None;
            }
            let cgroup = std::fs::read_to_string(path.join("cgroup")).unwrap_or_default();
            if in_container(&cgroup) {
                return None;
            }
            let status = std::fs::read_to_string(path.join("status")).ok()?;
            let (name, uids, gids) = parse_status(&status);
            Some((pid, name, uids, gids))
        })
        .collect()
}

fn in_container(cgroup: &str) -> bool {
    ["docker", "containerd", "libpod", "kubepods", "lxc"]
        .iter()
        .any(|engine| cgroup.contains(engine))
}

/// Name, uids and gids of a `/proc/<pid>/status`.
fn parse_status(status: &str) -> (String, Vec<u32>, Vec<u32>) {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_default()
            .to_owned()
    };
    let ids = |key: &str| {
        field(key)
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect()
    };
    (field("Name:").trim().to_owned(), ids("Uid:"), ids("Gid:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> HostIds {
        HostIds {
            passwd: "root:x:0:0::/root:/bin/sh\ncloudsdk:x:1000:1000::/home/c:/bin/sh\nsvc:x:30002:4242::/:/bin/false\n".into(),
            group: "root:x:0:\nstaff:x:30005:\n".into(),
            processes: vec![(77, "daemon".into(), vec![1500, 1500, 1500, 1500], vec![0; 4])],
        }
    }

    #[test]
    fn a_uid_gid_or_launch_pair_the_host_uses_is_refused_naming_who() {
        let host = host();
        let user = |uid, gid| CellUser { uid, gid };
        assert_eq!(
            host.problem(user(1000, 1000)).unwrap(),
            "uid 1000 is used by host account `cloudsdk`"
        );
        assert_eq!(
            host.problem(user(999, 50)).unwrap(),
            "launch uid 1000 is used by host account `cloudsdk`"
        );
        assert_eq!(
            host.problem(user(1500, 1500)).unwrap(),
            "uid 1500 is used by host process 77 (daemon)"
        );
        assert_eq!(
            host.problem(user(20, 4241)).unwrap(),
            "launch gid 4242 is used by the primary group of host account `svc`"
        );
        assert_eq!(
            host.problem(user(20, 30005)).unwrap(),
            "gid 30005 is used by host group `staff`"
        );
        assert!(host.problem(user(40_000, 40_000)).is_none());
    }

    #[test]
    fn the_default_is_the_first_free_pair() {
        // 30002 is svc's uid and 30005 the staff group: once 30001 is taken, 30006 is first.
        let mut host = host();
        assert_eq!(
            host.pick(),
            Some(CellUser {
                uid: 30_000,
                gid: 30_000
            })
        );
        host.passwd.push_str("late:x:30001:1::/:/bin/false\n");
        assert_eq!(
            host.pick(),
            Some(CellUser {
                uid: 30_006,
                gid: 30_006
            })
        );
    }

    #[test]
    fn container_processes_are_cells_not_the_host() {
        assert!(in_container("0::/system.slice/docker-0123abcd.scope\n"));
        assert!(!in_container(
            "0::/user.slice/user-1000.slice/session-3.scope\n"
        ));
        let (name, uids, gids) = parse_status("Name:\tsh\nUid:\t1\t2\t3\t4\nGid:\t5\t6\t7\t8\n");
        assert_eq!(
            (name.as_str(), uids, gids),
            ("sh", vec![1, 2, 3, 4], vec![5, 6, 7, 8])
        );
    }
}
