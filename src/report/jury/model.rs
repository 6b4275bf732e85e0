//! The jury's data: what the report says about how far the judges can be trusted. Built by the
//! jury module's `rubric_jury` and `pairwise_jury`, read by the renderers; no logic here.

use indexmap::IndexMap;

use super::{Consistency, Length};
use crate::brief::JudgingMode;

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
    pub length: Option<Length>,
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
    /// Ranked estimates, best score first (identical scores in brief order).
    pub estimates: Vec<Estimate>,
    /// Groups in score order, every cross pair of which is separated, best first; `None` when
    /// no pair could be tested.
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
    /// Competition rank of its group (`mc_stats::RankRange`): 1 + participants in better
    /// groups, a group ending only where every cross pair is separated.
    pub rank: usize,
    /// Best rank its paired tests allow.
    pub rank_best: usize,
    /// Worst rank its paired tests allow.
    pub rank_worst: usize,
    /// Its group's members are all unseparated, so `rank` is a true competition rank; when
    /// false only the range is printed.
    pub rank_single: bool,
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
    pub judges_consistency: Vec<Consistency>,
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
    /// The smallest p-value this cook's vendor counts allow (every guess right):
    /// `prod n_v! / n!`, never below the permutations' floor.
    pub smallest_p: Option<f64>,
    /// When even that is not below 0.05: how many submissions (vendors as evenly split) a
    /// verdict would need; `None` when it can reach one, or with a single vendor (never).
    pub needed: Option<usize>,
}

/// One counted score: (judge, participant index in the brief, percent).
pub type Scored = (String, usize, f64);
