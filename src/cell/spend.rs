//! What a cook has spent so far, from its result files: the cook's budget counts every phase
//! (participants, then judges, then runs resumed later), not only the cells of this command.
//! The engine counts it before every phase ([`super::role`]).

use serde_json::Value;

use crate::flavor::meter::Spend;
use crate::state::CookPaths;

/// The `spend` of one result entry.
pub fn entry_spend(entry: &serde_json::Map<String, Value>) -> Spend {
    let spend = entry.get("spend");
    Spend {
        tokens: spend
            .and_then(|s| s.get("tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0),
        usd: spend
            .and_then(|s| s.get("usd"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
    }
}

/// Everything the cook's participants and judges have spent, as recorded.
pub fn recorded_spend(paths: &CookPaths) -> Spend {
    let participants =
        crate::state::results::read::<crate::state::results::RoundResult>(&paths.run_result())
            .map(|r| r.participants)
            .unwrap_or_default();
    let judges =
        crate::state::results::read::<crate::state::results::JudgeRunResult>(&paths.judge_result())
            .map(|r| r.judges)
            .unwrap_or_default();
    participants
        .iter()
        .chain(&judges)
        .map(|e| entry_spend(&e.0))
        .fold(Spend::default(), Spend::plus)
}

/// Sets the cook's budget (if any) to what the cook's files record before a phase runs cells.
pub fn count_recorded(paths: &CookPaths, budgets: &super::budget::Budgets) {
    if budgets.pools.iter().any(|p| p.label == super::budget::COOK) {
        budgets.restart_cook(recorded_spend(paths));
    }
}
