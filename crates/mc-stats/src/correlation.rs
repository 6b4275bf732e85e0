//! Rank correlation: how far two orderings of the same items agree (the jury's scores and the
//! hidden tests' pass rates). Spearman's ρ is Pearson's correlation of the ranks, ties given
//! their average rank; Kendall's τ-b counts concordant and discordant pairs, corrected for ties
//! in either ordering. Both are `None` when an ordering has no spread (every value equal) or
//! there are fewer than two items. Checked against `scipy.stats.spearmanr` and `kendalltau`.

use crate::student_t::t_two_sided_p;

/// A rank correlation over `n` items.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankCorrelation {
    /// The coefficient, in `[-1, 1]`.
    pub coefficient: f64,
    /// Two-sided p-value of "no association" where one is defined (Spearman: Student's t on
    /// `n - 2` degrees of freedom, as scipy computes it; `None` for fewer than 3 items).
    pub p_value: Option<f64>,
    /// Items.
    pub n: usize,
}

/// 1-based ranks, ties given the average of the ranks they span.
#[expect(clippy::cast_precision_loss, reason = "item counts are tiny")]
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]].total_cmp(&values[order[start]]).is_eq() {
            end += 1;
        }
        // Positions start..end hold equal values: each gets the mean of ranks start+1..=end.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = rank;
        }
        start = end;
    }
    ranks
}

/// Spearman's ρ of `x` and `y` (equal lengths; extra values of the longer are ignored).
#[expect(clippy::cast_precision_loss, reason = "item counts are tiny")]
pub fn spearman(x: &[f64], y: &[f64]) -> Option<RankCorrelation> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let (rx, ry) = (average_ranks(&x[..n]), average_ranks(&y[..n]));
    let mean = f64::midpoint(n as f64, 1.0);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mean) * (b - mean);
        sxx += (a - mean).powi(2);
        syy += (b - mean).powi(2);
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    let rho = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let p_value = (n > 2).then(|| {
        let df = n - 2;
        let t = rho * (df as f64 / ((1.0 + rho) * (1.0 - rho))).sqrt();
        t_two_sided_p(t, df)
    });
    Some(RankCorrelation {
        coefficient: rho,
        p_value: p_value.flatten(),
        n,
    })
}

/// Kendall's τ-b of `x` and `y` (equal lengths; extra values of the longer are ignored).
#[expect(clippy::cast_precision_loss, reason = "pair counts are tiny")]
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<RankCorrelation> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let (mut concordant, mut discordant, mut tied_x, mut tied_y) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..n {
        for j in i + 1..n {
            let dx = x[i].total_cmp(&x[j]) as i64;
            let dy = y[i].total_cmp(&y[j]) as i64;
            match (dx, dy) {
                (0, 0) => {}
                (0, _) => tied_x += 1,
                (_, 0) => tied_y += 1,
                _ if dx == dy => concordant += 1,
                _ => discordant += 1,
            }
        }
    }
    // n0 - n1 = pairs not tied in x; n0 - n2 = pairs not tied in y (pairs tied in both count
    // in neither).
    let untied_x = (concordant + discordant + tied_y) as f64;
    let untied_y = (concordant + discordant + tied_x) as f64;
    if untied_x == 0.0 || untied_y == 0.0 {
        return None;
    }
    let tau = ((concordant - discordant) as f64 / (untied_x * untied_y).sqrt()).clamp(-1.0, 1.0);
    Some(RankCorrelation {
        coefficient: tau,
        p_value: None,
        n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_the_average_of_their_ranks() {
        assert_eq!(average_ranks(&[3.0, 1.0, 3.0, 2.0]), [3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn no_spread_or_too_few_items_give_none() {
        assert_eq!(spearman(&[1.0, 2.0], &[5.0, 5.0]), None);
        assert_eq!(kendall_tau_b(&[1.0], &[2.0]), None);
        assert_eq!(kendall_tau_b(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    }
}
