//! multicooker: one brief, several LLM coding CLIs, each in its own hardened container; their
//! sealed outputs judged blind by other CLIs and reverse-mapped into a leaderboard.
//!
//! Layout (see STYLE.md): `commands` are glue; `cook`, `judge` and `report` are the domain;
//! `runtime`, `state`, `brief` and `flavor` sit below them. Only `output` prints.

pub mod brief;
pub mod error;
pub mod fsx;
pub mod runtime;
pub mod state;
pub mod cook;
pub mod flavor;
pub mod progress;
pub mod judge;
pub mod cli;
pub mod commands;
pub mod output;
pub mod settings;
pub mod report;
