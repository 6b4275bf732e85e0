//! `mc-cell init`: the first process of every cell, from a layer multicooker adds on top of
//! every image it runs (so a cell's own image cannot replace it).
//!
//! It owns the cell's life, so that the cell's rules hold even when multicooker is gone:
//!
//! - it waits until the host has staged the cell's inputs (`--go FILE` appears), so the
//!   program never sees a half-staged input;
//! - it runs the program as its only child and kills it at `--timeout`;
//! - when the program ends it kills every other process of the cell (a daemon the program left
//!   cannot keep writing), in a Harbor task's cell (`--task-root`) removes the login files the
//!   entrypoint copied into the image's HOME (the host keeps that file system as an image for
//!   the task's verifier), prints one exit record on stdout, and with `--hold` stays alive so
//!   the host can collect the cell's writable areas, which are in-memory file systems that end
//!   with the cell;
//! - at `--deadline` (counted from its own start) it ends the cell whatever happens: a cell
//!   whose multicooker was killed dies on its own.
//!
//! Init is not the program's peer. Started as root with only the capabilities it needs
//! (SETUID, SETGID, SETPCAP, KILL; no-new-privileges), it makes itself non-dumpable and starts
//! the program as `--user` (empty capability sets, empty bounding set): the program cannot
//! trace init, signal it, or open its descriptors. The program writes into pipes of its own
//! that init relays; init escapes the record separator byte in what it relays, so no program
//! byte can form an exit record on init's stdout. `--launch-as` serves `mc-cell launch` (see
//! `launch.rs`). Started as any other uid (an engine that refused the capabilities), init runs
//! the program as its peer and says so on stderr.
//!
//! Processes of the cell cannot signal it anyway: the kernel drops signals a namespace's init
//! has no handler for, SIGKILL included, when they come from inside the namespace.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::launch;
use crate::sys;

/// What starts an exit record on stdout. The host reads the first one and ignores the rest.
pub const EXIT_RECORD: &str = "\u{1e}[mc-cell] exit ";

const SIGKILL: i32 = sys::SIGKILL;
const WNOHANG: i32 = 1;
/// How often init looks at its child and at the go file.
const TICK: Duration = Duration::from_millis(10);

unsafe extern "C" {
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn kill(pid: i32, signal: i32) -> i32;
}

/// Parsed arguments.
#[derive(Debug, Default, PartialEq)]
struct Options {
    go: Option<String>,
    timeout: Option<Duration>,
    deadline: Option<Duration>,
    hold: bool,
    /// `uid:gid` the program runs as.
    user: Option<(u32, u32)>,
    /// `uid:gid` programs started with `mc-cell launch` run as.
    launch_as: Option<(u32, u32)>,
    /// The task profile: the program runs as root with exactly these capabilities (a mask).
    task_root: Option<u64>,
    program: Vec<String>,
}

/// `--task-root 0,1,3`: capability numbers the program keeps as root.
fn capability_mask(value: Option<&String>) -> Result<u64, String> {
    let value = value.ok_or("--task-root needs capability numbers")?;
    let mut mask = 0u64;
    for number in value.split(',') {
        let bit: u32 = number
            .trim()
            .parse()
            .ok()
            .filter(|n| *n < 64)
            .ok_or_else(|| format!("--task-root: `{number}` is not a capability number"))?;
        mask |= 1 << bit;
    }
    Ok(mask)
}

fn identity(value: Option<&String>, flag: &str) -> Result<(u32, u32), String> {
    value
        .and_then(|v| v.split_once(':'))
        .and_then(|(u, g)| Some((u.parse().ok()?, g.parse().ok()?)))
        .filter(|(uid, _)| *uid != 0)
        .ok_or_else(|| format!("{flag} needs a non-root uid:gid"))
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut rest = args.iter();
    let seconds = |value: Option<&String>, flag: &str| {
        value
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("{flag} needs a number of seconds"))
    };
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--go" => options.go = Some(rest.next().ok_or("--go needs a path")?.clone()),
            "--timeout" => options.timeout = Some(seconds(rest.next(), "--timeout")?),
            "--deadline" => options.deadline = Some(seconds(rest.next(), "--deadline")?),
            "--hold" => options.hold = true,
            "--user" => options.user = Some(identity(rest.next(), "--user")?),
            "--launch-as" => options.launch_as = Some(identity(rest.next(), "--launch-as")?),
            "--task-root" => options.task_root = Some(capability_mask(rest.next())?),
            "--" => {
                options.program = rest.cloned().collect();
                break;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.program.is_empty() {
        return Err("no program after `--`".into());
    }
    if options.task_root.is_some() && (options.user.is_some() || options.launch_as.is_some()) {
        return Err(
            "--task-root runs the program as root: it takes no --user or --launch-as".into(),
        );
    }
    Ok(options)
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ended {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    /// The cell's memory limit killed a process (the engine only says so once the cell ends,
    /// and a holding cell has not ended yet).
    oom: bool,
}

impl Ended {
    fn record(self) -> String {
        let number = |v: Option<i32>| v.map_or_else(|| "null".to_owned(), |v| v.to_string());
        format!(
            "\n{EXIT_RECORD}{{\"code\":{},\"signal\":{},\"timed_out\":{},\"oom\":{}}}\n",
            number(self.code),
            number(self.signal),
            self.timed_out,
            self.oom
        )
    }

    fn exit_code(self) -> ExitCode {
        match (self.code, self.signal, self.timed_out) {
            (_, _, true) => ExitCode::from(124),
            (Some(code), _, _) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
            (None, Some(signal), _) => {
                ExitCode::from(u8::try_from(128 + signal.clamp(0, 127)).unwrap_or(1))
            }
            (None, None, _) => ExitCode::FAILURE,
        }
    }
}

/// `mc-cell init [--go FILE] [--timeout S] [--deadline S] [--hold] [--user U:G | --task-root CAPS]
/// [--launch-as U:G] -- PROGRAM ARGS…`
pub fn run(args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("mc-cell init: {message}");
            return ExitCode::from(2);
        }
    };
    let separated = sys::uid() == 0 && (options.user.is_some() || options.task_root.is_some());
    if separated {
        if let Err(e) = sys::set_undumpable() {
            eprintln!("mc-cell init: cannot make itself non-dumpable: {e}");
            return ExitCode::from(125);
        }
    } else if options.user.is_some() {
        eprintln!(
            "mc-cell init: started as uid {} without the capabilities to change identity: the program runs as init's peer",
            sys::uid()
        );
    }
    let born = Instant::now();
    let deadline = options.deadline.map(|d| born + d);
    let past = |at: Option<Instant>| at.is_some_and(|at| Instant::now() >= at);
    if let Some(go) = &options.go {
        while !std::path::Path::new(go).exists() {
            if past(deadline) {
                eprintln!("mc-cell init: inputs were never staged");
                return ExitCode::from(125);
            }
            std::thread::sleep(TICK);
        }
        // The go file is the last entry of the inputs' tar, in the input area (root's, which
        // the program cannot write). It stays: the engine still sets its owner and times after
        // creating it, and removing it meanwhile failed the upload (`lchown … no such file`).
    }
    let user = options.user.filter(|_| separated);
    if let (Some((caller, _)), Some((uid, gid))) = (user, options.launch_as) {
        launch::serve(launch::Identities { caller, uid, gid });
    }
    let identity = match (user, options.task_root) {
        (Some((uid, gid)), _) => Identity::User(uid, gid),
        (None, Some(mask)) if separated => Identity::TaskRoot(mask),
        _ => Identity::Peer,
    };
    let mut child = match spawn(&options.program, identity) {
        Ok(child) => child,
        Err(e) => {
            eprintln!("mc-cell init: cannot start `{}`: {e}", options.program[0]);
            let ended = Ended {
                code: Some(127),
                signal: None,
                timed_out: false,
                oom: false,
            };
            print!("{}", ended.record());
            let _ = std::io::stdout().flush();
            return hold_or_exit(&options, deadline, ended);
        }
    };
    let relays = relay(&mut child);
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let timeout = options.timeout.map(|t| Instant::now() + t);
    let mut ended = supervise(pid, timeout, deadline);
    // Whatever the program left running dies with it (init itself is never signalled).
    reap_all();
    if matches!(identity, Identity::TaskRoot(_)) {
        // A task's cell is kept as an image once init has reported: no login may be in it.
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
        let home = home.map_or_else(|| "/root".into(), std::path::PathBuf::from);
        crate::run::scrub_logins(std::path::Path::new(crate::run::STAGING), &home);
    }
    // Every writer of the pipes is dead: the relays end once they have passed the rest on.
    for _ in 0..2 {
        let _ = relays.recv_timeout(Duration::from_secs(2));
    }
    ended.oom = oom_kills() > 0;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(ended.record().as_bytes());
    let _ = stdout.flush();
    drop(stdout);
    hold_or_exit(&options, deadline, ended)
}

/// Who the program runs as.
#[derive(Debug, Clone, Copy)]
enum Identity {
    /// `uid:gid`, with no capabilities.
    User(u32, u32),
    /// Root with exactly these capabilities (the task profile).
    TaskRoot(u64),
    /// Init's own identity (an engine that refused init its capabilities).
    Peer,
}

/// Starts the program with its own stdout and stderr pipes, as `identity` says.
fn spawn(program: &[String], identity: Identity) -> std::io::Result<std::process::Child> {
    let mut command = Command::new(&program[0]);
    command
        .args(&program[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match identity {
        // SAFETY: `become_user` and `become_task_root` only make system calls
        // (async-signal-safe).
        Identity::User(uid, gid) => unsafe {
            command.pre_exec(move || sys::become_user(uid, gid));
        },
        Identity::TaskRoot(mask) => unsafe {
            command.pre_exec(move || sys::become_task_root(mask));
        },
        Identity::Peer => {}
    }
    command.spawn()
}

/// Relays the program's stdout to init's (escaped: see [`escape`]) and its stderr to init's;
/// each relay sends on the returned channel when its pipe ends.
fn relay(child: &mut std::process::Child) -> mpsc::Receiver<()> {
    let (done, ended) = mpsc::channel();
    if let Some(mut out) = child.stdout.take() {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut buffer = vec![0u8; 64 << 10];
            while let Ok(n @ 1..) = out.read(&mut buffer) {
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(&escape(&buffer[..n]));
                let _ = stdout.flush();
            }
            let _ = done.send(());
        });
    }
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut err, &mut std::io::stderr());
            let _ = done.send(());
        });
    }
    ended
}

/// The program's bytes with every record separator (0x1e, which starts init's records)
/// written as `^^`, the way a terminal-safe log shows it anyway.
fn escape(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !bytes.contains(&0x1e) {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for byte in bytes {
        if *byte == 0x1e {
            out.extend_from_slice(b"^^");
        } else {
            out.push(*byte);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Waits for the child, reaping orphans as init must; kills it at the timeout or deadline.
fn supervise(pid: i32, timeout: Option<Instant>, deadline: Option<Instant>) -> Ended {
    let first = |a: Option<Instant>, b: Option<Instant>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let stop_at = first(timeout, deadline);
    let mut timed_out = false;
    loop {
        let mut status = 0;
        loop {
            let reaped = unsafe { waitpid(-1, &raw mut status, WNOHANG) };
            if reaped == pid {
                return decode(status, timed_out);
            }
            if reaped <= 0 {
                break;
            }
            launch::note_reaped(reaped, status);
        }
        if !timed_out && stop_at.is_some_and(|at| Instant::now() >= at) {
            timed_out = true;
            unsafe {
                kill(pid, SIGKILL);
                kill(-1, SIGKILL);
            }
        }
        std::thread::sleep(TICK);
    }
}

fn decode(status: i32, timed_out: bool) -> Ended {
    let signal = status & 0x7f;
    let (code, signal) = if signal == 0 {
        (Some((status >> 8) & 0xff), None)
    } else {
        (None, Some(signal))
    };
    Ended {
        code,
        signal,
        timed_out,
        oom: false,
    }
}

/// How many processes the cell's memory limit killed (cgroup v1 or v2), 0 when unknown.
fn oom_kills() -> u64 {
    [
        "/sys/fs/cgroup/memory/memory.oom_control",
        "/sys/fs/cgroup/memory.events",
    ]
    .iter()
    .filter_map(|path| std::fs::read_to_string(path).ok())
    .find_map(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|n| n.trim().parse().ok())
    })
    .unwrap_or(0)
}

fn reap_all() {
    let mut status = 0;
    // Processes killed a moment ago may still be exiting, and a fork racing the first kill may
    // have escaped it: kill again until nothing is left, for a bounded time.
    for _ in 0..100 {
        loop {
            let reaped = unsafe { waitpid(-1, &raw mut status, WNOHANG) };
            if reaped < 0 {
                return;
            }
            if reaped == 0 {
                break;
            }
            launch::note_reaped(reaped, status);
        }
        unsafe {
            kill(-1, SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// With `--hold`, stays alive (so the host can collect) until the deadline; else exits with the
/// program's code.
fn hold_or_exit(options: &Options, deadline: Option<Instant>, ended: Ended) -> ExitCode {
    if !options.hold {
        return ended.exit_code();
    }
    loop {
        match deadline {
            Some(at) if Instant::now() >= at => return ended.exit_code(),
            Some(at) => std::thread::sleep((at - Instant::now()).min(Duration::from_secs(1))),
            None => std::thread::sleep(Duration::from_secs(3600)),
        }
        reap_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn arguments_parse_and_bad_ones_are_named() {
        let options = parse(&args(
            "--go /run/mc-cell/go --timeout 30 --deadline 90 --hold -- /bin/x a",
        ))
        .unwrap();
        assert_eq!(options.go.as_deref(), Some("/run/mc-cell/go"));
        assert_eq!(options.timeout, Some(Duration::from_secs(30)));
        assert_eq!(options.deadline, Some(Duration::from_secs(90)));
        assert!(options.hold);
        assert_eq!(options.program, ["/bin/x", "a"]);
        assert!(parse(&args("--timeout x -- a")).is_err());
        assert!(parse(&args("--hold")).is_err());
        assert!(parse(&args("--what -- a")).is_err());
    }

    #[test]
    fn the_exit_record_is_one_line_of_json_after_a_newline() {
        let record = Ended {
            code: Some(3),
            signal: None,
            timed_out: false,
            oom: false,
        }
        .record();
        assert_eq!(
            record,
            "\n\u{1e}[mc-cell] exit {\"code\":3,\"signal\":null,\"timed_out\":false,\"oom\":false}\n"
        );
        assert_eq!(decode(0x0900, false).code, Some(9));
        assert_eq!(decode(9, true).signal, Some(9));
    }

    #[test]
    fn no_relayed_byte_can_start_a_record() {
        let forged = format!("a\n{EXIT_RECORD}{{\"code\":0}}\n");
        let relayed = escape(forged.as_bytes());
        assert!(!relayed.contains(&0x1e));
        assert_eq!(&*relayed, "a\n^^[mc-cell] exit {\"code\":0}\n".as_bytes());
        assert_eq!(&*escape(b"plain"), b"plain");
        let options = parse(&args("--user 1000:1000 --launch-as 1001:1001 -- /bin/x")).unwrap();
        assert_eq!(
            (options.user, options.launch_as),
            (Some((1000, 1000)), Some((1001, 1001)))
        );
        assert!(parse(&args("--user 0:0 -- /bin/x")).is_err());
        let task = parse(&args("--task-root 0,1,29 -- /bin/x")).unwrap();
        assert_eq!(task.task_root, Some(1 | 2 | 1 << 29));
        assert!(parse(&args("--task-root 0 --user 1000:1000 -- /bin/x")).is_err());
        assert!(parse(&args("--task-root 64 -- /bin/x")).is_err());
        assert!(parse(&args("--task-root -- /bin/x")).is_err());
        assert!(parse(&args("--launch-as 5 -- /bin/x")).is_err());
        assert_eq!(decode(9, true).signal, Some(9));
    }
}
