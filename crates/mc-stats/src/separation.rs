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

/// An item's place. Items are ordered by estimate; the ordering is cut into **groups** only
/// where every pair across the cut is separated, so `{group 1} > {group 2}` is a claim every
/// cross pair's test supports. `rank` is the competition rank of the item's group (1, 2=, 2=,
/// 4): it never falls as the estimate rises. `best` and `worst` are the ranks the item's own
/// tests allow; items with identical estimates share both (the wider of theirs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankRange {
    /// `1 +` the number of items in better groups.
    pub rank: usize,
    /// `1 +` the number of items separated from it and better (at least `rank`).
    pub best: usize,
    /// The ranked items minus those separated from it and worse.
    pub worst: usize,
    /// Index of its group, best first.
    pub group: usize,
    /// Its group is a clique of unseparated items, so `rank` is a true competition rank: every
    /// member's range is the group's span. When false, some members of the group are separated
    /// from each other and no single rank is printed, only the range.
    pub single: bool,
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

/// Two estimates equal within rounding (1e-9, relative): equal work keeps item order whatever
/// the last bits of a solve.
pub fn same_estimate(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs()))
}

/// The items with an estimate, best first; equal estimates (see [`same_estimate`]) in item
/// order.
pub fn score_order(estimates: &[Option<f64>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..estimates.len())
        .filter(|&i| estimates[i].is_some())
        .collect();
    let value = |i: usize| estimates[i].unwrap_or(f64::NEG_INFINITY);
    order.sort_by(|&x, &y| {
        if same_estimate(value(x), value(y)) {
            x.cmp(&y)
        } else {
            value(y).total_cmp(&value(x))
        }
    });
    order
}

/// Ranks, ranges and groups of the items with an estimate (see [`RankRange`]).
pub fn rank_ranges(estimates: &[Option<f64>], pairs: &[PairTest]) -> Vec<Option<RankRange>> {
    let order = score_order(estimates);
    let value = |i: usize| estimates[i].unwrap_or(f64::NEG_INFINITY);
    let separated = |x: usize, y: usize| {
        !same_estimate(value(x), value(y))
            && pairs
                .iter()
                .any(|p| p.separated && ((p.a, p.b) == (x, y) || (p.a, p.b) == (y, x)))
    };
    let mut out: Vec<Option<RankRange>> = vec![None; estimates.len()];
    let n = order.len();
    let mut start = 0;
    for (group, end) in cuts(&order, &separated).into_iter().enumerate() {
        for &item in &order[start..end] {
            let above = order
                .iter()
                .filter(|&&o| separated(o, item) && value(o) > value(item));
            let below = order
                .iter()
                .filter(|&&o| separated(o, item) && value(o) < value(item));
            out[item] = Some(RankRange {
                rank: start + 1,
                best: 1 + above.count(),
                worst: n - below.count(),
                group,
                single: false,
            });
        }
        start = end;
    }
    share_identical(&order, estimates, &mut out);
    mark_single(&order, &mut out);
    out
}

/// The ends (exclusive) of the groups along `order`: a cut after position `k` only where every
/// pair across it is separated; the last end is `order.len()`.
fn cuts(order: &[usize], separated: &impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let n = order.len();
    let mut ends: Vec<usize> = (1..n)
        .filter(|&k| {
            order[..k]
                .iter()
                .all(|&x| order[k..].iter().all(|&y| separated(x, y)))
        })
        .collect();
    if n > 0 {
        ends.push(n);
    }
    ends
}

/// Items with identical estimates get the widest range among them.
fn share_identical(order: &[usize], estimates: &[Option<f64>], out: &mut [Option<RankRange>]) {
    let value = |i: usize| estimates[i].unwrap_or(f64::NEG_INFINITY);
    for &x in order {
        let twins: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&y| same_estimate(value(x), value(y)))
            .collect();
        let best = twins.iter().filter_map(|&y| out[y]).map(|r| r.best).min();
        let worst = twins.iter().filter_map(|&y| out[y]).map(|r| r.worst).max();
        if let (Some(range), Some(best), Some(worst)) = (out[x].as_mut(), best, worst) {
            range.best = best;
            range.worst = worst;
        }
    }
}

/// A group's rank is single when every member's range is the group's span.
fn mark_single(order: &[usize], out: &mut [Option<RankRange>]) {
    let ranges: Vec<RankRange> = order.iter().filter_map(|&i| out[i]).collect();
    for &item in order {
        let Some(range) = out[item] else { continue };
        let members: Vec<&RankRange> = ranges.iter().filter(|r| r.group == range.group).collect();
        let span_end = range.rank + members.len() - 1;
        let single = members
            .iter()
            .all(|r| r.best == range.rank && r.worst == span_end);
        if let Some(r) = out[item].as_mut() {
            r.single = single;
        }
    }
}

/// The groups of [`rank_ranges`], best first, each best first; `None` when no pair has a test
/// (nothing could be told apart, so no grouping is claimed).
pub fn rank_groups(
    estimates: &[Option<f64>],
    pairs: &[PairTest],
    ranks: &[Option<RankRange>],
) -> Option<Vec<Vec<usize>>> {
    if !pairs.iter().any(|p| p.p_adjusted.is_some()) {
        return None;
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for item in score_order(estimates) {
        let Some(range) = ranks[item] else { continue };
        if groups.len() <= range.group {
            groups.resize(range.group + 1, Vec::new());
        }
        groups[range.group].push(item);
    }
    Some(groups)
}

#[cfg(test)]
mod tests {
    use super::{PairTest, RankRange, holm, rank_groups, rank_ranges};
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
        assert!(
            rank_ranges(&estimates, &pairs)
                .iter()
                .all(|r| r.expect("ranked").single)
        );
    }

    // The case: a chain (A not separated from B, B not from C, A separated from C) is
    // one group; no single rank, each its own range; the better score is never ranked worse.
    #[test]
    fn a_chain_is_one_group_without_a_single_rank() {
        let estimates = [Some(70.0), Some(60.0), Some(50.0), Some(10.0)];
        let pairs = [
            pair(0, 1, 10.0, false),
            pair(0, 2, 20.0, true),
            pair(0, 3, 60.0, true),
            pair(1, 2, 10.0, false),
            pair(1, 3, 50.0, true),
            pair(2, 3, 40.0, true),
        ];
        let ranks: Vec<RankRange> = rank_ranges(&estimates, &pairs)
            .into_iter()
            .map(|r| r.expect("ranked"))
            .collect();
        let got: Vec<(usize, usize, usize, bool)> = ranks
            .iter()
            .map(|r| (r.rank, r.best, r.worst, r.single))
            .collect();
        assert_eq!(
            got,
            [
                (1, 1, 2, false),
                (1, 1, 3, false),
                (1, 2, 3, false),
                (4, 4, 4, true)
            ]
        );
        let estimates_f: Vec<Option<f64>> = estimates.to_vec();
        let ranks_opt: Vec<Option<RankRange>> = ranks.iter().copied().map(Some).collect();
        assert_eq!(
            rank_groups(&estimates_f, &pairs_with_p(&pairs), &ranks_opt),
            Some(vec![vec![0, 1, 2], vec![3]])
        );
    }

    // A separated pair whose order crosses another (C above B's group but not above A): no cut
    // between them, so no group claim that a test does not support.
    #[test]
    fn a_cut_needs_every_cross_pair_separated() {
        let estimates = [Some(80.0), Some(70.0), Some(40.0)];
        let pairs = [
            pair(0, 1, 10.0, false),
            pair(0, 2, 40.0, true),
            pair(1, 2, 30.0, false),
        ];
        let ranks = rank_ranges(&estimates, &pairs);
        assert!(ranks.iter().all(|r| r.expect("ranked").rank == 1));
    }

    // Identical estimates share their group, rank and range even when a third item is
    // separated from one of them only.
    #[test]
    fn identical_estimates_share_everything() {
        let estimates = [Some(90.0), Some(45.4), Some(45.4)];
        let pairs = [
            pair(0, 1, 44.6, true),
            pair(0, 2, 44.6, false),
            pair(1, 2, 0.0, false),
        ];
        let ranks: Vec<RankRange> = rank_ranges(&estimates, &pairs)
            .into_iter()
            .map(|r| r.expect("ranked"))
            .collect();
        assert_eq!(ranks[1], ranks[2]);
        assert_eq!((ranks[1].rank, ranks[1].best, ranks[1].worst), (1, 1, 3));
    }

    fn pairs_with_p(pairs: &[PairTest]) -> Vec<PairTest> {
        pairs
            .iter()
            .map(|p| PairTest {
                p_adjusted: Some(if p.separated { 0.01 } else { 0.5 }),
                ..*p
            })
            .collect()
    }
}
