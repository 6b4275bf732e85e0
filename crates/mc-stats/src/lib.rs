//! mc-stats: the numerics behind multicooker's leaderboard, where LLM coding agents (items) are
//! scored by several LLM judges across several briefs (clusters).
//!
//! Pure functions over plain data: no I/O, no printing, no clock, no global state. Every random
//! number comes from a generator seeded by the caller, so the same inputs and seed give the same
//! numbers on every machine.
//!
//! What the report uses:
//!
//! - [`additive_ranking`]: rubric scores as item + judge (+ brief) effects, so who scored whom
//!   cannot move a ranking; each estimate with a delete-one-cluster jackknife t interval
//!   (`k - 1` degrees of freedom), every pair tested on its paired difference with Holm's
//!   correction, competition ranks and rank ranges ([`rank_ranges`]).
//! - [`bradley_terry_ranking`]: the same for pairwise verdicts, on the log-strength scale.
//! - [`mean_interval`], [`difference_interval`], [`minimum_detectable_difference`]: t
//!   intervals for per-cluster values, differences in differences and what a design can see.
//! - [`krippendorff_alpha_interval`]: agreement between judges.
//! - [`permutation_p_value`]: the blinding probe against a judge that knows only the vendors'
//!   counts.
//! - [`wilson_interval`]: the share of hidden tests an output passed; [`spearman`] and
//!   [`kendall_tau_b`]: how far the jury's ordering and the tests' agree.
//!
//! Kept for comparison and benchmarks (`tests/it/coverage.rs` shows why the report left
//! them): [`cluster_means`] and [`bradley_terry_bootstrap`] (percentile cluster bootstrap,
//! which covers far less than its nominal level with few clusters), [`tied_groups`] (by
//! interval overlap) and [`binomial_upper_tail`].
//!
//! # Cluster bootstrap
//!
//! The clusters are the distinct `cluster` numbers in the input (judges within one cook, briefs
//! in a nightly). One resample draws as many clusters as there are, uniformly with replacement,
//! and recomputes the statistic with each cluster weighted by how often it was drawn. One draw
//! serves every item, so items stay correlated as they are in the data. A resample in which an
//! item has no observation is skipped for that item. The interval is the percentile interval:
//! the `(1 - level) / 2` and `(1 + level) / 2` quantiles of the resampled statistics, with linear
//! interpolation between order statistics (Hyndman and Fan type 7, `numpy.percentile`'s
//! default). A percentile interval usually contains the full-data estimate but is not forced
//! to.
//!
//! # Random numbers
//!
//! The generator is `rand_pcg::Pcg64` (`pcg64`, a 128-bit LCG with the XSL-RR output; O'Neill
//! 2014), seeded with `rand_core::SeedableRng::seed_from_u64`. Its output stream is fixed by the
//! PCG reference and tested by `rand_pcg` against reference vectors; `rand_core` treats a change to
//! `seed_from_u64` as value-breaking. This crate's tests pin the stream against numpy's
//! independent `PCG64` (see `tests/reference.py`), so an upgrade that changed it would fail. A
//! cluster index below `k` comes from one 64-bit output by Lemire's multiply-and-reject method,
//! written here (not taken from `rand`, whose range sampling may change between versions), so the
//! whole path from seed to resample is specified by this crate.

mod additive;
mod binomial;
mod bootstrap;
mod bradley_terry;
mod correlation;
mod groups;
mod jackknife;
mod krippendorff;
mod means;
mod permutation;
mod proportion;
mod ranking;
mod rng;
mod separation;
mod student_t;

pub use additive::{AdditiveFit, Cell, Shape, additive_fit};
pub use binomial::binomial_upper_tail;
pub use bradley_terry::{bradley_terry, bradley_terry_bootstrap};
pub use correlation::{RankCorrelation, kendall_tau_b, spearman};
pub use groups::tied_groups;
pub use jackknife::{TInterval, difference_interval, mean_interval};
pub use krippendorff::krippendorff_alpha_interval;
pub use means::cluster_means;
pub use permutation::permutation_p_value;
pub use proportion::{Proportion, wilson_interval};
pub use ranking::{FLOOR_BELOW, Ranking, additive_ranking, bradley_terry_ranking};
pub use separation::{
    PairTest, RankRange, holm, rank_groups, rank_ranges, same_estimate, score_order,
};
pub use student_t::{
    detectable_difference, minimum_detectable_difference, t_critical, t_quantile, t_test_power,
    t_two_sided_p,
};

/// A point estimate with its bootstrap percentile interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The statistic on the full data.
    pub estimate: f64,
    /// Lower end of the interval; `None` when the item has fewer than 2 clusters or no resample
    /// had it.
    pub lo: Option<f64>,
    /// Upper end of the interval; `None` exactly when `lo` is.
    pub hi: Option<f64>,
    /// How many distinct clusters have the item.
    pub clusters: usize,
}

/// One value for one item from one cluster (for example a judge's score of a participant).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// Cluster number: any `usize`, need not be contiguous.
    pub cluster: usize,
    /// Item index, below the `items` count passed with the observations; others are ignored.
    pub item: usize,
    /// The value; must be finite.
    pub value: f64,
}

/// One pairwise verdict between items `a` and `b` from one cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Cluster number: any `usize`, need not be contiguous.
    pub cluster: usize,
    /// First item index.
    pub a: usize,
    /// Second item index.
    pub b: usize,
    /// `a`'s share of the win: 1 when `a` wins, 0.5 for a tie, 0 when `b` wins (values in
    /// between count as fractional wins; values outside are clamped to `[0, 1]`).
    pub score_a: f64,
}

/// Settings of a cluster bootstrap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// Number of resamples; 0 gives no interval.
    pub resamples: usize,
    /// Coverage of the interval, in `(0, 1)`, for example 0.95.
    pub level: f64,
    /// Seed of the random number generator.
    pub seed: u64,
}
