//! The top-level error: what `main` prints, the hint that goes with it, and the exit code.
//!
//! Domain modules have their own `thiserror` enums; each knows the fix for its own failures
//! through [`Hint`]. This module only walks an error's chain to find that hint. It never prints:
//! `output.rs` does.

use std::fmt;

/// Exit codes, as the reference defines them (docs/BEHAVIOR.md §1.2) and `--help` documents them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Success: for run commands, at least one cell ended `ok`.
    Success,
    /// The command ran but produced nothing usable (no ok cell, no judge scores).
    NothingUsable,
    /// Usage or precondition error before or instead of engine work: missing cook, invalid
    /// brief.yaml, engine unreachable, image build failure, internal error.
    Precondition,
    /// Stopped by Ctrl-C (SIGINT): everything was torn down and the cook marked `cancelled`.
    Cancelled,
    /// `nightly`: a ranking was made, but some cells are unscored or a cook failed.
    Partial,
    /// `nightly`: another night of the same config is running.
    Busy,
}

impl ExitCode {
    /// The process exit status.
    pub fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::NothingUsable => 1,
            Self::Precondition => 2,
            Self::Cancelled => 130,
            Self::Partial => 3,
            Self::Busy => 4,
        }
    }
}

/// An error that knows how the user can fix it.
pub trait Hint {
    /// One sentence telling the user what to do, if this error knows it.
    fn hint(&self) -> Option<String>;
}

/// The run was cancelled (Ctrl-C). Returned as an error so every layer unwinds through its
/// teardown; `main` maps it to exit 130.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

/// A precondition failed with a fix the user can apply; used by commands for errors that are
/// not owned by one domain module.
#[derive(Debug, thiserror::Error)]
pub struct UserError {
    /// What went wrong, one lowercase sentence.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl UserError {
    /// An error with a fix.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Hint for UserError {
    fn hint(&self) -> Option<String> {
        self.hint.clone()
    }
}

/// How to find the hint of one error type in an error chain. Every type with a [`Hint`] impl
/// registers one with [`hint_source!`], next to the impl, so no central list can forget it
/// (a hand-kept list once lost nightly's hints); a test checks that every impl is registered.
pub struct HintSource(pub fn(&(dyn std::error::Error + 'static)) -> Option<String>);

inventory::collect!(HintSource);

/// Registers the [`Hint`] impl of an error type, so [`hint_for`] finds it in any chain.
#[macro_export]
macro_rules! hint_source {
    ($ty:ty) => {
        inventory::submit! {
            $crate::error::HintSource(|cause| {
                cause
                    .downcast_ref::<$ty>()
                    .and_then($crate::error::Hint::hint)
            })
        }
    };
}

hint_source!(UserError);

/// Finds the first hint in an error's chain.
pub fn hint_for(error: &anyhow::Error) -> Option<String> {
    error.chain().find_map(|cause| {
        inventory::iter::<HintSource>
            .into_iter()
            .find_map(|source| (source.0)(cause))
    })
}

/// The exit code for an error that stopped a command.
pub fn exit_code_for(error: &anyhow::Error) -> ExitCode {
    if error
        .chain()
        .any(<dyn std::error::Error + 'static>::is::<Cancelled>)
    {
        ExitCode::Cancelled
    } else {
        ExitCode::Precondition
    }
}

/// The closest candidate to `word`, if it is close enough to be a likely typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod registry_tests {
    /// Every `impl Hint for X` in the source has its `hint_source!(X)` beside it.
    #[test]
    fn every_hint_impl_is_registered() {
        let impl_line = regex::Regex::new(r"impl (?:crate::error::)?Hint for (\w+)").unwrap();
        let mut checked = 0;
        for entry in walkdir::WalkDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")) {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for found in impl_line.captures_iter(&text) {
                checked += 1;
                assert!(
                    text.contains(&format!("hint_source!({})", &found[1])),
                    "{}: `{}` implements Hint but is not registered with hint_source!",
                    entry.path().display(),
                    &found[1]
                );
            }
        }
        assert!(checked >= 10, "found only {checked} impls");
    }

    /// Regression (issue "The cell boundary", item 5): nightly's hints never printed.
    #[test]
    fn a_nightly_config_error_keeps_its_hint_through_anyhow() {
        let error = anyhow::Error::new(crate::nightly::config::ConfigError {
            file: "n.yaml".into(),
            problems: vec!["field `briefs`: missing".into()],
        })
        .context("cannot start the night");
        assert!(super::hint_for(&error).is_some_and(|h| h.contains("multicooker nightly --help")));
    }
}
