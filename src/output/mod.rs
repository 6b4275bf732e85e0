//! The only code that writes to stdout or stderr. stdout carries data (results, JSON);
//! stderr carries what people read (progress, notes, errors). On a terminal in default mode
//! each cell gets an indicatif line with its state and elapsed time; with `-q`, `-v`, `--json`,
//! `--no-progress` or a pipe, progress is plain lines (or nothing with `-q`).

#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "this module is the printer"
)]

use std::io::IsTerminal;

mod cells;

pub use cells::{CellProgress, Overview};

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

    /// A line of the per-cell results table a command prints at its end: on stdout like
    /// [`Printer::data`], except when the progress lines already showed each cell's end on
    /// this same terminal (one final summary, not two: issue 27).
    pub fn result_row(&self, line: &str) {
        if self.options.color_bars_allowed() && std::io::stdout().is_terminal() {
            return;
        }
        self.data(line);
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
        CellProgress::new(
            phase,
            self.options.quiet,
            self.options.color_bars_allowed(),
            overview,
        )
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

/// Whether colour should be used: `--color`, then `NO_COLOR` (`no_color`: it is set and not
/// empty), then whether stderr is a terminal.
pub fn use_color(choice: &str, no_color: bool) -> bool {
    match choice {
        "always" => true,
        "never" => false,
        _ => !no_color && std::io::stderr().is_terminal(),
    }
}
