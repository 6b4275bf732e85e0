//! `budget:` — a cap on tokens and (where the CLI reports it) USD, for the whole cook, one
//! participant or one judge in brief.yaml, and for a night in the nightly config. The check is
//! shared: both report each problem with its field and its fix.

use serde::Serialize;
use serde_json::Value;

use super::schema::{BUDGET_FIELDS, BudgetDoc};
use crate::schema::{Field, Kind, TOP_LEVEL};

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
        self.tokens.is_some_and(|cap| spend.tokens >= cap)
            || self.usd.is_some_and(|cap| spend.usd >= cap)
    }

    /// `spent 12 340 / 50 000 tokens, $0.41 / $2.00`: spend against each cap that is set.
    pub fn describe(&self, spend: crate::flavor::meter::Spend) -> String {
        let mut parts = Vec::new();
        if let Some(cap) = self.tokens {
            parts.push(format!(
                "{} / {} tokens",
                grouped(spend.tokens),
                grouped(cap)
            ));
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
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
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

/// Checks a `budget:` mapping against the budget's declared keys; `extra` keys are the
/// caller's own (the nightly's `on_exhausted`), allowed here and left for it to read.
pub fn check_budget(value: &Value, extra: &[&'static str]) -> Result<Budget, Vec<BudgetProblem>> {
    if !value.is_object() {
        return Err(vec![problem(
            "",
            format!("must be a mapping, not `{value}`"),
            "write e.g. `budget: {tokens: 2000000, usd: 5}`",
        )]);
    }
    let fields: Vec<Field> = BUDGET_FIELDS
        .iter()
        .copied()
        .chain(extra.iter().map(|key| Field::new(key, Kind::Any)))
        .collect();
    let checked = crate::schema::check_fields(value, &fields);
    let problems: Vec<BudgetProblem> = checked
        .problems
        .iter()
        .map(|p| BudgetProblem {
            key: if p.path == TOP_LEVEL {
                String::new()
            } else {
                p.path.clone()
            },
            problem: p.problem.clone(),
            hint: p.fix.clone().unwrap_or_default(),
        })
        .collect();
    if !problems.is_empty() {
        return Err(problems);
    }
    let doc: BudgetDoc = checked
        .typed()
        .map_err(|p| vec![problem("", p.problem, "")])?;
    capped(doc).ok_or_else(|| {
        vec![problem(
            "",
            "sets no cap".into(),
            "set `tokens`, `usd` or both, or remove `budget`",
        )]
    })
}

/// The budget `doc` sets, if it sets a cap.
fn capped(doc: BudgetDoc) -> Option<Budget> {
    (doc.tokens.is_some() || doc.usd.is_some()).then_some(Budget {
        tokens: doc.tokens,
        usd: doc.usd,
    })
}

/// Checks a brief's `budget:` at `field` (`budget`, `participants[0].budget`), whose keys and
/// kinds the schema checked, for `flavors` (the actor's, or every flavor of the cook for the
/// cook-wide budget).
pub(super) fn check(
    field: &str,
    doc: Option<BudgetDoc>,
    flavors: &[&str],
    checker: &mut super::parse::Checker,
) -> Option<Budget> {
    let doc = doc?;
    if !checker.clean(field) {
        return None;
    }
    let Some(budget) = capped(doc) else {
        checker.problem(
            field,
            "sets no cap",
            Some("set `tokens`, `usd` or both, or remove `budget`".into()),
        );
        return None;
    };
    check_reported(field, &budget, flavors, checker);
    Some(budget)
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
        if crate::flavor::meter::reports_at_turn_end(flavor) && reports(flavor).tokens {
            checker
                .warnings
                .push(at_turn_end_warning(field, flavor, per_actor));
        }
        let seen = reports(flavor);
        let mut blind = Vec::new();
        if budget.tokens.is_some() && !seen.tokens {
            blind.push(("tokens", "reports no usage multicooker can read"));
        }
        if budget.usd.is_some() && !seen.usd {
            blind.push(("usd", "reports no cost"));
        }
        for (key, why) in blind {
            let text = format!("flavor `{flavor}` {why}: this cap cannot be enforced on its cells");
            if per_actor {
                let hint = if seen.tokens {
                    "cap `tokens` instead of `usd`"
                } else {
                    "remove `budget` from this entry (custom flavors report no usage)"
                };
                checker.problem(crate::schema::join(field, key), text, Some(hint.into()));
            } else {
                checker.warnings.push(format!(
                    "field `{field}.{key}`: {text}; they count as spending nothing against it"
                ));
            }
        }
    }
}

/// Why a cap cannot stop a cell of `flavor` while it works: it reports its usage only at the end
/// of its turn. The cook-wide cap (`per_actor` false) counts such a cell only once it is done,
/// so the cook can pass its cap by what the cell spent.
fn at_turn_end_warning(field: &str, flavor: &str, per_actor: bool) -> String {
    let after = "a cell that finishes over it is kept and recorded over budget, and judged only with `judging.over_budget: score`";
    if per_actor {
        format!(
            "field `{field}`: flavor `{flavor}` reports its usage only at the end of its turn (`codex exec` runs one), so this cap cannot stop it while it works: {after}"
        )
    } else {
        format!(
            "field `{field}`: flavor `{flavor}` reports its usage only at the end of its turn (`codex exec` runs one), so the cook's pool counts its cells only once they are done and cannot stop them while they work: the cook can end over this cap by what they spent; {after}"
        )
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::brief::{BriefError, parse};

    const BRIEF: &str = "name: t\nparticipants:\n  - {name: a, flavor: claude, budget: {tokens: 50000, usd: 2}}\n  - {name: b, flavor: codex}\njudges:\n  - {name: j, flavor: dummy, budget: {tokens: 9000}}\nrubric: {scale: [0, 5], dimensions: [{id: c, weight: 100}]}\n";

    fn problems(text: &str) -> Vec<String> {
        match parse(Path::new("cooks/x/brief.yaml"), text.as_bytes()) {
            Err(BriefError::Invalid { problems, .. }) => problems
                .iter()
                .map(|p| format!("{p} ({})", p.hint.clone().unwrap_or_default()))
                .collect(),
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn budgets_are_read_per_cook_participant_and_judge() {
        let text = format!("{BRIEF}budget: {{tokens: 200000}}\n");
        let loaded = parse(Path::new("brief.yaml"), text.as_bytes()).unwrap();
        let brief = loaded.brief;
        assert_eq!(
            brief.budget,
            Some(Budget {
                tokens: Some(200_000),
                usd: None
            })
        );
        assert_eq!(
            brief.participants[0].budget,
            Some(Budget {
                tokens: Some(50_000),
                usd: Some(2.0)
            })
        );
        assert_eq!(brief.participants[1].budget, None, "no budget, no cap");
        assert_eq!(brief.judges[0].budget.and_then(|b| b.tokens), Some(9000));
        // Participant b is codex: the pool meets its spend only after the fact (issue 25).
        assert_eq!(
            loaded.warnings,
            [at_turn_end_warning("budget", "codex", false)],
            "{:?}",
            loaded.warnings
        );
        let with_usd = format!("{BRIEF}budget: {{usd: 5}}\n");
        let warnings = parse(Path::new("brief.yaml"), with_usd.as_bytes())
            .unwrap()
            .warnings;
        assert!(
            warnings.iter().any(|w| w.contains("`budget.usd`") && w.contains("flavor `codex` reports no cost")),
            "{warnings:?}"
        );
    }

    #[test]
    fn bad_budgets_name_the_field_and_the_fix() {
        let text = BRIEF
            .replace(
                "budget: {tokens: 50000, usd: 2}",
                "budget: {tokens: -5, usd: 0, tokns: 3}",
            )
            .replace(
                "{name: b, flavor: codex}",
                "{name: b, flavor: codex, budget: {usd: 1}}",
            )
            .replace("budget: {tokens: 9000}", "budget: {}");
        let found = problems(&text);
        for expected in [
            "field `participants[0].budget.tokens`: must be a positive whole number of tokens, not `-5` (e.g. `tokens: 2000000`; remove it for no token cap)",
            "field `participants[0].budget.usd`: must be a positive amount of US dollars, not `0` (e.g. `usd: 5` or `usd: 0.5`; remove it for no cost cap)",
            "field `participants[0].budget.tokns`: unknown field (allowed: tokens, usd) (did you mean `tokens`?)",
            "field `participants[1].budget.usd`: flavor `codex` reports no cost: this cap cannot be enforced on its cells (cap `tokens` instead of `usd`)",
            "field `judges[0].budget`: sets no cap (set `tokens`, `usd` or both, or remove `budget`)",
        ] {
            assert!(
                found.iter().any(|p| p == expected),
                "`{expected}` in {found:#?}"
            );
        }
        let top = problems(&format!("{BRIEF}budget: 7\n"));
        assert!(
            top.iter()
                .any(|p| p.starts_with("field `budget`: must be a mapping")),
            "{top:?}"
        );
    }

    /// Issue 25: codex reports its usage only at the end of its single turn, so a 10,000-token
    /// cap let it finish 280,840 tokens of work and then threw the work away. Lint says so.
    #[test]
    fn a_cap_on_a_flavor_that_reports_at_the_end_of_its_turn_is_explained() {
        let text = BRIEF.replace(
            "{name: b, flavor: codex}",
            "{name: b, flavor: codex, budget: {tokens: 10000}}",
        );
        let loaded = parse(Path::new("brief.yaml"), text.as_bytes()).unwrap();
        assert_eq!(
            loaded.warnings,
            [
                "field `participants[1].budget`: flavor `codex` reports its usage only at the end of its turn (`codex exec` runs one), so this cap cannot stop it while it works: a cell that finishes over it is kept and recorded over budget, and judged only with `judging.over_budget: score`"
            ]
        );
        assert_eq!(
            loaded.brief.judging.over_budget,
            crate::brief::OverBudget::Unscored
        );
        let scored = format!("{text}judging: {{over_budget: score}}\n");
        let loaded = parse(Path::new("brief.yaml"), scored.as_bytes()).unwrap();
        assert_eq!(
            loaded.brief.judging.over_budget,
            crate::brief::OverBudget::Score
        );
        let wrong = problems(&format!("{text}judging: {{over_budget: keep}}\n"));
        assert!(
            wrong.contains(
                &"field `judging.over_budget`: unknown choice `keep` (use one of: unscored, score)"
                    .to_owned()
            ),
            "{wrong:?}"
        );
    }

    /// Issue 25: under a cook-wide cap, codex's 80,240 tokens were counted only when its turn
    /// ended; lint says the pool meets such a cell's spend only after the fact.
    #[test]
    fn a_cook_wide_cap_with_a_flavor_that_reports_at_the_end_of_its_turn_is_explained() {
        let text = format!("{BRIEF}budget: {{tokens: 50000}}\n");
        let loaded = parse(Path::new("brief.yaml"), text.as_bytes()).unwrap();
        assert_eq!(
            loaded.warnings,
            [
                "field `budget`: flavor `codex` reports its usage only at the end of its turn (`codex exec` runs one), so the cook's pool counts its cells only once they are done and cannot stop them while they work: the cook can end over this cap by what they spent; a cell that finishes over it is kept and recorded over budget, and judged only with `judging.over_budget: score`"
            ]
        );
        // Without such a flavor, the pool warns about nothing.
        let claude_only = text.replace("{name: b, flavor: codex}", "{name: b, flavor: claude}");
        let loaded = parse(Path::new("brief.yaml"), claude_only.as_bytes()).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    }

    #[test]
    fn spend_is_described_against_each_cap() {
        let cap = Budget {
            tokens: Some(50_000),
            usd: Some(2.0),
        };
        let spend = crate::flavor::meter::Spend {
            tokens: 12_340,
            usd: 0.5,
        };
        assert_eq!(
            cap.describe(spend),
            "spent 12 340 / 50 000 tokens, $0.50 / $2.00"
        );
        assert!(!cap.reached_by(spend));
        assert!(cap.reached_by(crate::flavor::meter::Spend {
            tokens: 1,
            usd: 2.0
        }));
        assert_eq!(grouped(1_234_567), "1 234 567");
    }
}
