//! The only code that writes to stdout or stderr. stdout carries data (results, JSON);
//! stderr carries what people read (progress, notes, errors). On a terminal in default mode
//! each cell gets an indicatif line with its state and elapsed time; with `-q`, `-v`, `--json`,
//! `--no-progress` or a pipe, progress is plain lines (or nothing with `-q`).

#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "this module is the printer"
)]

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indexmap::IndexMap;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::progress::{CellPhase, Progress};
use crate::state::Role;

/// How output should look, from the global flags.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutputOptions {
    /// Print JSON to stdout instead of text.
    pub json: bool,
    /// Only errors on stderr.
    pub quiet: bool,
    /// More detail, plain lines.
    pub verbose: bool,
    /// No progress bars even on a terminal.
    pub no_progress: bool,
    /// Use colour.
    pub color: bool,
}

/// Prints for one command.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    options: OutputOptions,
}

impl Printer {
    /// A printer with these options.
    pub fn new(options: OutputOptions) -> Self {
        Self { options }
    }

    /// True when `--json` was given.
    pub fn json_mode(&self) -> bool {
        self.options.json
    }

    /// True when `-q` was given.
    pub fn quiet(&self) -> bool {
        self.options.quiet
    }

    /// A line of data on stdout (text mode only; nothing with `-q`, which prints only errors).
    pub fn data(&self, line: &str) {
        if !self.options.json && !self.options.quiet {
            println!("{line}");
        }
    }

    /// A document that is the command's whole product (a completion script, a man page, a
    /// cell's log lines), on stdout as it is, in every mode.
    pub fn document(&self, text: &str) {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    /// A JSON document on stdout (JSON mode only).
    pub fn json(&self, value: &serde_json::Value) {
        if self.options.json {
            println!(
                "{}",
                serde_json::to_string_pretty(value).unwrap_or_default()
            );
        }
    }

    /// A line for people on stderr, unless quiet.
    pub fn info(&self, line: &str) {
        if !self.options.quiet {
            eprintln!("{line}");
        }
    }

    /// Detail shown only with `-v`.
    pub fn detail(&self, line: &str) {
        if self.options.verbose {
            eprintln!("{line}");
        }
    }

    /// One problem that makes the command fail, on stderr in every mode (`-q` included).
    pub fn problem(&self, line: &str) {
        eprintln!("{}: {line}", self.paint("error", "31"));
    }

    /// A warning on stderr.
    pub fn warn(&self, line: &str) {
        eprintln!("{}: {line}", self.paint("warning", "33"));
    }

    /// The error that stopped the command, its causes, and the fix, on stderr.
    pub fn error(&self, error: &anyhow::Error, hint: Option<&str>) {
        let causes: Vec<String> = error.chain().skip(1).map(ToString::to_string).collect();
        self.error_text(&error.to_string(), &causes, hint);
    }

    /// The error that stopped the command with exit code `code`: on stderr for people and,
    /// with `--json`, also as one JSON object on stdout (`code`, `message`, `hint`, `causes`),
    /// so a script reading stdout always gets a document.
    pub fn failure(&self, error: &anyhow::Error, hint: Option<&str>, code: u8) {
        let causes: Vec<String> = error.chain().skip(1).map(ToString::to_string).collect();
        self.failure_parts(&error.to_string(), &causes, hint, code);
    }

    /// [`Printer::failure`] from its parts (for errors that are not an `anyhow::Error`, like
    /// a command line clap refused).
    pub fn failure_parts(&self, message: &str, causes: &[String], hint: Option<&str>, code: u8) {
        self.error_text(message, causes, hint);
        self.failure_json(message, causes, hint, code);
    }

    /// With `--json`, the error as one JSON object on stdout; nothing otherwise.
    pub fn failure_json(&self, message: &str, causes: &[String], hint: Option<&str>, code: u8) {
        if self.options.json {
            let value = serde_json::json!({
                "code": code,
                "message": message,
                "hint": hint,
                "causes": causes,
            });
            println!("{value}");
        }
    }

    fn error_text(self, message: &str, causes: &[String], hint: Option<&str>) {
        eprintln!("{}: {message}", self.paint("error", "31"));
        for cause in causes {
            eprintln!("  caused by: {cause}");
        }
        if let Some(hint) = hint {
            eprintln!("\n{}: {hint}", self.paint("hint", "36"));
        }
    }

    /// Progress reporting for a run of cells: one line per cell and an overall line (done,
    /// running, failed, elapsed against the timeout); a failed cell points at its log.
    pub fn progress(&self, phase: &'static str, overview: Overview) -> CellProgress {
        let bars = self.options.color_bars_allowed();
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
        let progress = CellProgress {
            phase,
            quiet: self.options.quiet,
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

    fn paint(self, text: &str, code: &str) -> String {
        if self.options.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

impl OutputOptions {
    fn color_bars_allowed(self) -> bool {
        !self.quiet
            && !self.verbose
            && !self.json
            && !self.no_progress
            && std::io::stderr().is_terminal()
    }
}

/// Whether colour should be used: `--color`, then `NO_COLOR`, then whether stderr is a terminal.
pub fn use_color(choice: &str) -> bool {
    match choice {
        "always" => true,
        "never" => false,
        _ => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stderr().is_terminal()
        }
    }
}

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
