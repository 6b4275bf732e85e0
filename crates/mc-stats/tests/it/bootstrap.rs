//! The cluster bootstrap's behaviour: reproducible from its seed, different under another, an
//! interval only from 2 clusters on, resamples without an item skipped for it.

use mc_stats::{
    Bootstrap, Comparison, Interval, Observation, bradley_terry_bootstrap, cluster_means,
};

use crate::common::{comparisons, observations};

const BOOT: Bootstrap = Bootstrap {
    resamples: 400,
    level: 0.95,
    seed: 2024,
};

fn with_seed(seed: u64) -> Bootstrap {
    Bootstrap { seed, ..BOOT }
}

fn ends(intervals: &[Option<Interval>]) -> Vec<(Option<f64>, Option<f64>)> {
    intervals.iter().flatten().map(|i| (i.lo, i.hi)).collect()
}

#[test]
fn the_same_seed_gives_the_same_intervals() {
    assert_eq!(
        cluster_means(&observations(), 6, &BOOT),
        cluster_means(&observations(), 6, &BOOT)
    );
    assert_eq!(
        bradley_terry_bootstrap(&comparisons(), 5, &BOOT),
        bradley_terry_bootstrap(&comparisons(), 5, &BOOT)
    );
}

#[test]
fn another_seed_gives_other_intervals_around_the_same_estimates() {
    let first = cluster_means(&observations(), 6, &BOOT);
    let second = cluster_means(&observations(), 6, &with_seed(2025));
    assert_ne!(ends(&first), ends(&second));
    let estimates =
        |v: &[Option<Interval>]| v.iter().flatten().map(|i| i.estimate).collect::<Vec<_>>();
    assert_eq!(estimates(&first), estimates(&second));

    let first = bradley_terry_bootstrap(&comparisons(), 5, &BOOT);
    let second = bradley_terry_bootstrap(&comparisons(), 5, &with_seed(2025));
    assert_ne!(ends(&first), ends(&second));
    assert_eq!(estimates(&first), estimates(&second));
}

#[test]
fn intervals_contain_their_estimates() {
    let all = cluster_means(&observations(), 6, &BOOT)
        .into_iter()
        .chain(bradley_terry_bootstrap(&comparisons(), 5, &BOOT));
    for interval in all.flatten().filter(|i| i.clusters >= 2) {
        let (lo, hi) = (interval.lo.expect("lo"), interval.hi.expect("hi"));
        assert!(
            lo <= interval.estimate && interval.estimate <= hi,
            "{interval:?}"
        );
    }
}

#[test]
fn one_cluster_gives_estimates_without_intervals() {
    let one: Vec<Observation> = observations()
        .into_iter()
        .map(|o| Observation { cluster: 9, ..o })
        .collect();
    for interval in cluster_means(&one, 6, &BOOT).into_iter().flatten() {
        assert_eq!(
            (interval.lo, interval.hi, interval.clusters),
            (None, None, 1)
        );
    }
    let one: Vec<Comparison> = comparisons()
        .into_iter()
        .map(|c| Comparison { cluster: 9, ..c })
        .collect();
    let got = bradley_terry_bootstrap(&one, 5, &BOOT);
    assert_eq!(got.iter().flatten().count(), 4);
    for interval in got.into_iter().flatten() {
        assert_eq!(
            (interval.lo, interval.hi, interval.clusters),
            (None, None, 1)
        );
    }
}

#[test]
fn no_resample_gives_no_interval() {
    let none = Bootstrap {
        resamples: 0,
        ..BOOT
    };
    for interval in cluster_means(&observations(), 6, &none)
        .into_iter()
        .flatten()
    {
        assert_eq!((interval.lo, interval.hi), (None, None));
    }
}

// Item 0 is in 2 of 12 clusters, so about one resample in nine draws neither: were such a
// resample counted (as 0, say) instead of skipped, the lower end would fall below 50.
#[test]
fn resamples_without_the_item_are_skipped_for_it() {
    let mut data = vec![
        Observation {
            cluster: 0,
            item: 0,
            value: 50.0,
        },
        Observation {
            cluster: 1,
            item: 0,
            value: 100.0,
        },
    ];
    data.extend((0..12).map(|cluster| Observation {
        cluster,
        item: 1,
        value: 1.0,
    }));
    let item = cluster_means(&data, 2, &BOOT)[0].expect("item 0 has values");
    assert_eq!(item.clusters, 2);
    assert!((item.estimate - 75.0).abs() < 1e-12);
    assert_eq!((item.lo, item.hi), (Some(50.0), Some(100.0)));

    let mut verdicts = vec![
        Comparison {
            cluster: 0,
            a: 0,
            b: 1,
            score_a: 1.0,
        },
        Comparison {
            cluster: 1,
            a: 0,
            b: 1,
            score_a: 1.0,
        },
    ];
    verdicts.extend((0..12).map(|cluster| Comparison {
        cluster,
        a: 1,
        b: 2,
        score_a: 0.5,
    }));
    let item = bradley_terry_bootstrap(&verdicts, 3, &BOOT)[0].expect("item 0 has verdicts");
    let lo = item.lo.expect("lo");
    assert!(
        lo > 50.0,
        "a resample without item 0 was not skipped: {item:?}"
    );
}
