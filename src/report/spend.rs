//! Spend against budget in the report: the cook's total against its `budget:`, then each
//! participant and judge against its own, with how many of its cells a budget stopped.

use super::input::ReportInput;
use crate::brief::Brief;
use crate::cell::spend_records::{SpendRecord, night_record};

/// The cook's row (role `cook`), then one per participant and judge that spent or is capped;
/// empty when nothing was spent and nothing is capped.
pub(super) fn rows(input: &ReportInput, brief: &Brief) -> Vec<SpendRecord> {
    let capped = brief.budget.is_some()
        || input
            .spend
            .iter()
            .any(|r| r.budget.is_some() || r.spent.tokens > 0);
    if !capped {
        return Vec::new();
    }
    let mut cook = night_record(&input.spend, brief.budget);
    cook.role = "cook".into();
    let mut rows = vec![cook];
    rows.extend(input.spend.iter().cloned());
    rows
}

/// `## Spend against budget`, when there is something to show.
pub(super) fn markdown(rows: &[SpendRecord], lines: &mut Vec<String>) {
    if rows.is_empty() {
        return;
    }
    lines.extend(
        [
            "",
            "## Spend against budget",
            "",
            "Read live from each CLI's own usage reports; a cell that reached a budget was stopped and is unscored (`budget_exhausted`).",
            "",
            "| Who | Role | Spend | Stopped at a budget |",
            "|-----|------|-------|---------------------|",
        ]
        .map(String::from),
    );
    for row in rows {
        let who = if row.role == "cook" {
            "**whole cook**".to_owned()
        } else {
            row.arm.clone()
        };
        lines.push(format!(
            "| {who} | {} | {} | {} |",
            row.role,
            row.describe(),
            row.exhausted
        ));
    }
}
