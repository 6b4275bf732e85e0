//! The delete-one-cluster jackknife with a Student t interval: the small-sample interval of
//! every estimate the report prints. For a statistic `s`, the `k` clusters' leave-one-out
//! values `s_(i)` give `se^2 = (k - 1) / k * sum_i (s_(i) - mean)^2`, and the interval is
//! `s ± t_{(1 + level) / 2, df} se` with `df = min(k - 1, residual df of the full fit)`.
//!
//! For a mean of cluster means, and for a difference of two items scored by the same clusters,
//! this is exactly the one-sample (paired) t interval, whose coverage is exact under a normal
//! random-effects model at every `k >= 2`. For the additive model on an incomplete design the
//! cap on `df` keeps the thinnest designs (three judges, three participants, each judge
//! barred from one) from under-covering: their leave-one-out fits are exactly identified, so the
//! spread carries no more information than the model's residual. `tests/it/coverage.rs`
//! measures the coverage.

use crate::student_t::{t_critical, t_two_sided_p};

/// An estimate with its small-sample t interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TInterval {
    /// The statistic on the full data.
    pub estimate: f64,
    /// Its jackknife standard error; `None` with fewer than 2 clusters, when a leave-one-out
    /// fit lacks the statistic, or when the leave-one-out values do not differ at all (no
    /// spread to estimate: a zero-width interval would claim certainty the data cannot give).
    pub se: Option<f64>,
    /// Degrees of freedom of the t quantile (0 when there is no interval).
    pub df: usize,
    /// Lower end; `None` exactly when `se` is.
    pub lo: Option<f64>,
    /// Upper end; `None` exactly when `se` is.
    pub hi: Option<f64>,
}

impl TInterval {
    /// An estimate without an interval.
    pub fn bare(estimate: f64) -> Self {
        Self {
            estimate,
            se: None,
            df: 0,
            lo: None,
            hi: None,
        }
    }

    /// The interval from an estimate, its standard error and degrees of freedom; bare when the
    /// standard error is not positive or `df` is 0.
    pub fn from_se(estimate: f64, se: f64, df: usize, level: f64) -> Self {
        let no_spread = se <= 1e-9 * (1.0 + estimate.abs()) || !se.is_finite();
        match t_critical(level, df).filter(|_| !no_spread) {
            Some(t) => Self {
                estimate,
                se: Some(se),
                df,
                lo: Some(estimate - t * se),
                hi: Some(estimate + t * se),
            },
            None => Self::bare(estimate),
        }
    }

    /// Two-sided p-value of "the true value is 0"; `None` without an interval.
    pub fn p_value(&self) -> Option<f64> {
        t_two_sided_p(self.estimate / self.se?, self.df)
    }

    /// The same interval with `f` applied to the estimate and both ends (`f` increasing).
    pub(crate) fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Self {
            estimate: f(self.estimate),
            lo: self.lo.map(&f),
            hi: self.hi.map(&f),
            ..self
        }
    }
}

/// Jackknife t intervals of every statistic `stat` returns. `stat(None)` is the full-data
/// value, `stat(Some(c))` the value without cluster `c`; either may lack a statistic (`None`
/// in the vector) or fail as a whole. `df_cap` bounds the degrees of freedom (see the module
/// docs). `None` when the full-data statistics fail.
pub(crate) fn jackknife(
    clusters: &[usize],
    df_cap: usize,
    level: f64,
    stat: impl Fn(Option<usize>) -> Option<Vec<Option<f64>>>,
) -> Option<Vec<Option<TInterval>>> {
    let full = stat(None)?;
    let df = clusters.len().saturating_sub(1).min(df_cap);
    let leave_out: Vec<Option<Vec<Option<f64>>>> = if df > 0 {
        clusters.iter().map(|&c| stat(Some(c))).collect()
    } else {
        Vec::new()
    };
    let interval = |index: usize, estimate: f64| {
        if df == 0 {
            return TInterval::bare(estimate);
        }
        let values: Option<Vec<f64>> = leave_out
            .iter()
            .map(|fit| fit.as_ref()?.get(index).copied().flatten())
            .collect();
        values.map_or(TInterval::bare(estimate), |v| {
            TInterval::from_se(estimate, spread(&v), df, level)
        })
    };
    Some(
        full.iter()
            .enumerate()
            .map(|(index, estimate)| estimate.map(|e| interval(index, e)))
            .collect(),
    )
}

/// `sqrt((k - 1) / k * sum (v - mean)^2)`.
#[expect(clippy::cast_precision_loss, reason = "cluster counts are tiny")]
fn spread(values: &[f64]) -> f64 {
    let k = values.len() as f64;
    let mean = values.iter().sum::<f64>() / k;
    ((k - 1.0) / k * values.iter().map(|v| (v - mean).powi(2)).sum::<f64>()).sqrt()
}

/// The one-sample t interval of the mean of `values` (each value one cluster's); bare with
/// fewer than 2 values or no spread, `None` without values.
#[expect(clippy::cast_precision_loss, reason = "cluster counts are tiny")]
pub fn mean_interval(values: &[f64], level: f64) -> Option<TInterval> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Some(TInterval::bare(mean));
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(TInterval::from_se(
        mean,
        (variance / n as f64).sqrt(),
        n - 1,
        level,
    ))
}

/// `mean(a) - mean(b)` with the pooled-variance two-sample t interval (`n_a + n_b - 2` degrees
/// of freedom; a group of one borrows the other's spread). `None` when a group is empty.
#[expect(clippy::cast_precision_loss, reason = "group sizes are tiny")]
pub fn difference_interval(a: &[f64], b: &[f64], level: f64) -> Option<TInterval> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let squares = |x: &[f64]| {
        let m = mean(x);
        x.iter().map(|v| (v - m).powi(2)).sum::<f64>()
    };
    let difference = mean(a) - mean(b);
    let df = a.len() + b.len() - 2;
    if df == 0 {
        return Some(TInterval::bare(difference));
    }
    let pooled = (squares(a) + squares(b)) / df as f64;
    let se = (pooled * (1.0 / a.len() as f64 + 1.0 / b.len() as f64)).sqrt();
    Some(TInterval::from_se(difference, se, df, level))
}

#[cfg(test)]
mod tests {
    use super::{jackknife, mean_interval};

    // For a mean of cluster values the jackknife is the one-sample t interval.
    #[test]
    #[expect(clippy::cast_precision_loss, reason = "four values")]
    fn the_jackknife_of_a_mean_is_the_t_interval() {
        let values = [61.0, 55.0, 70.0, 64.0];
        let mean = |skip: Option<usize>| {
            let kept: Vec<f64> = (0..4)
                .filter(|&i| Some(i) != skip)
                .map(|i| values[i])
                .collect();
            Some(vec![Some(kept.iter().sum::<f64>() / kept.len() as f64)])
        };
        let got = jackknife(&[0, 1, 2, 3], usize::MAX, 0.95, mean).expect("full fit")[0]
            .expect("estimate");
        let want = mean_interval(&values, 0.95).expect("values");
        assert!((got.se.expect("se") - want.se.expect("se")).abs() < 1e-12);
        assert!((got.lo.expect("lo") - want.lo.expect("lo")).abs() < 1e-9);
        assert_eq!(got.df, 3);
    }

    #[test]
    fn no_spread_gives_no_interval() {
        let got = mean_interval(&[100.0, 100.0], 0.95).expect("values");
        assert_eq!((got.estimate, got.lo, got.hi), (100.0, None, None));
    }
}
