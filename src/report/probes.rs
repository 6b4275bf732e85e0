//! The jury's bias measurements: each pairwise judge's position consistency (flagged below a
//! floor, excluded by `judging.exclude_inconsistent_judges`), self-preference as a difference
//! in differences against the judge's own leniency, the blinding probe against a judge that
//! knows only the vendors' counts, and how far scores follow output size. Pure and seeded.

use indexmap::IndexMap;
use mc_stats::TInterval;

use super::input::{JudgeGuesses, JudgeVerdicts, ReportInput};
use super::jury::{
    Blinding, LEVEL, Pairwise, Scored, SelfPreference, Statistics, judge_names, ratio,
};
use crate::brief::Brief;

/// A judge whose verdicts agree across the two orders in fewer than half the pairs is
/// flagged: most of its verdicts then follow the position, not the work.
pub(crate) const CONSISTENCY_FLOOR: f64 = 0.5;
/// Pairs judged in both orders needed before a judge is flagged.
pub(crate) const CONSISTENCY_MIN_PAIRS: usize = 3;
/// Shuffles of the blinding probe's permutation test.
pub(crate) const PERMUTATIONS: usize = 9999;

/// One pairwise judge's position consistency.
#[derive(Debug, Clone, PartialEq)]
pub struct Consistency {
    /// Judge name.
    pub judge: String,
    /// Pairs it judged in both orders.
    pub pairs_both_orders: usize,
    /// Of those, pairs whose two verdicts agree.
    pub consistent: usize,
    /// `consistent / pairs_both_orders`.
    pub rate: Option<f64>,
    /// Share of its decisive verdicts won by the submission shown first.
    pub first_shown_wins: Option<f64>,
    /// Below [`CONSISTENCY_FLOOR`] over at least [`CONSISTENCY_MIN_PAIRS`] pairs.
    pub flagged: bool,
    /// Flagged and left out (`judging.exclude_inconsistent_judges`).
    pub excluded: bool,
}

/// Each judge's position consistency from its pair outcomes and raw verdicts.
pub(crate) fn consistency(
    pairwise: &Pairwise,
    verdicts: &[JudgeVerdicts],
    exclude: bool,
) -> Vec<Consistency> {
    judge_names(pairwise.pairs.iter().map(|p| &p.judge))
        .into_iter()
        .map(|judge| {
            let both: Vec<bool> = pairwise
                .pairs
                .iter()
                .filter(|p| p.judge == judge)
                .filter_map(|p| p.consistent)
                .collect();
            let consistent = both.iter().filter(|c| **c).count();
            let rate = ratio(consistent, both.len());
            let decisive: Vec<bool> = verdicts
                .iter()
                .filter(|v| v.judge == judge)
                .flat_map(|v| &v.verdicts)
                .filter_map(|(first, _, winner)| winner.as_ref().map(|w| w == first))
                .collect();
            let flagged =
                both.len() >= CONSISTENCY_MIN_PAIRS && rate.is_some_and(|r| r < CONSISTENCY_FLOOR);
            Consistency {
                pairs_both_orders: both.len(),
                consistent,
                rate,
                first_shown_wins: ratio(decisive.iter().filter(|f| **f).count(), decisive.len()),
                flagged,
                excluded: flagged && exclude,
                judge,
            }
        })
        .collect()
}

/// Self-preference per judge that scored its own flavor: `mean(d own) - mean(d others)`, with
/// `d_p` the judge's score of `p` minus the other judges' mean score of `p`. A judge that is
/// merely lenient has the same `d` for everyone, so its difference in differences is near 0.
/// Pooled two-sample t interval over participants.
pub(crate) fn self_preference(
    input: &ReportInput,
    brief: &Brief,
    counted: &[Scored],
    self_judged: &[Scored],
) -> Vec<SelfPreference> {
    if !input
        .judge_result
        .as_ref()
        .is_some_and(|r| r.self_preference)
    {
        return Vec::new();
    }
    judge_names(self_judged.iter().map(|(j, _, _)| j))
        .into_iter()
        .filter_map(|judge| {
            let others = |item: usize| {
                mean(
                    counted
                        .iter()
                        .filter(|(j, i, _)| *j != judge && *i == item)
                        .map(|(_, _, v)| *v),
                )
            };
            let own: Vec<&Scored> = self_judged.iter().filter(|(j, _, _)| *j == judge).collect();
            let self_mean = mean(own.iter().map(|(_, _, v)| *v))?;
            let own_d: Vec<f64> = own
                .iter()
                .filter_map(|(_, i, v)| Some(v - others(*i)?))
                .collect();
            let base_d: Vec<f64> = counted
                .iter()
                .filter(|(j, _, _)| *j == judge)
                .filter_map(|(_, i, v)| Some(v - others(*i)?))
                .collect();
            let others_mean = mean(own.iter().filter_map(|(_, i, _)| others(*i)));
            let did = mc_stats::difference_interval(&own_d, &base_d, LEVEL);
            Some(SelfPreference {
                flavor: brief
                    .judge(&judge)
                    .map(|j| j.flavor.clone())
                    .unwrap_or_default(),
                judge,
                self_mean_pct: self_mean,
                others_mean_pct: others_mean,
                delta_pct: did.map(|d| d.estimate),
                lo: did.and_then(|d| d.lo),
                hi: did.and_then(|d| d.hi),
                n: own.len(),
                baseline: base_d.len(),
            })
        })
        .collect()
}

/// The blinding probe per judge: one guess per submission (the judge's most frequent guess for
/// it; ties go to the name first in order), tested by permutation against the vendors' counts.
pub(crate) fn blinding(guesses: &[JudgeGuesses], seed: u64) -> Vec<Blinding> {
    guesses
        .iter()
        .map(|judge| {
            let mut per_submission: IndexMap<&str, (IndexMap<&str, usize>, &str)> = IndexMap::new();
            for (participant, guess, flavor) in &judge.guesses {
                let entry = per_submission
                    .entry(participant)
                    .or_insert_with(|| (IndexMap::new(), flavor));
                *entry.0.entry(guess).or_insert(0) += 1;
            }
            let mut names: Vec<String> = Vec::new();
            let mut code = |name: &str| -> usize {
                names.iter().position(|n| n == name).unwrap_or_else(|| {
                    names.push(name.to_owned());
                    names.len() - 1
                })
            };
            let mut modal = Vec::new();
            let mut truth = Vec::new();
            for (counts, flavor) in per_submission.values() {
                let mut ordered: Vec<(&&str, &usize)> = counts.iter().collect();
                ordered.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
                modal.push(code(ordered[0].0));
                truth.push(code(flavor));
            }
            let n = truth.len();
            let hits = modal.iter().zip(&truth).filter(|(g, t)| g == t).count();
            let largest = (0..names.len())
                .map(|f| truth.iter().filter(|t| **t == f).count())
                .max()
                .unwrap_or(0);
            Blinding {
                judge: judge.judge.clone(),
                guesses: n,
                raw_guesses: judge.guesses.len(),
                hits,
                chance: ratio(largest, n).unwrap_or(0.0),
                hit_rate: ratio(hits, n),
                p_value: mc_stats::permutation_p_value(&modal, &truth, PERMUTATIONS, seed),
                smallest_p: smallest_p(&vendor_counts(&truth)),
                needed: needed(&vendor_counts(&truth)),
            }
        })
        .collect()
}

/// How many submissions each vendor has (those with any).
fn vendor_counts(truth: &[usize]) -> Vec<usize> {
    let vendors = truth.iter().max().map_or(0, |m| m + 1);
    (0..vendors)
        .map(|v| truth.iter().filter(|t| **t == v).count())
        .filter(|&c| c > 0)
        .collect()
}

/// The permutation test's smallest p-value for these vendor counts: every guess right matches
/// under `prod n_v! / n!` of the relabellings, and the Monte-Carlo p is never below
/// `1 / (1 + permutations)`. `None` without submissions.
#[expect(clippy::cast_precision_loss, reason = "submission counts are tiny")]
fn smallest_p(counts: &[usize]) -> Option<f64> {
    let n: usize = counts.iter().sum();
    if n == 0 {
        return None;
    }
    // prod n_v! / n! as a running product, so it never overflows.
    let mut p = 1.0;
    let mut k = n;
    for &c in counts {
        for j in 1..=c {
            p *= j as f64 / k as f64;
            k -= 1;
        }
    }
    Some(p.max(1.0 / (1.0 + PERMUTATIONS as f64)))
}

/// When no outcome of this cook can reach 0.05: the fewest submissions, over as many vendors
/// split as evenly as they go, whose best outcome would. `None` when this cook can, or with a
/// single vendor (all guesses right by one constant name: nothing to test).
fn needed(counts: &[usize]) -> Option<usize> {
    let vendors = counts.len();
    if vendors < 2 || smallest_p(counts).is_none_or(|p| p < 0.05) {
        return None;
    }
    let n: usize = counts.iter().sum();
    (n + 1..n + 200).find(|&m| {
        let even: Vec<usize> = (0..vendors)
            .map(|v| m / vendors + usize::from(v < m % vendors))
            .collect();
        smallest_p(&even).is_some_and(|p| p < 0.05)
    })
}

/// How far scores follow output size: each judge's slope (points per doubling of size) over the
/// participants it scored, and the panel's mean slope with a t interval over judges.
#[derive(Debug, Clone, PartialEq)]
pub struct Length {
    /// `(judge, slope)`, judges with at least 3 sized participants.
    pub judges: Vec<(String, f64)>,
    /// Mean slope over those judges, points per doubling.
    pub slope: TInterval,
    /// Why no length-controlled score is given, when none is.
    pub withheld: Option<&'static str>,
}

/// Said when the slope's interval reaches 0 (or there is none).
pub(crate) const LENGTH_NOT_ESTIMABLE: &str = "no length-controlled score: the panel's slope is not distinguishable from 0 (its 95 % interval over judges reaches 0, or there is none), and within one cook size is confounded with quality, so taking it out would only move scores by noise";

/// Measures [`Length`] and writes each estimate's length-controlled value: the estimate minus
/// the panel's slope times its size's distance (in doublings) from the mean size. Within one
/// cook each participant has one output, so size and quality cannot be told apart: the
/// controlled value assumes size is not itself quality, and says so where it is printed.
pub(crate) fn length(
    brief: &Brief,
    counted: &[Scored],
    sizes: &IndexMap<String, u64>,
    statistics: &mut Statistics,
) -> Option<Length> {
    let log_size = |item: usize| -> Option<f64> {
        #[expect(clippy::cast_precision_loss, reason = "sizes far below 2^52")]
        let bytes = *sizes.get(&brief.participants.get(item)?.name)? as f64;
        Some(bytes.max(1.0).log2())
    };
    let judges: Vec<(String, f64)> = judge_names(counted.iter().map(|(j, _, _)| j))
        .into_iter()
        .filter_map(|judge| {
            let points: Vec<(f64, f64)> = counted
                .iter()
                .filter(|(j, _, _)| *j == judge)
                .filter_map(|(_, i, v)| Some((log_size(*i)?, *v)))
                .collect();
            Some((judge, slope(&points)?))
        })
        .collect();
    let slope =
        mc_stats::mean_interval(&judges.iter().map(|(_, s)| *s).collect::<Vec<_>>(), LEVEL)?;
    let logs: Vec<f64> = statistics
        .estimates
        .iter()
        .filter_map(|e| {
            log_size(
                brief
                    .participants
                    .iter()
                    .position(|p| p.name == e.participant)?,
            )
        })
        .collect();
    let centre = mean(logs.iter().copied())?;
    // Only a slope whose interval excludes 0 is taken out (issue 23: a one-cook slope that is
    // noise lifted a padded participant above a better one); the result stays on the scale and
    // is never used to order the table.
    let estimable = matches!((slope.lo, slope.hi), (Some(lo), Some(hi)) if lo > 0.0 || hi < 0.0);
    if !estimable {
        return Some(Length {
            judges,
            slope,
            withheld: Some(LENGTH_NOT_ESTIMABLE),
        });
    }
    for estimate in &mut statistics.estimates {
        let Some(item) = brief
            .participants
            .iter()
            .position(|p| p.name == estimate.participant)
        else {
            continue;
        };
        estimate.length_controlled = log_size(item)
            .map(|l| (estimate.estimate - slope.estimate * (l - centre)).clamp(0.0, 100.0));
    }
    Some(Length {
        judges,
        slope,
        withheld: None,
    })
}

/// Least-squares slope of `y` on `x`; `None` with fewer than 3 points or when the sizes span
/// less than one doubling (a 19-byte difference gave "+2,729 points per doubling").
#[expect(clippy::cast_precision_loss, reason = "a handful of points")]
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let low = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let high = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if high - low < 1.0 {
        return None;
    }
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    (sxx > 1e-12).then(|| sxy / sxx)
}

#[expect(clippy::cast_precision_loss, reason = "small counts")]
fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let values: Vec<f64> = values.collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::{needed, slope, smallest_p};

    // Issue 23: a 19-byte size difference gave "+2,729 points per doubling"; sizes within one
    // doubling give no slope at all.
    #[test]
    fn sizes_within_one_doubling_give_no_slope() {
        let x = |bytes: f64| bytes.log2();
        assert_eq!(
            slope(&[(x(1000.0), 60.0), (x(1010.0), 80.0), (x(1019.0), 70.0)]),
            None
        );
        let got = slope(&[(x(1000.0), 60.0), (x(2000.0), 65.0), (x(4000.0), 70.0)]);
        assert!(got.is_some_and(|s| (s - 5.0).abs() < 1e-9), "{got:?}");
    }

    // Issue 23: a judge named 6 of 6 vendors right in a cook of two vendors with 3 each; no
    // outcome of that cook reaches 0.05 (3! 3! / 6! = 0.05), so it says how many it would need.
    #[test]
    fn a_cook_too_small_for_a_verdict_says_so_and_how_many_it_would_need() {
        let p = smallest_p(&[3, 3]).expect("submissions");
        assert!((p - 0.05).abs() < 1e-12, "{p}");
        assert_eq!(needed(&[3, 3]), Some(7));
        // Three vendors of two each can reach it: 2!^3 / 6! = 0.011.
        assert!(smallest_p(&[2, 2, 2]).is_some_and(|p| p < 0.05));
        assert_eq!(needed(&[2, 2, 2]), None);
        // One vendor: nothing to test, no count would help.
        assert_eq!(needed(&[5]), None);
        assert!(smallest_p(&[5]).is_some_and(|p| p >= 0.05));
    }
}
