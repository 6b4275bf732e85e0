//! t intervals and the Bradley–Terry jackknife against scipy: every constant is printed by
//! `tests/reference.py` (scipy 1.17.1), in the section named in each test's comment.

fn close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance * (1.0 + want.abs()),
        "{what}: got {got}, want {want}"
    );
}

// Section "t intervals": `scipy.stats.t.interval` around the mean with `stats.sem`; the pooled
// two-sample interval and p-value of `stats.ttest_ind(equal_var=True)`.
#[test]
fn t_intervals_match_scipy() {
    let mean = mc_stats::mean_interval(&[61.0, 55.0, 70.0, 64.0, 58.5], 0.95).expect("values");
    close(mean.estimate, 61.7, 1e-12, "mean");
    close(mean.se.expect("se"), 2.547_547_840_571_399, 1e-12, "se");
    close(mean.lo.expect("lo"), 54.626_873_267_788_33, 1e-10, "lo");
    close(mean.hi.expect("hi"), 68.773_126_732_211_67, 1e-10, "hi");
    let did =
        mc_stats::difference_interval(&[12.0, 9.5], &[1.0, -2.0, 0.5, 2.5], 0.95).expect("groups");
    close(did.estimate, 10.25, 1e-12, "difference");
    close(did.lo.expect("lo"), 5.812_299_558_178_554, 1e-10, "lo");
    close(did.hi.expect("hi"), 14.687_700_441_821_445, 1e-10, "hi");
    close(
        did.p_value().expect("p"),
        0.003_038_197_524_835_656_6,
        1e-8,
        "p",
    );
}

// Section "bradley_terry_ranking": the scipy fit refitted without each cluster, jackknife on the
// centred log-strength, t with 3 degrees of freedom, ends mapped back to percent; 4 clusters,
// so each standard error is floored at half the inverse Hessian's (numerical, in numpy).
#[test]
fn bradley_terry_ranking_matches_scipy() {
    let ranking =
        mc_stats::bradley_terry_ranking(&crate::common::comparisons(), 5, 0.95).expect("verdicts");
    let want = [
        (
            0,
            33.126_141_305_799_564,
            5.800_548_379_174_820_5,
            79.939_078_348_995_14,
        ),
        (
            1,
            39.635_557_366_008_35,
            14.572_439_374_569_6,
            71.650_475_484_745_06,
        ),
        (
            2,
            80.249_398_146_787_19,
            38.744_778_449_199_1,
            96.310_063_956_623_72,
        ),
        (
            4,
            43.074_890_568_980_32,
            13.571_341_354_680_028,
            78.478_401_208_954_6,
        ),
    ];
    for (item, estimate, lo, hi) in want {
        let got = ranking.items[item].expect("present");
        close(got.estimate, estimate, 1e-8, "estimate");
        close(got.lo.expect("lo"), lo, 1e-7, "lo");
        close(got.hi.expect("hi"), hi, 1e-7, "hi");
    }
    assert_eq!(ranking.items[3], None);
    let pair = ranking
        .pairs
        .iter()
        .find(|p| (p.a, p.b) == (0, 2))
        .expect("tested");
    close(
        pair.difference.estimate,
        -2.104_440_698_378_324,
        1e-8,
        "difference",
    );
    close(
        pair.difference.se.expect("se"),
        1.052_711_273_718_643_3,
        1e-7,
        "se",
    );
    close(pair.p_value.expect("p"), 0.139_451_966_330_302_8, 1e-7, "p");
}
