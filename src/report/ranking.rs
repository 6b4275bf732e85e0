//! From mc-stats' ranking to the report's statistics: estimates sorted by score, each with its
//! group's competition rank and its own rank range, groups cut only where every cross pair is
//! separated (docs/RANKING.md §6), the paired separations, each judge's leniency, and the words a
//! reader needs (why an interval is missing; what few judges mean; what α says). Pure.

use indexmap::IndexMap;
use mc_stats::{Ranking, TInterval};

use super::jury::{Estimate, Leniency, PairOutcome, PairSeparation, Scored, Statistics, share};
use crate::brief::Brief;

/// Below this many judges (or briefs) the caveat is printed.
pub(crate) const FEW_CLUSTERS: usize = 5;

/// What [`statistics`] needs besides the fit.
pub(crate) struct Inputs<'a> {
    /// The method's name in summary.json.
    pub method: &'static str,
    /// The judge run's seed.
    pub seed: u64,
    /// The brief (participant names, brief order).
    pub brief: &'a Brief,
    /// The judges (clusters), sorted: cluster `i` is `judges[i]`.
    pub judges: &'a [String],
    /// Judges contributing per participant, brief order.
    pub scored_by: &'a [usize],
    /// Output sizes by participant.
    pub output_bytes: &'a IndexMap<String, u64>,
}

/// The report's statistics from a ranking (`None`: no usable score or an unconnected design).
pub(crate) fn statistics(
    inputs: &Inputs<'_>,
    fitted: Option<&Ranking>,
    plain: &[Option<f64>],
) -> Statistics {
    let name = |i: usize| inputs.brief.participants[i].name.clone();
    let mut estimates: Vec<Estimate> = fitted.map_or_else(Vec::new, |ranking| {
        ranking
            .items
            .iter()
            .zip(&ranking.ranks)
            .enumerate()
            .filter_map(|(i, (item, rank))| {
                let (item, rank) = ((*item)?, (*rank)?);
                Some(Estimate {
                    participant: name(i),
                    estimate: item.estimate,
                    plain: plain.get(i).copied().flatten(),
                    lo: item.lo.map(on_scale),
                    hi: item.hi.map(on_scale),
                    df: item.df,
                    clusters: inputs.scored_by.get(i).copied().unwrap_or(0),
                    rank: rank.rank,
                    rank_best: rank.best,
                    rank_worst: rank.worst,
                    rank_single: rank.single,
                    output_bytes: inputs.output_bytes.get(&name(i)).copied(),
                    length_controlled: None,
                })
            })
            .collect()
    });
    // Score order (a stable sort keeps brief order among identical scores); the group ranks
    // never fall as the score rises.
    estimates.sort_by(|x, y| by_score(y.estimate, x.estimate));
    let pairs: Vec<PairSeparation> = fitted.map_or_else(Vec::new, |ranking| {
        ranking
            .pairs
            .iter()
            .map(|p| separation(&name(p.a), &name(p.b), p.difference, p))
            .collect()
    });
    let tied_groups = fitted.and_then(|r| r.groups.as_ref()).map(|groups| {
        groups
            .iter()
            .map(|g| g.iter().map(|&i| name(i)).collect())
            .collect()
    });
    let clusters = fitted.map_or(0, |r| r.clusters);
    let leniency = fitted
        .and_then(|r| r.effects.first())
        .map(|effects| {
            effects
                .iter()
                .zip(inputs.judges)
                .filter_map(|(effect, judge)| {
                    Some(Leniency {
                        judge: judge.clone(),
                        effect: (*effect)?.estimate,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let note = note(
        &estimates,
        fitted.is_none() && inputs.scored_by.iter().any(|&n| n > 0),
        fitted.and_then(|r| r.residual_df),
        fitted.map_or(0, |r| r.clusters),
    );
    Statistics {
        method: inputs.method,
        resamples: clusters,
        level: super::jury::LEVEL,
        seed: inputs.seed,
        clusters,
        caveat: caveat(clusters, &estimates, "judges").map(|c| {
            if inputs.method.starts_with("bradley_terry") {
                format!("{c}; {}", pairwise_floor(clusters))
            } else {
                c
            }
        }),
        estimates,
        tied_groups,
        pairs,
        leniency,
        note,
    }
}

/// The Rank cell (docs/RANKING.md §6): the group's competition rank, `=` when the group has
/// several members, or `–` when the group holds separated members (no single rank: read the
/// range). `None` rank: unscored, `–`.
pub(crate) fn rank_text(rank: Option<usize>, single: bool, group_size: usize) -> String {
    match rank {
        Some(r) if single && group_size > 1 => format!("{r}="),
        Some(r) if single => r.to_string(),
        _ => "–".to_owned(),
    }
}

/// The Rank range cell: `best–worst`, or one number when they agree.
pub(crate) fn range_text(best: Option<usize>, worst: Option<usize>) -> String {
    match (best, worst) {
        (Some(best), Some(worst)) if worst > best => format!("{best}–{worst}"),
        (Some(best), _) => best.to_string(),
        _ => "–".to_owned(),
    }
}

/// Said under a table with a ranked participant that has no single rank.
pub(crate) const NO_SINGLE_RANK: &str = "Rank –: the participant's group holds participants the paired tests do separate, so no single rank is true of it; its rank range is what its own tests allow.";

/// A participant's place in a night (docs/RANKING.md §6): ` rank 2`, ` rank 2= (2–3)` when its
/// group shares the rank, ` ranks 1–3` when its group holds separated members (no single rank).
/// Nights stored before `rank_single` print their rank as it was.
pub(crate) fn rank_words(night: &serde_json::Value, p: &serde_json::Value) -> String {
    let Some(rank) = p["rank"].as_u64() else {
        return String::new();
    };
    let best = p["rank_best"].as_u64().unwrap_or(rank);
    let worst = p["rank_worst"].as_u64().unwrap_or(best);
    let group = night["participants"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|q| q["rank"].as_u64() == Some(rank))
        .count();
    match p["rank_single"].as_bool() {
        Some(false) => format!(" ranks {best}–{worst}"),
        _ if group > 1 || worst > best => format!(" rank {rank}= ({best}–{worst})"),
        _ => format!(" rank {rank}"),
    }
}

/// An interval end on the percent scale: a score cannot leave [0, 100], so an end beyond it
/// says only that the interval reaches the scale's edge (clamping never lowers coverage).
pub(crate) fn on_scale(end: f64) -> f64 {
    end.clamp(0.0, 100.0)
}

/// Orders scores, treating those within rounding (1e-9 points) as equal, so that equal work
/// keeps brief order whatever the last bits of a least-squares solve.
pub(crate) fn by_score(x: f64, y: f64) -> std::cmp::Ordering {
    if (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs())) {
        std::cmp::Ordering::Equal
    } else {
        x.total_cmp(&y)
    }
}

/// The pair with the better-estimated participant first.
fn separation(
    a: &str,
    b: &str,
    difference: TInterval,
    test: &mc_stats::PairTest,
) -> PairSeparation {
    let flip = difference.estimate < 0.0;
    let (a, b) = if flip { (b, a) } else { (a, b) };
    let sign = if flip { -1.0 } else { 1.0 };
    let (lo, hi) = match (difference.lo, difference.hi) {
        (Some(lo), Some(hi)) if flip => (Some(-hi), Some(-lo)),
        ends => ends,
    };
    PairSeparation {
        a: a.to_owned(),
        b: b.to_owned(),
        difference: sign * difference.estimate,
        lo,
        hi,
        p_adjusted: test.p_adjusted,
        separated: test.separated,
    }
}

fn note(
    estimates: &[Estimate],
    unconnected: bool,
    residual_df: Option<usize>,
    judges: usize,
) -> Option<String> {
    if unconnected {
        return Some("the judges' scores do not connect every participant (some share no judge with the rest), so no leniency-adjusted estimate can be made".to_owned());
    }
    if residual_df == Some(0) && !estimates.is_empty() {
        return Some("no interval and no separation: every score is needed to fix the judges' leniencies, none is left over to measure how much judges disagree (more judges, or judges that may score every participant, leave some)".to_owned());
    }
    let missing: Vec<&Estimate> = estimates.iter().filter(|e| e.lo.is_none()).collect();
    if missing.is_empty() {
        return None;
    }
    Some(if judges >= 2 && missing.iter().all(|e| e.clusters >= 2) {
        format!(
            "the {judges} judges agreed exactly: leaving out any one of them gives the same estimates, so there is no spread to measure and no interval or separation where that happened; exact agreement of {judges} judges is agreement, not certainty (more judges show how far they can differ)"
        )
    } else {
        "an interval needs at least 2 judges whose scores differ; with fewer, the estimate stands alone and nothing is separated from it".to_owned()
    })
}

/// What a night's intervals are conditional on (docs/RANKING.md §16).
pub(crate) const NIGHT_CONDITIONING: &str = "intervals and separations are over briefs, with the night's judges held fixed: they say how sure this panel's ranking is, not what another panel of judges would give";

/// Why pairwise intervals with few judges are wide (`mc_stats::FLOOR_BELOW`).
pub(crate) fn pairwise_floor(clusters: usize) -> String {
    format!(
        "with fewer than {} the pairwise standard errors are floored at the verdicts' own sampling error (leave-one-out fits of {clusters} can agree by chance), so intervals are wider still and a separation needs a gap the verdicts themselves could not produce by chance",
        mc_stats::FLOOR_BELOW
    )
}

/// What few clusters mean, printed when there are fewer than [`FEW_CLUSTERS`].
pub(crate) fn caveat(clusters: usize, estimates: &[Estimate], what: &str) -> Option<String> {
    few_clusters_caveat(clusters, !estimates.is_empty(), what)
}

/// What `clusters` judges (or briefs: `what`) mean for the intervals, when they are fewer than
/// [`FEW_CLUSTERS`] and there is some estimate.
pub(crate) fn few_clusters_caveat(clusters: usize, any: bool, what: &str) -> Option<String> {
    if clusters >= FEW_CLUSTERS || !any {
        return None;
    }
    if clusters < 2 {
        return Some(format!(
            "only {clusters} of the {what} counted: no interval, no separation; the order is one {}'s word",
            what.trim_end_matches('s')
        ));
    }
    let df = clusters - 1;
    let t = mc_stats::t_critical(super::jury::LEVEL, df).unwrap_or(f64::NAN);
    Some(format!(
        "only {clusters} {what}: each interval is ±{t:.1} standard errors ({df} degree(s) of freedom), so it is wide and only large gaps separate; more {what} narrow it fast"
    ))
}

/// Plain mean of each participant's counted scores (brief order).
#[expect(clippy::cast_precision_loss, reason = "a handful of judges")]
pub(crate) fn plain_means(counted: &[Scored], items: usize) -> Vec<Option<f64>> {
    (0..items)
        .map(|item| {
            let values: Vec<f64> = counted
                .iter()
                .filter(|(_, i, _)| *i == item)
                .map(|(_, _, v)| *v)
                .collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        })
        .collect()
}

/// Krippendorff's guideline (2004, section 11.3), in one line.
pub(crate) fn alpha_reading(alpha: Option<f64>) -> String {
    match alpha {
        None => "not computable: no agreement to read".to_owned(),
        Some(a) if a >= 0.8 => "the judges agree well (α ≥ 0.8: reliable)".to_owned(),
        Some(a) if a >= 0.667 => {
            "the judges agree tentatively (0.667 ≤ α < 0.8: draw tentative conclusions only)"
                .to_owned()
        }
        Some(a) if a > 0.0 => {
            "the judges agree weakly (α < 0.667: the ranking is mostly the judges' disagreement)"
                .to_owned()
        }
        Some(_) => {
            "the judges agree no better than chance (α ≤ 0): read no ranking into these scores"
                .to_owned()
        }
    }
}

/// Pairs as α's units, each coded both ways: one unit for the brief-first participant's share
/// of the win and its mirror for the other's. Coding one way only made α depend on the order of
/// participants in brief.yaml (the shares' overall mean moved with it); with both, the units are
/// the same set whatever the order. Doubling every unit leaves the observed disagreement as it
/// was.
pub(crate) fn pair_units(pairs: &[&PairOutcome], judges: &[String]) -> Vec<Vec<Option<f64>>> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for p in pairs {
        if !keys.contains(&(p.a.as_str(), p.b.as_str())) {
            keys.push((p.a.as_str(), p.b.as_str()));
        }
    }
    let mut units = Vec::new();
    for (a, b) in keys {
        let shares: Vec<Option<f64>> = judges
            .iter()
            .map(|judge| {
                pairs
                    .iter()
                    .find(|p| &p.judge == judge && p.a == a && p.b == b)
                    .map(|p| share(p.outcome))
            })
            .collect();
        units.push(shares.iter().map(|s| s.map(|s| 1.0 - s)).collect());
        units.push(shares);
    }
    units
}
