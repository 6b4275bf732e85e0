//! `mc-cell launch -- CMD ARGS…`: runs CMD as the cell's third identity (the launch user,
//! neither init's nor the program's), with the caller's stdin/stdout/stderr, and returns its
//! exit status once every process of that identity is dead.
//!
//! A verifier's runner uses it for the code under test (env `MULTICOOKER_LAUNCH`): the code
//! then cannot write what only the runner's uid may write (a 0700 results folder), cannot
//! signal or trace the runner, and nothing it starts (a double-forked daemon included)
//! outlives the call. The caller cannot do this alone (it has no capability); it asks the
//! cell's init over a unix socket ([`SOCKET`]). Init serves only the program's uid (checked
//! with `SO_PEERCRED`; others are refused at once), one launch at a time, and kills the launched identity's every process
//! when the launched program ends or when the caller goes away (a runner's timeout killing
//! `mc-cell launch` ends what it launched).
//!
//! Wire: the caller sends one byte carrying its descriptors 0, 1, 2 (`SCM_RIGHTS`), then a
//! request (u32 little-endian length, then NUL-separated fields: program path, working
//! folder, argument count, arguments, `NAME=VALUE` environment); init answers one line,
//! `exit N`, `signal N` or `refused: REASON`.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::sys;

/// Where init listens (in the control area, which only init writes).
pub const SOCKET: &str = "/run/mc-cell/launch.sock";
/// Largest request init reads.
const MAX_REQUEST: u32 = 1 << 20;
const TICK: Duration = Duration::from_millis(5);
/// How long init keeps killing the launched identity's processes before it gives up.
const KILL_FOR: Duration = Duration::from_secs(5);

/// Held while a launch runs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
/// Launched pids and, once init's reaper saw them end, their wait status.
static LAUNCHED: Mutex<Vec<(i32, Option<i32>)>> = Mutex::new(Vec::new());

fn launched() -> std::sync::MutexGuard<'static, Vec<(i32, Option<i32>)>> {
    LAUNCHED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Init's reaper reports every pid it reaped; launched ones keep their status here.
pub fn note_reaped(pid: i32, status: i32) {
    if let Some(entry) = launched().iter_mut().find(|(p, _)| *p == pid) {
        entry.1 = Some(status);
    }
}

/// Identities init serves: who may ask, and who launched programs become.
#[derive(Debug, Clone, Copy)]
pub struct Identities {
    /// The program's uid (the only peer served).
    pub caller: u32,
    /// The launch user.
    pub uid: u32,
    /// The launch group.
    pub gid: u32,
}

/// Starts init's server thread on [`SOCKET`]; a failure is reported and leaves launch off.
pub fn serve(ids: Identities) {
    let _ = std::fs::remove_file(SOCKET);
    let listener = match UnixListener::bind(SOCKET) {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("mc-cell init: launch is unavailable: cannot listen on {SOCKET}: {e}");
            return;
        }
    };
    // Anyone may connect; only the caller's uid is served (the peer credentials decide).
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(SOCKET, std::fs::Permissions::from_mode(0o666));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            // A refusal never waits behind a running launch.
            std::thread::spawn(move || {
                if let Err(message) = handle(stream, ids) {
                    eprintln!("mc-cell init: launch: {message}");
                }
            });
        }
    });
}

fn handle(mut stream: UnixStream, ids: Identities) -> Result<(), String> {
    let peer = sys::peer_uid(stream.as_raw_fd()).map_err(|e| e.to_string())?;
    if peer != ids.caller {
        let _ = writeln!(
            stream,
            "refused: only uid {} may launch (you are {peer})",
            ids.caller
        );
        return Err(format!("refused uid {peer}"));
    }
    // One launch at a time: each ends by killing the launched identity's every process.
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let fds = sys::receive_fds(stream.as_raw_fd()).map_err(|e| e.to_string())?;
    let fds = fds.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
    let request = read_request(&mut stream)?;
    let exec = request
        .into_exec(&fds, ids)
        .map_err(|e| format!("bad request: {e}"))?;
    let pid = {
        let mut table = launched();
        let pid = sys::spawn_as(&exec).map_err(|e| format!("cannot fork: {e}"))?;
        table.push((pid, None));
        pid
    };
    drop(fds);
    let status = wait_or_hangup(pid, &stream);
    kill_identity(ids.uid, ids.gid);
    let status = status.or_else(|| wait_status(pid, Instant::now() + KILL_FOR));
    launched().retain(|(p, _)| *p != pid);
    let answer = match status {
        Some(status) if status & 0x7f == 0 => format!("exit {}\n", (status >> 8) & 0xff),
        Some(status) => format!("signal {}\n", status & 0x7f),
        None => "signal 9\n".to_owned(),
    };
    let _ = stream.write_all(answer.as_bytes());
    Ok(())
}

/// The launched program's wait status, or `None` when the caller hung up first.
fn wait_or_hangup(pid: i32, stream: &UnixStream) -> Option<i32> {
    let _ = stream.set_nonblocking(true);
    let mut probe = [0u8; 64];
    loop {
        if let Some(status) = wait_status(pid, Instant::now()) {
            return Some(status);
        }
        match (&*stream).read(&mut probe) {
            Ok(0) => return None,
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => return None,
            _ => std::thread::sleep(TICK),
        }
    }
}

fn wait_status(pid: i32, until: Instant) -> Option<i32> {
    loop {
        let status = launched()
            .iter()
            .find(|(p, _)| *p == pid)
            .and_then(|(_, s)| *s);
        if status.is_some() || Instant::now() >= until {
            return status;
        }
        std::thread::sleep(TICK);
    }
}

/// Kills every process of `uid`, from a thread that takes that identity (so it can signal
/// those and nothing else), until none is left alive or [`KILL_FOR`] passed.
pub fn kill_identity(uid: u32, gid: u32) {
    let killer = std::thread::spawn(move || {
        if let Err(e) = sys::thread_become(uid, gid) {
            eprintln!("mc-cell init: launch: cannot become {uid}: {e}");
            return;
        }
        let until = Instant::now() + KILL_FOR;
        while Instant::now() < until {
            let _ = sys::signal(-1, sys::SIGKILL);
            if !any_alive(uid) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let _ = killer.join();
}

/// Whether a process of real uid `uid` is alive (not a zombie) in this pid namespace.
fn any_alive(uid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            return false;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|rest| rest.split_whitespace().next().map(str::to_owned))
        };
        field("Uid:").and_then(|u| u.parse::<u32>().ok()) == Some(uid)
            && field("State:").is_some_and(|s| s != "Z" && s != "X")
    })
}

/// A decoded request.
#[derive(Debug, PartialEq)]
struct Request {
    path: String,
    cwd: String,
    args: Vec<String>,
    env: Vec<String>,
}

impl Request {
    fn encode(&self) -> Vec<u8> {
        let mut fields = vec![
            self.path.clone(),
            self.cwd.clone(),
            self.args.len().to_string(),
        ];
        fields.extend(self.args.iter().cloned());
        fields.extend(self.env.iter().cloned());
        let body = fields.join("\0");
        let mut bytes = u32::try_from(body.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes()
            .to_vec();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }

    fn decode(body: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(body).map_err(|_| "not UTF-8")?;
        let mut fields = text.split('\0');
        let mut next = |what: &str| fields.next().map(str::to_owned).ok_or(format!("no {what}"));
        let path = next("program")?;
        let cwd = next("working folder")?;
        let count: usize = next("argument count")?
            .parse()
            .map_err(|_| "bad argument count")?;
        let args = (0..count)
            .map(|_| next("argument"))
            .collect::<Result<Vec<_>, _>>()?;
        let env = fields
            .filter(|e| e.contains('='))
            .map(str::to_owned)
            .collect();
        if path.is_empty() || args.is_empty() {
            return Err("no program".into());
        }
        Ok(Self {
            path,
            cwd,
            args,
            env,
        })
    }

    fn into_exec(self, fds: &[OwnedFd; 3], ids: Identities) -> Result<sys::Exec, String> {
        let c = |s: String| CString::new(s).map_err(|_| "a NUL byte in the request".to_owned());
        Ok(sys::Exec {
            path: c(self.path)?,
            strings: self.args.into_iter().map(c).collect::<Result<_, _>>()?,
            env: self.env.into_iter().map(c).collect::<Result<_, _>>()?,
            cwd: c(self.cwd)?,
            stdio: [fds[0].as_raw_fd(), fds[1].as_raw_fd(), fds[2].as_raw_fd()],
            uid: ids.uid,
            gid: ids.gid,
        })
    }
}

fn read_request(stream: &mut UnixStream) -> Result<Request, String> {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut length = [0u8; 4];
    stream
        .read_exact(&mut length)
        .map_err(|e| format!("reading the request: {e}"))?;
    let length = u32::from_le_bytes(length);
    if length > MAX_REQUEST {
        return Err(format!("a request of {length} bytes"));
    }
    let mut body = vec![0; length as usize];
    stream
        .read_exact(&mut body)
        .map_err(|e| format!("reading the request: {e}"))?;
    let _ = stream.set_read_timeout(None);
    Request::decode(&body)
}

/// Finds `program` on `PATH` unless it names a path.
fn resolve(program: &str) -> String {
    if program.contains('/') {
        return program.to_owned();
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    path.split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
        .map_or_else(|| program.to_owned(), |p| p.display().to_string())
}

/// `mc-cell launch [--] CMD ARGS…` (the caller's side).
pub fn run(args: &[String]) -> ExitCode {
    let args = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => args,
    };
    if args.is_empty() {
        eprintln!("usage: mc-cell launch -- CMD ARGS…");
        return ExitCode::from(2);
    }
    match call(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("mc-cell launch: {message}");
            ExitCode::from(126)
        }
    }
}

fn call(args: &[String]) -> Result<ExitCode, String> {
    let mut stream = UnixStream::connect(SOCKET).map_err(|e| {
        format!("cannot reach the cell's init at {SOCKET}: {e} (launch works only in a cell)")
    })?;
    sys::send_fds(stream.as_raw_fd(), [0, 1, 2]).map_err(|e| e.to_string())?;
    let request = Request {
        path: resolve(&args[0]),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "/".into()),
        args: args.to_vec(),
        env: std::env::vars().map(|(k, v)| format!("{k}={v}")).collect(),
    };
    stream
        .write_all(&request.encode())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let answer = answer.trim();
    let number = |prefix: &str| answer.strip_prefix(prefix)?.parse::<u8>().ok();
    if let Some(code) = number("exit ") {
        return Ok(ExitCode::from(code));
    }
    if let Some(signal) = number("signal ") {
        return Ok(ExitCode::from(128u8.saturating_add(signal)));
    }
    Err(if answer.is_empty() {
        "init gave no answer".into()
    } else {
        answer.to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_survives_its_encoding_and_bad_ones_are_named() {
        let request = Request {
            path: "/bin/x".into(),
            cwd: "/work".into(),
            args: vec!["x".into(), "a b".into(), String::new()],
            env: vec!["A=1".into(), "B=x=y".into()],
        };
        let bytes = request.encode();
        assert_eq!(Request::decode(&bytes[4..]).unwrap(), request);
        assert!(Request::decode(b"/bin/x\0/\0three").is_err());
        assert!(Request::decode(b"/bin/x\x00/\x005\x00a").is_err());
        assert!(Request::decode(b"\x00/\x000").is_err());
    }
}
