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

/// Keeps a number and its `%` on one line (a no-break space before every ` %`).
pub(super) fn unbroken_units(html: &str) -> String {
    html.replace(" %", "\u{a0}%")
}

/// Percent-encodes a path segment for a relative link.
pub(super) fn href_segment(text: &str) -> String {
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

/// The pages' style: one column up to 1200 px, tables that scroll inside their own container
/// on a narrow screen (the page itself never scrolls sideways), badges and long names that
/// wrap, the bar charts folded below 600 px.
const STYLE: &str = "*{box-sizing:border-box}\
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:1rem;color:#1d2329;background:#fbfbfa;overflow-wrap:anywhere}\
h1{font-size:1.5rem;margin:.4rem 0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d8dadd;padding-bottom:.2rem}h3{font-size:1.05rem}\
.verdict{font-size:1.15rem;background:#eef5ff;border-left:4px solid #3b6ea5;padding:.6rem .8rem;margin:.5rem 0}\
.meta{color:#5a6570;margin:.3rem 0}.note{margin:.4rem 0;padding:.4rem .6rem;border-radius:4px;background:#f0f2f4}.note.warn{background:#fdf0e6}\
.scroll{overflow-x:auto;max-width:100%;margin:.6rem 0;background:linear-gradient(to right,#fbfbfa 30%,rgba(251,251,250,0)),linear-gradient(to left,#fbfbfa 30%,rgba(251,251,250,0)) 100% 0,radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.2),rgba(0,0,0,0)),radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.2),rgba(0,0,0,0)) 100% 0;background-repeat:no-repeat;background-size:40px 100%,40px 100%,14px 100%,14px 100%;background-attachment:local,local,scroll,scroll}table{border-collapse:collapse;width:100%}\
th,td{padding:.35rem .5rem;border-bottom:1px solid #e4e6e8;text-align:left;vertical-align:middle;overflow-wrap:normal}\
thead th{background:#f0f2f4;font-weight:600;white-space:nowrap}tbody th{font-weight:600}#ranking td,#latest td,table.cells td,td.when{white-space:nowrap}#nights td.rk{min-width:17rem}#nights td.ch{min-width:11rem}th.who{min-width:11rem}.links a{margin-right:.1rem}td.num,th.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}\
tr.new-group>*{border-top:2px solid #9fb4cc}small{color:#5a6570;font-weight:400}\
.badge{display:inline-block;white-space:normal;padding:0 .4rem;border-radius:.6rem;font-size:.8rem;background:#dfe7f1;color:#234}.warn{background:#fde7d9;color:#7a2e00}.ok{background:#dff3e3;color:#14532d}\
.unscored{color:#8a6d00}svg text{font:11px system-ui,sans-serif;fill:#5a6570}code{background:#eef0f2;padding:0 .25rem;border-radius:3px}\
details{margin:.4rem 0}summary{cursor:pointer}pre{white-space:pre-wrap;background:#f4f5f6;padding:.6rem;border-radius:4px}\
svg.trend{display:block;width:100%;max-width:760px;height:auto}svg.trend text.last{font-size:12px;font-weight:600}\
.legend{list-style:none;padding:0;margin:.4rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1.1rem}.swatch{display:inline-block;width:.85rem;height:.85rem;border-radius:2px;margin-right:.35rem;vertical-align:-.1rem}.band-key{background:#1f6fb4;opacity:.3}\
.reasons{margin:.2rem 0;padding-left:1.1rem}\
@media (max-width:600px){body{font-size:14px;padding:.6rem}h1{font-size:1.25rem}.verdict{font-size:1.02rem}.fold{display:none}svg.trend text{font-size:17px}svg.trend text.last,svg.trend text.mid{display:none}}";

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
    let _ = writeln!(out, "<h1>Leaderboard — <code>{}</code></h1>", escape(cook));
    let verdict = summary["verdict"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| super::verdict::of_summary(summary));
    match verdict {
        Some(verdict) => {
            let _ = writeln!(
                out,
                "<p class=\"verdict\" id=\"verdict\">{}</p>",
                unbroken_units(&escape(&verdict))
            );
        }
        None => out.push_str("<p class=\"verdict\" id=\"no-scores\">No scores: no judge produced a usable score, so there is no ranking.</p>\n"),
    }
    let _ = writeln!(
        out,
        "<p class=\"meta\">Round {} · generated {} · mode {} · policy {}</p>",
        text(&summary["round"]),
        text(&summary["generated_at"]),
        summary["judging_mode"]
            .as_str()
            .map_or_else(|| "rubric".to_owned(), escape),
        text(&summary["anti_self_judge_policy"]),
    );
    super::html_ranking::ranking(summary, &mut out);
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
    out.push_str("<h2>Coverage</h2>\n<div class=\"scroll\"><table id=\"coverage\"><thead><tr><th>Participant</th><th class=\"num\">Scored by</th><th class=\"num\">Eligible judges</th><th>Why not all</th></tr></thead><tbody>\n");
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
    out.push_str("</tbody></table></div>\n");
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
        assert!(html.contains("70.0–90.0"));
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
