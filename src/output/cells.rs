//! Progress of a run of cells, printed: one line per cell and an overall line with the counts
//! and the time against the timeout; a failed cell points at its logs and shows their last
//! lines (bounded). Cells stopped by a cancellation are counted as cancelled, said once at the
//! end, never as failures. indicatif bars on a terminal in default mode, plain lines otherwise
//! (see the module above for when).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::{CellPhase, Progress};
use crate::state::Role;

/// What the overall line of a run of cells knows: how many cells, the longest timeout, and
/// where each cell's log is (to point at it when the cell fails).
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Cells this run will start.
    pub cells: usize,
    /// The longest timeout among them, in seconds.
    pub timeout_s: u64,
    /// The cook, for `multicooker tail <cook> <actor>`.
    pub cook: String,
    /// The standard error log of each cell, by `(role, actor)`.
    pub logs: HashMap<(Role, String), PathBuf>,
}

/// How far one cell got, for the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Waiting,
    Running,
    Ok,
    Failed,
    Cancelled,
}

/// Lines of each log a failed cell shows, and the most bytes read from its end.
const LOG_LINES: usize = 12;
const LOG_BYTES: u64 = 16 * 1024;
/// Characters of one log line shown.
const LOG_WIDTH: usize = 200;

/// The last [`LOG_LINES`] lines of a log (at most [`LOG_BYTES`] read from its end, each line cut
/// at [`LOG_WIDTH`] characters), terminal controls shown, never obeyed. Empty when it cannot be
/// read or is empty.
fn last_lines(path: &std::path::Path) -> Vec<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(LOG_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err()
        || file.take(LOG_BYTES).read_to_end(&mut bytes).is_err()
    {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if from > 0 && !lines.is_empty() {
        // The first line read may be cut: start at the next one.
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let skip = lines.len().saturating_sub(LOG_LINES);
    lines[skip..]
        .iter()
        .map(|line| {
            let safe = crate::sanitize::terminal_safe(line);
            let mut shown: String = safe.chars().take(LOG_WIDTH).collect();
            if safe.chars().count() > LOG_WIDTH {
                shown.push('…');
            }
            shown
        })
        .collect()
}

/// Cell progress: bars on a terminal, plain lines otherwise, and the overall line.
pub struct CellProgress {
    phase: &'static str,
    quiet: bool,
    multi: Option<MultiProgress>,
    overall: Option<ProgressBar>,
    started: Instant,
    overview: Overview,
    bars: Mutex<HashMap<String, ProgressBar>>,
    tally: Mutex<IndexMap<(Role, String), Stage>>,
}

/// `m:ss`, or `h:mm:ss` from an hour.
fn clock(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

impl CellProgress {
    /// Cell lines and the overall line: indicatif bars when `bars`, plain lines otherwise,
    /// nothing when `quiet`.
    pub(super) fn new(phase: &'static str, quiet: bool, bars: bool, overview: Overview) -> Self {
        let multi = bars.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let overall = multi.as_ref().map(|multi| {
            let bar = multi.add(ProgressBar::new_spinner());
            let template = format!(
                "{{spinner}} {{prefix:<24}} {{msg}} · {{clock}} of {} timeout",
                clock(overview.timeout_s)
            );
            bar.set_style(
                ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| ProgressStyle::default_spinner())
                    .with_key(
                        "clock",
                        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = w.write_str(&clock(state.elapsed().as_secs()));
                        },
                    ),
            );
            bar.set_prefix(phase);
            bar.enable_steady_tick(Duration::from_millis(500));
            bar
        });
        let progress = Self {
            phase,
            quiet,
            multi,
            overall,
            started: Instant::now(),
            overview,
            bars: Mutex::new(HashMap::new()),
            tally: Mutex::new(IndexMap::new()),
        };
        progress.refresh_overall();
        progress
    }

    fn bar(&self, multi: &MultiProgress, key: &str, label: &str) -> ProgressBar {
        let mut bars = self
            .bars
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        bars.entry(key.to_owned())
            .or_insert_with(|| {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {prefix:<24} {msg} [{elapsed}]")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.set_prefix(label.to_owned());
                bar.enable_steady_tick(Duration::from_millis(120));
                bar
            })
            .clone()
    }

    /// Records a cell's stage and returns the counts line: `2/5 done (1 failed); 1 running,
    /// 2 waiting`.
    fn record(&self, role: Role, actor: &str, stage: Option<Stage>) -> String {
        let mut tally = self
            .tally
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(stage) = stage {
            tally.insert((role, actor.to_owned()), stage);
        }
        let count = |wanted: Stage| tally.values().filter(|s| **s == wanted).count();
        let (ok, failed, running, cancelled) = (
            count(Stage::Ok),
            count(Stage::Failed),
            count(Stage::Running),
            count(Stage::Cancelled),
        );
        let total = self.overview.cells.max(tally.len());
        let waiting = total.saturating_sub(ok + failed + running + cancelled);
        let mut notes = Vec::new();
        if failed > 0 {
            notes.push(format!("{failed} failed"));
        }
        if cancelled > 0 {
            notes.push(format!("{cancelled} cancelled"));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        format!(
            "{}/{total} done{notes}; {running} running, {waiting} waiting",
            ok + failed
        )
    }

    fn refresh_overall(&self) {
        let counts = self.record(Role::Participant, "", None);
        if let Some(overall) = &self.overall {
            overall.set_message(counts);
        }
    }

    /// Where a failed cell's log is and how to read it.
    fn pointers(&self, role: Role, actor: &str, text: &str) -> Vec<String> {
        let Some(log) = self.overview.logs.get(&(role, actor.to_owned())) else {
            return Vec::new();
        };
        let stdout = log.with_file_name(log.file_name().map_or_else(String::new, |n| {
            n.to_string_lossy().replace(".stderr.", ".stdout.")
        }));
        let mut lines = vec![
            format!("✗ {} {actor} failed: {text}", role.as_str()),
            format!("    logs: {}", log.parent().unwrap_or(log).display()),
        ];
        for (name, path) in [("stdout", &stdout), ("stderr", log)] {
            let last = last_lines(path);
            if !last.is_empty() {
                lines.push(format!("    {name}, last {} line(s):", last.len()));
                lines.extend(last.iter().map(|l| format!("    │ {l}")));
            }
        }
        lines.extend([
            format!(
                "    more: tail -n 40 {} {}",
                stdout.display(),
                log.display()
            ),
            format!(
                "      or: multicooker tail {} {actor} --no-follow",
                self.overview.cook
            ),
        ]);
        lines
    }

    fn line(&self, line: &str) {
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(line);
            }
            None => eprintln!("{line}"),
        }
    }
}

impl Progress for CellProgress {
    fn cell(&self, role: Role, actor: &str, phase: CellPhase) {
        if self.quiet {
            return;
        }
        let label = format!("{} {actor}", role.as_str());
        let (text, stage) = match &phase {
            CellPhase::Waiting => ("waiting".to_owned(), Stage::Waiting),
            CellPhase::Starting => ("starting".to_owned(), Stage::Running),
            CellPhase::Running => ("running".to_owned(), Stage::Running),
            CellPhase::Done { state, .. } if state == "cancelled" => {
                ("cancelled".to_owned(), Stage::Cancelled)
            }
            CellPhase::Done {
                state, detail, ok, ..
            } => (
                format!("{state} ({detail})"),
                if *ok { Stage::Ok } else { Stage::Failed },
            ),
        };
        let counts = self.record(role, actor, Some(stage));
        let failed = stage == Stage::Failed;
        if stage == Stage::Cancelled {
            // Said once, at the end, for all of them (issue 27).
            if let Some(bar) = self
                .multi
                .as_ref()
                .map(|multi| self.bar(multi, &label, &label))
            {
                bar.set_style(
                    ProgressStyle::with_template("{prefix:<26} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.finish_with_message("– cancelled");
            }
            if let Some(overall) = &self.overall {
                overall.set_message(counts);
            }
            return;
        }
        if let Some(multi) = &self.multi {
            let bar = self.bar(multi, &label, &label);
            if let CellPhase::Done { ok, .. } = phase {
                bar.set_style(
                    ProgressStyle::with_template("{prefix:<26} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.finish_with_message(format!("{} {text}", if ok { "✓" } else { "✗" }));
            } else {
                bar.set_message(text.clone());
            }
            if let Some(overall) = &self.overall {
                overall.set_message(counts);
            }
        } else {
            eprintln!("[{}] {label}: {text}", self.phase);
            if matches!(phase, CellPhase::Done { .. }) {
                eprintln!(
                    "[{}] {counts} · {} of {} timeout",
                    self.phase,
                    clock(self.started.elapsed().as_secs()),
                    clock(self.overview.timeout_s)
                );
            }
        }
        if failed {
            // Plain lines already named the cell and its state just above.
            let skip = usize::from(self.multi.is_none());
            for line in self.pointers(role, actor, &text).iter().skip(skip) {
                self.line(line);
            }
        }
    }

    fn note(&self, message: &str) {
        if self.quiet {
            return;
        }
        self.line(message);
    }
}

impl CellProgress {
    /// The cells a cancellation stopped, by label, in the order they ended.
    fn cancelled(&self) -> Vec<String> {
        self.tally
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|(_, stage)| **stage == Stage::Cancelled)
            .map(|((role, actor), _)| format!("{} {actor}", role.as_str()))
            .collect()
    }
}

impl Drop for CellProgress {
    /// The overall line stays on screen with the final counts and time; a cancellation is
    /// said here, once, with the cells it stopped.
    fn drop(&mut self) {
        let cancelled = self.cancelled();
        let elapsed = clock(self.started.elapsed().as_secs());
        if let Some(overall) = &self.overall {
            let counts = self.record(Role::Participant, "", None);
            let done = counts.split(';').next().unwrap_or_default();
            overall.set_style(
                ProgressStyle::with_template("{prefix:<26} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            let verb = if cancelled.is_empty() {
                "in"
            } else {
                "cancelled after"
            };
            overall.finish_with_message(format!("{done} {verb} {elapsed}"));
        } else if !cancelled.is_empty() && !self.quiet {
            eprintln!(
                "[{}] cancelled after {elapsed}: {} stopped ({})",
                self.phase,
                cancelled.len(),
                cancelled.join(", ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{OutputOptions, Printer};

    fn progress() -> CellProgress {
        let printer = Printer::new(OutputOptions {
            no_progress: true,
            ..OutputOptions::default()
        });
        let mut logs = HashMap::new();
        logs.insert(
            (Role::Participant, "basil".to_owned()),
            PathBuf::from("/c/logs/basil/dummy.stderr.log"),
        );
        printer.progress(
            "cook",
            Overview {
                cells: 3,
                timeout_s: 1800,
                cook: "251122-x".into(),
                logs,
            },
        )
    }

    #[test]
    fn the_overall_line_counts_done_failed_running_and_waiting() {
        let progress = progress();
        assert_eq!(
            progress.record(Role::Participant, "ada", Some(Stage::Running)),
            "0/3 done; 1 running, 2 waiting"
        );
        progress.record(Role::Participant, "ada", Some(Stage::Ok));
        assert_eq!(
            progress.record(Role::Participant, "basil", Some(Stage::Failed)),
            "2/3 done (1 failed); 0 running, 1 waiting"
        );
        assert_eq!(clock(1800), "30:00");
        assert_eq!(clock(7325), "2:02:05");
    }

    #[test]
    fn a_failed_cell_points_at_its_logs_and_the_tail_commands() {
        let lines = progress().pointers(Role::Participant, "basil", "non_zero_exit (exit=3)");
        assert_eq!(lines[1], "    logs: /c/logs/basil");
        assert_eq!(
            lines[2],
            "    more: tail -n 40 /c/logs/basil/dummy.stdout.log /c/logs/basil/dummy.stderr.log"
        );
        assert_eq!(
            lines[3],
            "      or: multicooker tail 251122-x basil --no-follow"
        );
        assert!(progress().pointers(Role::Judge, "nobody", "x").is_empty());
    }

    /// The block shows the logs' last lines, bounded in count, width and bytes read, controls
    /// shown as text.
    #[test]
    fn a_failed_cell_shows_the_last_lines_of_its_logs_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("dummy.stderr.log");
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str(&"x".repeat(500));
        text.push_str("\n\u{1b}[2Jend\n\n");
        std::fs::write(&log, text).unwrap();
        std::fs::write(dir.path().join("dummy.stdout.log"), "").unwrap();
        let mut progress = progress();
        progress
            .overview
            .logs
            .insert((Role::Judge, "j".into()), log);
        let lines = progress.pointers(Role::Judge, "j", "non_zero_exit (exit=1)");
        assert_eq!(
            lines[2],
            format!("    stderr, last {LOG_LINES} line(s):"),
            "{lines:#?}"
        );
        assert_eq!(lines[3], "    │ line 90");
        assert_eq!(lines[2 + LOG_LINES], "    │ ^[[2Jend", "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|l| l.chars().count() == 6 + LOG_WIDTH + 1 && l.ends_with('…'))
        );
        assert!(
            !lines.iter().any(|l| l.contains("stdout, last")),
            "an empty log shows nothing"
        );
        assert!(lines[3 + LOG_LINES].starts_with("    more: tail -n 40"));
        let big = dir.path().join("big.stderr.log");
        std::fs::write(&big, "y".repeat(5 << 20) + "\nlast\n").unwrap();
        assert_eq!(last_lines(&big).last().unwrap(), "last");
    }

    #[test]
    fn cancelled_cells_are_counted_not_failed() {
        let progress = progress();
        progress.cell(
            Role::Participant,
            "ada",
            CellPhase::Done {
                state: "cancelled".into(),
                detail: "exit=137".into(),
                ok: false,
            },
        );
        assert_eq!(
            progress.record(Role::Participant, "basil", Some(Stage::Cancelled)),
            "0/3 done (2 cancelled); 0 running, 1 waiting"
        );
        assert_eq!(
            progress.cancelled(),
            ["participant ada", "participant basil"]
        );
    }
}
