//! The exact binomial upper tail, for the p-value of a blinding probe (can a judge guess whose
//! work it reads better than chance?).

/// `P(X >= hits)` for `X ~ Binomial(n, p)`, exact, summed in log space so that it neither
/// overflows nor underflows for `n` up to many thousands.
///
/// 1 when `hits` is 0, 0 when `hits > n`; `p` is clamped to `[0, 1]`.
#[expect(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
pub fn binomial_upper_tail(hits: u64, n: u64, p: f64) -> f64 {
    if hits == 0 {
        return 1.0;
    }
    if hits > n {
        return 0.0;
    }
    let p = p.clamp(0.0, 1.0);
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let log_odds = p.ln() - (-p).ln_1p();
    // ln P(X = hits) = ln C(n, hits) + hits ln p + (n - hits) ln(1 - p).
    let log_choose: f64 = (1..=hits)
        .map(|i| ((n - hits + i) as f64 / i as f64).ln())
        .sum();
    let mut term = log_choose + hits as f64 * p.ln() + (n - hits) as f64 * (-p).ln_1p();
    let mut terms = Vec::with_capacity(usize::try_from(n - hits + 1).unwrap_or(0));
    for k in hits..=n {
        terms.push(term);
        // ln P(X = k + 1) - ln P(X = k) = ln((n - k) / (k + 1)) + ln(p / (1 - p)).
        term += ((n - k) as f64 / (k + 1) as f64).ln() + log_odds;
    }
    let largest = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|t| (t - largest).exp()).sum();
    (largest + sum.ln()).exp().min(1.0)
}

#[cfg(test)]
mod tests {
    use super::binomial_upper_tail;

    #[test]
    fn edges() {
        assert!((binomial_upper_tail(0, 10, 0.3) - 1.0).abs() < f64::EPSILON);
        assert!(binomial_upper_tail(11, 10, 0.3).abs() < f64::EPSILON);
        assert!(binomial_upper_tail(1, 10, 0.0).abs() < f64::EPSILON);
        assert!((binomial_upper_tail(10, 10, 1.0) - 1.0).abs() < f64::EPSILON);
    }
}
