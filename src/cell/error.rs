//! The cell engine's own error: what stops a role's phase before its cells can run (a state
//! file, a folder the role prepares, an image, a login, the engine, the sandbox probe). One
//! cell's failure is never an error here: it is that cell's outcome.

use std::path::PathBuf;

/// Errors that stop a phase of cells (any role's) before its cells can run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Writing cook state failed.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// A file of the cook could not be prepared.
    #[error("cannot prepare `{}`", .path.display())]
    Prepare {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A flavor has no image.
    #[error(transparent)]
    Flavor(#[from] crate::flavor::FlavorError),
    /// The engine failed outside any one cell.
    #[error(transparent)]
    Engine(crate::runtime::RuntimeError),
    /// An image failed to build; no cell ran.
    #[error("image build failed: {0}")]
    Build(String),
    /// A login is missing, malformed or expiring.
    #[error(transparent)]
    Creds(#[from] crate::creds::CredsError),
    /// The sandbox probe found a property that does not hold; the cook was stopped.
    #[error("the sandbox check failed: {}", .0.join("; "))]
    Sandbox(Vec<String>),
}

impl RunError {
    /// A `map_err` for an I/O error while preparing `path`.
    pub fn prepare(path: PathBuf) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Self::Prepare { path, source }
    }
}

crate::hint_source!(RunError);

impl crate::error::Hint for RunError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::State(e) => e.hint(),
            Self::Flavor(e) => e.hint(),
            Self::Engine(e) => e.hint(),
            Self::Build(_) => {
                Some("run `multicooker doctor` to check that every flavor's image builds".into())
            }
            Self::Prepare { .. } => None,
            Self::Creds(e) => e.hint(),
            Self::Sandbox(_) => Some(
                "fix the engine as each line says and run `multicooker doctor --sandbox`; `cook --skip-sandbox-check` runs anyway, at your own risk".into(),
            ),
        }
    }
}
