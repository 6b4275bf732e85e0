//! The cell engine every role shares (participants, judges, reviewers, verifiers, the chef,
//! `doctor`'s probes): planning a cell, building images, egress control, staging files in and
//! collecting them out through the engine, running cells in parallel, and cleaning up what a
//! killed run left. A role enters through one door, [`Venue::cast`] then [`Cast::run`]
//! ([`role`]), and supplies only its plans and its hooks. It takes [`CellSettings`], which
//! carry no role's modes, and it never reads the environment or prints.
//!
//! The cell boundary: a cell reaches the host only through the engine, and only as a checked
//! copy. Its inputs are staged into areas of its own ([`stage`]); what it writes lives in
//! capped areas inside it and comes back only through [`collect`], which never follows a link
//! and redacts before a byte is written.

pub mod budget;
pub mod collect;
pub mod egress;
mod error;
pub mod files;
pub mod host_ids;
pub mod images;
pub mod logs;
pub mod names;
pub mod normalize;
pub mod phase;
pub mod plan;
pub mod record;
pub mod role;
pub mod run;
pub mod sandbox;
mod serial;
pub mod spend;
pub mod spend_records;
pub mod stage;
pub mod stale;
pub mod unused_bases;

use tokio_util::sync::CancellationToken;

pub use error::RunError;
pub use logs::EXIT_RECORD;
pub use role::{Cast, Venue};

use crate::brief::{Brief, Profile};
use crate::state::CookPaths;
use names::Names;
use plan::{CellUser, PlanContext};

/// Egress settings of a run, read from the environment once (in `settings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressSettings {
    /// An existing network for the proxies' outside leg (`MULTICOOKER_EGRESS_NETWORK`), instead
    /// of a per-run egress network.
    pub network: Option<String>,
    /// Where the canary's (and the sandbox probe's) direct connection goes; it must fail
    /// (`MULTICOOKER_CANARY_DIRECT`, default [`egress::DEFAULT_CANARY_DIRECT`]).
    pub canary_direct: String,
}

impl Default for EgressSettings {
    fn default() -> Self {
        Self {
            network: None,
            canary_direct: egress::DEFAULT_CANARY_DIRECT.to_owned(),
        }
    }
}

/// Settings of every command run that starts cells, whatever their role.
#[derive(Debug, Clone)]
pub struct CellSettings {
    /// The identity cells run as.
    pub user: CellUser,
    /// Host profile.
    pub profile: Profile,
    /// Keep engine objects for debugging (`MULTICOOKER_KEEP=1`).
    pub keep: bool,
    /// Cells at once.
    pub max_parallel: usize,
    /// Unique id of this command run (a label on every object).
    pub run_id: String,
    /// Cancelled by Ctrl-C.
    pub cancel: CancellationToken,
    /// Egress settings.
    pub egress: EgressSettings,
    /// How long a cell may outlive its timeout before its own init ends it.
    pub grace: std::time::Duration,
    /// Where the host's logins are read from.
    pub logins: crate::creds::LoginSources,
    /// The shared budgets cells count against (the cook's, the night's).
    pub budgets: budget::Budgets,
    /// The namespace and build arguments of every image.
    pub images: images::ImageSettings,
}

impl CellSettings {
    /// The planning context of one command run.
    pub fn plan_context<'a>(
        &'a self,
        paths: &'a CookPaths,
        names: &'a Names,
        brief: &'a Brief,
    ) -> PlanContext<'a> {
        PlanContext {
            paths,
            names,
            brief,
            user: self.user,
            profile: self.profile,
            run_id: &self.run_id,
            grace: self.grace,
        }
    }
}
