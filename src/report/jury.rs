//! How far the jury can be trusted: leniency-adjusted estimates with small-sample intervals,
//! paired separation and ranks (`super::ranking`), agreement, coverage, position consistency
//! (pairwise), self-preference, the blinding probe and length (`super::probes`). Pure and
//! seeded: the same cook folder gives the same numbers (the seed is the judge run's, recorded in
//! summary.json as a string).
//!
//! Within one cook the clusters are the judges: each interval is a delete-one-judge jackknife
//! t interval with `judges - 1` degrees of freedom, each separation a paired test over judges.
//! A nightly run pools cooks with briefs as clusters (`crate::nightly`).

use indexmap::IndexMap;
use mc_stats::{Cell, Comparison, Shape};

use super::input::{JudgeVerdicts, ReportInput};
use super::probes;
pub use super::probes::{Consistency, Length};
use super::ranking;
use crate::brief::{Brief, JudgingMode};

/// Interval coverage.
pub const LEVEL: f64 = 0.95;

/// Everything the report says about the jury.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jury {
    /// Rubric scores or pairwise verdicts.
    pub mode: JudgingMode,
    /// Estimates with intervals, and tied groups.
    pub statistics: Statistics,
    /// Agreement between judges.
    pub agreement: Agreement,
    /// Who could have scored each participant, and who did.
    pub coverage: Vec<Coverage>,
    /// Pairwise mode: every verdict and every pair's outcome.
    pub pairwise: Option<Pairwise>,
    /// Self-preference per judge (opt-in).
    pub self_preference: Vec<SelfPreference>,
    /// Blinding probe per judge (opt-in).
    pub blinding: Vec<Blinding>,
    /// What normalization stripped before judging, per participant.
    pub normalized: IndexMap<String, Vec<String>>,
    /// How far the judges' scores follow output size (rubric mode, sizes known).
    pub length: Option<probes::Length>,
}

/// The estimates and how they were made.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Statistics {
    /// `additive+cluster_jackknife_t` or `bradley_terry+cluster_jackknife_t`.
    pub method: &'static str,
    /// Jackknife replicates: one fit without each judge.
    pub resamples: usize,
    /// Interval coverage.
    pub level: f64,
    /// The judge run's seed (label shuffles; the blinding probe's permutations).
    pub seed: u64,
    /// Judges whose scores count (the clusters).
    pub clusters: usize,
    /// Ranked estimates: by rank, then estimate.
    pub estimates: Vec<Estimate>,
    /// Participants of equal rank (nothing separates them from the same betters), best first;
    /// `None` when no pair could be tested.
    pub tied_groups: Option<Vec<Vec<String>>>,
    /// Every tested pair: the paired difference, Holm-adjusted p-value, separated or not.
    pub pairs: Vec<PairSeparation>,
    /// Each judge's leniency (rubric: points above the average judge).
    pub leniency: Vec<Leniency>,
    /// Why intervals or separations are missing, if they are.
    pub note: Option<String>,
    /// What few judges mean for these intervals, when they are few.
    pub caveat: Option<String>,
}

/// One participant's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Participant name.
    pub participant: String,
    /// Percent: leniency-adjusted score (rubric) or P(beats an average participant) (pairwise).
    pub estimate: f64,
    /// Rubric: the plain mean of its counted scores (what the adjustment started from).
    pub plain: Option<f64>,
    /// Jackknife t interval, when at least two judges contribute and they differ.
    pub lo: Option<f64>,
    /// Jackknife t interval, when at least two judges contribute and they differ.
    pub hi: Option<f64>,
    /// Degrees of freedom of the interval (0 without one).
    pub df: usize,
    /// Judges contributing.
    pub clusters: usize,
    /// Competition rank: 1 + participants separated from it and better.
    pub rank: usize,
    /// Worst rank the paired tests allow.
    pub rank_worst: usize,
    /// Size of its sealed output in bytes.
    pub output_bytes: Option<u64>,
    /// Rubric, sizes known: the estimate with the panel's size slope taken out.
    pub length_controlled: Option<f64>,
}

/// A tested pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSeparation {
    /// The better-estimated participant.
    pub a: String,
    /// The other.
    pub b: String,
    /// `a - b` (rubric: points; pairwise: log-odds of beating each other).
    pub difference: f64,
    /// Interval of the difference.
    pub lo: Option<f64>,
    /// Interval of the difference.
    pub hi: Option<f64>,
    /// Holm-adjusted p-value.
    pub p_adjusted: Option<f64>,
    /// Told apart at the report's level.
    pub separated: bool,
}

/// A judge's leniency.
#[derive(Debug, Clone, PartialEq)]
pub struct Leniency {
    /// Judge name.
    pub judge: String,
    /// Points it gives above (below, if negative) the average judge of this panel, the same
    /// work held fixed. Shown without an interval: a judge's own leniency cannot be resampled
    /// over judges.
    pub effect: f64,
}

/// Agreement between judges.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Agreement {
    /// Krippendorff's α (interval metric) over scores (rubric) or pair outcomes (pairwise).
    pub alpha: Option<f64>,
    /// Units α is computed over (participants, or pairs).
    pub units: usize,
    /// Judges contributing.
    pub judges: usize,
    /// Share of pairs judged in both orders whose two verdicts agree (pairwise).
    pub position_consistency: Option<f64>,
    /// Pairs judged in both orders.
    pub pairs_both_orders: usize,
    /// Of those, pairs whose verdicts disagree (counted as ties).
    pub position_inconsistent: usize,
    /// One line on what α says.
    pub reading: String,
    /// Pairwise: each judge's position consistency.
    pub judges_consistency: Vec<probes::Consistency>,
}

/// One participant's coverage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Participant name.
    pub participant: String,
    /// Judges whose score or verdict of it counts.
    pub scored_by: usize,
    /// Judges that ran and were allowed to count it.
    pub eligible: usize,
    /// Why some eligible judge did not count, if any did not.
    pub reason: Option<String>,
}

/// Pairwise verdicts and outcomes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pairwise {
    /// `(judge, first, second, winner)`; `None` is a tie.
    pub verdicts: Vec<(String, String, String, Option<String>)>,
    /// One outcome per judge and unordered pair.
    pub pairs: Vec<PairOutcome>,
}

/// A pair's outcome for one judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairOutcome {
    /// Judge name.
    pub judge: String,
    /// One participant (brief order first).
    pub a: String,
    /// The other.
    pub b: String,
    /// `a`, `b` or `tie`.
    pub outcome: &'static str,
    /// Both orders agree; `None` when only one order has a verdict.
    pub consistent: Option<bool>,
}

/// A judge's self-preference.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfPreference {
    /// Judge name.
    pub judge: String,
    /// Its flavor.
    pub flavor: String,
    /// Its mean score of its own flavor's participants.
    pub self_mean_pct: f64,
    /// The other judges' mean score of the same participants.
    pub others_mean_pct: Option<f64>,
    /// Difference in differences: how much more it favours its own flavor than the other
    /// judges do, minus how much more it favours everyone else (its plain leniency).
    pub delta_pct: Option<f64>,
    /// Interval of the difference in differences.
    pub lo: Option<f64>,
    /// Interval of the difference in differences.
    pub hi: Option<f64>,
    /// Self-judgments.
    pub n: usize,
    /// Participants of other flavors it scored beside other judges (the leniency baseline).
    pub baseline: usize,
}

/// A judge's blinding-probe result.
#[derive(Debug, Clone, PartialEq)]
pub struct Blinding {
    /// Judge name.
    pub judge: String,
    /// Submissions guessed (one guess each: the judge's most frequent guess for it).
    pub guesses: usize,
    /// Guesses as made (pairwise judges guess once per comparison).
    pub raw_guesses: usize,
    /// Right guesses.
    pub hits: usize,
    /// Hit rate of the best constant guess: the largest vendor's share of the submissions.
    pub chance: f64,
    /// `hits / guesses`.
    pub hit_rate: Option<f64>,
    /// Permutation p-value: P(a random relabelling of the vendors matches as many guesses).
    pub p_value: Option<f64>,
}

/// One counted score: (judge, participant index in the brief, percent).
pub type Scored = (String, usize, f64);

/// The rubric-mode jury from the counted scores and the self-judged ones.
pub fn rubric_jury(
    input: &ReportInput,
    brief: &Brief,
    counted: &[Scored],
    self_judged: &[Scored],
) -> Jury {
    let judges = judge_names(counted.iter().map(|(j, _, _)| j));
    let items = brief.participants.len();
    let cells: Vec<Cell> = counted
        .iter()
        .map(|(judge, item, value)| Cell {
            item: *item,
            levels: vec![index_of(&judges, judge)],
            covariate: 0.0,
            value: *value,
        })
        .collect();
    let shape = Shape {
        items,
        levels: vec![judges.len()],
        slope: false,
    };
    let units: Vec<Vec<Option<f64>>> = (0..items)
        .map(|item| {
            judges
                .iter()
                .map(|judge| {
                    counted
                        .iter()
                        .find(|(j, i, _)| j == judge && *i == item)
                        .map(|(_, _, v)| *v)
                })
                .collect()
        })
        .collect();
    let scored_by: Vec<usize> = (0..items)
        .map(|item| counted.iter().filter(|(_, i, _)| *i == item).count())
        .collect();
    let fitted = mc_stats::additive_ranking(&cells, &shape, LEVEL);
    let mut statistics = ranking::statistics(
        &ranking::Inputs {
            method: "additive+cluster_jackknife_t",
            seed: seed(input),
            brief,
            judges: &judges,
            scored_by: &scored_by,
            output_bytes: &input.output_bytes,
        },
        fitted.as_ref(),
        &ranking::plain_means(counted, items),
    );
    let length = probes::length(brief, counted, &input.output_bytes, &mut statistics);
    let alpha = alpha(&units);
    Jury {
        mode: JudgingMode::Rubric,
        statistics,
        agreement: Agreement {
            alpha,
            units: pairable(&units),
            judges: judges.len(),
            reading: ranking::alpha_reading(alpha),
            ..Agreement::default()
        },
        coverage: coverage(input, brief, &scored_by),
        pairwise: None,
        self_preference: probes::self_preference(input, brief, counted, self_judged),
        blinding: probes::blinding(&input.guesses, seed(input)),
        normalized: input.normalized.clone(),
        length,
    }
}

/// The pairwise-mode jury; also returns each participant's Bradley–Terry percent, the
/// ranking's score.
pub fn pairwise_jury(input: &ReportInput, brief: &Brief) -> (Jury, Vec<Option<f64>>) {
    let index = |name: &str| brief.participants.iter().position(|p| p.name == name);
    let mut pairwise = Pairwise::default();
    for judge in &input.verdicts {
        for (first, second, winner) in &judge.verdicts {
            pairwise.verdicts.push((
                judge.judge.clone(),
                first.clone(),
                second.clone(),
                winner.clone(),
            ));
        }
        pairwise.pairs.extend(pair_outcomes(judge, &index));
    }
    let consistency = probes::consistency(
        &pairwise,
        &input.verdicts,
        brief.judging.exclude_inconsistent_judges,
    );
    let excluded: Vec<&str> = consistency
        .iter()
        .filter(|c| c.excluded)
        .map(|c| c.judge.as_str())
        .collect();
    let counted: Vec<&PairOutcome> = pairwise
        .pairs
        .iter()
        .filter(|p| !excluded.contains(&p.judge.as_str()))
        .collect();
    let judges = judge_names(counted.iter().map(|p| &p.judge));
    let comparisons: Vec<Comparison> = counted
        .iter()
        .filter_map(|pair| {
            Some(Comparison {
                cluster: index_of(&judges, &pair.judge),
                a: index(&pair.a)?,
                b: index(&pair.b)?,
                score_a: share(pair.outcome),
            })
        })
        .collect();
    let items = brief.participants.len();
    let fitted = mc_stats::bradley_terry_ranking(&comparisons, items, LEVEL);
    let both: Vec<bool> = pairwise.pairs.iter().filter_map(|p| p.consistent).collect();
    let inconsistent = both.iter().filter(|c| !**c).count();
    let mut scored_by = vec![0; items];
    for (item, count) in scored_by.iter_mut().enumerate() {
        let mut by: Vec<usize> = comparisons
            .iter()
            .filter(|c| c.a == item || c.b == item)
            .map(|c| c.cluster)
            .collect();
        by.sort_unstable();
        by.dedup();
        *count = by.len();
    }
    let units = ranking::pair_units(&counted, &judges);
    let statistics = ranking::statistics(
        &ranking::Inputs {
            method: "bradley_terry+cluster_jackknife_t",
            seed: seed(input),
            brief,
            judges: &judges,
            scored_by: &scored_by,
            output_bytes: &input.output_bytes,
        },
        fitted.as_ref(),
        &vec![None; items],
    );
    let scores = statistics_scores(&statistics, brief);
    let alpha = alpha(&units);
    let jury = Jury {
        mode: JudgingMode::Pairwise,
        statistics,
        agreement: Agreement {
            alpha,
            units: pairable(&units),
            judges: judges.len(),
            position_consistency: ratio(both.len() - inconsistent, both.len()),
            pairs_both_orders: both.len(),
            position_inconsistent: inconsistent,
            reading: ranking::alpha_reading(alpha),
            judges_consistency: consistency,
        },
        coverage: coverage(input, brief, &scored_by),
        pairwise: Some(pairwise),
        self_preference: Vec::new(),
        blinding: probes::blinding(&input.guesses, seed(input)),
        normalized: input.normalized.clone(),
        length: None,
    };
    (jury, scores)
}

/// Each brief participant's estimate, in brief order.
fn statistics_scores(statistics: &Statistics, brief: &Brief) -> Vec<Option<f64>> {
    brief
        .participants
        .iter()
        .map(|p| {
            statistics
                .estimates
                .iter()
                .find(|e| e.participant == p.name)
                .map(|e| e.estimate)
        })
        .collect()
}

/// `a`'s share of a pair outcome.
pub(super) fn share(outcome: &str) -> f64 {
    match outcome {
        "a" => 1.0,
        "b" => 0.0,
        _ => 0.5,
    }
}

fn seed(input: &ReportInput) -> u64 {
    input
        .judge_result
        .as_ref()
        .and_then(|r| r.seed)
        .unwrap_or(0)
}

/// One judge's outcome per unordered pair: both orders agreeing give the winner, disagreeing
/// give a tie (a position inconsistency).
fn pair_outcomes(
    judge: &JudgeVerdicts,
    index: &impl Fn(&str) -> Option<usize>,
) -> Vec<PairOutcome> {
    let mut pairs: IndexMap<(String, String), Vec<Option<String>>> = IndexMap::new();
    for (first, second, winner) in &judge.verdicts {
        let (a, b) = match (index(first), index(second)) {
            (Some(x), Some(y)) if y < x => (second.clone(), first.clone()),
            _ => (first.clone(), second.clone()),
        };
        pairs.entry((a, b)).or_default().push(winner.clone());
    }
    pairs
        .into_iter()
        .map(|((a, b), winners)| {
            let word = |w: &Option<String>| match w.as_deref() {
                Some(w) if w == a => "a",
                Some(w) if w == b => "b",
                _ => "tie",
            };
            let consistent = (winners.len() >= 2).then(|| winners.iter().all(|w| w == &winners[0]));
            let outcome = if consistent == Some(false) {
                "tie"
            } else {
                word(&winners[0])
            };
            PairOutcome {
                judge: judge.judge.clone(),
                a,
                b,
                outcome,
                consistent,
            }
        })
        .collect()
}

/// Who was allowed to count each participant, who did, and why the others did not.
fn coverage(input: &ReportInput, brief: &Brief, scored_by: &[usize]) -> Vec<Coverage> {
    let runs = input
        .judge_result
        .as_ref()
        .map_or(&[][..], |r| r.judges.as_slice());
    let raw = input
        .judge_result
        .as_ref()
        .map_or(&[][..], |r| r.raw_judges.as_slice());
    let self_preference = input
        .judge_result
        .as_ref()
        .is_some_and(|r| r.self_preference);
    brief
        .participants
        .iter()
        .enumerate()
        .map(|(index, participant)| {
            let allowed: Vec<&super::input::JudgeRun> = runs
                .iter()
                .zip(raw)
                .filter(|(run, raw)| {
                    let excluded = raw
                        .get("excluded")
                        .and_then(serde_json::Value::as_array)
                        .is_some_and(|e| e.iter().any(|p| p == participant.name.as_str()));
                    let own = self_preference
                        && brief
                            .judge(&run.name)
                            .is_some_and(|j| j.flavor == participant.flavor);
                    !excluded && !own
                })
                .map(|(run, _)| run)
                .collect();
            let eligible = allowed.len();
            let scored = scored_by.get(index).copied().unwrap_or(0);
            let run_status = input
                .run_entries
                .iter()
                .find(|e| e.name == participant.name)
                .and_then(|e| e.status.clone());
            let reason = (scored < eligible).then(|| {
                let failed: Vec<String> = allowed
                    .iter()
                    .filter(|run| run.status.as_deref() != Some("ok"))
                    .map(|run| format!("{}: {}", run.name, run.status.as_deref().unwrap_or("?")))
                    .collect();
                match run_status.as_deref() {
                    Some(status) if status != "ok" => format!("its run ended `{status}`"),
                    _ if !failed.is_empty() => {
                        format!("judges without usable output ({})", failed.join(", "))
                    }
                    _ => "some judges' scores of it were rejected or missing".to_owned(),
                }
            });
            Coverage {
                participant: participant.name.clone(),
                scored_by: scored,
                eligible,
                reason,
            }
        })
        .collect()
}

/// Units with at least two values.
fn pairable(units: &[Vec<Option<f64>>]) -> usize {
    units
        .iter()
        .filter(|u| u.iter().flatten().count() >= 2)
        .count()
}

/// Krippendorff's α, when at least two units are pairable (one unit says nothing about
/// agreement beyond chance).
fn alpha(units: &[Vec<Option<f64>>]) -> Option<f64> {
    (pairable(units) >= 2)
        .then(|| mc_stats::krippendorff_alpha_interval(units))
        .flatten()
}

/// Distinct names, sorted.
pub(super) fn judge_names<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut names: Vec<String> = names.cloned().collect();
    names.sort();
    names.dedup();
    names
}

pub(super) fn index_of(names: &[String], name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or(usize::MAX)
}

#[expect(clippy::cast_precision_loss, reason = "small counts")]
pub(super) fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_orders_agreeing_give_the_winner_disagreeing_give_a_tie() {
        let names = ["p", "q", "r"];
        let index = |n: &str| names.iter().position(|x| *x == n);
        let v =
            |a: &str, b: &str, w: Option<&str>| (a.to_owned(), b.to_owned(), w.map(str::to_owned));
        let judge = JudgeVerdicts {
            judge: "j".into(),
            verdicts: vec![
                v("p", "q", Some("q")),
                v("q", "p", Some("q")),
                v("r", "p", Some("r")),
                v("p", "r", None),
                v("q", "r", Some("q")),
            ],
            review: None,
        };
        let pairs = pair_outcomes(&judge, &index);
        let outcomes: Vec<(&str, &str, &str, Option<bool>)> = pairs
            .iter()
            .map(|o| (o.a.as_str(), o.b.as_str(), o.outcome, o.consistent))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("p", "q", "b", Some(true)),
                ("p", "r", "tie", Some(false)),
                ("q", "r", "a", None),
            ],
            "a win against a tie is a disagreement; one order alone is not a consistency check"
        );
    }
}
