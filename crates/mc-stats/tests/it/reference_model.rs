//! The report's estimators against statsmodels and scipy: every constant is printed by
//! `tests/reference.py` (statsmodels 0.15.0, scipy 1.17.1), in the section named in each test's
//! comment.

use mc_stats::{
    Cell, Shape, TInterval, additive_ranking, permutation_p_value, t_quantile, t_two_sided_p,
};

fn close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance * (1.0 + want.abs()),
        "{what}: got {got}, want {want}"
    );
}

/// `(estimate, se, df, lo, hi, p)` from the script.
fn interval(got: Option<TInterval>, want: [f64; 6], what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: no estimate"));
    close(got.estimate, want[0], 1e-9, what);
    close(got.se.expect("se"), want[1], 1e-9, what);
    #[expect(clippy::cast_precision_loss, reason = "tiny")]
    let df = got.df as f64;
    close(df, want[2], 0.0, what);
    close(got.lo.expect("lo"), want[3], 1e-9, what);
    close(got.hi.expect("hi"), want[4], 1e-9, what);
    close(got.p_value().expect("p"), want[5], 1e-8, what);
}

// Section "student_t": `scipy.stats.t.ppf` and `2 * t.sf(|t|)`.
#[test]
fn student_t_matches_scipy() {
    let quantiles = [
        (0.975, 1, 12.706_204_736_174_694),
        (0.975, 2, 4.302_652_729_749_462),
        (0.975, 4, 2.776_445_105_197_793_4),
        (0.9, 7, 1.414_923_927_650_508_6),
        (0.8, 19, 0.860_950_550_268_928_6),
        (0.999, 3, 10.214_531_852_407_383),
    ];
    for (p, df, want) in quantiles {
        close(t_quantile(p, df).expect("df > 0"), want, 1e-10, "quantile");
    }
    let tails = [
        (2.0, 1, 0.295_167_235_300_866_5),
        (2.0, 3, 0.139_325_968_558_843_05),
        (-4.5, 9, 0.001_488_949_415_411_732_4),
        (0.3, 2, 0.792_485_660_840_177_6),
    ];
    for (t, df, want) in tails {
        close(
            t_two_sided_p(t, df).expect("df > 0"),
            want,
            1e-10,
            "p-value",
        );
    }
}

fn judge_cell(judge: usize, item: usize, value: f64) -> Cell {
    Cell {
        item,
        levels: vec![judge],
        covariate: 0.0,
        value,
    }
}

// Section "additive_ranking": `value ~ 0 + C(item) + C(judge, Sum)` refitted without each judge;
// t with min(k - 1, residual df) = 2 degrees of freedom; Holm by `multipletests`.
#[test]
#[expect(clippy::too_many_lines, reason = "reference values, one per line")]
fn additive_ranking_matches_statsmodels() {
    let cells: Vec<Cell> = [
        (0, 1, 61.0),
        (0, 2, 50.0),
        (0, 3, 44.0),
        (1, 0, 66.0),
        (1, 2, 47.5),
        (1, 3, 49.0),
        (2, 0, 80.0),
        (2, 1, 71.0),
        (2, 2, 63.0),
        (2, 3, 52.5),
    ]
    .into_iter()
    .map(|(j, i, v)| judge_cell(j, i, v))
    .collect();
    let shape = Shape {
        items: 4,
        levels: vec![3],
        slope: false,
    };
    let ranking = additive_ranking(&cells, &shape, 0.95).expect("connected");
    let items = [
        [
            71.128_571_428_571_43,
            5.756_035_479_776_328,
            2.0,
            46.362_349_658_977_07,
            95.894_793_198_165_8,
            0.006_485_120_018_555_219,
        ],
        [
            64.228_571_428_571_39,
            2.765_110_003_839_498,
            2.0,
            52.331_263_322_493_825,
            76.125_879_534_648_94,
            0.001_848_259_591_022_047_6,
        ],
        [
            53.499_999_999_999_986,
            4.804_511_768_466_52,
            2.0,
            32.827_854_324_294_094,
            74.172_145_675_705_88,
            0.007_968_483_703_361_718,
        ],
        [
            48.499_999_999_999_99,
            2.466_441_431_158_125,
            2.0,
            37.887_759_043_460_32,
            59.112_240_956_539_665,
            0.002_576_186_941_813_755_7,
        ],
    ];
    for (item, want) in items.into_iter().enumerate() {
        interval(ranking.items[item], want, &format!("item {item}"));
    }
    let pairs = [
        (
            (0, 1),
            [
                6.900_000_000_000_048,
                3.004_626_062_886_619_5,
                2.0,
                -6.027_862_531_355_444,
                19.827_862_531_355_542,
                0.148_508_573_917_982_97,
            ],
            0.297_017_147_835_965_94,
        ),
        (
            (0, 2),
            [
                17.628_571_428_571_448,
                0.961_046_882_889_193_7,
                2.0,
                13.493_520_434_491_046,
                21.763_622_422_651_85,
                0.002_958_857_516_904_302,
            ],
            0.017_753_145_101_425_81,
        ),
        (
            (0, 3),
            [
                22.628_571_428_571_44,
                4.411_947_163_982_989_5,
                2.0,
                3.645_494_919_949_634,
                41.611_647_937_193_25,
                0.035_975_400_394_201_29,
            ],
            0.138_034_204_803_373_92,
        ),
        (
            (1, 2),
            [
                10.728_571_428_571_4,
                2.046_338_192_968_116,
                2.0,
                1.923_888_816_606_552_9,
                19.533_254_040_536_246,
                0.034_508_551_200_843_48,
            ],
            0.138_034_204_803_373_92,
        ),
        (
            (1, 3),
            [
                15.728_571_428_571_392,
                1.887_458_608_817_718_5,
                2.0,
                7.607_492_493_052_714,
                23.849_650_364_090_07,
                0.014_096_680_822_494_22,
            ],
            0.070_483_404_112_471_1,
        ),
        (
            (2, 3),
            [
                4.999_999_999_999_993,
                3.500_000_000_000_003_6,
                2.0,
                -10.059_284_554_123_138,
                20.059_284_554_123_124,
                0.289_330_945_481_299_45,
            ],
            0.297_017_147_835_965_94,
        ),
    ];
    for ((a, b), want, holm) in pairs {
        let pair = ranking
            .pairs
            .iter()
            .find(|p| (p.a, p.b) == (a, b))
            .expect("every pair is tested");
        interval(Some(pair.difference), want, &format!("pair {a}-{b}"));
        close(pair.p_adjusted.expect("tested"), holm, 1e-8, "holm");
        assert_eq!(pair.separated, holm < 0.05);
    }
    let leniency = [
        -3.742_857_142_857_145_5,
        -3.542_857_142_857_142_7,
        7.285_714_285_714_288,
    ];
    for (effect, want) in ranking.effects[0].iter().zip(leniency) {
        let effect = effect.expect("every judge scored");
        close(effect.estimate, want, 1e-9, "leniency");
        assert_eq!(
            effect.lo, None,
            "a judge's effect is not resampled over judges"
        );
    }
}

// Section "additive_ranking, briefs and a slope": `value ~ 0 + C(item) + C(brief, Sum) +
// C(judge, Sum) + x`, refitted without each brief; 3 degrees of freedom.
#[test]
#[expect(clippy::too_many_lines, reason = "reference values, one per line")]
fn additive_night_matches_statsmodels() {
    let night = [
        (0, 0, 0, -0.8, 62.6),
        (0, 0, 1, -0.25, 61.5),
        (0, 0, 2, 1.14, 56.7),
        (0, 1, 0, -0.55, 57.0),
        (0, 1, 1, 0.75, 60.2),
        (0, 1, 2, 0.27, 42.1),
        (1, 0, 0, -0.96, 62.9),
        (1, 0, 1, 0.2, 48.4),
        (1, 0, 2, -0.08, 41.3),
        (1, 1, 0, -0.63, 49.6),
        (1, 1, 1, -0.71, 44.5),
        (1, 1, 2, -0.06, 35.1),
        (2, 0, 0, 0.41, 67.7),
        (2, 0, 1, -1.64, 50.3),
        (2, 0, 2, -0.98, 44.5),
        (2, 1, 0, -1.29, 52.2),
        (2, 1, 1, -0.04, 47.0),
        (2, 1, 2, -1.05, 35.7),
        (3, 0, 0, -1.09, 41.7),
        (3, 0, 1, 0.22, 38.3),
        (3, 1, 0, 1.17, 46.7),
        (3, 1, 1, -2.0, 27.8),
    ];
    let cells: Vec<Cell> = night
        .into_iter()
        .map(|(brief, judge, item, covariate, value)| Cell {
            item,
            levels: vec![brief, judge],
            covariate,
            value,
        })
        .collect();
    let shape = Shape {
        items: 3,
        levels: vec![4, 2],
        slope: true,
    };
    let ranking = additive_ranking(&cells, &shape, 0.95).expect("connected");
    let items = [
        [
            56.776_809_795_361_89,
            4.480_495_497_387_089,
            3.0,
            42.517_873_453_862_066,
            71.035_746_136_861_72,
            0.001_059_947_325_842_942_8,
        ],
        [
            48.852_147_056_124_55,
            5.334_002_070_690_136,
            3.0,
            31.876_971_873_881_08,
            65.827_322_238_368_03,
            0.002_751_993_182_759_445,
        ],
        [
            38.827_986_253_997_43,
            4.814_565_166_112_376,
            3.0,
            23.505_891_129_555_458,
            54.150_081_378_439_4,
            0.003_982_687_733_991_366,
        ],
    ];
    for (item, want) in items.into_iter().enumerate() {
        interval(ranking.items[item], want, &format!("item {item}"));
    }
    let pair = ranking
        .pairs
        .iter()
        .find(|p| (p.a, p.b) == (0, 2))
        .expect("tested");
    interval(
        Some(pair.difference),
        [
            17.948_823_541_364_46,
            1.127_432_945_449_354,
            3.0,
            14.360_828_729_664_037,
            21.536_818_353_064_888,
            0.000_538_890_304_608_982_2,
        ],
        "pair 0-2",
    );
    interval(
        ranking.slope,
        [
            3.693_710_792_217_92,
            0.977_257_550_323_944_6,
            3.0,
            0.583_641_111_878_875_6,
            6.803_780_472_556_964,
            0.032_450_758_476_731_5,
        ],
        "slope",
    );
    let briefs = [
        8.186_272_624_231_716,
        0.193_337_660_600_112_93,
        4.240_041_054_218_770_5,
        -12.619_651_339_050_598,
    ];
    for (effect, want) in ranking.effects[0].iter().zip(briefs) {
        close(effect.expect("present").estimate, want, 1e-9, "brief");
    }
    let judges = [3.493_406_802_473_280_5, -3.493_406_802_473_280_5];
    for (effect, want) in ranking.effects[1].iter().zip(judges) {
        close(effect.expect("present").estimate, want, 1e-9, "judge");
    }
}

// Section "permutation": the same Fisher–Yates over numpy's pcg64 stream through Lemire's
// method, seed 17, 999 shuffles.
#[test]
fn permutation_p_value_matches_numpy() {
    let guesses = [0, 1, 1, 2, 0, 0, 2, 1];
    let truth = [0, 1, 2, 2, 0, 1, 2, 0];
    let p = permutation_p_value(&guesses, &truth, 999, 17).expect("guesses");
    close(p, 0.106, 1e-12, "p");
}
