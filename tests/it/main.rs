//! Integration tests: the real binary against the real Docker engine. Every test ends by
//! asserting that no engine object labelled with its cook remains.

mod archive;
mod boundary;
mod brief_errors;
mod budget;
mod cell_init;
mod cell_text;
mod cli;
mod cli_failures;
mod common;
mod compose;
mod conformance;
mod cook;
mod docs;
mod doctor;
mod egress;
mod hello;
mod host_copies;
mod html;
mod isolation;
mod judge;
mod jury;
mod lifecycle;
mod logins;
mod network_none;
mod nightly;
mod readme;
mod real_clis;
mod reference;
mod refine;
mod swarm;
mod swarm_nodes;
mod verify;
mod verify_attacks;
mod verify_forgery;
mod verify_hidden;
