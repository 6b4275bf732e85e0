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

pub use model::{
    Agreement, Blinding, Coverage, Estimate, Jury, Leniency, PairOutcome, PairSeparation, Pairwise,
    Scored, SelfPreference, Statistics,
};

mod model;

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
