//! A night's pooled statistics, pure: the judges' scores of every cook go into one additive
//! model (participant + brief + judge), so a brief's difficulty and a judge's leniency are
//! taken out before participants are compared, and a participant missing a cell (say, on the
//! hardest brief) is neither raised nor lowered by it; it is marked incomplete. Intervals are
//! delete-one-brief jackknife t intervals; ranks come from paired tests over briefs, Holm-
//! corrected. Pairwise nights pool Bradley–Terry verdicts the same way (a brief's difficulty
//! does not enter a comparison within it).

use mc_stats::{Cell, Comparison, Ranking, Shape};

use super::store::{CellRecord, EstimateRecord};
use crate::report::jury::LEVEL;

/// One judge's score of one participant in one cook of the night.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedScore {
    /// Brief index (the cluster).
    pub brief: usize,
    /// Judge index (the same judges run every cook of a night).
    pub judge: usize,
    /// Participant index.
    pub participant: usize,
    /// The score in percent.
    pub value: f64,
    /// Size of the participant's sealed output in that cook, in bytes.
    pub output_bytes: Option<u64>,
}

/// What a night's statistics add up to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pooled {
    /// One per participant: ranked ones by estimate (identical ones in name order), then the
    /// unscored.
    pub estimates: Vec<EstimateRecord>,
    /// Groups in score order, every cross pair separated, best first; `None` when no pair
    /// could be tested.
    pub tied_groups: Option<Vec<Vec<String>>>,
    /// What few briefs mean for these intervals, when they are few.
    pub caveat: Option<String>,
}

/// Pools rubric scores (see the module docs); `judges` and `briefs` are the index counts.
pub fn pool_scores(
    names: &[&str],
    scores: &[JudgedScore],
    cells: &[CellRecord],
    (briefs, judges): (usize, usize),
) -> Pooled {
    let sized = !scores.is_empty() && scores.iter().all(|s| s.output_bytes.is_some());
    #[expect(clippy::cast_precision_loss, reason = "sizes far below 2^52")]
    let log_size = |s: &JudgedScore| s.output_bytes.map_or(0.0, |b| (b.max(1) as f64).log2());
    #[expect(clippy::cast_precision_loss, reason = "a night's scores are few")]
    let centre = scores.iter().map(log_size).sum::<f64>() / scores.len().max(1) as f64;
    let model_cells: Vec<Cell> = scores
        .iter()
        .map(|s| Cell {
            item: s.participant,
            levels: vec![s.brief, s.judge],
            covariate: log_size(s) - centre,
            value: s.value,
        })
        .collect();
    let shape = Shape {
        items: names.len(),
        levels: vec![briefs, judges],
        slope: false,
    };
    let ranking = mc_stats::additive_ranking(&model_cells, &shape, LEVEL);
    let controlled = sized
        .then(|| {
            let shape = Shape {
                slope: true,
                ..shape.clone()
            };
            mc_stats::additive_fit(&model_cells, &shape)
        })
        .flatten();
    let mut pooled = finish(names, ranking.as_ref(), cells);
    if let Some(fit) = controlled {
        for estimate in &mut pooled.estimates {
            let index = names.iter().position(|n| *n == estimate.participant);
            // Kept on the scale; shown beside the estimate, never used to order.
            estimate.length_controlled = index
                .and_then(|i| fit.items[i])
                .map(crate::report::on_scale);
        }
    }
    pooled
}

/// Pools pairwise verdicts (clusters: briefs).
pub fn pool_verdicts(names: &[&str], comparisons: &[Comparison], cells: &[CellRecord]) -> Pooled {
    let ranking = mc_stats::bradley_terry_ranking(comparisons, names.len(), LEVEL);
    finish(names, ranking.as_ref(), cells)
}

fn finish(names: &[&str], ranking: Option<&Ranking>, cells: &[CellRecord]) -> Pooled {
    let mut estimates: Vec<EstimateRecord> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let item = ranking.and_then(|r| r.items[i]);
            let rank = ranking.and_then(|r| r.ranks[i]);
            let own: Vec<&CellRecord> = cells.iter().filter(|c| c.participant == *name).collect();
            let scored = own.iter().filter(|c| c.score.is_some()).count();
            EstimateRecord {
                participant: (*name).to_owned(),
                estimate: item.map(|i| i.estimate),
                lo: item.and_then(|i| i.lo).map(crate::report::on_scale),
                hi: item.and_then(|i| i.hi).map(crate::report::on_scale),
                clusters: briefs_scored(&own),
                scored_cells: scored,
                cells: own.len(),
                rank: rank.map(|r| r.rank),
                rank_best: rank.map(|r| r.best),
                rank_worst: rank.map(|r| r.worst),
                rank_single: rank.map(|r| r.single),
                incomplete: scored < own.len(),
                plain: plain_mean(&own),
                length_controlled: None,
            }
        })
        .collect();
    // Score order (docs/RANKING.md §6); a stable sort keeps name order among identical scores.
    estimates.sort_by(|x, y| match (x.estimate, y.estimate) {
        (Some(a), Some(b)) => crate::report::by_score(b, a),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let tied_groups = ranking.and_then(|r| r.groups.as_ref()).map(|groups| {
        groups
            .iter()
            .map(|g| g.iter().map(|&i| names[i].to_owned()).collect())
            .collect()
    });
    let briefs = ranking.map_or(0, |r| r.clusters);
    let caveat = crate::report::few_clusters_caveat(
        briefs,
        estimates.iter().any(|e| e.estimate.is_some()),
        "briefs",
    );
    Pooled {
        estimates,
        tied_groups,
        caveat,
    }
}

fn briefs_scored(own: &[&CellRecord]) -> usize {
    let mut briefs: Vec<&str> = own
        .iter()
        .filter(|c| c.score.is_some())
        .map(|c| c.brief.as_str())
        .collect();
    briefs.sort_unstable();
    briefs.dedup();
    briefs.len()
}

/// The old pooled figure, kept for comparison: the mean over briefs of each brief's mean cell
/// score (a missing cell on a hard brief raises it).
#[expect(clippy::cast_precision_loss, reason = "a night's cells are few")]
fn plain_mean(own: &[&CellRecord]) -> Option<f64> {
    let mut briefs: Vec<&str> = own
        .iter()
        .filter(|c| c.score.is_some())
        .map(|c| c.brief.as_str())
        .collect();
    briefs.sort_unstable();
    briefs.dedup();
    let means: Vec<f64> = briefs
        .iter()
        .map(|b| {
            let values: Vec<f64> = own
                .iter()
                .filter(|c| c.brief == *b)
                .filter_map(|c| c.score)
                .collect();
            values.iter().sum::<f64>() / values.len() as f64
        })
        .collect();
    (!means.is_empty()).then(|| means.iter().sum::<f64>() / means.len() as f64)
}
