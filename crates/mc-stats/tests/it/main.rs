//! mc-stats' integration tests, one binary: reference values computed by `tests/reference.py`,
//! the measured coverage of the report's intervals, the bootstrap's behaviour, and properties
//! over generated inputs.

mod bootstrap;
mod common;
mod coverage;
mod ordering;
mod pairwise;
mod power;
mod properties;
mod reference;
mod reference_intervals;
mod reference_model;
mod reference_proportions;
