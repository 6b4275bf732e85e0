//! Mean of per-cluster means with a cluster-bootstrap interval (rubric scores: each judge, or
//! each brief, weighs the same however many values it gave).

use crate::bootstrap::{Clusters, for_each_resample, percentile_interval};
use crate::{Bootstrap, Interval, Observation};

/// Per item, the mean over the clusters that have it of the within-cluster mean of its values,
/// with a cluster-bootstrap percentile interval (see the crate docs).
///
/// Returns one entry per item index below `items`: `None` when the item has no observation;
/// `lo`/`hi` are `None` when it has fewer than 2 clusters. Observations whose item is not below
/// `items` are ignored.
pub fn cluster_means(obs: &[Observation], items: usize, boot: &Bootstrap) -> Vec<Option<Interval>> {
    let table = CellMeans::new(obs, items);
    let full = vec![1.0; table.clusters];
    let mut samples = vec![Vec::with_capacity(boot.resamples); items];
    for_each_resample(table.clusters, boot, |weights| {
        for (item, item_samples) in samples.iter_mut().enumerate() {
            if let Some(mean) = table.weighted_mean(item, weights) {
                item_samples.push(mean);
            }
        }
    });
    samples
        .iter_mut()
        .enumerate()
        .map(|(item, item_samples)| {
            let estimate = table.weighted_mean(item, &full)?;
            let clusters = table.clusters_with(item);
            Some(percentile_interval(
                estimate,
                item_samples,
                clusters,
                boot.level,
            ))
        })
        .collect()
}

/// The mean of each (cluster, item) cell, `None` for an empty cell; cluster-major.
struct CellMeans {
    clusters: usize,
    items: usize,
    means: Vec<Option<f64>>,
}

impl CellMeans {
    #[expect(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
    fn new(obs: &[Observation], items: usize) -> Self {
        let kept: Vec<&Observation> = obs.iter().filter(|o| o.item < items).collect();
        let ids = Clusters::new(kept.iter().map(|o| o.cluster));
        let mut sums = vec![(0.0, 0_usize); ids.len() * items];
        for o in kept {
            let cell = &mut sums[ids.index(o.cluster) * items + o.item];
            cell.0 += o.value;
            cell.1 += 1;
        }
        let means = sums
            .into_iter()
            .map(|(sum, count)| (count > 0).then(|| sum / count as f64))
            .collect();
        Self {
            clusters: ids.len(),
            items,
            means,
        }
    }

    fn cell(&self, cluster: usize, item: usize) -> Option<f64> {
        self.means[cluster * self.items + item]
    }

    /// The mean of the item's cell means, cluster `c` weighing `weights[c]`; `None` when no
    /// cluster of positive weight has the item.
    fn weighted_mean(&self, item: usize, weights: &[f64]) -> Option<f64> {
        let (sum, weight) = weights
            .iter()
            .enumerate()
            .filter(|&(_, &w)| w > 0.0)
            .filter_map(|(cluster, &w)| Some((self.cell(cluster, item)? * w, w)))
            .fold((0.0, 0.0), |(s, t), (x, w)| (s + x, t + w));
        (weight > 0.0).then(|| sum / weight)
    }

    fn clusters_with(&self, item: usize) -> usize {
        (0..self.clusters)
            .filter(|&c| self.cell(c, item).is_some())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::cluster_means;
    use crate::{Bootstrap, Observation};

    fn obs(cluster: usize, item: usize, value: f64) -> Observation {
        Observation {
            cluster,
            item,
            value,
        }
    }

    const BOOT: Bootstrap = Bootstrap {
        resamples: 500,
        level: 0.95,
        seed: 1,
    };

    #[test]
    fn each_cluster_weighs_the_same_however_many_values_it_gave() {
        let data = [
            obs(0, 0, 10.0),
            obs(0, 0, 20.0),
            obs(0, 0, 30.0),
            obs(1, 0, 40.0),
        ];
        let got = cluster_means(&data, 1, &BOOT)[0].expect("item 0 has values");
        assert!((got.estimate - 30.0).abs() < 1e-12);
        assert_eq!(got.clusters, 2);
    }

    #[test]
    fn items_out_of_range_are_ignored_and_absent_items_are_none() {
        let data = [obs(5, 0, 1.0), obs(5, 9, 100.0)];
        let got = cluster_means(&data, 2, &BOOT);
        assert_eq!(got.len(), 2);
        assert!(got[1].is_none());
        let only = got[0].expect("item 0 has a value");
        assert_eq!((only.lo, only.hi, only.clusters), (None, None, 1));
    }
}
