//! The history document and what changed from one night to the next: provenance (CLI, model,
//! image, brief, judge brief) and score moves, each marked significant or not by the paired
//! per-brief difference (Holm over participants), with the minimum difference the night's
//! design can detect, so a noise-sized move never reads like a real drop.

use serde_json::{Value, json};

use super::store::{CellRecord, NightRecord};
use crate::report::jury::LEVEL;

/// A participant's score move: name, before, after, paired per-brief difference.
type Move = (
    String,
    Option<f64>,
    Option<f64>,
    Option<mc_stats::TInterval>,
);

/// A participant both nights scored: name, before, after, per-brief differences.
type Compared = (String, Option<f64>, Option<f64>, Vec<f64>);

/// Power at which the minimum detectable difference is quoted.
pub(crate) const POWER: f64 = 0.8;

/// The history document (see the report contract): nights oldest first, each with what
/// changed since the night before. Seeds are strings (a number above 2^53 would lose digits
/// in most JSON readers).
pub fn history_json(name: &str, store: &std::path::Path, nights: &[NightRecord]) -> Value {
    let mut out = Vec::new();
    for (index, night) in nights.iter().enumerate() {
        let previous = index.checked_sub(1).map(|i| &nights[i]);
        let participants: Vec<Value> = night
            .estimates
            .iter()
            .map(|e| {
                let arm = night.arms.iter().find(|a| a.participant == e.participant);
                json!({
                    "participant": e.participant,
                    "flavor": arm.map(|a| a.flavor.clone()),
                    "model": arm.and_then(|a| a.model.clone()),
                    "cli_version": arm.and_then(|a| a.cli_version.clone()),
                    "image": arm.and_then(|a| a.image.clone()),
                    "backend": arm.and_then(|a| a.backend.clone()),
                    "nodes": arm.map(|a| a.nodes.clone()).unwrap_or_default(),
                    "estimate": e.estimate, "lo": e.lo, "hi": e.hi,
                    "rank": e.rank, "rank_best": e.rank_best.or(e.rank),
                    "rank_worst": e.rank_worst, "rank_single": e.rank_single,
                    "incomplete": e.incomplete, "plain_mean": e.plain,
                    "length_controlled": e.length_controlled,
                    "scored_cells": e.scored_cells, "cells": e.cells,
                })
            })
            .collect();
        let design = previous.map(|p| design(p, night));
        out.push(json!({
            "id": night.id, "night": night.night, "started_at": night.started_at,
            "finished_at": night.finished_at, "status": night.status,
            "comparable": night.comparable, "not_comparable_reasons": night.reasons,
            "method": night.method, "seed": night.seed.to_string(),
            "participants": participants, "tied_groups": night.tied_groups,
            "failures": night.failures,
            "briefs": briefs(night).len(),
            "cells": night.cells,
            "caveat": crate::report::few_clusters_caveat(briefs(night).len(), night.estimates.iter().any(|e| e.estimate.is_some()), "briefs"),
            "conditioning": night.estimates.iter().any(|e| e.lo.is_some()).then_some(crate::report::NIGHT_CONDITIONING),
            "changes": previous.map(|p| changes(p, night)).unwrap_or_default(),
            "change_design": design,
            "pass_rates": night.pass_rates,
            "task_rewards": night.task_rewards,
            "spend": super::budget::spend_json(&night.spend),
        }));
    }
    json!({"nightly": name, "store": store, "nights": out})
}

/// Everything that changed from `before` to `after`: provenance, then one score entry per
/// participant scored in both, with its paired per-brief difference, interval, Holm-adjusted
/// p-value and whether it is significant.
pub fn changes(before: &NightRecord, after: &NightRecord) -> Vec<Value> {
    let mut found = provenance_changes(before, after);
    let compared: Vec<Compared> = after
        .estimates
        .iter()
        .filter_map(|estimate| {
            let old = before
                .estimates
                .iter()
                .find(|e| e.participant == estimate.participant)?;
            let differences = paired(before, after, &estimate.participant);
            Some((
                estimate.participant.clone(),
                old.estimate,
                estimate.estimate,
                differences,
            ))
        })
        .collect();
    // Bonferroni over the participants tested (Holm's first step, the only one a single move
    // ever reaches): the flag, the interval and the detectable difference share one level, so
    // an interval that excludes 0 is exactly a flagged move.
    let tests = compared.iter().filter(|c| c.3.len() >= 2).count().max(1);
    #[expect(clippy::cast_precision_loss, reason = "participants are few")]
    let level = 1.0 - (1.0 - LEVEL) / tests as f64;
    for (participant, from, to, differences) in compared {
        let interval = mc_stats::mean_interval(&differences, level);
        let text = |x: Option<f64>| x.map(|x| format!("{x:.1}"));
        if text(from) == text(to) && interval.is_none_or(|i| i.estimate.abs() < 0.05) {
            // No change to report: "76.7 → 76.7 (+0.0 …)" said nothing.
            continue;
        }
        #[expect(clippy::cast_precision_loss, reason = "participants are few")]
        let p = interval
            .and_then(|i| i.p_value())
            .map(|p| (p * tests as f64).min(1.0));
        let move_: Move = (participant, from, to, interval);
        found.push(score_change(&move_, &differences, p, level));
    }
    found
}

/// One score move's entry (see [`changes`]).
fn score_change(m: &Move, differences: &[f64], p: Option<f64>, level: f64) -> Value {
    let (participant, from, to, interval) = m;
    json!({
        "participant": participant, "kind": "score",
        "from": from.map(|x| format!("{x:.1}")), "to": to.map(|x| format!("{x:.1}")),
        "difference": interval.map(|i| round2(i.estimate)),
        "lo": interval.and_then(|i| i.lo).map(round2), "hi": interval.and_then(|i| i.hi).map(round2),
        "level": (level * 10_000.0).round() / 10_000.0,
        "briefs": differences.len(),
        "p_adjusted": p.map(|p| (p * 1000.0).round() / 1000.0),
        "significant": p.is_some_and(|p| p < 1.0 - LEVEL),
    })
}

/// The night's per-brief score of a participant: mean over its repeats' scored cells.
#[expect(clippy::cast_precision_loss, reason = "a night's repeats are few")]
fn brief_score(cells: &[CellRecord], participant: &str, brief: &str) -> Option<f64> {
    let values: Vec<f64> = cells
        .iter()
        .filter(|c| c.participant == participant && c.brief == brief)
        .filter_map(|c| c.score)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn briefs(night: &NightRecord) -> Vec<&str> {
    let mut briefs: Vec<&str> = night.cells.iter().map(|c| c.brief.as_str()).collect();
    briefs.sort_unstable();
    briefs.dedup();
    briefs
}

/// `after - before` per brief both nights scored the participant on.
fn paired(before: &NightRecord, after: &NightRecord, participant: &str) -> Vec<f64> {
    briefs(after)
        .into_iter()
        .filter_map(|brief| {
            Some(
                brief_score(&after.cells, participant, brief)?
                    - brief_score(&before.cells, participant, brief)?,
            )
        })
        .collect()
}

/// What this pair of nights can see: briefs, repeats, the pooled spread of the per-brief
/// differences and the smallest change the flag (Bonferroni over the participants tested)
/// detects with [`POWER`], from the exact power of the t test (`mc_stats::detectable_difference`).
#[expect(clippy::cast_precision_loss, reason = "a night's briefs are few")]
fn design(before: &NightRecord, after: &NightRecord) -> Value {
    let mut squares = 0.0;
    let mut df = 0;
    let mut briefs_used = 0;
    for estimate in &after.estimates {
        let d = paired(before, after, &estimate.participant);
        if d.len() >= 2 {
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            squares += d.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
            df += d.len() - 1;
            briefs_used = briefs_used.max(d.len());
        }
    }
    let repeats = after.cells.iter().map(|c| c.repeat).max().unwrap_or(0);
    let spread = (df > 0).then(|| (squares / df as f64).sqrt());
    let tests = tested(before, after);
    // No spread (every per-brief difference equal) gives no power statement: a zero standard
    // error would "detect" a change of 0.0 points.
    let mdd = spread.filter(|&s| s > 1e-9).and_then(|s| {
        mc_stats::detectable_difference(
            s / (briefs_used as f64).sqrt(),
            briefs_used - 1,
            LEVEL,
            POWER,
            tests,
        )
    });
    json!({
        "briefs": briefs(after).len(), "repeats": repeats,
        "spread": spread.map(round2), "power": POWER, "tests": tests,
        "minimum_detectable_difference": mdd.map(round2),
        "why_none": match (spread, mdd) {
            (Some(s), None) if s <= 1e-9 => Some("the per-brief differences do not vary at all, so no power can be computed"),
            (None, _) => Some("fewer than 2 briefs compared on both nights"),
            _ => None,
        },
    })
}

/// Participants both nights scored on at least 2 common briefs: the tests the flag divides
/// its level over.
fn tested(before: &NightRecord, after: &NightRecord) -> usize {
    after
        .estimates
        .iter()
        .filter(|e| paired(before, after, &e.participant).len() >= 2)
        .count()
        .max(1)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn provenance_changes(before: &NightRecord, after: &NightRecord) -> Vec<Value> {
    let mut found = Vec::new();
    let mut change = |participant: Option<&str>,
                      kind: &str,
                      from: Option<String>,
                      to: Option<String>| {
        if from != to {
            found.push(json!({"participant": participant, "kind": kind, "from": from, "to": to}));
        }
    };
    for arm in &after.arms {
        let Some(old) = before
            .arms
            .iter()
            .find(|a| a.participant == arm.participant)
        else {
            continue;
        };
        change(
            Some(&arm.participant),
            "cli_version",
            old.cli_version.clone(),
            arm.cli_version.clone(),
        );
        change(
            Some(&arm.participant),
            "model",
            old.model.clone(),
            arm.model.clone(),
        );
        change(
            Some(&arm.participant),
            "models_reported",
            Some(old.models_reported.join(",")),
            Some(arm.models_reported.join(",")),
        );
        change(
            Some(&arm.participant),
            "image",
            old.image.clone(),
            arm.image.clone(),
        );
        if old.backend.is_some() {
            change(
                Some(&arm.participant),
                "backend",
                old.backend.clone(),
                arm.backend.clone(),
            );
        }
    }
    for brief in &after.briefs {
        let old = before.briefs.iter().find(|b| b.brief == brief.brief);
        let old_brief = old.map(|b| {
            format!(
                "{}/{}",
                &b.brief_sha256[..12.min(b.brief_sha256.len())],
                &b.brief_md_sha256[..12.min(b.brief_md_sha256.len())]
            )
        });
        let new_brief = Some(format!(
            "{}/{}",
            &brief.brief_sha256[..12.min(brief.brief_sha256.len())],
            &brief.brief_md_sha256[..12.min(brief.brief_md_sha256.len())]
        ));
        if old.is_some() {
            let named = |hash: String| format!("{}@{hash}", brief.brief);
            change(None, "brief", old_brief.map(named), new_brief.map(named));
            change(
                None,
                "judge_brief",
                old.map(|b| {
                    named(b.judge_brief_sha256[..12.min(b.judge_brief_sha256.len())].to_owned())
                }),
                Some(named(
                    brief.judge_brief_sha256[..12.min(brief.judge_brief_sha256.len())].to_owned(),
                )),
            );
        }
    }
    found
}

/// Reasons of a failed or partial night shown in text (`--json` has all of them).
const SHOWN_FAILURES: usize = 8;

/// `history`'s text: the latest night's verdict, then one line per night (ranking with
/// intervals, ranks and what is incomplete; a failed or partial night with why), then what
/// changed, each score move marked significant or not, and what the design can detect.
pub fn history_text(document: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    // The latest night's verdict first (issue 27), then every night.
    if let Some(latest) = document["nights"].as_array().and_then(|n| n.last())
        && let Some(verdict) = crate::report::verdict::of_night(latest)
    {
        lines.push(format!(
            "Verdict, night {}: {verdict}",
            latest["night"].as_str().unwrap_or("?")
        ));
        lines.push(String::new());
    }
    for night in document["nights"].as_array().into_iter().flatten() {
        let ranking: Vec<String> = night["participants"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let interval = match (p["lo"].as_f64(), p["hi"].as_f64()) {
                    (Some(lo), Some(hi)) => format!(" [{lo:.1}, {hi:.1}]"),
                    _ => String::new(),
                };
                let rank = crate::report::rank_words(night, p);
                let incomplete = if p["incomplete"] == true {
                    " (incomplete)"
                } else {
                    ""
                };
                format!(
                    "{} {}{interval}{rank}{incomplete}",
                    p["participant"].as_str().unwrap_or("?"),
                    p["estimate"]
                        .as_f64()
                        .map_or_else(|| "–".into(), |e| format!("{e:.1}"))
                )
            })
            .collect();
        let flag = if night["comparable"] == false {
            " (not comparable)"
        } else {
            ""
        };
        let status = match night["status"].as_str().unwrap_or("?") {
            "failed" => "FAILED (no ranking)",
            other => other,
        };
        lines.push(format!(
            "{} {status}{flag}: {}",
            night["night"].as_str().unwrap_or("?"),
            ranking.join(", ")
        ));
        if night["status"] != "ok" {
            // A failed or partial night says why (issue 17: it used to say nothing).
            let failures: Vec<&str> = night["failures"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for failure in failures.iter().take(SHOWN_FAILURES) {
                lines.push(format!("  because {failure}"));
            }
            if failures.len() > SHOWN_FAILURES {
                lines.push(format!(
                    "  … and {} more (`--json` lists all)",
                    failures.len() - SHOWN_FAILURES
                ));
            }
        }
        if let Some(caveat) = night["caveat"].as_str() {
            lines.push(format!("    caveat: {caveat}"));
        }
        if let Some(conditioning) = night["conditioning"].as_str() {
            lines.push(format!("    {conditioning}"));
        }
        lines.extend(super::budget::spend_lines(&night["spend"]));
        let rates: Vec<String> = night["pass_rates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} {:.1} % [{:.1}, {:.1}] ({}/{} over {} brief(s))",
                    r["participant"].as_str().unwrap_or("?"),
                    r["estimate"].as_f64().unwrap_or(f64::NAN),
                    r["lo"].as_f64().unwrap_or(f64::NAN),
                    r["hi"].as_f64().unwrap_or(f64::NAN),
                    r["passed"],
                    r["counted"],
                    r["briefs"]
                )
            })
            .collect();
        if !rates.is_empty() {
            lines.push(format!("    hidden tests: {}", rates.join(", ")));
        }
        lines.extend(super::rewards::text_line(&night["task_rewards"]).map(|l| format!("    {l}")));
        for change in night["changes"].as_array().into_iter().flatten() {
            lines.push(change_line(change));
        }
        design_line(&night["change_design"], &mut lines);
    }
    lines
}

/// What the design can flag, or why nothing is said about it.
fn design_line(design: &Value, lines: &mut Vec<String>) {
    if let Some(mdd) = design["minimum_detectable_difference"]
        .as_f64()
        .filter(|&m| m > 100.0)
    {
        lines.push(format!(
            "    this design ({} brief(s)) would flag only a change of {mdd:.0} points with {:.0} % power: no change on the 0–100 scale is reliably detected; compare more briefs",
            design["briefs"], POWER * 100.0
        ));
    } else if let Some(mdd) = design["minimum_detectable_difference"].as_f64() {
        lines.push(format!(
            "    this design ({} brief(s) × {} repeat(s), spread {:.1}) flags a change of {mdd:.1} points or more with {:.0} % power (the flag's own test, over {} participant(s)); smaller moves are noise to it",
            design["briefs"], design["repeats"], design["spread"].as_f64().unwrap_or(f64::NAN), POWER * 100.0, design["tests"]
        ));
    } else if let Some(why) = design["why_none"].as_str() {
        lines.push(format!("    no power statement: {why}"));
    }
}

fn change_line(change: &Value) -> String {
    let whom = change["participant"]
        .as_str()
        .map_or_else(String::new, |p| format!(" of {p}"));
    let mut line = format!(
        "    changed {}{whom}: {} → {}",
        change["kind"].as_str().unwrap_or("?"),
        change["from"].as_str().unwrap_or("–"),
        change["to"].as_str().unwrap_or("–")
    );
    if change["kind"] == "score" {
        let level = change["level"].as_f64().unwrap_or(LEVEL) * 100.0;
        let interval = match (change["lo"].as_f64(), change["hi"].as_f64()) {
            (Some(lo), Some(hi)) => {
                let level = format!("{level:.2}");
                let level = level.trim_end_matches('0').trim_end_matches('.');
                format!(", {level} % {lo:.1} – {hi:.1}")
            }
            _ => String::new(),
        };
        line.push_str(&format!(
            " ({} over {} brief(s){interval}: {})",
            change["difference"]
                .as_f64()
                .map_or_else(|| "no paired difference".to_owned(), |d| format!("{d:+.1}")),
            change["briefs"],
            if change["significant"] == true {
                "SIGNIFICANT"
            } else {
                "not significant"
            }
        ));
    }
    line
}
