//! From paired tests to ranks: Holm's step-down correction over every pair, then competition
//! ranks and rank ranges. Items are told apart only where the paired test says so; nothing is
//! read from whether two marginal intervals overlap (which ignores that the same judges, or
//! the same briefs, scored both).

use crate::jackknife::TInterval;

/// One paired comparison: `a - b` with its interval and tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairTest {
    /// First item.
    pub a: usize,
    /// Second item.
    pub b: usize,
    /// `a - b` (on the model's scale) with its t interval.
    pub difference: TInterval,
    /// Two-sided p-value of "no difference"; `None` without an interval.
    pub p_value: Option<f64>,
    /// Holm-adjusted p-value over every pair with a p-value.
    pub p_adjusted: Option<f64>,
    /// The adjusted p-value is below `1 - level`: the two are told apart.
    pub separated: bool,
}

/// An item's place: its competition rank and the range of ranks the tests allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankRange {
    /// `1 +` the number of items separated from it and better: equal for items nothing tells
    /// apart from the same betters (1, 2=, 2=, 4).
    pub rank: usize,
    /// Best rank it could have (equals `rank`).
    pub best: usize,
    /// Worst rank it could have: the ranked items minus those separated from it and worse.
    pub worst: usize,
}

/// Holm's step-down adjusted p-values (Holm 1979): sorted ascending, the `i`-th (from 0) of `m`
/// becomes `max_{j <= i} min(1, (m - j) p_(j))`. `None` entries are not tests and do not count
/// in `m`.
#[expect(clippy::cast_precision_loss, reason = "pair counts are tiny")]
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p_values
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, (*p)?)))
        .collect();
    order.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
    let m = order.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running: f64 = 0.0;
    for (rank, (index, p)) in order.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[index] = Some(running);
    }
    adjusted
}

/// Tests every pair of items with an estimate from `difference(a, b)` (`a < b`), corrects
/// them with [`holm`] and separates those whose adjusted p-value is below `1 - level`.
pub(crate) fn pair_tests(
    estimates: &[Option<TInterval>],
    level: f64,
    difference: impl Fn(usize, usize) -> Option<TInterval>,
) -> Vec<PairTest> {
    let present: Vec<usize> = (0..estimates.len())
        .filter(|&i| estimates[i].is_some())
        .collect();
    let mut pairs: Vec<PairTest> = Vec::new();
    for (position, &a) in present.iter().enumerate() {
        for &b in &present[position + 1..] {
            if let Some(difference) = difference(a, b) {
                pairs.push(PairTest {
                    a,
                    b,
                    difference,
                    p_value: difference.p_value(),
                    p_adjusted: None,
                    separated: false,
                });
            }
        }
    }
    let adjusted = holm(&pairs.iter().map(|p| p.p_value).collect::<Vec<_>>());
    for (pair, adjusted) in pairs.iter_mut().zip(adjusted) {
        pair.p_adjusted = adjusted;
        pair.separated = adjusted.is_some_and(|p| p < 1.0 - level);
    }
    pairs
}

/// Competition ranks and rank ranges of the items with an estimate (see [`RankRange`]).
pub fn rank_ranges(estimates: &[Option<f64>], pairs: &[PairTest]) -> Vec<Option<RankRange>> {
    let ranked = estimates.iter().flatten().count();
    let separated_from = |item: usize, better: bool| {
        pairs
            .iter()
            .filter(|p| p.separated && (p.a == item || p.b == item))
            .filter(|p| {
                let item_ahead = (p.a == item) == (p.difference.estimate > 0.0);
                item_ahead != better
            })
            .count()
    };
    estimates
        .iter()
        .enumerate()
        .map(|(item, estimate)| {
            estimate.map(|_| {
                let rank = 1 + separated_from(item, true);
                RankRange {
                    rank,
                    best: rank,
                    worst: ranked - separated_from(item, false),
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{PairTest, holm, rank_ranges};
    use crate::TInterval;

    #[test]
    fn holm_multiplies_the_smallest_by_m_and_stays_monotone() {
        let got = holm(&[Some(0.01), None, Some(0.04), Some(0.03)]);
        // sorted: 0.01 × 3 = 0.03, 0.03 × 2 = 0.06, 0.04 × 1 = 0.04 -> max so far 0.06
        let want = [Some(0.03), None, Some(0.06), Some(0.06)];
        for (g, w) in got.iter().zip(want) {
            assert_eq!(
                g.map(|x| (x * 1e9).round()),
                w.map(|x: f64| (x * 1e9).round())
            );
        }
    }

    fn pair(a: usize, b: usize, difference: f64, separated: bool) -> PairTest {
        PairTest {
            a,
            b,
            difference: TInterval::bare(difference),
            p_value: None,
            p_adjusted: None,
            separated,
        }
    }

    // A is ahead of everyone, B and C cannot be told apart, D is behind everyone: 1, 2=, 2=, 4.
    #[test]
    fn competition_ranks_and_ranges() {
        let estimates = [Some(80.0), Some(60.0), Some(58.0), Some(30.0)];
        let pairs = [
            pair(0, 1, 20.0, true),
            pair(0, 2, 22.0, true),
            pair(0, 3, 50.0, true),
            pair(1, 2, 2.0, false),
            pair(1, 3, 30.0, true),
            pair(2, 3, 28.0, true),
        ];
        let got: Vec<(usize, usize, usize)> = rank_ranges(&estimates, &pairs)
            .into_iter()
            .map(|r| {
                let r = r.expect("ranked");
                (r.rank, r.best, r.worst)
            })
            .collect();
        assert_eq!(got, [(1, 1, 1), (2, 2, 3), (2, 2, 3), (4, 4, 4)]);
    }
}
