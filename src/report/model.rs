//! The report's data: the ranking, each judge's section, and what was left out and why. Built
//! by [`aggregate`](super::aggregate), read by the renderers.

use serde_json::Value;

use super::input::{RunEntry, Usage};
use crate::brief::JudgingPolicy;

/// The aggregated result, ready to render.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The cook folder name.
    pub cook: String,
    /// Spend against budget: the cook's row (role `cook`), then each participant and judge.
    pub spend: Vec<crate::cell::spend_records::SpendRecord>,
    /// The latest round.
    pub round: u32,
    /// When the judging (else the run) finished; never the current time.
    pub generated_at: Option<String>,
    /// The anti-self-judge policy in force.
    pub policy: JudgingPolicy,
    /// Whether scores are weighted by a `brief.yaml` rubric.
    pub has_rubric: bool,
    /// Judges whose scores were read, sorted by name.
    pub judges_used: Vec<String>,
    /// Ranked participants by mean descending, then unscored ones in brief order.
    pub standings: Vec<Standing>,
    /// One section per judge: used judges first, then judges that produced no usable scores.
    pub breakdown: Vec<JudgeSection>,
    /// `JUDGE_RESULT.json` `judges`, as written.
    pub judge_run: Vec<Value>,
    /// The judge runs' metrics, in `JUDGE_RESULT.json` order.
    pub judge_metrics: Vec<JudgeMetrics>,
    /// Same-flavor pairs left out under `require_distinct_flavor`.
    pub excluded: Vec<ExcludedPair>,
    /// Scores not counted, with the reason.
    pub rejected: Vec<RejectedPair>,
    /// Token and cost sums over every run entry; `None` when no entry has usage.
    pub run_totals: Option<Usage>,
    /// Token and cost sums over every judge run; `None` when no judge has usage.
    pub judge_totals: Option<Usage>,
    /// `RUN_RESULT.json` `usage_totals`, unchanged.
    pub usage_totals: Option<Value>,
    /// Each participant's egress: (name, mode, canary passed) in brief order.
    pub egress: Vec<(String, String, Option<bool>)>,
    /// Whether the cook's sandbox probe passed (`None`: skipped or not recorded).
    pub sandbox_passed: Option<bool>,
    /// The CLI version per flavor, from its image's labels.
    pub cli_versions: std::collections::BTreeMap<String, String>,
    /// Participants whose CLI ran with its server-side web tools on (`network.web_tools`).
    pub web_tools: Vec<String>,
    /// Lines that look aimed at the grader (shown, never scored).
    pub injection_flags: Vec<super::injection::InjectionFlag>,
    /// Intervals, tied groups, agreement, coverage and the bias measurements.
    pub jury: super::jury::Jury,
    /// The hidden tests' pass rates, the combined score and their agreement with the jury, when
    /// the brief has `verify:`.
    pub verification: Option<super::verification::VerificationReport>,
    /// A Harbor task's rewards beside the jury's scores, for a cook made from a task.
    pub rewards: Option<super::rewards::RewardReport>,
    /// Each judge's score of the null participant, when the brief asks for one.
    pub null_checks: Vec<super::calibration::NullCheck>,
}

impl Report {
    /// True when some participant has an accepted score (otherwise: the no-scores case).
    pub fn has_scores(&self) -> bool {
        self.standings.iter().any(|s| s.rank.is_some())
    }

    /// Participants without any accepted score, in brief order.
    pub fn unscored(&self) -> Vec<&str> {
        self.standings
            .iter()
            .filter(|s| s.rank.is_none())
            .map(|s| s.participant.as_str())
            .collect()
    }
}

/// One participant's line of the ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// Competition rank of its group (docs/RANKING.md §6): 1 + participants in better groups,
    /// groups cut only where every cross pair is separated; `None` exactly when unscored.
    pub rank: Option<usize>,
    /// Best rank its paired tests allow.
    pub rank_best: Option<usize>,
    /// Worst rank its paired tests allow.
    pub rank_worst: Option<usize>,
    /// `rank` is a true competition rank (its group's members are all unseparated); when
    /// false the table prints the range only.
    pub rank_single: bool,
    /// Participant name.
    pub participant: String,
    /// Its flavor.
    pub flavor: String,
    /// Rubric: plain mean of its accepted scores; pairwise: its Bradley–Terry percent. `None`
    /// when unscored.
    pub mean_pct: Option<f64>,
    /// The ranking's score: leniency-adjusted (rubric) or Bradley–Terry percent (pairwise).
    pub score_pct: Option<f64>,
    /// How many judges' scores the mean is over.
    pub num_judges: usize,
    /// Its entry in the latest round's result, if any.
    pub run: Option<RunEntry>,
}

/// A judge's section of the breakdown.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgeSection {
    /// The judge's scores, one line per key it wrote.
    Scored {
        /// Judge name.
        judge: String,
        /// Brief participants first (brief order), then unknown keys sorted.
        entries: Vec<PairScore>,
        /// Its `review.md`, trimmed.
        review: Option<String>,
    },
    /// A judge listed in `JUDGE_RESULT.json` whose scores could not be used.
    NoScores {
        /// Judge name.
        judge: String,
        /// Its run status, `?` if unknown.
        status: String,
        /// Why, if known.
        reason: Option<String>,
    },
}

/// What one judge gave one key.
#[derive(Debug, Clone, PartialEq)]
pub struct PairScore {
    /// Participant name, or a key that is no participant.
    pub key: String,
    /// Dimensions: rubric order first, then the others sorted.
    pub dimensions: Vec<(String, Value)>,
    /// The score in percent, unless rejected.
    pub score_pct: Option<f64>,
    /// Left out as a same-flavor pair.
    pub excluded: bool,
    /// Why the score was rejected.
    pub rejected: Option<String>,
}

/// A judge run's line in the metrics table.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeMetrics {
    /// Judge name.
    pub judge: String,
    /// Its run status.
    pub status: Option<String>,
    /// Its run time in seconds.
    pub duration_s: Option<f64>,
    /// Its usage, if recorded.
    pub usage: Option<Usage>,
}

/// A same-flavor (judge, participant) pair excluded by policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExcludedPair {
    /// Judge name.
    pub judge: String,
    /// Participant name.
    pub participant: String,
    /// The flavor they share.
    pub flavor: String,
}

/// A score that was not counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedPair {
    /// Judge name.
    pub judge: String,
    /// Participant name (or the label the judge step could not map).
    pub participant: String,
    /// Why.
    pub reason: String,
}
