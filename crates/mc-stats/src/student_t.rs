//! Student's t distribution: the quantiles and two-sided p-values behind every interval and
//! test of the ranking. A thin wrapper over `statrs` (regularized incomplete beta), checked
//! against `scipy.stats.t` in `tests/it/reference.rs`.

use statrs::distribution::{ContinuousCDF, StudentsT};

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
