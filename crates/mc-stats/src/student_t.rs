//! Student's t distribution: the quantiles and two-sided p-values behind every interval and
//! test of the ranking. A thin wrapper over `statrs` (regularized incomplete beta), checked
//! against `scipy.stats.t` in `tests/it/reference.rs`.

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

fn standard(df: usize) -> Option<StudentsT> {
    #[expect(
        clippy::cast_precision_loss,
        reason = "degrees of freedom are far below 2^52"
    )]
    let freedom = df as f64;
    (df > 0).then(|| StudentsT::new(0.0, 1.0, freedom).ok())?
}

/// The `p` quantile of Student's t with `df` degrees of freedom; `None` when `df` is 0 or `p`
/// is not inside `(0, 1)`.
pub fn t_quantile(p: f64, df: usize) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    Some(standard(df)?.inverse_cdf(p))
}

/// `P(|T| >= |t|)` for `T ~ t(df)`; `None` when `df` is 0 or `t` is not a number. An infinite
/// `t` (a difference with no spread at all) gives 0.
pub fn t_two_sided_p(t: f64, df: usize) -> Option<f64> {
    if t.is_nan() {
        return None;
    }
    let dist = standard(df)?;
    Some((2.0 * dist.sf(t.abs())).min(1.0))
}

/// The half-width multiplier of a two-sided interval at `level`: `t_{(1 + level) / 2, df}`.
pub fn t_critical(level: f64, df: usize) -> Option<f64> {
    t_quantile(0.5 + level.clamp(0.0, 1.0) / 2.0, df)
}

/// The smallest true difference a two-sided test at `level` detects with probability `power`,
/// for an estimate with standard error `se` on `df` degrees of freedom:
/// `(t_{(1 + level) / 2, df} + t_{power, df}) se` (the usual power approximation that ignores the
/// noncentral t's skew).
pub fn minimum_detectable_difference(se: f64, df: usize, level: f64, power: f64) -> Option<f64> {
    Some((t_critical(level, df)? + t_quantile(power, df)?) * se)
}

/// Quadrature points over the chi-square of the t statistic's denominator.
const NODES: usize = 2000;

/// The exact power of the two-sided one-sample t test at `alpha` with `df` degrees of freedom
/// when the true mean is `lambda` standard errors from 0: `E_V[Φ(λ − c √(V/df)) + Φ(−λ − c
/// √(V/df))]`, `V ~ χ²(df)`, `c = t_{1 − alpha/2, df}`, the expectation taken at the midpoint
/// quantiles of `V` (2000 nodes: the power is exact to about 1e-4). `None` when `df` is 0 or
/// `alpha` is outside `(0, 1)`.
pub fn t_test_power(lambda: f64, df: usize, alpha: f64) -> Option<f64> {
    let c = t_quantile(1.0 - alpha / 2.0, df)?;
    #[expect(clippy::cast_precision_loss, reason = "degrees of freedom are tiny")]
    let freedom = df as f64;
    let chi = ChiSquared::new(freedom).ok()?;
    let normal = Normal::standard();
    #[expect(clippy::cast_precision_loss, reason = "a fixed node count")]
    let total: f64 = (0..NODES)
        .map(|i| {
            let v = chi.inverse_cdf((i as f64 + 0.5) / NODES as f64);
            let cut = c * (v / freedom).sqrt();
            normal.cdf(lambda - cut) + normal.cdf(-lambda - cut)
        })
        .sum::<f64>()
        / NODES as f64;
    Some(total)
}

/// The smallest true difference that the flag of `history` (a two-sided t test at `1 − level`
/// divided over `tests` participants, Bonferroni's level and Holm's first step) detects with
/// probability `power`, for an estimate with standard error `se` on `df` degrees of freedom:
/// the exact [`t_test_power`] solved for the difference by bisection. `None` when `se` is not
/// positive (no spread: no power statement can be made), `df` or `tests` is 0, or the inputs
/// are out of range.
pub fn detectable_difference(
    se: f64,
    df: usize,
    level: f64,
    power: f64,
    tests: usize,
) -> Option<f64> {
    if !(se > 0.0 && se.is_finite()) || tests == 0 || !(power > 0.0 && power < 1.0) {
        return None;
    }
    #[expect(clippy::cast_precision_loss, reason = "participants are few")]
    let alpha = (1.0 - level) / tests as f64;
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while t_test_power(high, df, alpha)? < power {
        high *= 2.0;
        if high > 1e6 {
            return None;
        }
    }
    for _ in 0..60 {
        let mid = f64::midpoint(low, high);
        if t_test_power(mid, df, alpha)? < power {
            low = mid;
        } else {
            high = mid;
        }
    }
    Some(high * se)
}

#[cfg(test)]
mod tests {
    use super::{t_quantile, t_two_sided_p};

    #[test]
    fn no_degrees_of_freedom_or_a_bad_probability_gives_none() {
        assert_eq!(t_quantile(0.975, 0), None);
        assert_eq!(t_quantile(1.0, 3), None);
        assert_eq!(t_two_sided_p(1.0, 0), None);
        assert_eq!(t_two_sided_p(f64::NAN, 2), None);
    }

    #[test]
    fn the_quantile_and_the_p_value_invert_each_other() {
        for df in [1, 2, 5, 30] {
            let q = t_quantile(0.975, df).expect("df > 0");
            let p = t_two_sided_p(q, df).expect("df > 0");
            assert!((p - 0.05).abs() < 1e-9, "df {df}: {p}");
        }
    }
}
