//! `multicooker tail <task> [actor]`: the cells' logs as they are written, each line prefixed
//! by its actor (`[ada] …`, `[ada:err] …` for standard error), plus the cook's events
//! (`[mc] …`). Logs of cells that start later are picked up as they appear. Following ends by
//! itself once no process runs on the cook and everything was printed (the reference's tail
//! never stopped, docs/BEHAVIOR.md §10.7); `--no-follow` prints what is there and exits.
//!
//! The logs are already redacted when written. New bytes are looked for every 200 ms.

use std::collections::BTreeMap;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::TailArgs;
use crate::error::ExitCode;
use crate::output::Printer;
use crate::settings;
use crate::state::{CookPaths, holder};

/// How often to look for new bytes while following.
const TICK: Duration = Duration::from_millis(200);

/// One file being followed.
struct Followed {
    prefix: String,
    offset: u64,
    partial: Vec<u8>,
    events: bool,
}

/// When the run to show began: the running command's start, else the last `phase.started`
/// event's time; `None` (show everything) with `--all` or when neither is known.
fn run_start(paths: &CookPaths, all: bool) -> Option<jiff::Timestamp> {
    if all {
        return None;
    }
    if let Some(holder) = holder(paths.dir()) {
        return holder.since.parse().ok();
    }
    let events = std::fs::read_to_string(paths.events()).ok()?;
    events.lines().rev().find_map(|line| {
        let event: serde_json::Value = serde_json::from_str(line).ok()?;
        (event["event"] == "phase.started")
            .then(|| event["ts"].as_str()?.parse().ok())
            .flatten()
    })
}

/// True when `path` was written at or after `start` (a log of the run shown).
fn written_since(path: &Path, start: Option<jiff::Timestamp>) -> bool {
    let Some(start) = start else {
        return true;
    };
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| jiff::Timestamp::try_from(t).ok())
        .is_some_and(|t| t >= start)
}

/// The log files of the cook (participants, then judges) and its event log.
fn sources(paths: &CookPaths, actor: Option<&str>) -> Vec<(PathBuf, String, bool)> {
    let mut found = Vec::new();
    for base in [paths.dir().join("logs"), paths.judging().join("_logs")] {
        let mut actors: Vec<PathBuf> = std::fs::read_dir(&base)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        actors.sort();
        for dir in actors {
            let name = dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            if actor.is_some_and(|a| a != name) {
                continue;
            }
            let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "log"))
                .collect();
            logs.sort();
            for log in logs {
                let err = log.to_string_lossy().ends_with(".stderr.log");
                let prefix = if err {
                    format!("[{name}:err] ")
                } else {
                    format!("[{name}] ")
                };
                found.push((log, prefix, false));
            }
        }
    }
    if actor.is_none() {
        found.push((paths.events(), "[mc] ".to_owned(), true));
    }
    found
}

/// Prints what was appended to every source since the last call; true if anything was.
fn drain(view: &View<'_>, followed: &mut BTreeMap<PathBuf, Followed>, last: bool) -> bool {
    let mut any = false;
    for (path, prefix, events) in sources(view.paths, view.actor) {
        if !events && !followed.contains_key(&path) && !written_since(&path, view.start) {
            // A log an earlier run left, not (yet) written by this one.
            continue;
        }
        let entry = followed.entry(path.clone()).or_insert(Followed {
            prefix,
            offset: 0,
            partial: Vec::new(),
            events,
        });
        let bytes = read_from(&path, &mut entry.offset);
        entry.partial.extend_from_slice(&bytes);
        while let Some(end) = entry.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = entry.partial.drain(..=end).collect();
            any |= print_line(entry, &line[..line.len() - 1], view);
        }
        if last && !entry.partial.is_empty() {
            let line = std::mem::take(&mut entry.partial);
            any |= print_line(entry, &line, view);
        }
    }
    any
}

fn read_from(path: &Path, offset: &mut u64) -> Vec<u8> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    if len < *offset {
        // Truncated (a cell ran again): start over.
        *offset = 0;
    }
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(*offset)).is_ok() {
        let _ = file.take(len - *offset).read_to_end(&mut bytes);
    }
    *offset += bytes.len() as u64;
    bytes
}

/// What is shown: the cook, one actor or all, since when, printed how.
struct View<'a> {
    paths: &'a CookPaths,
    actor: Option<&'a str>,
    start: Option<jiff::Timestamp>,
    printer: Printer,
}

/// Prints one line; an event from before the run shown is skipped (false).
fn print_line(entry: &Followed, line: &[u8], view: &View<'_>) -> bool {
    let printer = view.printer;
    let text = String::from_utf8_lossy(line);
    if entry.events {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(&text) else {
            return false;
        };
        let ts: Option<jiff::Timestamp> = event["ts"].as_str().and_then(|t| t.parse().ok());
        if let (Some(start), Some(ts)) = (view.start, ts)
            && ts < start
        {
            return false;
        }
        let name = event["event"].as_str().unwrap_or("?");
        let actor = event["actor"]
            .as_str()
            .map_or_else(String::new, |a| format!(" {a}"));
        let payload = event
            .get("payload")
            .filter(|p| !p.is_null())
            .map_or_else(String::new, |p| format!(" {p}"));
        printer.data(&format!("{}{name}{actor}{payload}", entry.prefix));
    } else {
        printer.data(&format!("{}{text}", entry.prefix));
    }
    true
}

pub(super) async fn run(args: &TailArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.task.global)?;
    let paths = session.find_cook(&args.task.task)?;
    let mut followed = BTreeMap::new();
    let mut view = View {
        paths: &paths,
        actor: args.actor.as_deref(),
        start: run_start(&paths, args.all),
        printer: session.printer,
    };
    if args.no_follow {
        drain(&view, &mut followed, true);
        return Ok(ExitCode::Success);
    }
    loop {
        let running = holder(paths.dir()).is_some();
        drain(&view, &mut followed, false);
        if !running {
            // The run is over (or there is none): print what is left and stop.
            drain(&view, &mut followed, true);
            break;
        }
        tokio::time::sleep(TICK).await;
        if view.start.is_none() && !args.all {
            // Started before the run had begun: from the run's start on.
            view.start = run_start(&paths, false);
        }
    }
    Ok(ExitCode::Success)
}
