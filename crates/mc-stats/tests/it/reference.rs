//! mc-stats against numbers computed without it: every constant here is printed by
//! `tests/reference.py` (numpy 2.4.6, scipy 1.17.1, krippendorff 0.9.0; rerun it to check),
//! in the section named in each test's comment.

use mc_stats::{
    Bootstrap, Interval, binomial_upper_tail, bradley_terry, bradley_terry_bootstrap,
    cluster_means, krippendorff_alpha_interval,
};

use crate::common::{comparisons, observations};

fn assert_close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: got {got}, want {want} (tolerance {tolerance})"
    );
}

fn assert_interval(got: Option<Interval>, want: (f64, Option<(f64, f64)>, usize), tolerance: f64) {
    let got = got.expect("the item has observations");
    let (estimate, ends, clusters) = want;
    assert_close(got.estimate, estimate, tolerance, "estimate");
    assert_eq!(got.clusters, clusters);
    match ends {
        Some((lo, hi)) => {
            assert_close(got.lo.expect("lo"), lo, tolerance, "lo");
            assert_close(got.hi.expect("hi"), hi, tolerance, "hi");
        }
        None => assert_eq!((got.lo, got.hi), (None, None)),
    }
}

// Section "cluster_means": per-cluster means with numpy, numpy's pcg64 stream through Lemire's
// method for the draws, `np.percentile` for the ends. 200 resamples, level 0.9, seed 7. Item 3 is
// in one cluster (no interval); item 4 is in 2 of 5 clusters, so 17 resamples lack it and are
// skipped (183 kept); item 5 has no observation.
#[test]
fn cluster_means_match_numpy() {
    let boot = Bootstrap {
        resamples: 200,
        level: 0.9,
        seed: 7,
    };
    let got = cluster_means(&observations(), 6, &boot);
    assert_eq!(got.len(), 6);
    let tolerance = 1e-9;
    assert_interval(
        got[0],
        (
            75.625,
            Some((68.729_166_666_666_67, 83.770_833_333_333_33)),
            4,
        ),
        tolerance,
    );
    assert_interval(got[1], (53.75, Some((45.475, 60.0)), 4), tolerance);
    assert_interval(got[2], (86.0, Some((79.0, 92.0)), 5), tolerance);
    assert_interval(got[3], (10.0, None, 1), tolerance);
    assert_interval(got[4], (28.75, Some((20.0, 37.5)), 2), tolerance);
    assert_eq!(got[5], None);
}

// Section "bradley_terry": the same penalized log-likelihood (ties as half wins, one virtual tie
// per item against a reference of log-strength 0) maximized by scipy's BFGS with an analytic
// gradient, polished by `optimize.root` to a gradient below 1e-12, centred log-strengths.
#[test]
fn bradley_terry_matches_scipy() {
    let got = bradley_terry(&comparisons(), 5).expect("there are verdicts");
    let want = [
        33.126_141_305_799_564,
        39.635_557_366_008_35,
        80.249_398_146_787_19,
        50.0, // never appears
        43.074_890_568_980_32,
    ];
    for (item, (got, want)) in got.into_iter().zip(want).enumerate() {
        assert_close(got, want, 1e-8, &format!("item {item}"));
    }
}

// Section "bradley_terry_bootstrap": the scipy fit on every resample drawn from numpy's pcg64
// stream, `np.percentile`; 100 resamples, level 0.8, seed 11. Item 4 is missing from one
// resample (99 kept).
#[test]
fn bradley_terry_bootstrap_matches_scipy() {
    let boot = Bootstrap {
        resamples: 100,
        level: 0.8,
        seed: 11,
    };
    let got = bradley_terry_bootstrap(&comparisons(), 5, &boot);
    let tolerance = 1e-7;
    assert_interval(
        got[0],
        (
            33.126_141_305_799_564,
            Some((17.358_133_727_490_443, 47.988_530_854_680_62)),
            4,
        ),
        tolerance,
    );
    assert_interval(
        got[1],
        (
            39.635_557_366_008_35,
            Some((33.275_177_800_844_37, 52.686_405_256_629_68)),
            4,
        ),
        tolerance,
    );
    assert_interval(
        got[2],
        (
            80.249_398_146_787_19,
            Some((73.722_667_308_085_73, 88.927_554_302_844_24)),
            4,
        ),
        tolerance,
    );
    assert_eq!(got[3], None);
    assert_interval(
        got[4],
        (
            43.074_890_568_980_32,
            Some((33.052_671_339_649_976, 57.340_761_367_062_36)),
            3,
        ),
        tolerance,
    );
}

fn matrix(rows: &[&[Option<f64>]]) -> Vec<Vec<Option<f64>>> {
    rows.iter().map(|row| row.to_vec()).collect()
}

// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers ×
// 12 units with missing values, here as units × observers. The paper gives interval alpha 0.849;
// section "krippendorff" (the `krippendorff` package) gives 0.8491071428571428.
#[test]
fn krippendorff_worked_example_of_2011() {
    let n = None;
    let units = matrix(&[
        &[Some(1.0), Some(1.0), n, Some(1.0)],
        &[Some(2.0), Some(2.0), Some(3.0), Some(2.0)],
        &[Some(3.0), Some(3.0), Some(3.0), Some(3.0)],
        &[Some(3.0), Some(3.0), Some(3.0), Some(3.0)],
        &[Some(2.0), Some(2.0), Some(2.0), Some(2.0)],
        &[Some(1.0), Some(2.0), Some(3.0), Some(4.0)],
        &[Some(4.0), Some(4.0), Some(4.0), Some(4.0)],
        &[Some(1.0), Some(1.0), Some(2.0), Some(1.0)],
        &[Some(2.0), Some(2.0), Some(2.0), Some(2.0)],
        &[n, Some(5.0), Some(5.0), Some(5.0)],
        &[n, n, Some(1.0), Some(1.0)],
        &[n, Some(3.0), n, n],
    ]);
    let alpha = krippendorff_alpha_interval(&units).expect("pairable values");
    assert_close(alpha, 0.849_107_142_857_142_8, 1e-12, "alpha");
    assert_close(alpha, 0.849, 5e-4, "the paper's three digits");
}

// Section "krippendorff": `JUDGES` (3 judges × 6 participants, transposed here), the
// `krippendorff` package: 0.9616752235989913.
#[test]
fn krippendorff_judges_scores_match_the_package() {
    let n = None;
    let units = matrix(&[
        &[Some(72.0), Some(68.0), Some(75.0)],
        &[Some(55.5), Some(60.0), n],
        &[n, Some(81.0), Some(77.5)],
        &[Some(90.0), Some(88.0), Some(93.0)],
        &[Some(40.0), n, Some(35.0)],
        &[Some(63.0), Some(70.0), n],
    ]);
    let alpha = krippendorff_alpha_interval(&units).expect("pairable values");
    assert_close(alpha, 0.961_675_223_598_991_3, 1e-12, "alpha");
}

// Section "binomial": `scipy.stats.binom.sf(hits - 1, n, p)`. The tolerance, 1e-10 relative, is
// ten times the worst error seen over 3000 random cases with n up to 5000.
#[test]
fn binomial_upper_tail_matches_scipy() {
    let cases = [
        (3, 10, 0.25, 0.474_407_196_044_921_9),
        (7, 10, 0.25, 0.003_505_706_787_109_375),
        (1, 1, 0.5, 0.5),
        (12, 40, 1.0 / 3.0, 0.726_477_864_936_400_3),
        (1200, 3000, 0.35, 7.216_775_086_154_495e-9),
        (1400, 3000, 0.35, 1.338_142_831_458_249_3e-39),
        (2, 4000, 0.001, 0.908_531_711_593_974_4),
        (4000, 4000, 0.999, 0.018_279_019_827_489_42),
        (
            1655,
            4276,
            0.368_910_020_010_406_85,
            0.007_442_948_507_978_329,
        ),
        (965, 2353, 0.743_135_467_332_35, 1.0),
    ];
    for (hits, n, p, want) in cases {
        let got = binomial_upper_tail(hits, n, p);
        assert!(
            (got - want).abs() <= 1e-10 * want,
            "P(X >= {hits}), n = {n}, p = {p}: got {got}, want {want}"
        );
    }
}
