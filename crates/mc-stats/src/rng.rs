//! The seeded generator of cluster draws: `Pcg64` from `seed_from_u64`, and uniform indices below
//! a bound by Lemire's method. Never reads the system's randomness.

use rand_pcg::Pcg64;
use rand_pcg::rand_core::{Rng, SeedableRng};

/// Uniform draws of indices, reproducible from a `u64` seed.
pub(crate) struct Draws {
    generator: Pcg64,
}

impl Draws {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            generator: Pcg64::seed_from_u64(seed),
        }
    }

    /// A uniform index in `0..bound` (`bound > 0`), without modulo bias: Lemire, "Fast random
    /// integer generation in an interval" (2019). The high word of `x * bound` is the index; a
    /// low word below `2^64 mod bound` is rejected and drawn again.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        let bound = u64::try_from(bound).expect("a usize fits in a u64");
        assert!(bound > 0, "draws need a positive bound");
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let product = u128::from(self.generator.next_u64()) * u128::from(bound);
            #[expect(
                clippy::cast_possible_truncation,
                reason = "the low 64 bits are wanted"
            )]
            let low = product as u64;
            if low >= threshold {
                let high = u64::try_from(product >> 64).expect("the high word fits in a u64");
                return usize::try_from(high).expect("an index below a usize bound fits a usize");
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.generator.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::Draws;

    // numpy 2.x, `tests/reference.py` section "rng": the seed words of `seed_from_u64` (rand_core's
    // pcg32 hash, transcribed), set as the state of numpy's own `PCG64` and read with
    // `random_raw`, which is numpy's C implementation of pcg64, independent of rand_pcg.
    #[test]
    fn stream_matches_numpy_pcg64() {
        let mut draws = Draws::new(0);
        let first: Vec<u64> = (0..4).map(|_| draws.next_u64()).collect();
        assert_eq!(first, NUMPY_SEED_0);
        let mut draws = Draws::new(20_251_122);
        let first: Vec<u64> = (0..4).map(|_| draws.next_u64()).collect();
        assert_eq!(first, NUMPY_SEED_20251122);
    }

    // Same script: Lemire's method over numpy's raw stream, bound 7, seed 42.
    #[test]
    fn bounded_draws_match_numpy() {
        let mut draws = Draws::new(42);
        let got: Vec<usize> = (0..12).map(|_| draws.below(7)).collect();
        assert_eq!(got, NUMPY_BELOW_7_SEED_42);
    }

    #[test]
    fn bound_one_always_draws_zero() {
        let mut draws = Draws::new(9);
        assert!((0..100).all(|_| draws.below(1) == 0));
    }

    const NUMPY_SEED_0: [u64; 4] = [
        0x20ae_25da_d4e2_bc53,
        0x58f9_38e1_2bbf_69fb,
        0xb5b2_35d6_0cf8_e231,
        0x09f7_1ee2_b019_a7da,
    ];
    const NUMPY_SEED_20251122: [u64; 4] = [
        0x4ab4_8aea_b29f_003c,
        0x499d_4ae1_ec73_ca71,
        0x036f_eddf_cc66_c315,
        0x538d_75b1_d9e6_b579,
    ];
    const NUMPY_BELOW_7_SEED_42: [usize; 12] = [1, 1, 5, 3, 6, 2, 1, 3, 5, 2, 1, 6];
}
