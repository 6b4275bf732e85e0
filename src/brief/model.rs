//! The typed brief: what `brief.yaml` says once it has been checked. Defaults are applied here,
//! so no other module interprets raw YAML.

use std::fmt;

use serde::Serialize;

/// Default participant timeout (seconds), as in the reference.
pub const DEFAULT_TIMEOUT_S: u64 = 1800;
/// Default judge timeout (seconds), as in the reference.
pub const DEFAULT_JUDGE_TIMEOUT_S: u64 = 900;
/// Default verifier timeout (seconds).
pub const DEFAULT_VERIFY_TIMEOUT_S: u64 = 600;

/// A checked `brief.yaml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Brief {
    /// The brief's display name (engine objects are named after the cook folder instead).
    pub name: String,
    /// Participant timeout in seconds.
    pub timeout_s: u64,
    /// Judge timeout in seconds.
    pub judge_timeout_s: u64,
    /// Contestants, in brief order.
    pub participants: Vec<Actor>,
    /// Judges, in brief order.
    pub judges: Vec<Actor>,
    /// How judges score; required when there are judges.
    pub rubric: Option<Rubric>,
    /// Judging options.
    pub judging: Judging,
    /// Output requirements.
    pub outputs: Outputs,
    /// Cook-wide resource limits.
    pub resources: Resources,
    /// The cook-wide network policy (participants; judges use only `mode`).
    pub network: Network,
    /// The `consult` section, kept for the `consult` command.
    pub consult: Option<serde_json::Value>,
    /// Hidden verification of every sealed output (`verify:`).
    pub verify: Option<Verify>,
    /// How the tests' pass rate and the jury's score combine (`scoring:`).
    pub scoring: Option<Scoring>,
    /// The whole cook's spending cap (`budget:`): once reached, no cell starts and running
    /// ones are stopped.
    pub budget: Option<super::budget::Budget>,
    /// The Harbor task the cook runs (`harbor:`), kept in the cook (docs/HARBOR.md).
    pub harbor: Option<HarborRef>,
}

impl Brief {
    /// The participant with this name.
    pub fn participant(&self, name: &str) -> Option<&Actor> {
        self.participants.iter().find(|p| p.name == name)
    }

    /// The judge of that name.
    pub fn judge(&self, name: &str) -> Option<&Actor> {
        self.judges.iter().find(|j| j.name == name)
    }

    /// The network policy of one cell: its own, else the brief's.
    pub fn network_for<'a>(&'a self, actor: &'a Actor) -> &'a Network {
        actor.network.as_ref().unwrap_or(&self.network)
    }

    /// The timeout of one cell in seconds.
    pub fn timeout_for(&self, actor: &Actor, role: crate::state::Role) -> u64 {
        actor.timeout_s.unwrap_or(match role {
            crate::state::Role::Participant => self.timeout_s,
            crate::state::Role::Judge | crate::state::Role::Reviewer => self.judge_timeout_s,
            crate::state::Role::Verifier => self
                .verify
                .as_ref()
                .map_or(DEFAULT_VERIFY_TIMEOUT_S, |v| v.timeout_s),
        })
    }
}

/// A participant or judge.
#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    /// Unique name: letters, digits, `-`, `_`.
    pub name: String,
    /// Which CLI runs it (defaults to the name).
    pub flavor: String,
    /// Overrides the brief's timeout for this cell.
    pub timeout_s: Option<u64>,
    /// Forwarded to the CLI (`MULTICOOKER_MODEL`); scripts the dummy flavor.
    pub model: Option<String>,
    /// Overrides the brief's resources for this cell.
    pub resources: Resources,
    /// Overrides the brief's network policy for this cell.
    pub network: Option<Network>,
    /// This cell's spending cap (`budget:`): a cell that reaches it is stopped.
    pub budget: Option<super::budget::Budget>,
}

/// How a cell may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkMode {
    /// No network at all (only loopback).
    None,
    /// An internal network whose only way out is a proxy allowing the flavor's model API
    /// hosts plus `allow` (the default).
    #[default]
    Allowlist,
    /// Unrestricted egress (the reference's behaviour).
    Open,
}

impl NetworkMode {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 3] = ["none", "allowlist", "open"];

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "none" => Some(Self::None),
            "allowlist" => Some(Self::Allowlist),
            "open" => Some(Self::Open),
            _ => None,
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Allowlist => "allowlist",
            Self::Open => "open",
        }
    }
}

/// `network:` of the brief or of one actor.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Network {
    /// The mode.
    pub mode: NetworkMode,
    /// Extra `host:port` targets participants may reach (judges only get their vendor's API).
    pub allow: Vec<String>,
    /// Let allowed names resolve to private addresses (for test doubles on local networks).
    pub allow_private: bool,
    /// Turn the CLIs' server-side web tools on (off by default; the report says so).
    pub web_tools: bool,
}

/// The rubric judges score against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rubric {
    /// `[lo, hi]`: every score must lie in it.
    pub scale: (i64, i64),
    /// Weighted dimensions; weights sum to 100.
    pub dimensions: Vec<Dimension>,
}

/// One rubric dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dimension {
    /// Its id, as judges must write it.
    pub id: String,
    /// Its weight (percent).
    pub weight: u32,
}

/// The anti-self-judge policy (docs/BEHAVIOR.md §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgingPolicy {
    /// A judge is never given submissions of its own flavor (our default).
    #[default]
    RequireDistinctFlavor,
    /// Same-flavor pairs are judged and counted, with a warning (the reference's default).
    Warn,
    /// Same-flavor pairs are judged and counted silently.
    AllowSelf,
}

impl JudgingPolicy {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 3] = ["require_distinct_flavor", "warn", "allow_self"];

    /// The policy's name in brief.yaml and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RequireDistinctFlavor => "require_distinct_flavor",
            Self::Warn => "warn",
            Self::AllowSelf => "allow_self",
        }
    }

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "require_distinct_flavor" => Some(Self::RequireDistinctFlavor),
            "warn" => Some(Self::Warn),
            "allow_self" => Some(Self::AllowSelf),
            _ => None,
        }
    }
}

impl fmt::Display for JudgingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `judging:` options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Judging {
    /// The anti-self-judge policy.
    pub policy: JudgingPolicy,
    /// Accept only the canonical score shape (no tolerant repair).
    pub strict_schema: bool,
    /// How judges compare: a rubric score per submission, or pairwise verdicts.
    pub mode: JudgingMode,
    /// Also give judges their own flavor's submissions, to measure (never count) self-preference.
    pub self_preference: bool,
    /// Ask judges to guess which vendor wrote each submission, to measure the blinding.
    pub blinding_probe: bool,
    /// Pairwise mode: leave out the verdicts of a judge whose position consistency is below
    /// the report's floor (it is flagged either way).
    pub exclude_inconsistent_judges: bool,
    /// Judge an empty submission under a label like any other, as a calibration check: a judge
    /// that scores it above the report's threshold is flagged.
    pub null_participant: bool,
    /// Whether a cell that finished its turn over a budget (a flavor that reports its usage only
    /// at the end of its turn, like codex) is judged.
    pub over_budget: OverBudget,
}

/// `judging.over_budget`: what becomes of a cell whose flavor reports its usage only at the
/// end of its turn and that finished over a budget (docs/FLAVORS.md §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverBudget {
    /// Kept in the cook folder, recorded over budget, not judged (`budget_exhausted`).
    #[default]
    Unscored,
    /// Judged like any other cell, recorded over budget.
    Score,
}

impl OverBudget {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 2] = ["unscored", "score"];

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "unscored" => Some(Self::Unscored),
            "score" => Some(Self::Score),
            _ => None,
        }
    }
}

/// `judging.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgingMode {
    /// Each judge scores every submission it may see on the rubric (the reference's mode).
    #[default]
    Rubric,
    /// Each judge compares every pair it may see, in both orders, with fresh labels each time.
    Pairwise,
}

impl JudgingMode {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 2] = ["rubric", "pairwise"];

    /// The mode's name in brief.yaml and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rubric => "rubric",
            Self::Pairwise => "pairwise",
        }
    }

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "rubric" => Some(Self::Rubric),
            "pairwise" => Some(Self::Pairwise),
            _ => None,
        }
    }
}

/// `outputs:` requirements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outputs {
    /// Files every participant must write under `out/`.
    pub required: Vec<RequiredOutput>,
}

/// One required output.
#[derive(Debug, Clone, PartialEq)]
pub struct RequiredOutput {
    /// Relative to `out/`.
    pub path: String,
    /// Recorded, not enforced.
    pub kind: Option<String>,
}

/// Host profile tiers (docs/BEHAVIOR.md §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Pick from the engine's memory.
    Auto,
    /// Big hosts.
    Large,
    /// The default.
    Medium,
    /// Small hosts.
    Small,
}

impl Profile {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 4] = ["auto", "large", "medium", "small"];

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "large" => Some(Self::Large),
            "medium" => Some(Self::Medium),
            "small" => Some(Self::Small),
            _ => None,
        }
    }
}

/// Resource limits as written (cook-wide or per actor); unset means "inherit".
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Resources {
    /// Host profile (only the cook-wide one matters).
    pub profile: Option<Profile>,
    /// Memory limit in bytes.
    pub mem_limit: Option<u64>,
    /// Memory + swap limit in bytes.
    pub memswap_limit: Option<u64>,
    /// CPUs (fractional).
    pub cpus: Option<f64>,
    /// Process limit.
    pub pids_limit: Option<u64>,
    /// Cap on a participant's `out/` while it runs (in-memory, so it counts against memory).
    pub out_limit: Option<u64>,
}

/// `verify:`: hidden material in the cook's `verify/` folder, run by one verifier cell per
/// sealed output after `cook` (and by `multicooker verify`).
#[derive(Debug, Clone, PartialEq)]
pub struct Verify {
    /// The image the verifier runs.
    pub image: VerifierImage,
    /// The runner's command line; `None` runs the image's own entrypoint (`dockerfile`) or the
    /// dummy flavor's spec runner (`dummy`).
    pub command: Option<Vec<String>>,
    /// Killed after this long (seconds); what it had not reported by then counts as errors.
    pub timeout_s: u64,
    /// The verifier cell's resources (unset: the brief's, then the host profile's).
    pub resources: Resources,
    /// The verifier cell's network: `none` unless set here (never the brief's).
    pub network: Network,
    /// How many tests the runner runs, required with `image: dockerfile` (unset with `dummy`:
    /// the spec's count). A run that reports fewer counts the rest as errors; a report listing
    /// more, or planning another number, is tampering.
    pub tests: Option<u64>,
    /// What judges are told about the tests.
    pub jury: JuryView,
}

/// Which image runs the hidden tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifierImage {
    /// The cook's `verify/Dockerfile`, built with `verify/` as its context (real languages).
    #[default]
    Dockerfile,
    /// The dummy flavor's image, whose `mc-cell verify` runs `verify/tests.json` (tests and
    /// offline trials).
    Dummy,
}

impl VerifierImage {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 2] = ["dockerfile", "dummy"];

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "dockerfile" => Some(Self::Dockerfile),
            "dummy" => Some(Self::Dummy),
            _ => None,
        }
    }

    /// The name in brief.yaml.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dockerfile => "dockerfile",
            Self::Dummy => "dummy",
        }
    }
}

/// What judges are told about the hidden tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JuryView {
    /// Nothing: the jury stays independent of the tests (the default).
    #[default]
    Blind,
    /// Each submission carries the verifier's one-line summary (counts only, never the tests).
    Summary,
}

impl JuryView {
    /// Every accepted spelling.
    pub const NAMES: [&'static str; 2] = ["blind", "summary"];

    /// Parses a brief.yaml spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "blind" => Some(Self::Blind),
            "summary" => Some(Self::Summary),
            _ => None,
        }
    }
}

/// `harbor:`: the Harbor task a cook made by `new --from <task>` runs. The task's files are
/// kept unchanged in the cook's `task` folder; the hash recorded here is checked before a run,
/// so what ran is what the provenance names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HarborRef {
    /// The folder holding the task, relative to the cook (`task`).
    pub task: String,
    /// The task hash (docs/HARBOR.md §1) taken when the task was copied in.
    pub hash: String,
}

/// `scoring:`: the combined score's weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scoring {
    /// Weight of the hidden tests' pass rate.
    pub verify: u32,
    /// Weight of the jury's score.
    pub jury: u32,
}
