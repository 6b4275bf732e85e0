//! `brief.yaml`: reading it safely (size cap, YAML budgets against alias bombs), checking it
//! strictly, and the typed [`Brief`] the rest of multicooker uses.
//!
//! Unknown fields are errors (the reference ignored them silently), and every error names the
//! file, the field and the fix. This module never writes anything: a bad brief leaves the cook
//! untouched.

mod budget;
pub mod edit;
pub mod harbor;
pub mod lint;
pub mod lint_network;
pub mod lint_verify;
mod model;
mod names;
mod parse;
mod schema;
pub mod templates;
mod verify;

use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::error::suggest;
pub use budget::{Budget, BudgetProblem, check_budget, grouped};
pub use model::{
    Actor, Brief, DEFAULT_JUDGE_TIMEOUT_S, DEFAULT_TIMEOUT_S, DEFAULT_VERIFY_TIMEOUT_S, Dimension,
    HarborRef, Judging, JudgingMode, JudgingPolicy, JuryView, Network, NetworkMode, Outputs,
    OverBudget, Profile, RequiredOutput, Resources, Rubric, Scoring, VerifierImage, Verify,
};
pub use names::check_actor_name;
pub use parse::{normalize_target, parse_bytes};
pub use schema::BUDGET_FIELDS;

use crate::error::Hint;

/// Flavors multicooker knows (docs/BEHAVIOR.md §3.2).
pub const KNOWN_FLAVORS: &[&str] = &["claude", "codex", "agy", "grok", "triad", "dummy"];

/// The built-in participant of a Harbor cook that runs the task's reference solution
/// (`solution/solve.sh`) instead of a CLI; accepted only in a brief with `harbor:`.
pub const ORACLE_FLAVOR: &str = "oracle";

/// Largest brief.yaml accepted.
pub const MAX_BRIEF_BYTES: u64 = 1 << 20;

/// One problem in a brief.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field, as a path: `participants[1].name`.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.problem)
    }
}

/// Why a brief.yaml could not be used.
#[derive(Debug, thiserror::Error)]
pub enum BriefError {
    /// The file is missing or unreadable.
    #[error("cannot read `{}`", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_BRIEF_BYTES`].
    #[error("`{}` is {size} bytes; a brief.yaml may be at most {MAX_BRIEF_BYTES} bytes", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// The file is not valid YAML (or exceeds the parser's budgets).
    #[error("`{}` is not valid YAML: {message}", .path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The YAML is well formed but some fields are wrong.
    #[error("{}", render_problems(.path, .problems))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        problems: Vec<Problem>,
    },
}

fn render_problems(path: &Path, problems: &[Problem]) -> String {
    match problems {
        [one] => format!("`{}`: {one}", path.display()),
        many => {
            let mut text = format!("`{}` has {} problems:", path.display(), many.len());
            for problem in many {
                text.push_str(&format!("\n  - {problem}"));
                if let Some(hint) = &problem.hint {
                    text.push_str(&format!(" ({hint})"));
                }
            }
            text
        }
    }
}

crate::hint_source!(BriefError);

impl Hint for BriefError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::Io { source, path } if source.kind() == std::io::ErrorKind::NotFound => {
                Some(format!(
                    "every cook folder needs a brief.yaml; create the cook with `multicooker new`, or add `{}`",
                    path.display()
                ))
            }
            Self::Io { .. } => None,
            Self::TooLarge { .. } => {
                Some("keep brief.yaml small; put reference material in `raw/`".into())
            }
            Self::Syntax { .. } => Some("fix the YAML at the line and column shown".into()),
            Self::Invalid { problems, .. } => match problems.as_slice() {
                [one] => one.hint.clone(),
                _ => Some("fix each field listed above".into()),
            },
        }
    }
}

/// A checked brief and the non-blocking warnings about it.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The brief.
    pub brief: Brief,
    /// Things the user should know (e.g. a judge will score its own flavor).
    pub warnings: Vec<String>,
}

/// Reads and checks a brief.yaml.
pub fn load(path: &Path) -> Result<Loaded, BriefError> {
    let io = |source| BriefError::Io {
        path: path.to_path_buf(),
        source,
    };
    let size = fs_err::metadata(path).map_err(io)?.len();
    if size > MAX_BRIEF_BYTES {
        return Err(BriefError::TooLarge {
            path: path.to_path_buf(),
            size,
        });
    }
    let bytes = fs_err::read(path).map_err(io)?;
    parse(path, &bytes)
}

/// Checks brief.yaml content; `path` is used in messages only.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Loaded, BriefError> {
    let syntax = |message: String| BriefError::Syntax {
        path: path.to_path_buf(),
        message,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| syntax(format!("not UTF-8 ({e})")))?;
    // Only `true`/`false` are booleans (YAML 1.2): a participant named `n` or `no` stays a name.
    let options = serde_saphyr::options! { with_snippet: false, strict_booleans: true };
    let value: serde_json::Value = if text.trim().is_empty() {
        serde_json::Value::Null
    } else {
        serde_saphyr::from_str_with_options(text, options).map_err(|e| {
            syntax(
                e.to_string()
                    .replace(", set DuplicateKeyPolicy in Options if acceptable", ""),
            )
        })?
    };
    let mut checker = parse::Checker {
        custom_flavors: path
            .parent()
            .map(crate::flavor::cook_flavors)
            .unwrap_or_default(),
        ..parse::Checker::default()
    };
    match parse::check(&value, &mut checker) {
        Some(brief) if checker.problems.is_empty() => Ok(Loaded {
            brief,
            warnings: checker.warnings,
        }),
        _ => Err(BriefError::Invalid {
            path: path.to_path_buf(),
            problems: checker.problems,
        }),
    }
}

#[cfg(test)]
mod tests;
