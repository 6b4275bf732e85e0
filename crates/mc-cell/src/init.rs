//! `mc-cell init`: the first process of every cell, from a layer multicooker adds on top of
//! every image it runs (so a cell's own image cannot replace it).
//!
//! It owns the cell's life, so that the cell's rules hold even when multicooker is gone:
//!
//! - it waits until the host has staged the cell's inputs (`--go FILE` appears), so the
//!   program never sees a half-staged input;
//! - it runs the program as its only child and kills it at `--timeout`;
//! - when the program ends it kills every other process of the cell (a daemon the program left
//!   cannot keep writing), prints one exit record on stdout, and with `--hold` stays alive so
//!   the host can collect the cell's writable areas, which are in-memory file systems that end
//!   with the cell;
//! - at `--deadline` (counted from its own start) it ends the cell whatever happens: a cell
//!   whose multicooker was killed dies on its own.
//!
//! Processes of the cell cannot signal it: the kernel drops signals a namespace's init has no
//! handler for, SIGKILL included, when they come from inside the namespace.

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// What starts an exit record on stdout. The host reads the first one and ignores the rest.
pub const EXIT_RECORD: &str = "\u{1e}[mc-cell] exit ";

const SIGKILL: i32 = 9;
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
    program: Vec<String>,
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
    Ok(options)
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ended {
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
}

impl Ended {
    fn record(self) -> String {
        let number = |v: Option<i32>| v.map_or_else(|| "null".to_owned(), |v| v.to_string());
        format!(
            "\n{EXIT_RECORD}{{\"code\":{},\"signal\":{},\"timed_out\":{}}}\n",
            number(self.code),
            number(self.signal),
            self.timed_out
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

/// `mc-cell init [--go FILE] [--timeout S] [--deadline S] [--hold] -- PROGRAM ARGS…`
pub fn run(args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("mc-cell init: {message}");
            return ExitCode::from(2);
        }
    };
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
    }
    let child = match Command::new(&options.program[0])
        .args(&options.program[1..])
        .stdin(Stdio::null())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("mc-cell init: cannot start `{}`: {e}", options.program[0]);
            let ended = Ended {
                code: Some(127),
                signal: None,
                timed_out: false,
            };
            print!("{}", ended.record());
            return hold_or_exit(&options, deadline, ended);
        }
    };
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let timeout = options.timeout.map(|t| Instant::now() + t);
    let ended = supervise(pid, timeout, deadline);
    // Whatever the program left running dies with it (init itself is never signalled).
    reap_all();
    print!("{}", ended.record());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    hold_or_exit(&options, deadline, ended)
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
    if signal == 0 {
        Ended {
            code: Some((status >> 8) & 0xff),
            signal: None,
            timed_out,
        }
    } else {
        Ended {
            code: None,
            signal: Some(signal),
            timed_out,
        }
    }
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
        }
        .record();
        assert_eq!(
            record,
            "\n\u{1e}[mc-cell] exit {\"code\":3,\"signal\":null,\"timed_out\":false}\n"
        );
        assert_eq!(decode(0x0900, false).code, Some(9));
        assert_eq!(decode(9, true).signal, Some(9));
    }
}
