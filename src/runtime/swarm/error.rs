//! What only the swarm backend can get wrong, with its fix. It reaches callers as
//! [`RuntimeError::Backend`], so the shared error enum names no backend's problems.

use super::super::RuntimeError;

/// A swarm-only failure.
#[derive(Debug, thiserror::Error)]
pub enum SwarmError {
    /// The address given as a swarm manager is not one.
    #[error("`{endpoint}` is not a swarm manager")]
    NotAManager {
        /// The address.
        endpoint: String,
    },
    /// A task runs on a node multicooker has no engine address for.
    #[error("a cell runs on node `{node}`, which MULTICOOKER_SWARM_NODES does not name")]
    UnknownNode {
        /// The node's hostname.
        node: String,
    },
    /// A cell in the task profile: Swarm cannot bound a writable root (Harbor tasks).
    #[error(
        "the swarm backend cannot run cell `{cell}` in the task profile: a service's writable root has no size limit"
    )]
    TaskProfile {
        /// The cell.
        cell: String,
    },
}

impl SwarmError {
    /// The fix.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::NotAManager { .. } => {
                "point MULTICOOKER_SWARM_MANAGER at a manager node's engine (`docker node ls` works there), or run `docker swarm init` on it"
            }
            Self::UnknownNode { .. } => {
                "list every node's engine in MULTICOOKER_SWARM_NODES as `host=address,…` (the hostnames `docker node ls` shows)"
            }
            Self::TaskProfile { .. } => {
                "run Harbor tasks on the docker backend (`--backend docker`)"
            }
        }
    }
}

impl From<SwarmError> for RuntimeError {
    fn from(error: SwarmError) -> Self {
        Self::Backend {
            backend: "swarm",
            message: error.to_string(),
            hint: error.hint().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Hint as _;

    /// A swarm error reaches callers with its own text and its fix (`doctor` and the swarm
    /// test read both).
    #[test]
    fn a_swarm_error_keeps_its_text_and_fix_through_the_shared_enum() {
        let error = RuntimeError::from(SwarmError::NotAManager {
            endpoint: "tcp://worker:2376".into(),
        });
        assert_eq!(
            error.to_string(),
            "`tcp://worker:2376` is not a swarm manager"
        );
        assert!(
            error
                .hint()
                .is_some_and(|h| h.contains("MULTICOOKER_SWARM_MANAGER")),
            "{:?}",
            error.hint()
        );
        assert!(matches!(
            error,
            RuntimeError::Backend {
                backend: "swarm",
                ..
            }
        ));
    }
}
