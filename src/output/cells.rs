//! Progress of a run of cells, printed: one line per cell and an overall line with the counts
//! and the time against the timeout; a failed cell points at its logs. indicatif bars on a
//! terminal in default mode, plain lines otherwise (see the module above for when).

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

    /// Records a cell's stage and returns the counts line: `2/5 done (1 failed), 1 running,
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
        let (ok, failed, running) = (
            count(Stage::Ok),
            count(Stage::Failed),
            count(Stage::Running),
        );
        let total = self.overview.cells.max(tally.len());
        let waiting = total.saturating_sub(ok + failed + running);
        let failed_text = if failed > 0 {
            format!(" ({failed} failed)")
        } else {
            String::new()
        };
        format!(
            "{}/{total} done{failed_text}, {running} running, {waiting} waiting",
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
        vec![
            format!("✗ {} {actor} failed: {text}", role.as_str()),
            format!("    logs: {}", log.parent().unwrap_or(log).display()),
            format!(
                "    read: tail -n 40 {} {}",
                stdout.display(),
                log.display()
            ),
            format!(
                "      or: multicooker tail {} {actor} --no-follow",
                self.overview.cook
            ),
        ]
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
            CellPhase::Done {
                state, detail, ok, ..
            } => (
                format!("{state} ({detail})"),
                if *ok { Stage::Ok } else { Stage::Failed },
            ),
        };
        let counts = self.record(role, actor, Some(stage));
        let failed = stage == Stage::Failed;
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

impl Drop for CellProgress {
    /// The overall line stays on screen with the final counts and time.
    fn drop(&mut self) {
        if let Some(overall) = &self.overall {
            let counts = self.record(Role::Participant, "", None);
            let done = counts.split(',').next().unwrap_or_default();
            overall.set_style(
                ProgressStyle::with_template("{prefix:<26} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            overall.finish_with_message(format!(
                "{done} in {}",
                clock(self.started.elapsed().as_secs())
            ));
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
            "0/3 done, 1 running, 2 waiting"
        );
        progress.record(Role::Participant, "ada", Some(Stage::Ok));
        assert_eq!(
            progress.record(Role::Participant, "basil", Some(Stage::Failed)),
            "2/3 done (1 failed), 0 running, 1 waiting"
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
            "    read: tail -n 40 /c/logs/basil/dummy.stdout.log /c/logs/basil/dummy.stderr.log"
        );
        assert_eq!(
            lines[3],
            "      or: multicooker tail 251122-x basil --no-follow"
        );
        assert!(progress().pointers(Role::Judge, "nobody", "x").is_empty());
    }
}
