//! Pairwise mode with few judges, measured (docs/RANKING.md §5): a seeded simulation of
//! Bradley–Terry cooks, the table printed (`cargo test -p multicooker-stats pairwise --
//! --nocapture`).
//!
//! Model: 4 participants of equal true strength; each judge `j` sees participant `i` with its
//! own taste `u_ji ~ N(0, 0.5^2)` on the log-strength scale, and judges every pair in both
//! orders, each verdict a Bernoulli draw with `P(a wins) = σ(u_ja − u_jb)`; two agreeing orders
//! give that winner, disagreeing ones a tie, as the report pairs them. Every participant's true
//! score is then 50 and every true difference 0, whatever the ties do, so coverage and false
//! separation are exact targets.
//!
//! Per number of judges (2, 3, 5, 10) it prints the share of cooks in which some pair is
//! separated (any, after Holm; nominal at most 5 %), the coverage of participant 0's interval
//! and of the difference 0 − 1 (nominal 95 %), and the share of participant intervals under 5
//! points wide. The Monte-Carlo standard error of each share is printed beside it. Assertions:
//! false separation below 5 % + 2.5 MC SE, coverage above 95 % − 3 MC SE. 2000 cooks per
//! row by default (seconds); `MC_STATS_REPLICATIONS=20000` runs the heavier check.
//! A power row (participant 0 truly stronger by 1 on the log scale, 10 judges) shows what the
//! floor costs.

#![expect(clippy::print_stdout, reason = "the table is this test's output")]

use mc_stats::{Comparison, bradley_terry_ranking};

use crate::coverage::Normal;

const ITEMS: usize = 4;

pub(crate) fn replications() -> usize {
    std::env::var("MC_STATS_REPLICATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// One cook's verdicts: `judges` judges, strengths `beta`, taste spread `tau`.
pub(crate) fn verdicts(
    normal: &mut Normal,
    judges: usize,
    beta: &[f64],
    tau: f64,
    cluster_of: impl Fn(usize) -> usize,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for judge in 0..judges {
        let seen: Vec<f64> = beta.iter().map(|b| b + normal.draw(tau)).collect();
        for a in 0..beta.len() {
            for b in a + 1..beta.len() {
                let p = sigmoid(seen[a] - seen[b]);
                let first = normal.uniform() < p;
                let second = normal.uniform() < p;
                let score_a = match (first, second) {
                    (true, true) => 1.0,
                    (false, false) => 0.0,
                    _ => 0.5,
                };
                out.push(Comparison {
                    cluster: cluster_of(judge),
                    a,
                    b,
                    score_a,
                });
            }
        }
    }
    out
}

/// A share in percent and its Monte-Carlo standard error in points.
#[expect(clippy::cast_precision_loss, reason = "counts of replications")]
pub(crate) fn share(hits: usize, n: usize) -> (f64, f64) {
    let p = hits as f64 / n.max(1) as f64;
    (100.0 * p, 100.0 * (p * (1.0 - p) / n.max(1) as f64).sqrt())
}

struct Row {
    separated: (f64, f64),
    covered: (f64, f64),
    difference_covered: (f64, f64),
    narrow: (f64, f64),
}

fn row(judges: usize, n: usize, seed: u64) -> Row {
    let mut normal = Normal::new(seed);
    let (mut separated, mut covered, mut difference_covered, mut narrow) = (0, 0, 0, 0);
    for _ in 0..n {
        let cmp = verdicts(&mut normal, judges, &[0.0; ITEMS], 0.5, |j| j);
        let r = bradley_terry_ranking(&cmp, ITEMS, 0.95).expect("verdicts");
        separated += usize::from(r.pairs.iter().any(|p| p.separated));
        let item = r.items[0].expect("item 0 appears");
        match (item.lo, item.hi) {
            (Some(lo), Some(hi)) => {
                covered += usize::from(lo <= 50.0 && 50.0 <= hi);
                narrow += usize::from(hi - lo < 5.0);
            }
            // No interval claims nothing: it counts as covering.
            _ => covered += 1,
        }
        let d = r.pairs.iter().find(|p| (p.a, p.b) == (0, 1)).expect("pair");
        difference_covered += usize::from(match (d.difference.lo, d.difference.hi) {
            (Some(lo), Some(hi)) => lo <= 0.0 && 0.0 <= hi,
            _ => true,
        });
    }
    Row {
        separated: share(separated, n),
        covered: share(covered, n),
        difference_covered: share(difference_covered, n),
        narrow: share(narrow, n),
    }
}

/// A night: `briefs` briefs (the clusters) judged by 2 judges each; each brief brings its own
/// tastes (`N(0, 0.5^2)` per judge and participant), so the intervals are over briefs with the
/// night's judges held fixed.
fn night_row(briefs: usize, n: usize, seed: u64) -> ((f64, f64), (f64, f64)) {
    let mut normal = Normal::new(seed);
    let (mut separated, mut covered) = (0, 0);
    for _ in 0..n {
        let mut cmp = Vec::new();
        for brief in 0..briefs {
            cmp.extend(verdicts(&mut normal, 2, &[0.0; ITEMS], 0.5, |_| brief));
        }
        let r = bradley_terry_ranking(&cmp, ITEMS, 0.95).expect("verdicts");
        separated += usize::from(r.pairs.iter().any(|p| p.separated));
        let item = r.items[0].expect("item 0 appears");
        covered += usize::from(match (item.lo, item.hi) {
            (Some(lo), Some(hi)) => lo <= 50.0 && 50.0 <= hi,
            _ => true,
        });
    }
    (share(separated, n), share(covered, n))
}

#[test]
fn pairwise_nights_with_two_judges_hold_their_level() {
    let n = replications();
    println!("pairwise nights, 2 judges, 4 equal participants, {n} nights per row");
    for (index, briefs) in [2, 3, 5, 8].into_iter().enumerate() {
        let (separated, covered) = night_row(briefs, n, 900 + index as u64);
        println!(
            "{briefs} briefs: false separation {:.1} % ± {:.1}, coverage {:.1} % ± {:.1}",
            separated.0, separated.1, covered.0, covered.1
        );
        assert!(separated.0 < 5.0 + 2.5 * separated.1, "{briefs} briefs");
        assert!(covered.0 > 95.0 - 3.0 * covered.1, "{briefs} briefs");
    }
}

#[test]
fn pairwise_intervals_and_separation_hold_their_level_from_two_judges_on() {
    let n = replications();
    println!("pairwise, 4 equal participants, {n} cooks per row (± MC standard error)");
    println!(
        "judges  false separation   coverage (item)   coverage (0 − 1)   intervals < 5 points"
    );
    for (index, judges) in [2, 3, 5, 10].into_iter().enumerate() {
        let r = row(judges, n, 500 + index as u64);
        let cell = |(p, se): (f64, f64)| format!("{p:5.1} % ± {se:.1}");
        println!(
            "{judges:>6}  {:<17}  {:<16}  {:<17}  {}",
            cell(r.separated),
            cell(r.covered),
            cell(r.difference_covered),
            cell(r.narrow)
        );
        assert!(r.separated.0 < 5.0 + 2.5 * r.separated.1, "{judges} judges");
        assert!(r.covered.0 > 95.0 - 3.0 * r.covered.1, "{judges} judges");
        assert!(r.difference_covered.0 > 95.0 - 3.0 * r.difference_covered.1);
    }
    let mut normal = Normal::new(77);
    let mut hits = 0;
    let beta = [1.0, 0.0, 0.0, 0.0];
    for _ in 0..n / 4 {
        let cmp = verdicts(&mut normal, 10, &beta, 0.5, |j| j);
        let r = bradley_terry_ranking(&cmp, ITEMS, 0.95).expect("verdicts");
        hits += usize::from(r.pairs.iter().any(|p| (p.a, p.b) == (0, 1) && p.separated));
    }
    let (p, se) = share(hits, n / 4);
    println!(
        "power: 10 judges, participant 0 stronger by 1 (log scale): 0 vs 1 separated in {p:.1} % ± {se:.1}"
    );
}
