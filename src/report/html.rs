//! `leaderboard.html` (and the history page): one self-contained file, rendered from the same
//! data as summary.json. No script, no network: inline CSS and SVG only, every text escaped.
//! Older summaries without the jury keys render too (means without intervals).

use std::fmt::Write as _;

pub use super::html_history::render_history_html;
use super::html_sections::{bias, hidden_tests, pairwise, per_judge, provenance};

use serde_json::Value;

/// Escapes text for HTML element content and attribute values; control characters and
/// bidirectional overrides are shown, never obeyed (`crate::sanitize::terminal_safe`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::sanitize::terminal_safe(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes a path segment for a relative link.
fn href_segment(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

const STYLE: &str = "body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1d2329;background:#fbfbfa}\
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d8dadd;padding-bottom:.2rem}\
.meta{color:#5a6570;margin:.2rem 0}table{border-collapse:collapse;width:100%;margin:.6rem 0}th,td{padding:.35rem .5rem;border-bottom:1px solid #e4e6e8;text-align:left;vertical-align:middle}\
th{background:#f0f2f4;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}.group{background:#eef5ff}.group-1{background:#fff}\
th.num{text-align:right}.badge{display:inline-block;white-space:nowrap;padding:0 .4rem;border-radius:.6rem;font-size:.8rem;background:#dfe7f1;color:#234}.warn{background:#fde7d9;color:#7a2e00}.ok{background:#dff3e3;color:#14532d}\
.unscored{color:#8a6d00}svg text{font:11px system-ui,sans-serif;fill:#5a6570}code{background:#eef0f2;padding:0 .25rem;border-radius:3px}\
details{margin:.4rem 0}pre{white-space:pre-wrap;background:#f4f5f6;padding:.6rem;border-radius:4px}";

pub(super) fn text(value: &Value) -> String {
    match value {
        Value::Null => "–".to_owned(),
        Value::String(s) => escape(s),
        other => escape(&other.to_string()),
    }
}

pub(super) fn num(value: &Value, decimals: usize) -> String {
    value
        .as_f64()
        .map_or_else(|| "–".to_owned(), |x| format!("{x:.decimals$}"))
}

/// An SVG error bar on a 0–100 axis; a dot only when there is no interval.
fn bar(estimate: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> String {
    const W: f64 = 220.0;
    let x = |v: f64| 10.0 + v.clamp(0.0, 100.0) / 100.0 * W;
    let mut svg = format!(
        "<svg width=\"240\" height=\"18\" role=\"img\" aria-label=\"score\"><line x1=\"10\" y1=\"9\" x2=\"{:.1}\" y2=\"9\" stroke=\"#e1e4e8\"/>",
        10.0 + W
    );
    if let (Some(lo), Some(hi)) = (lo, hi) {
        let _ = write!(
            svg,
            "<line class=\"interval\" x1=\"{:.1}\" y1=\"9\" x2=\"{:.1}\" y2=\"9\" stroke=\"#3b6ea5\" stroke-width=\"3\"/><line x1=\"{:.1}\" y1=\"4\" x2=\"{:.1}\" y2=\"14\" stroke=\"#3b6ea5\"/><line x1=\"{:.1}\" y1=\"4\" x2=\"{:.1}\" y2=\"14\" stroke=\"#3b6ea5\"/>",
            x(lo),
            x(hi),
            x(lo),
            x(lo),
            x(hi),
            x(hi)
        );
    }
    if let Some(e) = estimate {
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"9\" r=\"4\" fill=\"#1d3f66\"/>",
            x(e)
        );
    }
    svg.push_str("</svg>");
    svg
}

pub(super) fn header(title: &str, out: &mut String) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
<title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(title)
    );
}

/// Renders leaderboard.html from summary.json's data.
pub fn render_leaderboard_html(summary: &Value) -> String {
    let cook = summary["cook"].as_str().unwrap_or("?");
    let mut out = String::new();
    header(&format!("Leaderboard — {cook}"), &mut out);
    let _ = write!(
        out,
        "<h1>Leaderboard — <code>{}</code></h1>\n<p class=\"meta\">Round {} · generated {} · policy {} · mode {}</p>\n",
        escape(cook),
        text(&summary["round"]),
        text(&summary["generated_at"]),
        text(&summary["anti_self_judge_policy"]),
        summary["judging_mode"]
            .as_str()
            .map_or_else(|| "rubric".to_owned(), escape),
    );
    if summary["status"] == "no_scores" {
        out.push_str("<p class=\"badge warn\" id=\"no-scores\">No scores: no judge produced a usable score, so there is no ranking.</p>\n");
    }
    ranking(summary, &mut out);
    hidden_tests(summary, &mut out);
    agreement(summary, &mut out);
    coverage(summary, &mut out);
    per_judge(summary, &mut out);
    pairwise(summary, &mut out);
    bias(summary, &mut out);
    provenance(summary, &mut out);
    out.push_str("</body></html>\n");
    out
}

/// The estimate for a participant: the statistics entry, else the ranking's mean.
fn estimate_of<'a>(summary: &'a Value, participant: &str) -> Option<&'a Value> {
    summary["statistics"]["estimates"]
        .as_array()?
        .iter()
        .find(|e| e["participant"] == participant)
}

fn group_of(summary: &Value, participant: &str) -> Option<usize> {
    summary["statistics"]["tied_groups"]
        .as_array()?
        .iter()
        .position(|g| {
            g.as_array()
                .is_some_and(|g| g.iter().any(|p| p == participant))
        })
}

fn ranking(summary: &Value, out: &mut String) {
    let Some(rows) = summary["ranking"].as_array().filter(|r| !r.is_empty()) else {
        return;
    };
    let stats = &summary["statistics"];
    let _ = write!(
        out,
        "<h2>Ranking</h2>\n<p class=\"meta\" id=\"method\">Method: {} · clusters: {} · level {} · seed {}. Ordered by score. Rank is the competition rank of the participant's group (2= shares it); groups are cut only where every pair across the cut is separated by its paired test (Holm-corrected); the rank range is what the participant's own tests allow.</p>\n",
        text(&stats["method"]),
        text(&stats["clusters"]),
        text(&stats["level"]),
        text(&stats["seed"])
    );
    if let Some(caveat) = stats["caveat"].as_str() {
        let _ = writeln!(
            out,
            "<p class=\"badge warn\" id=\"caveat\">Caveat: {}</p>",
            escape(caveat)
        );
    }
    out.push_str("<table id=\"ranking\"><thead><tr><th>Rank</th><th>Rank range</th><th>Participant</th><th>Flavor</th><th>Score %</th><th>Interval</th><th>0 — 100</th><th>Mean %</th><th>Size</th><th>Judges</th><th>Run</th><th>Duration</th><th>Tokens</th><th title=\"the CLIs' own estimate at API list prices, not a charge: a subscription is not billed per call\">API-equiv. cost</th><th>Outputs</th></tr></thead><tbody>\n");
    for row in rows {
        let name = row["participant"].as_str().unwrap_or("?");
        let estimate = estimate_of(summary, name);
        let score = estimate.map_or_else(
            || {
                row["score_pct"]
                    .as_f64()
                    .or_else(|| row["mean_pct"].as_f64())
            },
            |e| e["estimate"].as_f64(),
        );
        let (lo, hi) = estimate.map_or((None, None), |e| (e["lo"].as_f64(), e["hi"].as_f64()));
        let group = group_of(summary, name);
        let class = group.map_or(String::new(), |g| format!(" class=\"group-{}\"", g % 2));
        let group_size = rows
            .iter()
            .filter(|r| r["rank"].is_number() && r["rank"] == row["rank"])
            .count();
        // A summary older than the score-order rule has no rank_best or rank_single: its rank
        // was the best rank and always printed.
        let best = row["rank_best"].as_u64().or_else(|| row["rank"].as_u64());
        let single = row["rank_single"].as_bool().unwrap_or(true);
        let usize_of = |v: Option<u64>| v.and_then(|v| usize::try_from(v).ok());
        let range = crate::report::ranking::range_text(
            usize_of(best),
            usize_of(row["rank_worst"].as_u64()),
        );
        let rank_cell =
            crate::report::ranking::rank_text(usize_of(row["rank"].as_u64()), single, group_size);
        let interval = match (lo, hi) {
            (Some(lo), Some(hi)) => format!("{lo:.1} – {hi:.1}"),
            _ => "–".to_owned(),
        };
        let scored = row["rank"].is_number();
        let _ = writeln!(
            out,
            "<tr{class} data-participant=\"{pe}\"><td class=\"num\">{rank}</td><td class=\"num\">{range}</td><td>{pe}</td><td>{flavor}</td><td class=\"num\">{score}</td><td class=\"num\">{interval}</td><td>{bar}</td><td class=\"num\">{mean}</td><td class=\"num\">{size}</td><td class=\"num\">{judges}</td><td>{run}</td><td class=\"num\">{dur}</td><td class=\"num\">{tokens}</td><td class=\"num\">{cost}</td><td><a href=\"work/{href}/out/\">out/</a></td></tr>",
            pe = escape(name),
            rank = rank_cell,
            mean = num(&row["mean_pct"], 1),
            size = row["output_bytes"]
                .as_u64()
                .map_or_else(|| "–".to_owned(), |b| b.to_string()),
            flavor = text(&row["flavor"]),
            score = if scored {
                score.map_or_else(|| "–".to_owned(), |s| format!("{s:.1}"))
            } else {
                "<span class=\"unscored\">unscored</span>".to_owned()
            },
            bar = if scored {
                bar(score, lo, hi)
            } else {
                String::new()
            },
            judges = text(&row["num_judges"]),
            run = text(&row["run_status"]),
            dur = num(&row["duration_s"], 1),
            tokens = text(&row["tokens"]),
            cost = num(&row["cost_usd"], 4),
            href = href_segment(name),
        );
    }
    out.push_str("</tbody></table>\n");
    if rows
        .iter()
        .any(|r| r["rank"].is_number() && r["rank_single"] == false)
    {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}</p>",
            escape(crate::report::ranking::NO_SINGLE_RANK)
        );
    }
    if let Some(note) = stats["note"].as_str() {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", escape(note));
    }
    ranking_notes(stats, out);
}

/// Leniency and the paired comparisons, under the ranking table.
fn ranking_notes(stats: &Value, out: &mut String) {
    let leniency: Vec<String> = stats["leniency"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| format!("{} {}", text(&l["judge"]), num(&l["effect"], 1)))
        .collect();
    if !leniency.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"meta\" id=\"leniency\">Judge leniency (points above the panel's average judge, taken out of every score): {}</p>",
            leniency.join(", ")
        );
    }
    let pairs: Vec<String> = stats["pairs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "<li>{} − {}: {} ({} – {}), Holm p {}: {}</li>",
                text(&p["a"]),
                text(&p["b"]),
                num(&p["difference"], 1),
                num(&p["lo"], 1),
                num(&p["hi"], 1),
                num(&p["p_adjusted"], 3),
                if p["separated"] == true {
                    "<b>separated</b>"
                } else {
                    "not separated"
                }
            )
        })
        .collect();
    if !pairs.is_empty() {
        let _ = writeln!(
            out,
            "<details id=\"pairs\"><summary>Paired comparisons</summary><ul>{}</ul></details>",
            pairs.join("")
        );
    }
}

fn agreement(summary: &Value, out: &mut String) {
    let a = &summary["agreement"];
    if !a.is_object() {
        return;
    }
    let _ = write!(
        out,
        "<h2>Agreement</h2>\n<p id=\"agreement\">Krippendorff's α ({}): <b>{}</b> over {} units and {} judges.",
        text(&a["metric"]),
        num(&a["krippendorff_alpha"], 3),
        text(&a["units"]),
        text(&a["judges"])
    );
    if let (Some(reading), true) = (a["reading"].as_str(), a["krippendorff_alpha"].is_number()) {
        let _ = write!(out, " Reading: {}.", escape(reading));
    }
    for judge in a["per_judge_consistency"].as_array().into_iter().flatten() {
        let flag = match (judge["flagged"].as_bool(), judge["excluded"].as_bool()) {
            (_, Some(true)) => " <span class=\"badge warn\">flagged, left out</span>",
            (Some(true), _) => " <span class=\"badge warn\">flagged</span>",
            _ => "",
        };
        let _ = write!(
            out,
            " Position consistency of {}: {} of {} pairs{flag}.",
            text(&judge["judge"]),
            text(&judge["consistent"]),
            text(&judge["pairs_both_orders"])
        );
    }
    if a["position_consistency"].is_number() {
        let _ = write!(
            out,
            " Position consistency: <b>{}</b> of {} pairs judged in both orders ({} inconsistent, counted as ties).",
            num(&a["position_consistency"], 3),
            text(&a["pairs_both_orders"]),
            text(&a["position_inconsistent"])
        );
    }
    out.push_str("</p>\n");
}

fn coverage(summary: &Value, out: &mut String) {
    let Some(rows) = summary["coverage"].as_array().filter(|r| !r.is_empty()) else {
        return;
    };
    out.push_str("<h2>Coverage</h2>\n<table id=\"coverage\"><thead><tr><th>Participant</th><th class=\"num\">Scored by</th><th class=\"num\">Eligible judges</th><th>Why not all</th></tr></thead><tbody>\n");
    for row in rows {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            text(&row["participant"]),
            text(&row["scored_by"]),
            text(&row["eligible"]),
            row["reason"].as_str().map_or_else(String::new, escape)
        );
    }
    out.push_str("</tbody></table>\n");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn summary() -> Value {
        json!({
            "cook": "251122-<b>&x", "round": 1, "generated_at": "2026-11-22T10:00:00Z",
            "anti_self_judge_policy": "require_distinct_flavor", "judging_mode": "rubric",
            "ranking": [
                {"rank": 1, "rank_worst": 2, "participant": "ada", "flavor": "claude", "mean_pct": 80.0, "num_judges": 2, "run_status": "ok", "duration_s": 12.5, "tokens": 1000, "cost_usd": 0.12},
                {"rank": 1, "rank_worst": 2, "participant": "<script>alert(1)</script>", "flavor": "codex", "mean_pct": 70.0, "num_judges": 2, "run_status": "ok"},
                {"rank": null, "participant": "cleo", "flavor": "agy", "mean_pct": null, "num_judges": 0, "run_status": "timed_out", "unscored": true}
            ],
            "statistics": {"method": "mean+cluster_bootstrap", "clusters": "judges", "resamples": 2000, "level": 0.95, "seed": 7, "scale": "percent",
                "estimates": [{"participant": "ada", "estimate": 80.0, "lo": 70.0, "hi": 90.0, "clusters": 2}, {"participant": "<script>alert(1)</script>", "estimate": 70.0, "lo": 60.0, "hi": 80.0, "clusters": 2}],
                "tied_groups": [["ada", "<script>alert(1)</script>"]], "note": null},
            "agreement": {"krippendorff_alpha": 0.8, "metric": "interval", "units": 2, "judges": 2, "position_consistency": null, "pairs_both_orders": 0, "position_inconsistent": 0},
            "coverage": [{"participant": "cleo", "scored_by": 0, "eligible": 2, "reason": "its run ended `timed_out`"}],
            "per_judge": {"j1": {"ada": {"dimensions": {"correctness": 4}, "score_pct": 80.0, "excluded": false}}},
        })
    }

    #[test]
    fn everything_from_the_data_is_escaped_and_nothing_reaches_out() {
        let html = render_leaderboard_html(&summary());
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("251122-&lt;b&gt;&amp;x"));
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(html.contains("href=\"work/%3Cscript%3Ealert%281%29%3C%2Fscript%3E/out/\""));
    }

    #[test]
    fn ties_intervals_and_unscored_are_shown_and_output_is_stable() {
        let html = render_leaderboard_html(&summary());
        // Nothing separates the two: both rank 1=, with the range 1–2 beside the score.
        assert_eq!(html.matches(">1=<").count(), 2, "{html}");
        assert_eq!(html.matches(">1–2<").count(), 2);
        assert!(html.contains("70.0 – 90.0"));
        assert!(html.contains("<span class=\"unscored\">unscored</span>"));
        assert!(html.contains("class=\"interval\""));
        assert_eq!(html, render_leaderboard_html(&summary()), "deterministic");
    }

    #[test]
    fn an_old_summary_and_the_no_scores_case_render() {
        let old = json!({"cook": "c", "round": 1, "ranking": [{"rank": 1, "participant": "a", "mean_pct": 60.0, "num_judges": 1}]});
        let html = render_leaderboard_html(&old);
        assert!(html.contains("60.0") && !html.contains("class=\"interval\""));
        let none = json!({"cook": "c", "round": 1, "ranking": [], "status": "no_scores"});
        assert!(render_leaderboard_html(&none).contains("id=\"no-scores\""));
    }

    #[test]
    fn history_marks_nights_that_are_not_comparable() {
        let history = json!({"nightly": "n", "nights": [
            {"night": "2026-11-21", "status": "ok", "comparable": true, "participants": [{"participant": "a", "estimate": 60.0, "lo": 50.0, "hi": 70.0}], "changes": []},
            {"night": "2026-11-22", "status": "ok", "comparable": false, "not_comparable_reasons": ["unequal CLI pins"], "participants": [{"participant": "a", "estimate": 65.0}], "changes": [{"participant": "a", "kind": "cli_version", "from": "1.0", "to": "1.1"}, {"participant": "a", "kind": "score", "from": "60.0", "to": "65.0", "difference": 5.0, "significant": false}], "caveat": "only 2 briefs"}
        ]});
        let html = render_history_html(&history);
        assert!(html.contains("not comparable") && html.contains("unequal CLI pins"));
        assert!(html.contains("cli_version: 1.0 → 1.1"));
        assert!(
            html.contains("not significant") && html.contains("2 briefs"),
            "{html}"
        );
        assert!(html.contains("<polyline"));
    }
}
