//! Rankings with small-sample intervals: the additive model (rubric scores) or Bradley–Terry
//! (pairwise verdicts), each estimate with a delete-one-cluster jackknife t interval, every
//! pair tested on its paired difference, Holm-corrected, and turned into competition ranks.

use crate::additive::{Cell, Shape, additive_fit, fit_without};
use crate::bootstrap::Clusters;
use crate::bradley_terry::{Table, usable};
use crate::jackknife::{TInterval, jackknife};
use crate::separation::{PairTest, RankRange, pair_tests, rank_groups, rank_ranges};
use crate::{Comparison, bradley_terry};

/// A ranking: estimates with intervals, paired tests and ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Each item's estimate (additive: its effect; Bradley–Terry: percent chance of beating an
    /// average item), `None` for an item without data.
    pub items: Vec<Option<TInterval>>,
    /// Additive model: each nuisance factor's effects by level (a judge's leniency, a brief's
    /// ease); empty for Bradley–Terry.
    pub effects: Vec<Vec<Option<TInterval>>>,
    /// Additive model with a covariate: its slope.
    pub slope: Option<TInterval>,
    /// Every pair of items with an estimate, `a < b` (additive: points; Bradley–Terry:
    /// log-strength).
    pub pairs: Vec<PairTest>,
    /// Group rank, rank range and group per item.
    pub ranks: Vec<Option<RankRange>>,
    /// The items in groups every cross pair of which is separated, best first (see
    /// [`RankRange`]); `None` when no pair could be tested.
    pub groups: Option<Vec<Vec<usize>>>,
    /// Clusters in the data (levels of the first factor; Bradley–Terry: cluster numbers).
    pub clusters: usize,
    /// Additive model: the residual degrees of freedom of the full fit.
    pub residual_df: Option<usize>,
}

/// [`additive_fit`] with a jackknife t interval (clusters: levels of the first factor) for
/// every item, effect and the slope, and the paired tests and ranks of the items at `level`
/// (see the `jackknife` and `separation` modules). `None` when the full fit fails.
pub fn additive_ranking(cells: &[Cell], shape: &Shape, level: f64) -> Option<Ranking> {
    let full = additive_fit(cells, shape)?;
    let clusters = Clusters::new(
        cells
            .iter()
            .filter(|c| c.item < shape.items)
            .filter_map(|c| c.levels.first().copied())
            .filter(|&l| shape.levels.first().is_some_and(|&n| l < n)),
    );
    let items = shape.items;
    let pairs = pair_list(items);
    let effect_count: usize = shape.levels.iter().sum();
    let stat = |left_out: Option<usize>| {
        let fit = fit_without(cells, shape, left_out)?;
        let mut all = fit.items.clone();
        all.extend(
            pairs
                .iter()
                .map(|&(a, b)| Some(fit.items[a]? - fit.items[b]?)),
        );
        all.extend(fit.effects.iter().flatten().copied());
        all.push(fit.slope);
        Some(all)
    };
    let all = jackknife(clusters.ids(), full.residual_df, level, stat)?;
    let (item_part, rest) = all.split_at(items);
    let (pair_part, rest) = rest.split_at(pairs.len());
    let (effect_part, slope_part) = rest.split_at(effect_count);
    let mut effects = Vec::new();
    let mut offset = 0;
    for &n in &shape.levels {
        effects.push(effect_part[offset..offset + n].to_vec());
        offset += n;
    }
    Some(finish(
        item_part.to_vec(),
        effects,
        slope_part.first().copied().flatten(),
        &pairs,
        pair_part,
        (clusters.len(), Some(full.residual_df)),
        level,
    ))
}

/// [`bradley_terry`] with a jackknife t interval per item on the log-strength scale (shown in
/// percent), the paired tests of log-strength differences and the ranks. `None` when there is
/// no usable verdict.
pub fn bradley_terry_ranking(cmp: &[Comparison], items: usize, level: f64) -> Option<Ranking> {
    bradley_terry(cmp, items)?;
    let usable = usable(cmp, items);
    let clusters = Clusters::new(usable.iter().map(|c| c.cluster));
    let pairs = pair_list(items);
    let stat = |left_out: Option<usize>| {
        let weights: Vec<f64> = clusters
            .ids()
            .iter()
            .map(|&id| if Some(id) == left_out { 0.0 } else { 1.0 })
            .collect();
        let logits: Vec<Option<f64>> = Table::new(&usable, items, &clusters, &weights)
            .scores()
            .into_iter()
            .map(|s| s.map(|s| (s / (100.0 - s)).ln()))
            .collect();
        let mut all = logits.clone();
        all.extend(pairs.iter().map(|&(a, b)| Some(logits[a]? - logits[b]?)));
        Some(all)
    };
    let all = jackknife(clusters.ids(), usize::MAX, level, stat)?;
    let full = Table::new(&usable, items, &clusters, &vec![1.0; clusters.len()]);
    let floors = model_errors(&full, &all, &pairs);
    let all: Vec<Option<TInterval>> = all
        .into_iter()
        .zip(floors)
        .map(|(interval, floor)| Some(floored(interval?, floor, clusters.len(), level)))
        .collect();
    let percent = |theta: f64| 100.0 / (1.0 + (-theta).exp());
    let item_part: Vec<Option<TInterval>> = all[..items]
        .iter()
        .map(|i| i.map(|i| i.map(percent)))
        .collect();
    Some(finish(
        item_part,
        Vec::new(),
        None,
        &pairs,
        &all[items..],
        (clusters.len(), None),
        level,
    ))
}

/// The verdicts' own standard error of each statistic of [`bradley_terry_ranking`] (items'
/// centred log-strengths, then the pairs' differences) from the model's covariance; 0 where
/// it cannot be had.
#[expect(clippy::cast_precision_loss, reason = "item counts are tiny")]
fn model_errors(
    table: &Table,
    statistics: &[Option<TInterval>],
    pairs: &[(usize, usize)],
) -> Vec<f64> {
    let Some(cov) = table.covariance() else {
        return vec![0.0; statistics.len()];
    };
    let items = cov.len();
    let present: Vec<usize> = (0..items).filter(|&i| statistics[i].is_some()).collect();
    let m = present.len() as f64;
    let variance = |c: &[f64]| -> f64 {
        let mut v = 0.0;
        for i in 0..items {
            for j in 0..items {
                v += c[i] * cov[i][j] * c[j];
            }
        }
        v.max(0.0)
    };
    let mut out = Vec::with_capacity(statistics.len());
    for item in 0..items {
        let mut c = vec![0.0; items];
        for &j in &present {
            c[j] -= 1.0 / m;
        }
        c[item] += 1.0;
        out.push((variance(&c) * MERGED).sqrt());
    }
    for &(a, b) in pairs {
        let mut c = vec![0.0; items];
        c[a] = 1.0;
        c[b] = -1.0;
        out.push((variance(&c) * MERGED).sqrt());
    }
    out
}

/// Below this many clusters a Bradley–Terry interval's standard error is floored (see
/// [`floored`]); from it on the jackknife alone holds its level (`tests/it/pairwise.rs`).
pub const FLOOR_BELOW: usize = 5;

/// The variance of one verdict merged from both orders (two agreeing orders a win, two
/// disagreeing a tie) is `π (1 − π) / 2`, half a single Bernoulli verdict's: the model's
/// information counts each merged verdict as one Bernoulli draw, so its variance is halved.
const MERGED: f64 = 0.5;

/// A jackknife interval whose standard error is at least the verdicts' own (`floor`) when there
/// are fewer than [`FLOOR_BELOW`] clusters, or when the leave-one-out fits agree exactly: with 2
/// or 3 judges they can agree by chance far more closely than the verdicts could (a "95 %"
/// interval a point wide), and unanimous judges agree exactly, yet the verdicts' sampling error
/// is there all the same. `df` stays `clusters - 1`; with one cluster there is no interval.
fn floored(interval: TInterval, floor: f64, clusters: usize, level: f64) -> TInterval {
    let df = clusters.saturating_sub(1);
    if df == 0 {
        return interval;
    }
    if clusters >= FLOOR_BELOW && interval.se.is_some() {
        return interval;
    }
    let se = interval.se.unwrap_or(0.0).max(floor);
    TInterval::from_se(interval.estimate, se, df, level)
}

fn pair_list(items: usize) -> Vec<(usize, usize)> {
    (0..items)
        .flat_map(|a| (a + 1..items).map(move |b| (a, b)))
        .collect()
}

fn finish(
    items: Vec<Option<TInterval>>,
    effects: Vec<Vec<Option<TInterval>>>,
    slope: Option<TInterval>,
    pairs: &[(usize, usize)],
    differences: &[Option<TInterval>],
    (clusters, residual_df): (usize, Option<usize>),
    level: f64,
) -> Ranking {
    let difference = |a: usize, b: usize| {
        let index = pairs.iter().position(|&p| p == (a, b))?;
        differences[index]
    };
    let tests = pair_tests(&items, level, difference);
    let estimates: Vec<Option<f64>> = items.iter().map(|i| i.map(|i| i.estimate)).collect();
    let ranks = rank_ranges(&estimates, &tests);
    let groups = rank_groups(&estimates, &tests, &ranks);
    Ranking {
        groups,
        items,
        effects,
        slope,
        pairs: tests,
        ranks,
        clusters,
        residual_df,
    }
}
