//! A proportion's confidence interval: the share of hidden tests an output passed.
//!
//! The Wilson score interval (Wilson 1927) inverts the normal test of a proportion, so unlike
//! the textbook `p ± z √(p(1-p)/n)` it never leaves `[0, 1]`, is not empty at 0 or `n`
//! successes, and covers close to its level even for a handful of tests (Brown, Cai and
//! Das Gupta 2001). Checked against `statsmodels`' `proportion_confint(method="wilson")`.

use statrs::distribution::{ContinuousCDF, Normal};

/// A proportion with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proportion {
    /// `successes / trials`.
    pub estimate: f64,
    /// Lower end, in `[0, estimate]`.
    pub lo: f64,
    /// Upper end, in `[estimate, 1]`.
    pub hi: f64,
    /// Successes.
    pub successes: u64,
    /// Trials.
    pub trials: u64,
}

/// The Wilson score interval of `successes` out of `trials` at `level` (for example 0.95);
/// `None` without trials, with more successes than trials, or a level outside `(0, 1)`.
#[expect(clippy::cast_precision_loss, reason = "test counts are far below 2^52")]
pub fn wilson_interval(successes: u64, trials: u64, level: f64) -> Option<Proportion> {
    if trials == 0 || successes > trials || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let z = Normal::standard().inverse_cdf(0.5 + level / 2.0);
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At 0 or n successes one end is exact (0 or 1); rounding must not move it past p.
    let lo = if successes == 0 {
        0.0
    } else {
        (centre - half).clamp(0.0, p)
    };
    let hi = if successes == trials {
        1.0
    } else {
        (centre + half).clamp(p, 1.0)
    };
    Some(Proportion {
        estimate: p,
        lo,
        hi,
        successes,
        trials,
    })
}

#[cfg(test)]
mod tests {
    use super::wilson_interval;

    #[test]
    fn nothing_to_count_or_impossible_counts_give_none() {
        assert_eq!(wilson_interval(0, 0, 0.95), None);
        assert_eq!(wilson_interval(3, 2, 0.95), None);
        assert_eq!(wilson_interval(1, 2, 1.0), None);
    }

    #[test]
    fn the_interval_holds_its_estimate_and_stays_in_the_unit_interval() {
        for trials in 1..40 {
            for successes in 0..=trials {
                let p = wilson_interval(successes, trials, 0.95).expect("valid counts");
                assert!(0.0 <= p.lo && p.lo <= p.estimate && p.estimate <= p.hi && p.hi <= 1.0);
            }
        }
    }
}
