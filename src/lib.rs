//! multicooker: one brief, several LLM coding CLIs, each in its own hardened container; their
//! sealed outputs judged blind by other CLIs and reverse-mapped into a leaderboard.
//!
//! Layout (see STYLE.md): `commands` are glue; `cook`, `judge` and `report` are the domain;
//! `runtime`, `state`, `brief` and `flavor` sit below them. Only `output` prints.

pub mod artifacts;
pub mod brief;
pub mod cell;
pub mod cli;
pub mod commands;
pub mod cook;
pub mod creds;
pub mod error;
pub mod flavor;
pub mod fsx;
#[cfg(test)]
mod fuzz;
pub mod judge;
pub mod nightly;
pub mod output;
pub mod progress;
pub mod redact;
pub mod report;
pub mod runtime;
pub mod sanitize;
pub mod settings;
pub mod state;
pub mod verify;
