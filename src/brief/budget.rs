//! `budget:` — a cap on tokens and (where the CLI reports it) USD, for the whole cook, one
//! participant or one judge in brief.yaml, and for a night in the nightly config. The check is
//! shared: both report each problem with its field and its fix.

use serde::Serialize;
use serde_json::{Map, Value};

/// Keys of a brief's `budget:`.
const BUDGET_KEYS: &[&str] = &["tokens", "usd"];

/// A spending cap; unset figures are not capped.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Budget {
    /// Tokens, counted as the usage dict's `total_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// USD, as the CLI reports its cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
}

impl Budget {
    /// True when `spend` reached a cap.
    pub fn reached_by(&self, spend: crate::flavor::meter::Spend) -> bool {
        self.tokens.is_some_and(|cap| spend.tokens >= cap) || self.usd.is_some_and(|cap| spend.usd >= cap)
    }

    /// `spent 12 340 / 50 000 tokens, $0.41 / $2.00`: spend against each cap that is set.
    pub fn describe(&self, spend: crate::flavor::meter::Spend) -> String {
        let mut parts = Vec::new();
        if let Some(cap) = self.tokens {
            parts.push(format!("{} / {} tokens", grouped(spend.tokens), grouped(cap)));
        }
        if let Some(cap) = self.usd {
            parts.push(format!("${:.2} / ${cap:.2}", spend.usd));
        }
        format!("spent {}", parts.join(", "))
    }
}

/// `12 340`: digits in groups of three.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// One problem of a budget: the key under the budget (empty for the budget itself), what is
/// wrong, the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetProblem {
    /// The key under `budget` (`tokens`, `usd`, an unknown key) or empty.
    pub key: String,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub hint: String,
}

fn problem(key: &str, problem: String, hint: &str) -> BudgetProblem {
    BudgetProblem {
        key: key.to_owned(),
        problem,
        hint: hint.to_owned(),
    }
}

/// Checks a `budget:` mapping; `extra` keys are the caller's own (the nightly's
/// `on_exhausted`), left for it to read.
pub fn check_budget(value: &Value, extra: &[&str]) -> Result<Budget, Vec<BudgetProblem>> {
    let Some(map) = value.as_object() else {
        return Err(vec![problem(
            "",
            format!("must be a mapping, not `{value}`"),
            "write e.g. `budget: {tokens: 2000000, usd: 5}`",
        )]);
    };
    let mut problems = unknown(map, extra);
    let tokens = match map.get("tokens").filter(|v| !v.is_null()) {
        None => None,
        Some(v) => match v.as_u64().filter(|n| *n > 0) {
            Some(n) => Some(n),
            None => {
                problems.push(problem(
                    "tokens",
                    format!("must be a positive whole number of tokens, not `{v}`"),
                    "e.g. `tokens: 2000000`; remove it for no token cap",
                ));
                None
            }
        },
    };
    let usd = match map.get("usd").filter(|v| !v.is_null()) {
        None => None,
        Some(v) => match v.as_f64().filter(|n| n.is_finite() && *n > 0.0) {
            Some(n) => Some(n),
            None => {
                problems.push(problem(
                    "usd",
                    format!("must be a positive amount of US dollars, not `{v}`"),
                    "e.g. `usd: 5` or `usd: 0.5`; remove it for no cost cap",
                ));
                None
            }
        },
    };
    if problems.is_empty() && tokens.is_none() && usd.is_none() {
        problems.push(problem(
            "",
            "sets no cap".into(),
            "set `tokens`, `usd` or both, or remove `budget`",
        ));
    }
    if problems.is_empty() {
        Ok(Budget { tokens, usd })
    } else {
        Err(problems)
    }
}

fn unknown(map: &Map<String, Value>, extra: &[&str]) -> Vec<BudgetProblem> {
    let allowed: Vec<&str> = BUDGET_KEYS.iter().chain(extra).copied().collect();
    map.keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|key| {
            let hint = super::suggest(key, allowed.iter().copied()).map_or_else(
                || format!("remove `{key}`"),
                |s| format!("did you mean `{s}`?"),
            );
            problem(
                key,
                format!("unknown field (allowed: {})", allowed.join(", ")),
                &hint,
            )
        })
        .collect()
}

/// Checks a brief's `budget:` at `field` (`budget`, `participants[0].budget`) for `flavors`
/// (the actor's, or every flavor of the cook for the cook-wide budget).
pub(super) fn check(
    field: &str,
    value: Option<&Value>,
    flavors: &[&str],
    checker: &mut super::parse::Checker,
) -> Option<Budget> {
    let value = value.filter(|v| !v.is_null())?;
    match check_budget(value, &[]) {
        Ok(budget) => {
            check_reported(field, &budget, flavors, checker);
            Some(budget)
        }
        Err(problems) => {
            for p in problems {
                checker.problem(super::parse::join(field, &p.key), p.problem, Some(p.hint));
            }
            None
        }
    }
}

/// A cap the flavor's output cannot show is refused (per actor) or warned about (cook-wide,
/// where other cells may still count).
fn check_reported(
    field: &str,
    budget: &Budget,
    flavors: &[&str],
    checker: &mut super::parse::Checker,
) {
    use crate::flavor::meter::reports;
    // The cook-wide `budget` counts every cell; an actor's counts its own.
    let per_actor = field != "budget";
    let mut flavors = flavors.to_vec();
    flavors.sort_unstable();
    flavors.dedup();
    for flavor in flavors {
        let seen = reports(flavor);
        let mut blind = Vec::new();
        if budget.tokens.is_some() && !seen.tokens {
            blind.push(("tokens", "reports no usage multicooker can read"));
        }
        if budget.usd.is_some() && !seen.usd {
            blind.push(("usd", "reports no cost"));
        }
        for (key, why) in blind {
            let text =
                format!("flavor `{flavor}` {why}: this cap cannot be enforced on its cells");
            if per_actor {
                let hint = if seen.tokens {
                    "cap `tokens` instead of `usd`"
                } else {
                    "remove `budget` from this entry (custom flavors report no usage)"
                };
                checker.problem(super::parse::join(field, key), text, Some(hint.into()));
            } else {
                checker.warnings.push(format!(
                    "field `{field}.{key}`: {text}; they count as spending nothing against it"
                ));
            }
        }
    }
}
