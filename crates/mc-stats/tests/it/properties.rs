//! Properties over generated inputs.

use mc_stats::{
    Bootstrap, Comparison, Interval, Observation, binomial_upper_tail, bradley_terry,
    bradley_terry_bootstrap, cluster_means, krippendorff_alpha_interval, tied_groups,
};
use proptest::prelude::*;

const ITEMS: usize = 5;

fn verdicts() -> impl Strategy<Value = Vec<Comparison>> {
    let verdict = (
        0..4_usize,
        0..ITEMS,
        0..ITEMS,
        prop::sample::select(vec![0.0, 0.5, 1.0]),
    )
        .prop_map(|(cluster, a, b, score_a)| Comparison {
            cluster,
            a,
            b,
            score_a,
        });
    prop::collection::vec(verdict, 0..30)
}

fn logit(score: f64) -> f64 {
    (score / (100.0 - score)).ln()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bradley_terry_scores_lie_strictly_between_0_and_100_and_average_out(cmp in verdicts()) {
        let usable = cmp.iter().any(|c| c.a != c.b);
        let Some(scores) = bradley_terry(&cmp, ITEMS) else {
            prop_assert!(!usable);
            return Ok(());
        };
        prop_assert!(scores.iter().all(|&s| s > 0.0 && s < 100.0), "{scores:?}");
        // Strengths have geometric mean 1 over the items that appear: logits sum to 0.
        let appears = |i: usize| cmp.iter().any(|c| c.a != c.b && (c.a == i || c.b == i));
        let total: f64 = (0..ITEMS).filter(|&i| appears(i)).map(|i| logit(scores[i])).sum();
        prop_assert!(total.abs() < 1e-8, "{total}");
        for i in (0..ITEMS).filter(|&i| !appears(i)) {
            prop_assert!((scores[i] - 50.0).abs() < f64::EPSILON);
        }
    }

    #[test]
    fn bradley_terry_ignores_which_side_a_verdict_names_first(cmp in verdicts()) {
        let swapped: Vec<Comparison> = cmp
            .iter()
            .map(|c| Comparison { a: c.b, b: c.a, score_a: 1.0 - c.score_a, ..*c })
            .collect();
        match (bradley_terry(&cmp, ITEMS), bradley_terry(&swapped, ITEMS)) {
            (Some(x), Some(y)) => {
                for (x, y) in x.iter().zip(&y) {
                    prop_assert!((x - y).abs() < 1e-8);
                }
            }
            (x, y) => prop_assert_eq!(x, y),
        }
    }

    #[test]
    fn bootstrap_estimates_are_the_full_fit(cmp in verdicts(), seed in any::<u64>()) {
        let boot = Bootstrap { resamples: 20, level: 0.9, seed };
        let full = bradley_terry(&cmp, ITEMS);
        for (item, interval) in bradley_terry_bootstrap(&cmp, ITEMS, &boot).into_iter().enumerate() {
            let Some(interval) = interval else { continue };
            let score = full.as_ref().expect("an interval implies verdicts")[item];
            prop_assert!((interval.estimate - score).abs() < 1e-12);
            prop_assert_eq!(interval.lo.is_some(), interval.clusters >= 2);
            if let (Some(lo), Some(hi)) = (interval.lo, interval.hi) {
                prop_assert!(0.0 < lo && lo <= hi && hi < 100.0);
            }
        }
    }

    #[test]
    fn cluster_means_lie_within_the_item_values(
        raw in prop::collection::vec((0..6_usize, 0..ITEMS, 0.0..100.0_f64), 0..40),
        seed in any::<u64>(),
    ) {
        let obs: Vec<Observation> =
            raw.iter().map(|&(cluster, item, value)| Observation { cluster, item, value }).collect();
        let boot = Bootstrap { resamples: 50, level: 0.95, seed };
        for (item, interval) in cluster_means(&obs, ITEMS, &boot).into_iter().enumerate() {
            let values: Vec<f64> = obs.iter().filter(|o| o.item == item).map(|o| o.value).collect();
            let Some(interval) = interval else {
                prop_assert!(values.is_empty());
                continue;
            };
            let min = values.iter().copied().fold(f64::INFINITY, f64::min) - 1e-9;
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max) + 1e-9;
            for x in [Some(interval.estimate), interval.lo, interval.hi].into_iter().flatten() {
                prop_assert!(min <= x && x <= max, "{x} outside [{min}, {max}]");
            }
        }
    }

    #[test]
    fn alpha_is_one_when_every_coder_agrees(
        truth in prop::collection::vec(-50.0..50.0_f64, 2..12),
        present in prop::collection::vec(prop::collection::vec(any::<bool>(), 3), 12),
    ) {
        prop_assume!(truth.iter().any(|&t| (t - truth[0]).abs() > 1e-6));
        let units: Vec<Vec<Option<f64>>> = truth
            .iter()
            .zip(&present)
            .map(|(&t, coders)| coders.iter().map(|&here| here.then_some(t)).collect())
            .collect();
        let pairable: Vec<f64> = units
            .iter()
            .filter(|u| u.iter().flatten().count() >= 2)
            .flat_map(|u| u.iter().flatten().copied())
            .collect();
        let spread = pairable.iter().any(|v| (v - pairable[0]).abs() > 1e-6);
        match krippendorff_alpha_interval(&units) {
            Some(alpha) => prop_assert!((alpha - 1.0).abs() < 1e-12, "{alpha}"),
            None => prop_assert!(!spread),
        }
    }

    #[test]
    fn alpha_never_exceeds_one(
        units in prop::collection::vec(prop::collection::vec(prop::option::of(0.0..10.0_f64), 0..4), 0..10),
    ) {
        if let Some(alpha) = krippendorff_alpha_interval(&units) {
            prop_assert!(alpha <= 1.0 + 1e-12, "{alpha}");
        }
    }

    #[test]
    fn tied_groups_partition_the_items_best_first(
        raw in prop::collection::vec((0.0..100.0_f64, 0.0..20.0_f64, 0.0..20.0_f64), 0..12),
    ) {
        let intervals: Vec<(usize, Interval)> = raw
            .iter()
            .enumerate()
            .map(|(item, &(estimate, below, above))| {
                (item, Interval { estimate, lo: Some(estimate - below), hi: Some(estimate + above), clusters: 2 })
            })
            .collect();
        let groups = tied_groups(&intervals).expect("every interval has ends");
        let mut seen: Vec<usize> = groups.iter().flatten().copied().collect();
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..raw.len()).collect::<Vec<_>>());
        let estimate = |item: usize| raw[item].0;
        let mut later: Vec<usize> = groups.iter().flatten().copied().collect();
        for group in &groups {
            prop_assert!(!group.is_empty());
            let leader = group[0];
            // the leader is the best of those not yet grouped, and every member reaches it
            prop_assert!(later.iter().all(|&i| estimate(i) <= estimate(leader)));
            for &member in group {
                prop_assert!(intervals[member].1.hi >= intervals[leader].1.lo);
            }
            later.retain(|i| !group.contains(i));
        }
    }

    #[test]
    fn binomial_tails_of_x_and_n_minus_x_add_up_to_one(n in 1..3000_u64, k in 0..3000_u64, p in 0.001..0.999_f64) {
        let hits = k % (n + 1);
        let upper = binomial_upper_tail(hits, n, p);
        prop_assert!((0.0..=1.0).contains(&upper));
        // P(X >= hits) + P(n - X >= n - hits + 1) = P(X >= hits) + P(X <= hits - 1) = 1
        let lower = binomial_upper_tail(n - hits + 1, n, 1.0 - p);
        prop_assert!((upper + lower - 1.0).abs() < 1e-9, "{upper} + {lower}");
        // monotone up to the rounding of a sum of up to n terms
        if hits < n {
            prop_assert!(binomial_upper_tail(hits + 1, n, p) <= upper + 1e-12);
        }
    }
}
