//! Krippendorff's alpha with the interval metric: how much the judges agree beyond chance.

/// Krippendorff's alpha for interval data, `1 - D_o / D_e`, from a units × coders matrix in which
/// `None` is a missing value (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").
///
/// Units with fewer than 2 values are not pairable and are dropped. With `n` the number of
/// pairable values and `m_u` the values of unit `u`, the observed disagreement is
/// `D_o = (1/n) sum_u 1/(m_u - 1) sum_{i != j in u} (v_i - v_j)^2` and the expected one is
/// `D_e = 1/(n (n - 1)) sum_{i != j} (v_i - v_j)^2` over all pairable values. `None` when there
/// are fewer than 2 pairable values or `D_e` is 0 (every value equal). Rows may differ in length;
/// values must be finite.
#[expect(
    clippy::cast_precision_loss,
    reason = "value counts are far below 2^52"
)]
pub fn krippendorff_alpha_interval(units: &[Vec<Option<f64>>]) -> Option<f64> {
    let pairable: Vec<Vec<f64>> = units
        .iter()
        .map(|unit| unit.iter().flatten().copied().collect::<Vec<f64>>())
        .filter(|values| values.len() >= 2)
        .collect();
    let all: Vec<f64> = pairable.iter().flatten().copied().collect();
    let n = all.len() as f64;
    if all.len() < 2 {
        return None;
    }
    let observed = pairable
        .iter()
        .map(|values| pair_sum(values) / (values.len() - 1) as f64)
        .sum::<f64>()
        / n;
    let expected = pair_sum(&all) / (n * (n - 1.0));
    (expected > 0.0).then(|| 1.0 - observed / expected)
}

/// `sum_{i != j} (v_i - v_j)^2 = 2 m sum_i (v_i - mean)^2`, centred for accuracy; exactly 0 when
/// the values are equal (a rounded mean would leave noise that turns "no spread" into a ratio).
#[expect(
    clippy::cast_precision_loss,
    reason = "value counts are far below 2^52"
)]
#[expect(
    clippy::float_cmp,
    reason = "exactly equal values are what has no spread"
)]
fn pair_sum(values: &[f64]) -> f64 {
    if values.iter().all(|&v| v == values[0]) {
        return 0.0;
    }
    let m = values.len() as f64;
    let mean = values.iter().sum::<f64>() / m;
    2.0 * m * values.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::krippendorff_alpha_interval;

    #[test]
    fn too_few_pairable_values_or_no_spread_gives_none() {
        assert_eq!(krippendorff_alpha_interval(&[]), None);
        assert_eq!(krippendorff_alpha_interval(&[vec![Some(1.0), None]]), None);
        let same = vec![vec![Some(2.0), Some(2.0)], vec![Some(2.0), Some(2.0), None]];
        assert_eq!(krippendorff_alpha_interval(&same), None);
        // a rounded mean of equal values once made this 0 (found by proptest)
        let one_unit = vec![vec![Some(-27.120_598_667_863_412); 3]];
        assert_eq!(krippendorff_alpha_interval(&one_unit), None);
    }
}
