//! The night-to-night flag's detectable difference, checked by simulation (docs/RANKING.md
//! §17; `cargo test -p multicooker-stats power -- --nocapture`).
//!
//! Model: 3 participants compared over `n` briefs, per-brief differences `N(δ_p, 6^2)`; one
//! participant moves by `δ` = [`detectable_difference`] at 80 % power (Bonferroni over the 3,
//! the flag `history` prints), the others stay. The flag fires for the mover in 80 % of
//! nights within Monte-Carlo error, at 2, 3, 5 and 8 briefs (the old uncorrected figure fired
//! the corrected flag in 36 % of nights), and for a participant that did not move in at most
//! 5 % / 3 of nights. 4000 nights per row (± 0.6 points).

#![expect(clippy::print_stdout, reason = "the table is this test's output")]

use mc_stats::{detectable_difference, holm, mean_interval};

use crate::coverage::Normal;
use crate::pairwise::{replications, share};

const SPREAD: f64 = 6.0;
const PARTICIPANTS: usize = 3;

/// The detectable difference, then the shares (± MC SE) flagged: the mover by Bonferroni, by
/// Holm, and a participant that did not move.
type Row = (f64, (f64, f64), (f64, f64), (f64, f64));

#[expect(clippy::cast_precision_loss, reason = "brief counts are tiny")]
fn row(briefs: usize, n: usize, seed: u64) -> Row {
    let se = SPREAD / (briefs as f64).sqrt();
    let delta = detectable_difference(se, briefs - 1, 0.95, 0.8, PARTICIPANTS).expect("mdd");
    let mut normal = Normal::new(seed);
    let (mut flagged, mut holm_flagged, mut false_flags) = (0, 0, 0);
    for _ in 0..n {
        let p: Vec<Option<f64>> = (0..PARTICIPANTS)
            .map(|participant| {
                let shift = if participant == 0 { -delta } else { 0.0 };
                let d: Vec<f64> = (0..briefs).map(|_| shift + normal.draw(SPREAD)).collect();
                mean_interval(&d, 0.95).and_then(|i| i.p_value())
            })
            .collect();
        let bonferroni = |i: usize| p[i].is_some_and(|p| p * (PARTICIPANTS as f64) < 0.05);
        flagged += usize::from(bonferroni(0));
        false_flags += usize::from(bonferroni(1));
        holm_flagged += usize::from(holm(&p)[0].is_some_and(|p| p < 0.05));
    }
    (
        delta,
        share(flagged, n),
        share(holm_flagged, n),
        share(false_flags, n),
    )
}

#[test]
fn the_printed_detectable_difference_is_flagged_with_80_percent_power() {
    let n = 2 * replications();
    println!(
        "a move equal to the printed detectable difference (spread {SPREAD}, {PARTICIPANTS} participants), {n} nights per row"
    );
    for (index, briefs) in [2, 3, 5, 8].into_iter().enumerate() {
        let (delta, flagged, holm_flagged, false_flags) = row(briefs, n, 300 + index as u64);
        println!(
            "{briefs} briefs: detectable {delta:.1} points; flagged {:.1} % ± {:.1} (Holm {:.1} %), a participant that did not move flagged {:.1} % ± {:.1}",
            flagged.0, flagged.1, holm_flagged.0, false_flags.0, false_flags.1
        );
        assert!(
            (flagged.0 - 80.0).abs() < 3.0 * flagged.1 + 0.5,
            "{briefs} briefs"
        );
        assert!(
            false_flags.0 < 5.0 / 3.0 + 3.0 * false_flags.1,
            "{briefs} briefs"
        );
    }
}
