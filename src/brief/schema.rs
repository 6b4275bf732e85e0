//! brief.yaml's schema, declared once: every key of every section with the kind of its value
//! and, for a required key, the fix ([`BRIEF`], checked by [`crate::schema`]); and the document
//! those tables let through, as typed structs serde reads ([`BriefDoc`]). A new key is one line
//! in a table and one field in a struct; what no table can say (names unique across lists,
//! weights that add up, options that exclude each other) is checked in `parse.rs` on the typed
//! document.

use serde::Deserialize;
use serde_json::Value;

use super::model::{
    JudgingMode, JudgingPolicy, JuryView, NetworkMode, OverBudget, Profile, VerifierImage,
};
use crate::schema::{Field, Kind, Wrong, show};

/// The whole brief.
pub(super) const BRIEF: Kind = Kind::Map(&[
    Field::required("name", Kind::Str, "add `name: <short-task-name>`"),
    Field::new("timeout_s", Kind::PosInt),
    Field::new("judge_timeout_s", Kind::PosInt),
    Field::required(
        "participants",
        ACTORS,
        "add `participants:` with at least one `- name: <name>` entry",
    ),
    Field::new("judges", ACTORS),
    Field::new("rubric", Kind::Map(RUBRIC)),
    Field::new("judging", Kind::Map(JUDGING)),
    Field::new("outputs", Kind::Map(OUTPUTS)),
    Field::new("resources", Kind::Map(RESOURCES)),
    Field::new("network", NETWORK),
    Field::new("consult", Kind::Any),
    Field::new("verify", Kind::Map(VERIFY)),
    Field::new("scoring", Kind::Map(SCORING)),
    BUDGET,
    Field::new("harbor", Kind::Map(HARBOR)),
]);

const ACTORS: Kind = Kind::List(&Kind::Map(&[
    Field::required("name", Kind::Str, "give every entry a `name:`"),
    Field::new("flavor", Kind::Str),
    Field::new("timeout_s", Kind::PosInt),
    Field::new("model", Kind::Str),
    Field::new("resources", Kind::Map(RESOURCES)),
    Field::new("network", NETWORK),
    BUDGET,
]));

/// `network: none` or `network: {mode, allow: [host:port], allow_private, web_tools}`.
const NETWORK: Kind = Kind::ChoiceOrMap {
    noun: "network mode",
    names: &NetworkMode::NAMES,
    fields: &[
        Field::new(
            "mode",
            Kind::Choice {
                noun: "network mode",
                names: &NetworkMode::NAMES,
            },
        ),
        Field::new("allow", Kind::List(&Kind::Check(host_port))),
        Field::new("allow_private", Kind::Bool),
        Field::new("web_tools", Kind::Bool),
    ],
};

const RUBRIC: &[Field] = &[
    Field::new("scale", Kind::Check(scale)),
    Field::required(
        "dimensions",
        Kind::List(&Kind::Map(&[
            Field::needed("id", Kind::Str),
            Field::needed("weight", Kind::PosInt),
        ])),
        DIMENSIONS_FIX,
    )
    .explained("a non-empty list", DIMENSIONS_FIX),
];

/// The fix of a missing or empty `rubric.dimensions`.
pub(super) const DIMENSIONS_FIX: &str = "list the dimensions as `- {id: correctness, weight: 100}`";

const JUDGING: &[Field] = &[
    Field::new(
        "policy",
        Kind::Choice {
            noun: "policy",
            names: &JudgingPolicy::NAMES,
        },
    ),
    Field::new("strict_schema", Kind::Bool),
    Field::new(
        "mode",
        Kind::Choice {
            noun: "mode",
            names: &JudgingMode::NAMES,
        },
    ),
    Field::new("self_preference", Kind::Bool),
    Field::new("blinding_probe", Kind::Bool),
    Field::new("exclude_inconsistent_judges", Kind::Bool),
    Field::new("null_participant", Kind::Bool),
    Field::new(
        "over_budget",
        Kind::Choice {
            noun: "choice",
            names: &OverBudget::NAMES,
        },
    ),
];

const OUTPUTS: &[Field] = &[Field::new(
    "required",
    Kind::List(&Kind::Map(&[
        Field::needed("path", Kind::Str),
        Field::new("kind", Kind::Str),
    ])),
)];

const RESOURCES: &[Field] = &[
    Field::new(
        "profile",
        Kind::Choice {
            noun: "profile",
            names: &Profile::NAMES,
        },
    ),
    Field::new("mem_limit", Kind::Size),
    Field::new("memswap_limit", Kind::Size),
    Field::new(
        "cpus",
        Kind::Positive {
            example: "for example `cpus: 1.5`",
        },
    ),
    Field::new("pids_limit", Kind::PosInt),
    Field::new("out_limit", Kind::Size),
];

const VERIFY: &[Field] = &[
    Field::new(
        "image",
        Kind::Choice {
            noun: "value",
            names: &VerifierImage::NAMES,
        },
    ),
    Field::new("command", Kind::List(&Kind::Check(command_word))).explained(
        "a non-empty list of strings",
        "for example `command: [sh, run-tests.sh]` (run in `/work/verify`)",
    ),
    Field::new("timeout_s", Kind::PosInt),
    Field::new("resources", Kind::Map(RESOURCES)),
    Field::new("network", NETWORK),
    Field::new("tests", Kind::PosInt),
    Field::new(
        "jury",
        Kind::Choice {
            noun: "value",
            names: &JuryView::NAMES,
        },
    ),
];

const WEIGHT: Kind = Kind::Range {
    min: 0,
    max: 0xFFFF_FFFF,
    what: "a whole number from 0",
};
const WEIGHTS_FIX: &str = "give both weights, e.g. `scoring: {verify: 50, jury: 50}`";
const SCORING: &[Field] = &[
    Field::required("verify", WEIGHT, WEIGHTS_FIX),
    Field::required("jury", WEIGHT, WEIGHTS_FIX),
];

/// The fix of a missing or malformed `harbor.hash`.
pub(super) const HASH_FIX: &str =
    "make the cook again with `multicooker new <name> --from <task folder>`, which records it";
const HARBOR: &[Field] = &[
    Field::new("task", Kind::Str),
    Field::required("hash", Kind::Str, HASH_FIX),
];

/// `budget:` of the cook, a participant or a judge.
const BUDGET: Field = Field::new("budget", Kind::Map(BUDGET_FIELDS)).explained(
    "a mapping",
    "write e.g. `budget: {tokens: 2000000, usd: 5}`",
);

/// The keys of a `budget:` (a night's budget adds its own).
pub const BUDGET_FIELDS: &[Field] = &[
    Field::new("tokens", Kind::PosInt).explained(
        "a positive whole number of tokens",
        "e.g. `tokens: 2000000`; remove it for no token cap",
    ),
    Field::new("usd", Kind::Number).explained(
        "a positive amount of US dollars",
        "e.g. `usd: 5` or `usd: 0.5`; remove it for no cost cap",
    ),
];

/// `host:port` of an allowlist entry.
fn host_port(value: &Value) -> Result<(), Wrong> {
    match value.as_str().and_then(super::parse::normalize_target) {
        Some(_) => Ok(()),
        None => Err((
            format!("{} is not `host:port`", show(value)),
            Some("for example `registry.npmjs.org:443`".into()),
        )),
    }
}

/// `[lo, hi]` with integers lo < hi.
fn scale(value: &Value) -> Result<(), Wrong> {
    let pair = value
        .as_array()
        .filter(|a| a.len() == 2)
        .and_then(|a| Some((a[0].as_i64()?, a[1].as_i64()?)));
    match pair {
        Some((lo, hi)) if lo < hi => Ok(()),
        _ => Err((
            format!(
                "must be `[lo, hi]` with integers lo < hi, not {}",
                show(value)
            ),
            Some("for example `scale: [0, 5]`".into()),
        )),
    }
}

/// One word of `verify.command`.
fn command_word(value: &Value) -> Result<(), Wrong> {
    match value.as_str() {
        Some(text) if !text.is_empty() && !text.contains('\0') => Ok(()),
        _ => Err((
            format!("must be a non-empty string, not {}", show(value)),
            None,
        )),
    }
}

/// The checked brief: every key the tables let through, bad values taken out.
#[derive(Debug, Deserialize)]
pub(super) struct BriefDoc {
    pub name: Option<String>,
    pub timeout_s: Option<u64>,
    pub judge_timeout_s: Option<u64>,
    pub participants: Option<Vec<Option<ActorDoc>>>,
    pub judges: Option<Vec<Option<ActorDoc>>>,
    pub rubric: Option<RubricDoc>,
    pub judging: Option<JudgingDoc>,
    pub outputs: Option<OutputsDoc>,
    pub resources: Option<ResourcesDoc>,
    pub network: Option<NetworkDoc>,
    pub consult: Option<Value>,
    pub verify: Option<VerifyDoc>,
    pub scoring: Option<ScoringDoc>,
    pub budget: Option<BudgetDoc>,
    pub harbor: Option<HarborDoc>,
}

/// A participant or judge entry.
#[derive(Debug, Deserialize)]
pub(super) struct ActorDoc {
    pub name: Option<String>,
    pub flavor: Option<String>,
    pub timeout_s: Option<u64>,
    pub model: Option<String>,
    pub resources: Option<ResourcesDoc>,
    pub network: Option<NetworkDoc>,
    pub budget: Option<BudgetDoc>,
}

/// `network:`, a word or a mapping.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum NetworkDoc {
    Mode(String),
    Full {
        mode: Option<String>,
        allow: Option<Vec<Option<String>>>,
        allow_private: Option<bool>,
        web_tools: Option<bool>,
    },
}

#[derive(Debug, Deserialize)]
pub(super) struct RubricDoc {
    pub scale: Option<(i64, i64)>,
    pub dimensions: Option<Vec<Option<DimensionDoc>>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct DimensionDoc {
    pub id: Option<String>,
    pub weight: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct JudgingDoc {
    pub policy: Option<String>,
    pub strict_schema: Option<bool>,
    pub mode: Option<String>,
    pub self_preference: Option<bool>,
    pub blinding_probe: Option<bool>,
    pub exclude_inconsistent_judges: Option<bool>,
    pub null_participant: Option<bool>,
    pub over_budget: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct OutputsDoc {
    pub required: Option<Vec<Option<RequiredDoc>>>,
}

#[derive(Debug, Deserialize)]
pub(super) struct RequiredDoc {
    pub path: Option<String>,
    pub kind: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ResourcesDoc {
    pub profile: Option<String>,
    pub mem_limit: Option<u64>,
    pub memswap_limit: Option<u64>,
    pub cpus: Option<f64>,
    pub pids_limit: Option<u64>,
    pub out_limit: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct VerifyDoc {
    pub image: Option<String>,
    pub command: Option<Vec<Option<String>>>,
    pub timeout_s: Option<u64>,
    pub resources: Option<ResourcesDoc>,
    pub network: Option<NetworkDoc>,
    pub tests: Option<u64>,
    pub jury: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ScoringDoc {
    pub verify: Option<u64>,
    pub jury: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct HarborDoc {
    pub task: Option<String>,
    pub hash: Option<String>,
}

/// A `budget:` once checked.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(super) struct BudgetDoc {
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
}
