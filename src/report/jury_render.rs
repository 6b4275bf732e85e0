//! The jury's measurements in summary.json (keys of the report contract) and in leaderboard.md
//! (a "How sure is this ranking?" section after the ranking). Pure: same report, same bytes.

use serde_json::{Map, Value, json};

use super::format::{fixed, round2};
use super::jury::{Jury, Statistics};
use super::model::Report;

/// The jury's keys of summary.json.
pub(super) fn summary_keys(report: &Report, map: &mut Map<String, Value>) {
    let jury = &report.jury;
    map.insert("judging_mode".into(), json!(jury.mode.as_str()));
    map.insert("statistics".into(), statistics(&jury.statistics));
    let a = &jury.agreement;
    map.insert(
        "agreement".into(),
        json!({
            "krippendorff_alpha": a.alpha.map(round3),
            "metric": "interval",
            "units": a.units,
            "judges": a.judges,
            "position_consistency": a.position_consistency.map(round3),
            "pairs_both_orders": a.pairs_both_orders,
            "position_inconsistent": a.position_inconsistent,
        }),
    );
    map.insert(
        "coverage".into(),
        jury.coverage
            .iter()
            .map(|c| json!({"participant": c.participant, "scored_by": c.scored_by, "eligible": c.eligible, "reason": c.reason}))
            .collect(),
    );
    map.insert(
        "pairwise".into(),
        jury.pairwise.as_ref().map_or(Value::Null, |p| {
            json!({
                "verdicts": p.verdicts.iter().map(|(judge, first, second, winner)| json!({"judge": judge, "first": first, "second": second, "winner": winner})).collect::<Vec<_>>(),
                "pairs": p.pairs.iter().map(|o| json!({"judge": o.judge, "a": o.a, "b": o.b, "outcome": o.outcome, "consistent": o.consistent})).collect::<Vec<_>>(),
            })
        }),
    );
    map.insert(
        "self_preference".into(),
        jury.self_preference
            .iter()
            .map(|s| json!({"judge": s.judge, "flavor": s.flavor, "self_mean_pct": round2(s.self_mean_pct), "others_mean_pct": s.others_mean_pct.map(round2), "delta_pct": s.delta_pct.map(round2), "n": s.n}))
            .collect(),
    );
    map.insert(
        "blinding_probe".into(),
        jury.blinding
            .iter()
            .map(|b| json!({"judge": b.judge, "guesses": b.guesses, "hits": b.hits, "chance": round3(b.chance), "hit_rate": b.hit_rate.map(round3), "p_value": b.p_value.map(round3)}))
            .collect(),
    );
    map.insert("normalized".into(), json!(jury.normalized));
}

fn statistics(stats: &Statistics) -> Value {
    json!({
        "method": stats.method,
        "clusters": "judges",
        "resamples": stats.resamples,
        "level": stats.level,
        "seed": stats.seed,
        "scale": "percent",
        "estimates": stats.estimates.iter().map(|e| json!({"participant": e.participant, "estimate": round2(e.estimate), "lo": e.lo.map(round2), "hi": e.hi.map(round2), "clusters": e.clusters})).collect::<Vec<_>>(),
        "tied_groups": stats.tied_groups,
        "note": stats.note,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The "How sure is this ranking?" section of leaderboard.md.
pub(super) fn markdown(jury: &Jury, lines: &mut Vec<String>) {
    let stats = &jury.statistics;
    if stats.estimates.is_empty() {
        return;
    }
    lines.push(String::new());
    lines.push("## How sure is this ranking?".into());
    lines.push(String::new());
    lines.push(format!(
        "{}; {:.0} % intervals from {} cluster-bootstrap resamples over judges (seed {}).",
        match stats.method {
            "bradley_terry+cluster_bootstrap" =>
                "Score = Bradley–Terry chance of beating an average participant, from pairwise verdicts",
            _ => "Score = mean over judges",
        },
        stats.level * 100.0,
        stats.resamples,
        stats.seed
    ));
    lines.push(String::new());
    lines.push("| Participant | Score % | Interval | Judges | Coverage |".into());
    lines.push("|-------------|---------|----------|--------|----------|".into());
    for estimate in &stats.estimates {
        let interval = match (estimate.lo, estimate.hi) {
            (Some(lo), Some(hi)) => format!("{} – {}", fixed(lo, 1), fixed(hi, 1)),
            _ => "–".to_owned(),
        };
        let coverage = jury
            .coverage
            .iter()
            .find(|c| c.participant == estimate.participant)
            .map_or_else(String::new, |c| format!("{}/{}", c.scored_by, c.eligible));
        lines.push(format!(
            "| {} | {} | {interval} | {} | {coverage} |",
            estimate.participant,
            fixed(estimate.estimate, 1),
            estimate.clusters
        ));
    }
    lines.push(String::new());
    match &stats.tied_groups {
        Some(groups) => lines.push(format!(
            "Tied groups (overlapping intervals, best first): {}.",
            groups
                .iter()
                .map(|g| format!("{{{}}}", g.join(", ")))
                .collect::<Vec<_>>()
                .join(" > ")
        )),
        None => lines.push(format!(
            "No tied groups: {}.",
            stats.note.as_deref().unwrap_or("an interval is missing")
        )),
    }
    agreement(jury, lines);
    uncovered(jury, lines);
    bias(jury, lines);
}

fn agreement(jury: &Jury, lines: &mut Vec<String>) {
    let a = &jury.agreement;
    let alpha = a.alpha.map_or_else(
        || "not computable (needs at least 2 participants each scored by 2 judges, and some variation)".to_owned(),
        |x| format!("{x:.3} over {} units, {} judges", a.units, a.judges),
    );
    lines.push(format!("Agreement: Krippendorff's α (interval) {alpha}."));
    if let Some(rate) = a.position_consistency {
        lines.push(format!(
            "Position consistency: {:.0} % of {} pairs judged in both orders agree; {} disagreeing pair(s) counted as ties.",
            rate * 100.0,
            a.pairs_both_orders,
            a.position_inconsistent
        ));
    }
}

fn uncovered(jury: &Jury, lines: &mut Vec<String>) {
    let partial: Vec<String> = jury
        .coverage
        .iter()
        .filter_map(|c| {
            let reason = c.reason.as_ref()?;
            Some(format!(
                "- {}: scored by {} of {} judges ({reason})",
                c.participant, c.scored_by, c.eligible
            ))
        })
        .collect();
    if !partial.is_empty() {
        lines.push(String::new());
        lines.push("Coverage gaps (unscored is never 0):".into());
        lines.extend(partial);
    }
}

fn bias(jury: &Jury, lines: &mut Vec<String>) {
    for s in &jury.self_preference {
        lines.push(format!(
            "Self-preference of {} ({}): own flavor {} % vs other judges {} ({} self-judgment(s), not counted).",
            s.judge,
            s.flavor,
            fixed(s.self_mean_pct, 1),
            match (s.others_mean_pct, s.delta_pct) {
                (Some(o), Some(d)) => format!("{} %, delta {:+.1}", fixed(o, 1), d),
                _ => "n/a".to_owned(),
            },
            s.n
        ));
    }
    for b in &jury.blinding {
        lines.push(format!(
            "Blinding probe, {}: {} of {} vendor guesses right{} vs chance {:.0} %{}.",
            b.judge,
            b.hits,
            b.guesses,
            b.hit_rate
                .map_or_else(String::new, |r| format!(" ({:.0} %)", r * 100.0)),
            b.chance * 100.0,
            b.p_value
                .map_or_else(String::new, |p| format!(", p = {p:.3}"))
        ));
    }
    let stripped: Vec<String> = jury
        .normalized
        .iter()
        .filter(|(_, items)| !items.is_empty())
        .map(|(p, items)| format!("{p}: {}", items.join(", ")))
        .collect();
    if !stripped.is_empty() {
        lines.push(format!("Stripped before judging: {}.", stripped.join("; ")));
    }
}
