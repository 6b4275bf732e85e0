//! How domain code reports progress without printing: the [`Progress`] trait. `output/`
//! implements it with indicatif bars on a terminal and plain lines elsewhere; tests use
//! [`Silent`].

use crate::state::Role;

/// Where a cell is, for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellPhase {
    /// Waiting for its turn.
    Waiting,
    /// Being created and started.
    Starting,
    /// Running.
    Running,
    /// Ended: the state name and a short detail (`exit=0, 1.2s`).
    Done {
        /// `ok`, `timed_out`, …
        state: String,
        /// Exit code, duration, reason.
        detail: String,
        /// True when the state counts as success.
        ok: bool,
    },
}

/// Receives progress from long-running domain code.
pub trait Progress: Send + Sync {
    /// A cell changed phase.
    fn cell(&self, role: Role, actor: &str, phase: CellPhase);
    /// A line for the user (stderr).
    fn note(&self, message: &str);
}

/// Discards progress.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {
    fn cell(&self, _: Role, _: &str, _: CellPhase) {}
    fn note(&self, _: &str) {}
}
