//! How far the jury can be trusted: intervals, tied groups, agreement, coverage, position
//! consistency (pairwise), self-preference and the blinding probe. Pure and seeded: the same
//! cook folder gives the same numbers (the seed is the judge run's, recorded in summary.json).
//!
//! Within one cook the bootstrap's clusters are the judges: a judge's scores of all
//! participants are resampled together, never score by score. A nightly run pools cooks with
//! briefs as clusters (`crate::nightly`).

use indexmap::IndexMap;
use mc_stats::{Bootstrap, Comparison, Interval, Observation};

use super::input::{JudgeGuesses, JudgeVerdicts, ReportInput};
use crate::brief::{Brief, JudgingMode};

/// Bootstrap resamples.
pub const RESAMPLES: usize = 2000;
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
}

/// The estimates and how they were made.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Statistics {
    /// `mean+cluster_bootstrap` or `bradley_terry+cluster_bootstrap`.
    pub method: &'static str,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Interval coverage.
    pub level: f64,
    /// The bootstrap's seed.
    pub seed: u64,
    /// Ranked estimates, best first.
    pub estimates: Vec<Estimate>,
    /// Groups whose intervals overlap the group leader's, best first; `None` when some
    /// interval is missing.
    pub tied_groups: Option<Vec<Vec<String>>>,
    /// Why intervals or groups are missing, if they are.
    pub note: Option<String>,
}

/// One participant's estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Participant name.
    pub participant: String,
    /// Percent: mean score (rubric) or P(beats an average participant) (pairwise).
    pub estimate: f64,
    /// Interval, when at least two judges contribute.
    pub lo: Option<f64>,
    /// Interval, when at least two judges contribute.
    pub hi: Option<f64>,
    /// Judges contributing.
    pub clusters: usize,
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
    /// `self − others`.
    pub delta_pct: Option<f64>,
    /// Self-judgments.
    pub n: usize,
}

/// A judge's blinding-probe result.
#[derive(Debug, Clone, PartialEq)]
pub struct Blinding {
    /// Judge name.
    pub judge: String,
    /// Guesses made.
    pub guesses: usize,
    /// Right guesses.
    pub hits: usize,
    /// Hit rate of a blind guess: 1 / vendors.
    pub chance: f64,
    /// `hits / guesses`.
    pub hit_rate: Option<f64>,
    /// P(at least `hits` right by chance).
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
    let observations: Vec<Observation> = counted
        .iter()
        .map(|(judge, item, value)| Observation {
            cluster: index_of(&judges, judge),
            item: *item,
            value: *value,
        })
        .collect();
    let boot = bootstrap(input);
    let intervals = mc_stats::cluster_means(&observations, brief.participants.len(), &boot);
    let units: Vec<Vec<Option<f64>>> = (0..brief.participants.len())
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
    let scored_by: Vec<usize> = (0..brief.participants.len())
        .map(|item| counted.iter().filter(|(_, i, _)| *i == item).count())
        .collect();
    Jury {
        mode: JudgingMode::Rubric,
        statistics: statistics("mean+cluster_bootstrap", &boot, brief, &intervals),
        agreement: Agreement {
            alpha: alpha(&units),
            units: pairable(&units),
            judges: judges.len(),
            ..Agreement::default()
        },
        coverage: coverage(input, brief, &scored_by),
        pairwise: None,
        self_preference: self_preference(input, brief, counted, self_judged),
        blinding: blinding(&input.guesses),
        normalized: input.normalized.clone(),
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
    let judges = judge_names(pairwise.pairs.iter().map(|p| &p.judge));
    let comparisons: Vec<Comparison> = pairwise
        .pairs
        .iter()
        .filter_map(|pair| {
            Some(Comparison {
                cluster: index_of(&judges, &pair.judge),
                a: index(&pair.a)?,
                b: index(&pair.b)?,
                score_a: match pair.outcome {
                    "a" => 1.0,
                    "b" => 0.0,
                    _ => 0.5,
                },
            })
        })
        .collect();
    let boot = bootstrap(input);
    let items = brief.participants.len();
    let intervals = mc_stats::bradley_terry_bootstrap(&comparisons, items, &boot);
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
    let units = pair_units(&pairwise.pairs, &judges);
    let jury = Jury {
        mode: JudgingMode::Pairwise,
        statistics: statistics("bradley_terry+cluster_bootstrap", &boot, brief, &intervals),
        agreement: Agreement {
            alpha: alpha(&units),
            units: pairable(&units),
            judges: judges.len(),
            position_consistency: ratio(both.len() - inconsistent, both.len()),
            pairs_both_orders: both.len(),
            position_inconsistent: inconsistent,
        },
        coverage: coverage(input, brief, &scored_by),
        pairwise: Some(pairwise),
        self_preference: Vec::new(),
        blinding: blinding(&input.guesses),
        normalized: input.normalized.clone(),
    };
    let scores = intervals.iter().map(|i| i.map(|i| i.estimate)).collect();
    (jury, scores)
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

/// Pairs as α's units: the first participant's share of the win, per judge.
fn pair_units(pairs: &[PairOutcome], judges: &[String]) -> Vec<Vec<Option<f64>>> {
    let mut keys: Vec<(&str, &str)> = pairs.iter().map(|p| (p.a.as_str(), p.b.as_str())).collect();
    keys.dedup();
    let mut seen = Vec::new();
    keys.retain(|k| {
        let new = !seen.contains(k);
        seen.push(*k);
        new
    });
    keys.iter()
        .map(|(a, b)| {
            judges
                .iter()
                .map(|judge| {
                    pairs
                        .iter()
                        .find(|p| &p.judge == judge && p.a == *a && p.b == *b)
                        .map(|p| match p.outcome {
                            "a" => 1.0,
                            "b" => 0.0,
                            _ => 0.5,
                        })
                })
                .collect()
        })
        .collect()
}

fn bootstrap(input: &ReportInput) -> Bootstrap {
    Bootstrap {
        resamples: RESAMPLES,
        level: LEVEL,
        seed: input
            .judge_result
            .as_ref()
            .and_then(|r| r.seed)
            .unwrap_or(0),
    }
}

fn statistics(
    method: &'static str,
    boot: &Bootstrap,
    brief: &Brief,
    intervals: &[Option<Interval>],
) -> Statistics {
    let mut ranked: Vec<(usize, Interval)> = intervals
        .iter()
        .enumerate()
        .filter_map(|(i, interval)| Some((i, (*interval)?)))
        .collect();
    ranked.sort_by(|x, y| y.1.estimate.total_cmp(&x.1.estimate).then(x.0.cmp(&y.0)));
    let name = |i: usize| brief.participants[i].name.clone();
    let tied_groups = mc_stats::tied_groups(&ranked).map(|groups| {
        groups
            .into_iter()
            .map(|g| g.into_iter().map(name).collect())
            .collect()
    });
    let note = (tied_groups.is_none() && !ranked.is_empty()).then(|| {
        "an interval needs scores from at least 2 judges; with fewer, no tied groups are drawn"
            .to_owned()
    });
    Statistics {
        method,
        resamples: boot.resamples,
        level: boot.level,
        seed: boot.seed,
        estimates: ranked
            .iter()
            .map(|(i, interval)| Estimate {
                participant: name(*i),
                estimate: interval.estimate,
                lo: interval.lo,
                hi: interval.hi,
                clusters: interval.clusters,
            })
            .collect(),
        tied_groups,
        note,
    }
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

fn self_preference(
    input: &ReportInput,
    brief: &Brief,
    counted: &[Scored],
    self_judged: &[Scored],
) -> Vec<SelfPreference> {
    if !input
        .judge_result
        .as_ref()
        .is_some_and(|r| r.self_preference)
    {
        return Vec::new();
    }
    judge_names(self_judged.iter().map(|(j, _, _)| j))
        .into_iter()
        .filter_map(|judge| {
            let own: Vec<&Scored> = self_judged.iter().filter(|(j, _, _)| *j == judge).collect();
            let self_mean = mean(own.iter().map(|(_, _, v)| *v))?;
            let others = mean(
                counted
                    .iter()
                    .filter(|(j, i, _)| *j != judge && own.iter().any(|(_, o, _)| o == i))
                    .map(|(_, _, v)| *v),
            );
            Some(SelfPreference {
                flavor: brief
                    .judge(&judge)
                    .map(|j| j.flavor.clone())
                    .unwrap_or_default(),
                judge,
                self_mean_pct: self_mean,
                others_mean_pct: others,
                delta_pct: others.map(|o| self_mean - o),
                n: own.len(),
            })
        })
        .collect()
}

fn blinding(guesses: &[JudgeGuesses]) -> Vec<Blinding> {
    guesses
        .iter()
        .map(|judge| {
            let n = judge.guesses.len();
            let hits = judge.guesses.iter().filter(|(_, g, f)| g == f).count();
            #[expect(clippy::cast_precision_loss, reason = "a handful of vendors")]
            let chance = if judge.vendors == 0 {
                0.0
            } else {
                1.0 / judge.vendors as f64
            };
            Blinding {
                judge: judge.judge.clone(),
                guesses: n,
                hits,
                chance,
                hit_rate: ratio(hits, n),
                p_value: (n > 0 && judge.vendors > 0)
                    .then(|| mc_stats::binomial_upper_tail(hits as u64, n as u64, chance)),
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
fn judge_names<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut names: Vec<String> = names.cloned().collect();
    names.sort();
    names.dedup();
    names
}

fn index_of(names: &[String], name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or(usize::MAX)
}

#[expect(clippy::cast_precision_loss, reason = "small counts")]
fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[expect(clippy::cast_precision_loss, reason = "small counts")]
fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let values: Vec<f64> = values.collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
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
