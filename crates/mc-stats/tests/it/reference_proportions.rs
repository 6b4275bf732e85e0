//! The Wilson interval and the rank correlations against numbers computed without mc-stats:
//! `tests/reference.py`, sections "`wilson_interval`" (statsmodels 0.15.0
//! `proportion_confint(method="wilson")`) and "rank correlation" (scipy 1.17.1 `spearmanr`,
//! `kendalltau(variant="b")`).

use mc_stats::{kendall_tau_b, spearman, wilson_interval};

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-12,
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn wilson_matches_statsmodels() {
    let cases = [
        (
            7,
            10,
            0.95,
            0.396_778_147_461_145_37,
            0.892_208_732_593_698_9,
        ),
        (0, 5, 0.95, 0.0, 0.434_482_464_783_174_76),
        (5, 5, 0.95, 0.565_517_535_216_825_1, 1.0),
        (1, 1, 0.95, 0.206_549_314_377_237_45, 1.0),
        (
            37,
            120,
            0.90,
            0.243_856_198_353_339_27,
            0.381_262_612_866_393_85,
        ),
        (0, 1, 0.95, 0.0, 0.793_450_685_622_762_6),
    ];
    for (successes, trials, level, lo, hi) in cases {
        let got = wilson_interval(successes, trials, level).expect("valid counts");
        let what = format!("{successes}/{trials} at {level}");
        assert_close(got.lo, lo, &format!("{what} lo"));
        assert_close(got.hi, hi, &format!("{what} hi"));
    }
}

#[test]
fn rank_correlations_match_scipy() {
    // Ties in both orderings (71.0 twice in the jury's, 0.7 twice in the tests').
    let jury = [62.5, 71.0, 48.0, 80.0, 71.0, 55.5];
    let tests = [0.6, 0.9, 0.3, 0.8, 0.7, 0.7];
    let rho = spearman(&jury, &tests).expect("both orderings have spread");
    assert_close(rho.coefficient, 0.779_411_764_705_882_5, "spearman");
    assert_close(
        rho.p_value.expect("6 items"),
        0.067_621_934_154_284_47,
        "spearman p",
    );
    assert_eq!(rho.n, 6);
    let tau = kendall_tau_b(&jury, &tests).expect("both orderings have spread");
    assert_close(tau.coefficient, 0.642_857_142_857_142_9, "kendall tau-b");
    let reversed = [4.0, 3.0, 2.0, 1.0];
    let forward = [1.0, 2.0, 3.0, 4.0];
    assert_close(
        spearman(&forward, &reversed).unwrap().coefficient,
        -1.0,
        "reversed rho",
    );
    assert_close(
        kendall_tau_b(&forward, &reversed).unwrap().coefficient,
        -1.0,
        "reversed tau",
    );
}
