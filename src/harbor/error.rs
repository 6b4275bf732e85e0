//! What can be wrong with a Harbor task folder, each naming the file, the key and the fix.

use std::path::PathBuf;

use crate::error::Hint;

/// Errors reading a Harbor task or a dataset of them.
#[derive(Debug, thiserror::Error)]
pub enum HarborError {
    /// The folder lacks a file every task has.
    #[error("`{}` is not a Harbor task: it has no `{file}`", .dir.display())]
    NotATask {
        /// The folder.
        dir: PathBuf,
        /// The missing file (`task.toml`, `instruction.md`, …).
        file: &'static str,
    },
    /// A file could not be read.
    #[error("cannot read `{}`", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `task.toml` is not TOML, or a key has the wrong kind of value.
    #[error("`{}` is not a valid task.toml: {message}", .path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message, with the key and line.
        message: String,
    },
    /// A key has a value of the right kind that makes no sense.
    #[error("`{}`: `{key}` {problem}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key's dotted path.
        key: String,
        /// What is wrong with its value.
        problem: String,
        /// How to fix it.
        fix: String,
    },
    /// The task uses something that changes how it runs and that multicooker cannot do yet.
    #[error("`{}`: {what} is not supported yet", .path.display())]
    Unsupported {
        /// The file (task.toml, or the compose file).
        path: PathBuf,
        /// The key or feature, in backticks.
        what: String,
        /// What to do instead.
        fix: String,
    },
    /// A link, device or FIFO inside the task folder (never followed).
    #[error("`{}` is not a regular file or folder", .path.display())]
    NotRegular {
        /// The entry.
        path: PathBuf,
    },
    /// The task folder is larger than multicooker copies.
    #[error("`{}` holds more than {limit_mb} MB", .dir.display())]
    TooLarge {
        /// The folder.
        dir: PathBuf,
        /// The cap.
        limit_mb: u64,
    },
    /// A text file is not UTF-8.
    #[error("`{}` is not UTF-8 text", .path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// A file changed between reading its hash and copying it.
    #[error("`{}` changed while multicooker read the task", .path.display())]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// A cook's task is not the task that was copied into it.
    #[error("`{}` changed since the cook was made (task hash {found}, brief.yaml records {recorded})", .dir.display())]
    Edited {
        /// The cook's task folder.
        dir: PathBuf,
        /// The hash brief.yaml records.
        recorded: String,
        /// The hash of the folder now.
        found: String,
    },
    /// A dataset folder holds no task.
    #[error("`{}` holds no Harbor task (no folder with `task.toml` and `instruction.md`)", .dir.display())]
    EmptyDataset {
        /// The folder.
        dir: PathBuf,
    },
}

crate::hint_source!(HarborError);

impl Hint for HarborError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::NotATask { .. } => Some(
                "point at a folder holding `task.toml`, `instruction.md`, `environment/` and `tests/test.sh` (docs/HARBOR.md)".into(),
            ),
            Self::Read { .. } => Some("check that the file exists and is readable".into()),
            Self::Toml { .. } => Some(
                "fix the value the message names (timeouts and sizes are numbers, `allow_internet` is true or false)".into(),
            ),
            Self::Invalid { fix, .. } | Self::Unsupported { fix, .. } => Some(fix.clone()),
            Self::NotRegular { .. } => Some(
                "replace the link or special file with a regular file: multicooker never follows links out of a task".into(),
            ),
            Self::TooLarge { .. } => Some(
                "keep large data out of the task folder (build it into the environment image from a base image instead)".into(),
            ),
            Self::NotText { .. } => Some("save the file as UTF-8".into()),
            Self::Changed { .. } => {
                Some("run the command again once nothing edits the task".into())
            }
            Self::Edited { .. } => Some(
                "make a new cook from the task (`multicooker new <name> --from <task folder>`): results are only comparable for one unchanged task".into(),
            ),
            Self::EmptyDataset { .. } => Some(
                "name a task folder, or a folder whose subfolders are task folders".into(),
            ),
        }
    }
}
