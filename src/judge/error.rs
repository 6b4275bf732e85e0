//! What stops a judging: the engine's [`RunError`], or that error after the earlier judging it
//! had moved aside was put back (issue 25: a failed `judge` must not take a valid ranking away).

use std::path::PathBuf;

use crate::cell::RunError;

/// Errors that stop a judging run before its judges have results.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The judges' cells could not run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A judging failed before it had results, and the earlier judging it had moved aside was
    /// put back (all of it, or all but `stuck`).
    #[error("{cause}; {}", restored(.stuck))]
    Restored {
        /// Why the judging failed.
        cause: Box<JudgeError>,
        /// What could not be put back (left in `judging/_previous/`).
        stuck: Vec<PathBuf>,
    },
}

impl From<crate::state::StateError> for JudgeError {
    fn from(error: crate::state::StateError) -> Self {
        Self::Run(error.into())
    }
}

fn restored(stuck: &[PathBuf]) -> String {
    if stuck.is_empty() {
        "the earlier judging is back in place, nothing was lost".to_owned()
    } else {
        let list: Vec<String> = stuck.iter().map(|p| format!("`{}`", p.display())).collect();
        format!(
            "the earlier judging is back in place except {}, kept where it is",
            list.join(", ")
        )
    }
}

crate::hint_source!(JudgeError);

impl crate::error::Hint for JudgeError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::Run(e) => e.hint(),
            Self::Restored { cause, .. } => cause.hint(),
        }
    }
}
