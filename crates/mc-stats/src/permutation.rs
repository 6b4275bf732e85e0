//! The blinding probe's test: can a judge name the vendor behind a submission better than a
//! judge who knows only how many submissions each vendor has? A permutation test keeps the
//! judge's guesses and the vendors' counts, shuffles which submission is whose, and asks how
//! often a shuffle matches as many guesses. A judge that always names the majority vendor
//! matches the same number under every shuffle, so it is never called de-anonymizing.

use crate::rng::Draws;

/// `P(hits under a random relabelling >= observed hits)`, by `permutations` seeded shuffles of
/// `truth` (Fisher–Yates with this crate's generator), as `(1 + as many) / (1 + permutations)`
/// (Phipson and Smyth 2010: never 0). One guess and one truth per submission, same length;
/// `None` when they are empty or differ in length.
pub fn permutation_p_value(
    guesses: &[usize],
    truth: &[usize],
    permutations: usize,
    seed: u64,
) -> Option<f64> {
    if guesses.is_empty() || guesses.len() != truth.len() {
        return None;
    }
    let hits = |labels: &[usize]| guesses.iter().zip(labels).filter(|(g, t)| g == t).count();
    let observed = hits(truth);
    let mut draws = Draws::new(seed);
    let mut labels = truth.to_vec();
    let mut as_many = 0_usize;
    for _ in 0..permutations {
        for i in (1..labels.len()).rev() {
            labels.swap(i, draws.below(i + 1));
        }
        if hits(&labels) >= observed {
            as_many += 1;
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "permutation counts are small")]
    Some((1 + as_many) as f64 / (1 + permutations) as f64)
}

#[cfg(test)]
mod tests {
    use super::permutation_p_value;

    #[test]
    fn a_constant_guess_is_never_significant_and_a_perfect_one_is() {
        let truth = [0, 0, 0, 0, 1, 2];
        let majority = permutation_p_value(&[0; 6], &truth, 999, 1).expect("guesses");
        assert!((majority - 1.0).abs() < 1e-12, "{majority}");
        let perfect = permutation_p_value(&truth, &truth, 999, 1).expect("guesses");
        // 6! / (4! 1! 1!) = 30 equally likely labellings, one of them right: p near 1/30
        assert!(perfect < 0.06, "{perfect}");
        assert_eq!(permutation_p_value(&[0], &[0, 1], 9, 1), None);
    }
}
