//! Aggregation: from the scores read to a ranked report (docs/BEHAVIOR.md §6.3, with §10.16
//! fixed).
//!
//! Pure and deterministic: the same input gives the same report, whatever the order of a hash
//! map or the time of day. A participant without an accepted score is unscored, never ranked
//! as 0.

use serde_json::Value;

use super::input::{JudgeScores, ReportInput, Usage};
use super::jury;
use super::model::{
    ExcludedPair, JudgeMetrics, JudgeSection, PairScore, RejectedPair, Report, Standing,
};
use super::score::score;
use crate::brief::{Brief, JudgingPolicy, Rubric};

/// Aggregates the scores read into a ranked report.
pub fn aggregate(input: &ReportInput, brief: &Brief) -> Report {
    let judge_result = input.judge_result.as_ref();
    let policy = judge_result
        .and_then(|r| r.policy.as_deref())
        .and_then(JudgingPolicy::parse)
        .unwrap_or(brief.judging.policy);
    let excluded = excluded_pairs(input, brief, policy);
    let mut tally = Tally {
        accepted: vec![Vec::new(); brief.participants.len()],
        ..Tally::default()
    };
    for scores in &input.scores {
        tally.add_judge(scores, brief, &excluded);
    }
    for verdicts in &input.verdicts {
        tally.breakdown.push(JudgeSection::Scored {
            judge: verdicts.judge.clone(),
            entries: Vec::new(),
            review: verdicts.review.clone(),
        });
    }
    tally.add_judge_step(input);
    let pairwise = input.judge_result.as_ref().and_then(|r| r.mode.as_deref()) == Some("pairwise");
    let (jury, pairwise_scores) = if pairwise {
        let (jury, scores) = jury::pairwise_jury(input, brief);
        (jury, Some(scores))
    } else {
        let jury = jury::rubric_jury(input, brief, &tally.counted, &tally.self_judged);
        (jury, None)
    };
    let judge_metrics = judge_metrics_of(input);
    let standings = match &pairwise_scores {
        Some(scores) => pairwise_standings(input, brief, scores, &jury),
        None => standings(input, brief, &tally.accepted, &jury),
    };
    let verification = verification_of(input, brief, &standings);
    let jury_pcts: Vec<(String, Option<f64>)> = standings
        .iter()
        .map(|s| (s.participant.clone(), s.score_pct))
        .collect();
    let rewards = super::rewards::build(brief, &input.rewards, &jury_pcts);
    Report {
        spend: super::spend::rows(input, brief),
        cook: input.cook.clone(),
        round: input.round,
        generated_at: judge_result
            .and_then(|r| r.finished_at.clone())
            .or_else(|| input.run_finished_at.clone()),
        policy,
        has_rubric: brief
            .rubric
            .as_ref()
            .is_some_and(|r| !r.dimensions.is_empty()),
        judges_used: input
            .scores
            .iter()
            .map(|s| s.judge.clone())
            .chain(input.verdicts.iter().map(|v| v.judge.clone()))
            .collect(),
        standings,
        breakdown: tally.breakdown,
        judge_run: judge_result
            .map(|r| r.raw_judges.clone())
            .unwrap_or_default(),
        judge_totals: totals(judge_metrics.iter().map(|m| m.usage)),
        judge_metrics,
        excluded,
        rejected: tally.rejected,
        run_totals: totals(input.run_entries.iter().map(|e| e.usage)),
        usage_totals: input.usage_totals.clone(),
        injection_flags: input.injection_flags.clone(),
        egress: brief
            .participants
            .iter()
            .filter_map(|p| {
                let entry = input.run_entries.iter().find(|e| e.name == p.name)?;
                let (mode, canary) = entry.egress.clone()?;
                Some((p.name.clone(), mode, canary))
            })
            .collect(),
        sandbox_passed: input.sandbox_passed,
        cli_versions: input.cli_versions.clone(),
        web_tools: brief
            .participants
            .iter()
            .filter(|p| {
                input
                    .run_entries
                    .iter()
                    .any(|e| e.name == p.name && e.web_tools)
            })
            .map(|p| p.name.clone())
            .collect(),
        jury,
        verification,
        rewards,
        null_checks: super::calibration::null_checks(input, brief),
    }
}

/// Each judge run's status, time and usage, from the judge step's result.
fn judge_metrics_of(input: &ReportInput) -> Vec<JudgeMetrics> {
    input
        .judge_result
        .as_ref()
        .map_or(&[][..], |r| r.judges.as_slice())
        .iter()
        .map(|run| JudgeMetrics {
            judge: run.name.clone(),
            status: run.status.clone(),
            duration_s: run.duration_s,
            usage: run.usage,
        })
        .collect()
}

/// The hidden tests beside the jury's scores.
fn verification_of(
    input: &ReportInput,
    brief: &Brief,
    standings: &[Standing],
) -> Option<super::verification::VerificationReport> {
    let jury: Vec<(String, Option<f64>)> = standings
        .iter()
        .map(|s| (s.participant.clone(), s.score_pct))
        .collect();
    super::verification::build(brief, &input.verifications, &jury)
}

/// What the judges' scores add up to, collected judge by judge.
#[derive(Default)]
struct Tally {
    /// Accepted scores per brief participant (brief order).
    accepted: Vec<Vec<f64>>,
    /// The same scores with their judge, for the statistics.
    counted: Vec<jury::Scored>,
    /// Scores of a judge's own flavor, never counted (self-preference runs).
    self_judged: Vec<jury::Scored>,
    rejected: Vec<RejectedPair>,
    breakdown: Vec<JudgeSection>,
}

impl Tally {
    /// Scores one judge's entries; counts those of brief participants that are neither
    /// excluded nor rejected.
    fn add_judge(&mut self, scores: &JudgeScores, brief: &Brief, excluded: &[ExcludedPair]) {
        let entries = judge_entries(scores, brief, excluded);
        for entry in &entries {
            let Some(index) = brief.participants.iter().position(|p| p.name == entry.key) else {
                continue;
            };
            if entry.excluded {
                if let Some(pct) = entry.score_pct {
                    self.self_judged.push((scores.judge.clone(), index, pct));
                }
                continue;
            }
            match (entry.score_pct, &entry.rejected) {
                (Some(pct), _) => {
                    self.accepted[index].push(pct);
                    self.counted.push((scores.judge.clone(), index, pct));
                }
                (None, Some(reason)) => self.reject(&scores.judge, &entry.key, reason),
                (None, None) => {}
            }
        }
        self.breakdown.push(JudgeSection::Scored {
            judge: scores.judge.clone(),
            entries,
            review: scores.review.clone(),
        });
    }

    /// Adds what the judge step recorded: its rejections, and a section for each judge that
    /// produced no usable scores.
    fn add_judge_step(&mut self, input: &ReportInput) {
        let runs = input
            .judge_result
            .as_ref()
            .map_or(&[][..], |r| r.judges.as_slice());
        for run in runs {
            for (participant, reason) in &run.rejected {
                self.reject(&run.name, participant, reason);
            }
            if !input.scores.iter().any(|s| s.judge == run.name)
                && !input.verdicts.iter().any(|v| v.judge == run.name)
            {
                let skipped = input
                    .skipped
                    .iter()
                    .find(|s| s.judge == run.name)
                    .map(|s| s.reason.clone());
                let status = run.status.clone().unwrap_or_else(|| "?".to_owned());
                let reason = run.reason.clone().or(skipped);
                self.breakdown.push(JudgeSection::NoScores {
                    judge: run.name.clone(),
                    status,
                    reason,
                });
            }
        }
    }

    /// Records a rejection once.
    fn reject(&mut self, judge: &str, participant: &str, reason: &str) {
        let pair = RejectedPair {
            judge: judge.to_owned(),
            participant: participant.to_owned(),
            reason: reason.to_owned(),
        };
        if !self.rejected.contains(&pair) {
            self.rejected.push(pair);
        }
    }
}

/// Same-flavor pairs of the judges used and the brief's participants, under
/// `require_distinct_flavor` only, and for vendors only (see [`crate::flavor::is_vendor`]).
fn excluded_pairs(input: &ReportInput, brief: &Brief, policy: JudgingPolicy) -> Vec<ExcludedPair> {
    if policy != JudgingPolicy::RequireDistinctFlavor {
        return Vec::new();
    }
    let mut pairs = Vec::new();
    for scores in &input.scores {
        let Some(judge) = brief.judges.iter().find(|j| j.name == scores.judge) else {
            continue;
        };
        if !crate::flavor::is_vendor(&judge.flavor) {
            continue;
        }
        for participant in brief
            .participants
            .iter()
            .filter(|p| p.flavor == judge.flavor)
        {
            pairs.push(ExcludedPair {
                judge: judge.name.clone(),
                participant: participant.name.clone(),
                flavor: judge.flavor.clone(),
            });
        }
    }
    pairs
}

/// One judge's lines: brief participants in brief order, then unknown keys sorted.
fn judge_entries(scores: &JudgeScores, brief: &Brief, excluded: &[ExcludedPair]) -> Vec<PairScore> {
    let mut keys: Vec<&String> = brief
        .participants
        .iter()
        .map(|p| &p.name)
        .filter(|n| scores.entries.contains_key(*n))
        .collect();
    let mut unknown: Vec<&String> = scores
        .entries
        .keys()
        .filter(|k| brief.participant(k).is_none())
        .collect();
    unknown.sort();
    keys.extend(unknown);
    keys.into_iter()
        .map(|key| {
            let dimensions = &scores.entries[key];
            let result = score(dimensions, brief.rubric.as_ref());
            PairScore {
                key: key.clone(),
                dimensions: ordered_dimensions(dimensions, brief.rubric.as_ref()),
                score_pct: result.as_ref().ok().copied(),
                excluded: excluded
                    .iter()
                    .any(|e| e.judge == scores.judge && &e.participant == key),
                rejected: result.err(),
            }
        })
        .collect()
}

/// Rubric dimensions in rubric order, then the others sorted by name.
fn ordered_dimensions(
    dimensions: &indexmap::IndexMap<String, Value>,
    rubric: Option<&Rubric>,
) -> Vec<(String, Value)> {
    let rubric_ids: Vec<&str> = rubric
        .map(|r| r.dimensions.iter().map(|d| d.id.as_str()).collect())
        .unwrap_or_default();
    let mut ordered: Vec<(String, Value)> = rubric_ids
        .iter()
        .filter_map(|id| dimensions.get_key_value(*id))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut others: Vec<(String, Value)> = dimensions
        .iter()
        .filter(|(k, _)| !rubric_ids.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    others.sort_by(|a, b| a.0.cmp(&b.0));
    ordered.extend(others);
    ordered
}

/// Ranked participants by score (identical scores in brief order), then unscored ones.
fn standings(
    input: &ReportInput,
    brief: &Brief,
    accepted: &[Vec<f64>],
    jury: &jury::Jury,
) -> Vec<Standing> {
    let mut all: Vec<Standing> = brief
        .participants
        .iter()
        .zip(accepted)
        .map(|(participant, scores)| unranked(input, participant, mean(scores), scores.len()))
        .collect();
    rank(&mut all, jury);
    all
}

/// Pairwise mode: ranked by Bradley–Terry percent; `num_judges` counts judges whose verdicts
/// involve the participant.
fn pairwise_standings(
    input: &ReportInput,
    brief: &Brief,
    scores: &[Option<f64>],
    jury: &jury::Jury,
) -> Vec<Standing> {
    let mut all: Vec<Standing> = brief
        .participants
        .iter()
        .enumerate()
        .map(|(i, participant)| {
            let judges = jury
                .coverage
                .iter()
                .find(|c| c.participant == participant.name)
                .map_or(0, |c| c.scored_by);
            let score = scores.get(i).copied().flatten().filter(|_| judges > 0);
            unranked(input, participant, score, judges)
        })
        .collect();
    rank(&mut all, jury);
    all
}

/// A participant's line before ranking, with its run entry.
fn unranked(
    input: &ReportInput,
    participant: &crate::brief::Actor,
    score: Option<f64>,
    judges: usize,
) -> Standing {
    Standing {
        rank: None,
        rank_best: None,
        rank_worst: None,
        rank_single: false,
        participant: participant.name.clone(),
        flavor: participant.flavor.clone(),
        mean_pct: score,
        score_pct: None,
        num_judges: judges,
        run: input
            .run_entries
            .iter()
            .find(|e| e.name == participant.name)
            .cloned(),
    }
}

/// Takes each scored participant's rank and score from the jury's estimates and sorts by score
/// (docs/RANKING.md §6: identical scores and the unscored in brief order). A scored
/// participant without an estimate (judges that share nobody, so no model connects them) has
/// no test to separate it: such participants share one group, rank 1=, each ranging over all
/// of them.
fn rank(all: &mut [Standing], jury: &jury::Jury) {
    for standing in all.iter_mut().filter(|s| s.mean_pct.is_some()) {
        if let Some(e) = jury
            .statistics
            .estimates
            .iter()
            .find(|e| e.participant == standing.participant)
        {
            standing.score_pct = Some(e.estimate);
            standing.rank = Some(e.rank);
            standing.rank_best = Some(e.rank_best);
            standing.rank_worst = Some(e.rank_worst);
            standing.rank_single = e.rank_single;
        } else {
            standing.score_pct = standing.mean_pct;
        }
    }
    let unmodelled = all
        .iter()
        .filter(|s| s.rank.is_none() && s.score_pct.is_some())
        .count();
    for standing in all.iter_mut().filter(|s| s.rank.is_none()) {
        if standing.score_pct.is_some() {
            standing.rank = Some(1);
            standing.rank_best = Some(1);
            standing.rank_worst = Some(unmodelled);
            standing.rank_single = true;
        }
    }
    all.sort_by(|a, b| match (a.score_pct, b.score_pct) {
        (Some(x), Some(y)) => super::ranking::by_score(y, x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}

#[expect(clippy::cast_precision_loss, reason = "a handful of judges")]
fn mean(scores: &[f64]) -> Option<f64> {
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// Sums usage over entries; `None` when no entry has usage. A figure no entry has stays `None`.
fn totals(usages: impl Iterator<Item = Option<Usage>>) -> Option<Usage> {
    let mut sum: Option<Usage> = None;
    for usage in usages.flatten() {
        let total = sum.get_or_insert_with(Usage::default);
        if let Some(tokens) = usage.tokens {
            total.tokens = Some(total.tokens.unwrap_or(0).saturating_add(tokens));
        }
        if let Some(cost) = usage.cost_usd {
            total.cost_usd = Some(total.cost_usd.unwrap_or(0.0) + cost);
        }
    }
    sum
}
