//! The data sets of `tests/reference.py`, shared by the reference and bootstrap tests.

use mc_stats::{Comparison, Observation};

/// `OBS` in `tests/reference.py`.
pub(crate) fn observations() -> Vec<Observation> {
    [
        (3, 0, 70.0),
        (3, 0, 80.0),
        (3, 1, 55.0),
        (3, 2, 90.0),
        (10, 0, 65.0),
        (10, 1, 60.0),
        (10, 1, 64.0),
        (10, 2, 85.0),
        (11, 0, 90.0),
        (11, 2, 70.0),
        (20, 0, 72.5),
        (20, 1, 40.0),
        (20, 2, 95.0),
        (20, 3, 10.0),
        (42, 1, 58.0),
        (42, 2, 88.0),
        (42, 2, 92.0),
        (3, 4, 20.0),
        (11, 4, 30.0),
        (11, 4, 45.0),
    ]
    .into_iter()
    .map(|(cluster, item, value)| Observation {
        cluster,
        item,
        value,
    })
    .collect()
}

/// `CMP` in `tests/reference.py`: ties, an item (3) that never appears, an item (2) that never
/// loses, an item (4) in 3 of 4 clusters.
pub(crate) fn comparisons() -> Vec<Comparison> {
    [
        (0, 0, 1, 1.0),
        (0, 1, 0, 0.5),
        (0, 2, 0, 1.0),
        (0, 2, 1, 0.5),
        (1, 0, 1, 0.0),
        (1, 0, 2, 0.0),
        (1, 1, 2, 0.0),
        (1, 4, 0, 1.0),
        (2, 0, 1, 1.0),
        (2, 4, 1, 0.5),
        (2, 4, 2, 0.0),
        (2, 0, 4, 0.5),
        (5, 1, 0, 1.0),
        (5, 2, 4, 1.0),
    ]
    .into_iter()
    .map(|(cluster, a, b, score_a)| Comparison {
        cluster,
        a,
        b,
        score_a,
    })
    .collect()
}
