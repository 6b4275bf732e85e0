//! `summary.json`: the report as data, with the keys of docs/BEHAVIOR.md §6.6 plus
//! `rejected_pairs` and `unscored`. Keys keep insertion order (`preserve_order`), so the bytes
//! are stable.

use serde_json::{Map, Value, json};

use super::format::round2;
use super::model::{ExcludedPair, JudgeSection, RejectedPair, Report, Standing};

/// Renders summary.json. In the no-scores case the ranking, breakdown and artifacts are empty
/// and `status` is `no_scores`; a normal summary has no `status` key.
pub fn render_summary(report: &Report) -> Value {
    let scored = report.has_scores();
    let mut summary = json!({
        "schema_version": 1,
        "cook": report.cook,
        "round": report.round,
        "generated_at": report.generated_at,
        "anti_self_judge_policy": report.policy.as_str(),
        "judges_used": if scored { report.judges_used.clone() } else { Vec::new() },
        "ranking": if scored { report.standings.iter().map(|s| standing(report, s)).collect() } else { Vec::new() },
        "per_judge": if scored { per_judge(report) } else { json!({}) },
        "judge_run": report.judge_run,
        "excluded_pairs": if scored { excluded_pairs(report) } else { Vec::new() },
        "rejected_pairs": rejected_pairs(report),
        "unscored": report.unscored(),
        "injection_flags": report.injection_flags,
        "egress": report.egress.iter().map(|(name, mode, canary)| json!({"participant": name, "mode": mode, "canary_passed": canary})).collect::<Vec<_>>(),
        "web_tools": report.web_tools,
        "sandbox_check_passed": report.sandbox_passed,
        "cli_versions": report.cli_versions,
        "artifacts": if scored { json!({"leaderboard": "leaderboard.md", "html": "leaderboard.html", "manifest": "artifacts.json"}) } else { json!({}) },
    });
    if let Value::Object(map) = &mut summary {
        super::jury_render::summary_keys(report, map);
        if !report.null_checks.is_empty() {
            map.insert(
                "null_participant".into(),
                super::calibration::summary(&report.null_checks),
            );
        }
        if let Some(verification) = &report.verification {
            map.insert(
                "verification".into(),
                super::verification::summary(verification),
            );
        }
        if let Some(rewards) = &report.rewards {
            map.insert("task_reward".into(), super::rewards::summary(rewards));
        }
        if let Some(usage_totals) = &report.usage_totals {
            map.insert("usage_totals".into(), usage_totals.clone());
        }
        if !report.spend.is_empty() {
            // The cook's spend against its budget, then each participant's and judge's.
            map.insert(
                "spend".into(),
                crate::cell::spend_records::spend_json(&report.spend),
            );
        }
        if !scored {
            map.insert("status".into(), json!("no_scores"));
        }
    }
    // Last, from everything above: the sentence every page opens with.
    let verdict = super::verdict::of_summary(&summary);
    if let (Value::Object(map), Some(verdict)) = (&mut summary, verdict) {
        map.insert("verdict".into(), json!(verdict));
    }
    summary
}

fn excluded_pairs(report: &Report) -> Vec<Value> {
    let pair = |e: &ExcludedPair| json!({"judge": e.judge, "participant": e.participant, "flavor": e.flavor});
    report.excluded.iter().map(pair).collect()
}

fn rejected_pairs(report: &Report) -> Vec<Value> {
    let pair = |r: &RejectedPair| json!({"judge": r.judge, "participant": r.participant, "reason": r.reason});
    report.rejected.iter().map(pair).collect()
}

fn standing(report: &Report, standing: &Standing) -> Value {
    let run = standing.run.as_ref();
    let usage = run.and_then(|r| r.usage).unwrap_or_default();
    let estimate = report
        .jury
        .statistics
        .estimates
        .iter()
        .find(|e| e.participant == standing.participant);
    let mut entry = json!({
        "rank": standing.rank,
        "rank_best": standing.rank_best,
        "rank_worst": standing.rank_worst,
        "rank_single": standing.rank.map(|_| standing.rank_single),
        "participant": standing.participant,
        "flavor": standing.flavor,
        "mean_pct": standing.mean_pct.map(round2),
        "score_pct": standing.score_pct.map(round2),
        "lo": estimate.and_then(|e| e.lo).map(round2),
        "hi": estimate.and_then(|e| e.hi).map(round2),
        "output_bytes": estimate.and_then(|e| e.output_bytes),
        "num_judges": standing.num_judges,
        "run_status": run.and_then(|r| r.status.clone()),
        "duration_s": run.and_then(|r| r.duration_s),
        "tokens": usage.tokens,
        "cost_usd": usage.cost_usd,
    });
    if usage.cost_usd.is_some()
        && let Value::Object(map) = &mut entry
    {
        // Beside the reference's field, never instead of it: what the figure is.
        map.insert("cost_basis".into(), json!(crate::flavor::COST_BASIS));
    }
    if let (Some(verification), Value::Object(map)) = (&report.verification, &mut entry) {
        let row = verification.row(&standing.participant);
        let rate = row.and_then(|r| r.rate);
        map.insert(
            "tests_pct".into(),
            json!(rate.map(|r| round2(r.estimate * 100.0))),
        );
        map.insert("tests_lo".into(), json!(rate.map(|r| round2(r.lo * 100.0))));
        map.insert("tests_hi".into(), json!(rate.map(|r| round2(r.hi * 100.0))));
        map.insert(
            "combined_pct".into(),
            json!(row.and_then(|r| r.combined_pct).map(round2)),
        );
    }
    if standing.rank.is_none()
        && let Value::Object(map) = &mut entry
    {
        map.insert("unscored".into(), json!(true));
    }
    entry
}

fn per_judge(report: &Report) -> Value {
    let mut judges = Map::new();
    for section in &report.breakdown {
        let JudgeSection::Scored { judge, entries, .. } = section else {
            continue;
        };
        let mut keys = Map::new();
        for pair in entries {
            let dimensions: Map<String, Value> = pair.dimensions.iter().cloned().collect();
            let mut entry = Map::new();
            entry.insert("dimensions".into(), Value::Object(dimensions));
            entry.insert("score_pct".into(), json!(pair.score_pct.map(round2)));
            entry.insert("excluded".into(), json!(pair.excluded));
            if let Some(reason) = &pair.rejected {
                entry.insert("rejected".into(), json!(reason));
            }
            keys.insert(pair.key.clone(), Value::Object(entry));
        }
        judges.insert(judge.clone(), Value::Object(keys));
    }
    Value::Object(judges)
}
