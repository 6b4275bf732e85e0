//! Labels: each judge gets its own shuffle of the submissions it may see, labelled A, B, C …
//! in order (AA, AB … past Z, so nobody is dropped), as the judge prompt promises. The shuffle
//! is seeded so tests and reruns can reproduce it; the seed is recorded host-side only.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

/// The label of the `index`-th submission: A … Z, AA, AB … (spreadsheet columns).
pub fn label(index: usize) -> String {
    let mut n = index + 1;
    let mut text = Vec::new();
    while n > 0 {
        let rem = (n - 1) % 26;
        text.push(b'A' + u8::try_from(rem).expect("a remainder mod 26 fits in u8"));
        n = (n - 1) / 26;
    }
    text.reverse();
    String::from_utf8(text).expect("labels are ASCII")
}

/// Per-judge shuffles from one seed: the same seed and inputs give the same labels.
pub struct Shuffler {
    rng: StdRng,
}

impl Shuffler {
    /// A shuffler seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Shuffles `items` in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        items.shuffle(&mut self.rng);
    }

    /// Labels `participants` in a fresh random order: `(label, participant)` pairs sorted by
    /// label.
    pub fn assign(&mut self, participants: &[String]) -> Vec<(String, String)> {
        let mut order = participants.to_vec();
        order.shuffle(&mut self.rng);
        order
            .into_iter()
            .enumerate()
            .map(|(i, p)| (label(i), p))
            .collect()
    }
}

/// A seed from the operating system's randomness.
pub fn random_seed() -> u64 {
    rand::random()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_continue_past_z() {
        let labels: Vec<String> = [0, 1, 25, 26, 27, 51, 52, 701, 702]
            .iter()
            .map(|i| label(*i))
            .collect();
        assert_eq!(labels, ["A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]);
    }

    #[test]
    fn thirty_participants_all_get_distinct_labels() {
        let participants: Vec<String> = (0..30).map(|i| format!("p{i}")).collect();
        let assigned = Shuffler::new(7).assign(&participants);
        let mut names: Vec<&String> = assigned.iter().map(|(_, p)| p).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 30, "nobody is dropped");
        assert_eq!(assigned.last().unwrap().0, "AD");
    }

    #[test]
    fn shuffles_are_seeded_and_differ_between_judges() {
        let participants: Vec<String> = ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec();
        let mut first = Shuffler::new(42);
        let (one, two) = (first.assign(&participants), first.assign(&participants));
        let mut again = Shuffler::new(42);
        assert_eq!(again.assign(&participants), one, "same seed, same labels");
        assert_ne!(one, two, "the second judge gets its own shuffle");
    }
}
