//! `cargo bench -p multicooker-stats`: how long the leaderboard's statistics take at nightly sizes (the
//! report's jackknife rankings beside the percentile bootstraps they replaced).
//! Prints numbers (median of 5 runs); asserts nothing about time. Target: a night of 10
//! participants × 20 briefs, 2000 resamples, ranks in under 2 s on one core.

#![expect(clippy::print_stdout, reason = "a benchmark prints its numbers")]

use std::time::Instant;

use mc_stats::{Bootstrap, Comparison, Observation};

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn time(f: impl Fn()) -> f64 {
    median(
        (0..5)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() {
    let boot = Bootstrap {
        resamples: 2000,
        level: 0.95,
        seed: 7,
    };
    println!("mc-stats benchmark (median of 5 runs, seconds)");
    for (items, clusters) in [(4, 5), (10, 20), (20, 40)] {
        let mut observations = Vec::new();
        let mut comparisons = Vec::new();
        for cluster in 0..clusters {
            for item in 0..items {
                #[expect(clippy::cast_precision_loss, reason = "small counts")]
                let value = 40.0 + (item * 7 + cluster * 3) as f64 % 50.0;
                observations.push(Observation {
                    cluster,
                    item,
                    value,
                });
                for other in 0..items {
                    if other != item {
                        let score_a = match (item + other + cluster) % 3 {
                            0 => 0.5,
                            1 => f64::from(u8::from(item > other)),
                            _ => f64::from(u8::from(item < other)),
                        };
                        comparisons.push(Comparison {
                            cluster,
                            a: item,
                            b: other,
                            score_a,
                        });
                    }
                }
            }
        }
        let means = time(|| {
            mc_stats::cluster_means(&observations, items, &boot);
        });
        let bt = time(|| {
            mc_stats::bradley_terry_bootstrap(&comparisons, items, &boot);
        });
        let cells: Vec<mc_stats::Cell> = observations
            .iter()
            .map(|o| mc_stats::Cell {
                item: o.item,
                levels: vec![o.cluster],
                covariate: 0.0,
                value: o.value,
            })
            .collect();
        let shape = mc_stats::Shape {
            items,
            levels: vec![clusters],
            slope: false,
        };
        let additive = time(|| {
            mc_stats::additive_ranking(&cells, &shape, 0.95);
        });
        let bt_jackknife = time(|| {
            mc_stats::bradley_terry_ranking(&comparisons, items, 0.95);
        });
        println!(
            "{items:>3} participants × {clusters:>3} briefs: cluster means {means:.3}s, Bradley–Terry ({} verdicts) {bt:.3}s; jackknife rankings: additive {additive:.3}s, Bradley–Terry {bt_jackknife:.3}s",
            comparisons.len()
        );
    }
}
