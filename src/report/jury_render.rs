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
            "reading": a.reading,
            "per_judge_consistency": a.judges_consistency.iter().map(|c| json!({"judge": c.judge, "pairs_both_orders": c.pairs_both_orders, "consistent": c.consistent, "rate": c.rate.map(round3), "first_shown_wins": c.first_shown_wins.map(round3), "flagged": c.flagged, "excluded": c.excluded})).collect::<Vec<_>>(),
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
            .map(|s| json!({"judge": s.judge, "flavor": s.flavor, "self_mean_pct": round2(s.self_mean_pct), "others_mean_pct": s.others_mean_pct.map(round2), "delta_pct": s.delta_pct.map(round2), "lo": s.lo.map(round2), "hi": s.hi.map(round2), "n": s.n, "baseline": s.baseline, "method": "difference_in_differences"}))
            .collect(),
    );
    map.insert(
        "blinding_probe".into(),
        jury.blinding
            .iter()
            .map(|b| json!({"judge": b.judge, "guesses": b.guesses, "raw_guesses": b.raw_guesses, "hits": b.hits, "chance": round3(b.chance), "hit_rate": b.hit_rate.map(round3), "p_value": b.p_value.map(round3), "smallest_p": b.smallest_p.map(round3), "needed_for_a_verdict": b.needed, "null": "permutation"}))
            .collect(),
    );
    map.insert("normalized".into(), json!(jury.normalized));
    map.insert(
        "length".into(),
        jury.length.as_ref().map_or(Value::Null, |l| {
            json!({
                "unit": "points per doubling of output size",
                "judges": l.judges.iter().map(|(j, s)| json!({"judge": j, "slope": round2(*s)})).collect::<Vec<_>>(),
                "slope": round2(l.slope.estimate), "lo": l.slope.lo.map(round2), "hi": l.slope.hi.map(round2),
                "assumption": LENGTH_ASSUMPTION,
                "controlled_withheld": l.withheld,
            })
        }),
    );
}

/// Printed wherever a length-controlled value is.
pub(super) const LENGTH_ASSUMPTION: &str = "within one cook each participant wrote one output, so size and quality cannot be told apart: the length-controlled score assumes size is not itself quality";

fn statistics(stats: &Statistics) -> Value {
    json!({
        "method": stats.method,
        "clusters": "judges",
        "resamples": stats.resamples,
        "level": stats.level,
        "seed": stats.seed.to_string(),
        "scale": "percent",
        "interval": "delete-one-judge jackknife, Student t with min(judges - 1, residual df) degrees of freedom",
        "separation": "paired difference per pair, Holm-corrected",
        "order": "by score; rank: competition rank of the participant's group, groups cut only where every cross pair is separated; rank_best-rank_worst: the ranks its own tests allow; rank_single false: its group has separated members, so no single rank",
        "estimates": stats.estimates.iter().map(|e| json!({
            "participant": e.participant, "estimate": round2(e.estimate), "plain_mean": e.plain.map(round2),
            "adjustment": e.plain.map(|p| round2(e.estimate - p)), "lo": e.lo.map(round2), "hi": e.hi.map(round2),
            "df": e.df, "clusters": e.clusters, "rank": e.rank, "rank_best": e.rank_best, "rank_worst": e.rank_worst, "rank_single": e.rank_single,
            "output_bytes": e.output_bytes, "length_controlled": e.length_controlled.map(round2),
        })).collect::<Vec<_>>(),
        "tied_groups": stats.tied_groups,
        "pairs": stats.pairs.iter().map(|p| json!({"a": p.a, "b": p.b, "difference": round2(p.difference), "lo": p.lo.map(round2), "hi": p.hi.map(round2), "p_adjusted": p.p_adjusted.map(round3), "separated": p.separated})).collect::<Vec<_>>(),
        "leniency": stats.leniency.iter().map(|l| json!({"judge": l.judge, "effect": round2(l.effect)})).collect::<Vec<_>>(),
        "note": stats.note,
        "caveat": stats.caveat,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The "How sure is this ranking?" section of leaderboard.md (the intervals and rank ranges
/// themselves are in the ranking table).
pub(super) fn markdown(jury: &Jury, lines: &mut Vec<String>) {
    let stats = &jury.statistics;
    if stats.estimates.is_empty() {
        return;
    }
    lines.push(String::new());
    lines.push("## How sure is this ranking?".into());
    lines.push(String::new());
    lines.push(format!(
        "{}. {:.0} % intervals: delete-one-judge jackknife with Student t ({} judge(s), min(judges − 1, residual) degrees of freedom), cut at the 0–100 scale. The table is ordered by score. Two participants are told apart only where their paired difference over the same judges is significant after Holm's correction; Rank is the competition rank of the participant's group (2= shares it), the groups cut only where every pair across the cut is told apart, and the rank range is what its own tests allow. Seed {}.",
        match stats.method {
            "bradley_terry+cluster_jackknife_t" =>
                "Score = Bradley–Terry chance of beating an average participant, from pairwise verdicts",
            _ => "Score = leniency-adjusted mean: each judge's leniency (points above the panel's average judge) is taken out, so who was allowed to judge whom cannot move the ranking",
        },
        stats.level * 100.0,
        stats.clusters,
        stats.seed
    ));
    if let Some(caveat) = &stats.caveat {
        lines.push(String::new());
        lines.push(format!("**Caveat:** {caveat}."));
    }
    if let Some(note) = &stats.note {
        lines.push(String::new());
        lines.push(format!("Note: {note}."));
    }
    leniency(stats, lines);
    separations(stats, lines);
    agreement(jury, lines);
    uncovered(jury, lines);
    bias(jury, lines);
    length(jury, lines);
}

fn leniency(stats: &Statistics, lines: &mut Vec<String>) {
    if stats.leniency.is_empty() {
        return;
    }
    let judges: Vec<String> = stats
        .leniency
        .iter()
        .map(|l| format!("{} {:+.1}", l.judge, l.effect))
        .collect();
    let moved: Vec<String> = stats
        .estimates
        .iter()
        .filter_map(|e| Some(format!("{} {:+.1}", e.participant, e.estimate - e.plain?)))
        .collect();
    lines.push(String::new());
    lines.push(format!(
        "Judge leniency (points above the average judge; a point estimate: a judge's own leniency cannot be resampled over judges): {}. Adjustment (score − plain mean): {}.",
        judges.join(", "),
        moved.join(", ")
    ));
}

fn separations(stats: &Statistics, lines: &mut Vec<String>) {
    if stats.pairs.is_empty() {
        return;
    }
    let unit = if stats.method.starts_with("bradley_terry") {
        " log-odds"
    } else {
        ""
    };
    let line = |p: &super::jury::PairSeparation| {
        let interval = match (p.lo, p.hi) {
            (Some(lo), Some(hi)) => format!(", {} – {}", fixed(lo, 1), fixed(hi, 1)),
            _ => ", no interval".to_owned(),
        };
        let p_value = p
            .p_adjusted
            .map_or_else(String::new, |x| format!(", Holm p = {x:.3}"));
        format!(
            "{} − {} = {:+.1}{unit}{interval}{p_value}",
            p.a, p.b, p.difference
        )
    };
    let (apart, together): (Vec<_>, Vec<_>) = stats.pairs.iter().partition(|p| p.separated);
    lines.push(String::new());
    if !apart.is_empty() {
        lines.push(format!(
            "Separated: {}.",
            apart.iter().map(|p| line(p)).collect::<Vec<_>>().join("; ")
        ));
    }
    if !together.is_empty() {
        lines.push(format!(
            "Not separated: {}.",
            together
                .iter()
                .map(|p| line(p))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if let Some(groups) = stats.tied_groups.as_ref().filter(|g| g.len() > 1) {
        lines.push(format!(
            "Groups (every pair across a `>` separated, best first): {}.",
            groups
                .iter()
                .map(|g| format!("{{{}}}", g.join(", ")))
                .collect::<Vec<_>>()
                .join(" > ")
        ));
    }
}

fn length(jury: &Jury, lines: &mut Vec<String>) {
    let Some(length) = &jury.length else {
        return;
    };
    let judges: Vec<String> = length
        .judges
        .iter()
        .map(|(j, s)| format!("{j} {s:+.1}"))
        .collect();
    let interval = match (length.slope.lo, length.slope.hi) {
        (Some(lo), Some(hi)) => format!(" (95 % {} – {})", fixed(lo, 1), fixed(hi, 1)),
        _ => String::new(),
    };
    let controlled: Vec<String> = jury
        .statistics
        .estimates
        .iter()
        .filter_map(|e| {
            Some(format!(
                "{} {}",
                e.participant,
                fixed(e.length_controlled?, 1)
            ))
        })
        .collect();
    let controlled = match length.withheld {
        Some(why) => format!("{why}."),
        None => format!(
            "Length-controlled scores (shown only, never used to order the table; kept inside 0–100): {} ({LENGTH_ASSUMPTION}).",
            controlled.join(", ")
        ),
    };
    lines.push(format!(
        "Length: scores move {:+.1} points per doubling of output size{interval}; per judge: {}. {controlled}",
        length.slope.estimate,
        judges.join(", "),
    ));
}

fn agreement(jury: &Jury, lines: &mut Vec<String>) {
    let a = &jury.agreement;
    let alpha = a.alpha.map_or_else(
        || "not computable (needs at least 2 participants each scored by 2 judges, and some variation)".to_owned(),
        |x| format!("{x:.3} over {} units, {} judges", a.units, a.judges),
    );
    lines.push(String::new());
    let reading = if a.alpha.is_some() {
        format!(": {}", a.reading)
    } else {
        String::new()
    };
    lines.push(format!(
        "Agreement: Krippendorff's α (interval) {alpha}{reading}."
    ));
    for c in &a.judges_consistency {
        let flag = match (c.flagged, c.excluded) {
            (_, true) => {
                " — below the floor: FLAGGED and left out (`judging.exclude_inconsistent_judges`)"
            }
            (true, false) => {
                " — below the floor: FLAGGED (its disagreeing pairs count as ties; set `judging.exclude_inconsistent_judges: true` to leave it out)"
            }
            _ => "",
        };
        lines.push(format!(
            "Position consistency of {}: {} of {} pairs agree across orders{}{}{flag}.",
            c.judge,
            c.consistent,
            c.pairs_both_orders,
            c.rate
                .map_or_else(String::new, |r| format!(" ({:.0} %)", r * 100.0)),
            c.first_shown_wins.map_or_else(String::new, |r| format!(
                "; the first-shown side won {:.0} % of its decisive verdicts",
                r * 100.0
            )),
        ));
    }
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
        let reading = match (s.lo, s.hi) {
            (Some(lo), _) if lo > 0.0 => "self-preference found",
            (_, Some(hi)) if hi < 0.0 => "it marks its own flavor down",
            (Some(_), Some(_)) => "no self-preference found",
            _ => "too few scores for an interval",
        };
        let interval = match (s.lo, s.hi) {
            (Some(lo), Some(hi)) => format!(" (95 % {} – {})", fixed(lo, 1), fixed(hi, 1)),
            _ => String::new(),
        };
        lines.push(format!(
            "Self-preference of {} ({}): own flavor {} % vs other judges {}; beyond its leniency on the {} other participant(s): {}{interval} — {reading} ({} self-judgment(s), not counted).",
            s.judge,
            s.flavor,
            fixed(s.self_mean_pct, 1),
            s.others_mean_pct.map_or_else(|| "n/a".to_owned(), |o| format!("{} %", fixed(o, 1))),
            s.baseline,
            s.delta_pct.map_or_else(|| "n/a".to_owned(), |d| format!("{d:+.1}")),
            s.n
        ));
    }
    for b in &jury.blinding {
        let too_small = b.smallest_p.is_some_and(|p| p >= 0.05);
        let reading = match (b.p_value, too_small) {
            (Some(p), _) if p < 0.05 => {
                "it can tell the vendors apart: the blinding leaks".to_owned()
            }
            (Some(_), true) => format!(
                "no verdict: this cook is too small for one (even every guess right would give p = {:.3}); {}",
                b.smallest_p.unwrap_or(1.0),
                b.needed.map_or_else(
                    || "with a single vendor there is nothing to test".to_owned(),
                    |n| format!("about {n} submissions over the same vendors would be needed")
                )
            ),
            (Some(_), false) => "no better than naming vendors by their counts".to_owned(),
            (None, _) => "no guesses".to_owned(),
        };
        lines.push(format!(
            "Blinding probe, {}: {} of {} submissions' vendors guessed right{} ({} raw guesses, one kept per submission); the best constant guess gets {:.0} %{} — {reading}.",
            b.judge,
            b.hits,
            b.guesses,
            b.hit_rate
                .map_or_else(String::new, |r| format!(" ({:.0} %)", r * 100.0)),
            b.raw_guesses,
            b.chance * 100.0,
            b.p_value
                .map_or_else(String::new, |p| format!("; permutation p = {p:.3}"))
        ));
    }
    let stripped: Vec<String> = jury
        .normalized
        .iter()
        .filter(|(_, items)| !items.is_empty())
        .map(|(p, items)| {
            // File names a participant chose: code spans, never markdown.
            let items: Vec<String> = items.iter().map(|i| crate::sanitize::code(i)).collect();
            format!("{p}: {}", items.join(", "))
        })
        .collect();
    if !stripped.is_empty() {
        lines.push(format!("Stripped before judging: {}.", stripped.join("; ")));
    }
}
