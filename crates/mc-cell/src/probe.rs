//! The sandbox seen from inside: identity, capabilities (every set), seccomp, whether the
//! program can reach its init (open /proc/1/fd/1, ptrace PID 1), file systems, mounts, limits
//! and environment, written as SANDBOX.json (and ENV.txt) for tests and `doctor`.

use std::path::Path;

use crate::json::Json;

fn status_field(status: &str, key: &str) -> Option<String> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned())
}

fn writable(dir: &str) -> bool {
    let path = Path::new(dir).join(".mc-probe");
    let ok = std::fs::write(&path, b"x").is_ok();
    let _ = std::fs::remove_file(&path);
    ok
}

fn first_readable(paths: &[&str]) -> Json {
    paths
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map_or(Json::Null, |t| Json::Str(t.trim().to_owned()))
}

fn cpu() -> Json {
    if let Ok(text) = std::fs::read_to_string("/sys/fs/cgroup/cpu.max") {
        return Json::Str(text.trim().to_owned());
    }
    let quota = std::fs::read_to_string("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    let period = std::fs::read_to_string("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    match (quota, period) {
        (Ok(q), Ok(p)) => Json::Str(format!("{} {}", q.trim(), p.trim())),
        _ => Json::Null,
    }
}

fn mounts() -> Json {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let items = text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let dash = fields.iter().position(|f| *f == "-")?;
            Some(Json::Object(vec![
                ("target".into(), Json::Str((*fields.get(4)?).to_owned())),
                ("options".into(), Json::Str((*fields.get(5)?).to_owned())),
                (
                    "fstype".into(),
                    Json::Str((*fields.get(dash + 1)?).to_owned()),
                ),
            ]))
        })
        .collect();
    Json::Array(items)
}

/// Whether init's stdout can be opened for writing (it must not: records travel there).
fn init_fds_open() -> bool {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/1/fd/1")
        .is_ok()
}

/// Whether PID 1 can be traced (it must not); a successful attempt is undone at once.
fn ptrace_init() -> bool {
    let seized = crate::sys::seize_and_interrupt(1).is_ok();
    if seized {
        crate::sys::detach(1);
    }
    seized
}

/// Writes SANDBOX.json.
pub fn write_sandbox(path: &Path) -> std::io::Result<()> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let number = |key: &str| {
        status_field(&status, key)
            .and_then(|v| v.parse::<i64>().ok())
            .map_or(Json::Null, Json::Int)
    };
    let mut env_names: Vec<String> = std::env::vars_os()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    env_names.sort();
    let home = std::env::var("HOME").unwrap_or_default();
    let value = Json::Object(vec![
        ("uid".into(), number("Uid:")),
        ("gid".into(), number("Gid:")),
        (
            "cap_eff".into(),
            status_field(&status, "CapEff:").map_or(Json::Null, Json::Str),
        ),
        (
            "cap_prm".into(),
            status_field(&status, "CapPrm:").map_or(Json::Null, Json::Str),
        ),
        (
            "cap_bnd".into(),
            status_field(&status, "CapBnd:").map_or(Json::Null, Json::Str),
        ),
        (
            "cap_amb".into(),
            status_field(&status, "CapAmb:").map_or(Json::Null, Json::Str),
        ),
        ("init_fds_open".into(), Json::Bool(init_fds_open())),
        ("ptrace_init".into(), Json::Bool(ptrace_init())),
        ("no_new_privs".into(), number("NoNewPrivs:")),
        ("seccomp".into(), number("Seccomp:")),
        ("root_writable".into(), Json::Bool(writable("/"))),
        ("home".into(), Json::Str(home.clone())),
        (
            "home_writable".into(),
            Json::Bool(!home.is_empty() && writable(&home)),
        ),
        ("tmp_writable".into(), Json::Bool(writable("/tmp"))),
        (
            "docker_socket".into(),
            Json::Bool(
                Path::new("/var/run/docker.sock").exists()
                    || Path::new("/run/docker.sock").exists(),
            ),
        ),
        ("mounts".into(), mounts()),
        (
            "memory_limit".into(),
            first_readable(&[
                "/sys/fs/cgroup/memory.max",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            ]),
        ),
        (
            "pids_limit".into(),
            first_readable(&["/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"]),
        ),
        ("cpu".into(), cpu()),
        (
            "env_names".into(),
            Json::Array(env_names.into_iter().map(Json::Str).collect()),
        ),
    ]);
    std::fs::write(path, value.pretty())
}

/// Writes ENV.txt: `NAME=VALUE` lines, sorted.
pub fn write_env(path: &Path) -> std::io::Result<()> {
    let mut lines: Vec<String> = std::env::vars_os()
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    lines.sort();
    std::fs::write(path, lines.join("\n") + "\n")
}
