//! multicooker: one brief, several LLM coding CLIs, each in its own hardened container; their
//! sealed outputs judged blind by other CLIs and reverse-mapped into a leaderboard.
//!
//! Layers, from the top (ARCHITECTURE.md has the map and the import rule): `cli`, `settings`,
//! `commands` (glue) and `output` (the only code that prints); `nightly` (many cooks, one
//! history); `pipeline` (the steps composed once, for commands and nights); the pipeline's steps `cook`, `verify`, `judge` and `report`, and `review` (`consult`'s
//! reviewers), siblings that never import each other; `cell`, the cell engine
//! every step shares; `harbor` (task folders read as written), `brief`, `state`, `flavor`,
//! `creds`, `progress` and `artifacts`, what a cook is; `runtime`, the engine seam; and the leaves
//! `error`, `schema`, `fsx`, `redact` and `sanitize`. Design documents are in `docs/`.

pub mod artifacts;
pub mod brief;
pub mod cell;
pub mod cli;
pub mod commands;
pub mod cook;
pub mod creds;
pub mod env_vars;
pub mod error;
pub mod flavor;
pub mod fsx;
#[cfg(test)]
mod fuzz;
pub mod harbor;
pub mod judge;
pub mod nightly;
pub mod output;
pub mod pipeline;
pub mod progress;
pub mod redact;
pub mod report;
pub mod review;
pub mod runtime;
pub mod sanitize;
pub mod schema;
pub mod settings;
pub mod state;
pub mod verify;
