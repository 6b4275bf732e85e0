//! The cluster bootstrap shared by the means and Bradley–Terry: cluster numbering, resample
//! weights and percentile intervals. Knows nothing of the statistic it resamples.

use crate::rng::Draws;
use crate::{Bootstrap, Interval};

/// The distinct cluster numbers of an input, sorted; a cluster's position is its index.
pub(crate) struct Clusters {
    ids: Vec<usize>,
}

impl Clusters {
    pub(crate) fn new(ids: impl IntoIterator<Item = usize>) -> Self {
        let mut ids: Vec<usize> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        Self { ids }
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The distinct cluster numbers, sorted.
    pub(crate) fn ids(&self) -> &[usize] {
        &self.ids
    }

    /// The index of cluster number `id`, which must be one of the input's.
    pub(crate) fn index(&self, id: usize) -> usize {
        self.ids
            .binary_search(&id)
            .expect("every cluster number was collected by `Clusters::new`")
    }
}

/// Calls `statistic` once per resample with each cluster's weight: how many times it was drawn
/// among `clusters` draws with replacement. Draw order: resample by resample, cluster draw by
/// cluster draw, from one generator seeded with `boot.seed`.
pub(crate) fn for_each_resample(
    clusters: usize,
    boot: &Bootstrap,
    mut statistic: impl FnMut(&[f64]),
) {
    if clusters == 0 {
        return;
    }
    let mut draws = Draws::new(boot.seed);
    let mut weights = vec![0.0; clusters];
    for _ in 0..boot.resamples {
        weights.fill(0.0);
        for _ in 0..clusters {
            weights[draws.below(clusters)] += 1.0;
        }
        statistic(&weights);
    }
}

/// The percentile interval of `samples` around `estimate` at `level`; no interval with fewer than
/// 2 clusters or no samples.
pub(crate) fn percentile_interval(
    estimate: f64,
    samples: &mut [f64],
    clusters: usize,
    level: f64,
) -> Interval {
    let (lo, hi) = if clusters < 2 || samples.is_empty() {
        (None, None)
    } else {
        samples.sort_unstable_by(f64::total_cmp);
        let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
        (
            Some(quantile(samples, tail)),
            Some(quantile(samples, 1.0 - tail)),
        )
    };
    Interval {
        estimate,
        lo,
        hi,
        clusters,
    }
}

/// The `q` quantile of sorted, non-empty `sorted`, interpolated linearly between order statistics
/// (Hyndman and Fan type 7, `numpy.percentile`'s default).
#[expect(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "sample counts are far below 2^52 and the position is in [0, len - 1]"
)]
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + fraction * (sorted[above] - sorted[below])
}

#[cfg(test)]
mod tests {
    use super::{Clusters, for_each_resample, quantile};
    use crate::Bootstrap;

    // numpy 2.x: `np.percentile(x, [0, 2.5, 50, 97.5, 100])` (default method "linear") for
    // x = [3.5, -1, 2, 10, 0.25, 7, 7, 4] (`tests/reference.py` section "quantile").
    #[test]
    fn quantiles_match_numpy_linear_percentiles() {
        let mut x = [3.5, -1.0, 2.0, 10.0, 0.25, 7.0, 7.0, 4.0];
        x.sort_unstable_by(f64::total_cmp);
        let expected = [
            (0.0, -1.0),
            (0.025, -0.78125),
            (0.5, 3.75),
            (0.975, 9.475),
            (1.0, 10.0),
        ];
        for (q, want) in expected {
            assert!((quantile(&x, q) - want).abs() < 1e-12, "q = {q}");
        }
    }

    #[test]
    fn clusters_are_indexed_in_sorted_order() {
        let clusters = Clusters::new([40, 7, 40, 12]);
        assert_eq!(clusters.len(), 3);
        assert_eq!([7, 12, 40].map(|id| clusters.index(id)), [0, 1, 2]);
    }

    #[test]
    fn every_resample_draws_as_many_clusters_as_there_are() {
        let boot = Bootstrap {
            resamples: 50,
            level: 0.95,
            seed: 3,
        };
        let mut seen = 0;
        for_each_resample(5, &boot, |weights| {
            seen += 1;
            assert!((weights.iter().sum::<f64>() - 5.0).abs() < f64::EPSILON);
        });
        assert_eq!(seen, 50);
    }
}
