//! What every role records about a finished cell in the same way: its usage from the CLI's
//! output, its egress (in results and, short, in status.json) and its progress line.

use serde_json::json;

use super::plan::CellPlan;
use crate::progress::CellPhase;
use crate::state::CellState;

/// A cell's usage dict from its (redacted) stdout log, with `source_path` (relative to the
/// cook) added after `source` as the reference writes it.
pub fn cell_usage(
    plan: &CellPlan,
    relative_log: &str,
    model: Option<&str>,
) -> Option<serde_json::Value> {
    let text = crate::fsx::read_capped(&plan.stdout_log, 64 << 20).ok()?;
    let usage =
        crate::flavor::usage_from_output(&plan.flavor, &String::from_utf8_lossy(&text), model)?;
    let serde_json::Value::Object(map) = usage else {
        return None;
    };
    let mut ordered = serde_json::Map::new();
    for (key, value) in map {
        let source = key == "source";
        ordered.insert(key, value);
        if source {
            ordered.insert("source_path".into(), relative_log.into());
        }
    }
    Some(serde_json::Value::Object(ordered))
}

/// The short form status.json keeps: the mode and whether the canary passed.
pub fn egress_summary(egress: &serde_json::Value) -> serde_json::Value {
    let canary = &egress["canary"];
    json!({"mode": egress["mode"], "canary": if canary.is_null() { json!(null) } else { canary["passed"].clone() }})
}

/// A cell's egress, as recorded in results: mode, allowed targets, canary report.
pub fn egress_record(plan: &CellPlan, canary: Option<&serde_json::Value>) -> serde_json::Value {
    let web_tools = plan
        .spec
        .env
        .iter()
        .any(|(k, v)| k == "MULTICOOKER_WEB_TOOLS" && v == "1");
    json!({"mode": plan.egress.mode(), "allow": plan.egress.allowed(), "web_tools": web_tools, "canary": canary})
}

/// The progress line of a finished cell.
pub fn done_phase(
    state: CellState,
    exit_code: Option<i64>,
    duration_s: f64,
    error: Option<&str>,
) -> CellPhase {
    let mut detail = match exit_code {
        Some(code) => format!("exit={code}, {duration_s:.1}s"),
        None => format!("{duration_s:.1}s"),
    };
    if let Some(error) = error {
        detail.push_str(&format!(": {error}"));
    }
    CellPhase::Done {
        state: state.as_str().to_owned(),
        detail,
        ok: state == CellState::Ok,
    }
}
