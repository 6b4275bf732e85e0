//! The lower sections of `leaderboard.html`: per judge and dimension, pairwise verdicts, the
//! bias measurements and the run's provenance. Every text escaped; nothing reaches out.

use std::fmt::Write as _;

use serde_json::Value;

use super::html::{escape, num, text};

pub(super) fn per_judge(summary: &Value, out: &mut String) {
    let Some(judges) = summary["per_judge"].as_object().filter(|j| !j.is_empty()) else {
        return;
    };
    out.push_str("<h2>Per judge and dimension</h2>\n");
    for (judge, entries) in judges {
        let Some(entries) = entries.as_object().filter(|e| !e.is_empty()) else {
            continue;
        };
        let mut dims: Vec<&String> = Vec::new();
        for entry in entries.values() {
            for key in entry["dimensions"]
                .as_object()
                .into_iter()
                .flat_map(|d| d.keys())
            {
                if !dims.contains(&key) {
                    dims.push(key);
                }
            }
        }
        let _ = write!(
            out,
            "<h3>{}</h3>\n<div class=\"scroll\"><table class=\"judge\"><thead><tr><th>Participant</th>",
            escape(judge)
        );
        for dim in &dims {
            let _ = write!(out, "<th class=\"num\">{}</th>", escape(dim));
        }
        out.push_str("<th class=\"num\">Score %</th><th>Note</th></tr></thead><tbody>\n");
        for (participant, entry) in entries {
            let _ = write!(out, "<tr><td>{}</td>", escape(participant));
            for dim in &dims {
                let _ = write!(
                    out,
                    "<td class=\"num\">{}</td>",
                    text(&entry["dimensions"][dim.as_str()])
                );
            }
            let note = if entry["excluded"] == true {
                "excluded (own flavor)".to_owned()
            } else {
                entry["rejected"]
                    .as_str()
                    .map_or_else(String::new, |r| format!("rejected: {}", escape(r)))
            };
            let _ = writeln!(
                out,
                "<td class=\"num\">{}</td><td>{note}</td></tr>",
                num(&entry["score_pct"], 1)
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
}

pub(super) fn pairwise(summary: &Value, out: &mut String) {
    let Some(pairs) = summary["pairwise"]["pairs"]
        .as_array()
        .filter(|p| !p.is_empty())
    else {
        return;
    };
    out.push_str("<h2>Pairwise verdicts</h2>\n<div class=\"scroll\"><table id=\"pairwise\"><thead><tr><th>Judge</th><th>A</th><th>B</th><th>Outcome</th><th>Both orders agree</th></tr></thead><tbody>\n");
    for pair in pairs {
        let outcome = match pair["outcome"].as_str() {
            Some("a") => text(&pair["a"]),
            Some("b") => text(&pair["b"]),
            _ => "tie".to_owned(),
        };
        let consistent = match pair["consistent"].as_bool() {
            Some(true) => "<span class=\"badge ok\">yes</span>",
            Some(false) => "<span class=\"badge warn\">no (tie)</span>",
            None => "one order only",
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{outcome}</td><td>{consistent}</td></tr>",
            text(&pair["judge"]),
            text(&pair["a"]),
            text(&pair["b"])
        );
    }
    out.push_str("</tbody></table></div>\n");
}

pub(super) fn bias(summary: &Value, out: &mut String) {
    if let Some(rows) = summary["self_preference"]
        .as_array()
        .filter(|r| !r.is_empty())
    {
        out.push_str("<h2>Self-preference (measured, never counted)</h2>\n<div class=\"scroll\"><table id=\"self-preference\"><thead><tr><th>Judge</th><th>Flavor</th><th class=\"num\">Own flavor %</th><th class=\"num\">Other judges %</th><th class=\"num\">Beyond its leniency</th><th class=\"num\">Interval</th><th class=\"num\">n</th></tr></thead><tbody>\n");
        for row in rows {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} – {}</td><td class=\"num\">{}</td></tr>",
                text(&row["judge"]),
                text(&row["flavor"]),
                num(&row["self_mean_pct"], 1),
                num(&row["others_mean_pct"], 1),
                num(&row["delta_pct"], 1),
                num(&row["lo"], 1),
                num(&row["hi"], 1),
                text(&row["n"])
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if let Some(rows) = summary["blinding_probe"]
        .as_array()
        .filter(|r| !r.is_empty())
    {
        out.push_str("<h2>Blinding probe</h2>\n<div class=\"scroll\"><table id=\"blinding\"><thead><tr><th>Judge</th><th class=\"num\">Guesses</th><th class=\"num\">Right</th><th class=\"num\">Hit rate</th><th class=\"num\">Best constant guess</th><th class=\"num\">Permutation p</th></tr></thead><tbody>\n");
        for row in rows {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                text(&row["judge"]),
                text(&row["guesses"]),
                text(&row["hits"]),
                num(&row["hit_rate"], 3),
                num(&row["chance"], 3),
                num(&row["p_value"], 3)
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if let Some(map) = summary["normalized"].as_object() {
        let items: Vec<String> = map
            .iter()
            .filter_map(|(p, items)| {
                let list: Vec<String> = items.as_array()?.iter().map(text).collect();
                (!list.is_empty()).then(|| format!("<li>{}: {}</li>", escape(p), list.join(", ")))
            })
            .collect();
        if !items.is_empty() {
            let _ = writeln!(
                out,
                "<h2>Stripped before judging</h2>\n<ul id=\"normalized\">{}</ul>",
                items.join("")
            );
        }
    }
}

pub(super) fn provenance(summary: &Value, out: &mut String) {
    out.push_str("<h2>Run</h2>\n<ul id=\"provenance\">");
    if let Some(versions) = summary["cli_versions"]
        .as_object()
        .filter(|v| !v.is_empty())
    {
        let list: Vec<String> = versions
            .iter()
            .map(|(f, v)| format!("{} {}", escape(f), text(v)))
            .collect();
        let _ = write!(out, "<li>CLIs: {}</li>", list.join(", "));
    }
    if let Some(egress) = summary["egress"].as_array().filter(|e| !e.is_empty()) {
        let list: Vec<String> = egress
            .iter()
            .map(|e| format!("{} {}", text(&e["participant"]), text(&e["mode"])))
            .collect();
        let _ = write!(out, "<li>Egress: {}</li>", list.join(", "));
    }
    let web = summary["web_tools"].as_array().map_or(0, Vec::len);
    let _ = write!(
        out,
        "<li>Web tools: {}</li><li>Sandbox check: {}</li>",
        if web == 0 {
            "off".to_owned()
        } else {
            summary["web_tools"]
                .as_array()
                .map(|w| w.iter().map(text).collect::<Vec<_>>().join(", "))
                .unwrap_or_default()
        },
        match summary["sandbox_check_passed"].as_bool() {
            Some(true) => "passed",
            Some(false) => "FAILED",
            None => "not run",
        }
    );
    if let Some(flags) = summary["injection_flags"]
        .as_array()
        .filter(|f| !f.is_empty())
    {
        let _ = write!(
            out,
            "<li>{} line(s) aimed at the grader were flagged (never scored)</li>",
            flags.len()
        );
    }
    out.push_str("</ul>\n");
}

/// The hidden tests: pass rate, Wilson interval, combined score, outcome; then the agreement
/// between jury and tests. Nothing when the brief has no `verify:`.
pub(super) fn hidden_tests(summary: &Value, out: &mut String) {
    let verification = &summary["verification"];
    let Some(rows) = verification["participants"].as_array() else {
        return;
    };
    out.push_str("<h2>Hidden tests</h2>\n<div class=\"scroll\"><table id=\"hidden-tests\"><thead><tr><th>Participant</th><th class=\"num\">Passed</th><th class=\"num\">Pass %</th><th class=\"num\">95 % Wilson</th><th class=\"num\">Combined %</th><th>Outcome</th></tr></thead><tbody>\n");
    for row in rows {
        let passed = match (row["passed"].as_u64(), row["counted"].as_u64()) {
            (Some(p), Some(n)) => format!("{p}/{n}"),
            _ => "–".to_owned(),
        };
        let interval = if row["lo"].is_null() {
            "–".to_owned()
        } else {
            format!("{} – {}", num(&row["lo"], 1), num(&row["hi"], 1))
        };
        let pct = if row["pass_pct"].is_null() {
            "unscored".to_owned()
        } else {
            num(&row["pass_pct"], 1)
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{passed}</td><td class=\"num\">{pct}</td><td class=\"num\">{interval}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            text(&row["participant"]),
            if row["combined_pct"].is_null() {
                "–".to_owned()
            } else {
                num(&row["combined_pct"], 1)
            },
            text(&row["outcome"]),
        );
    }
    out.push_str("</tbody></table></div>\n");
    let agreement = &verification["agreement"];
    if agreement.is_object() {
        let _ = writeln!(
            out,
            "<p id=\"jury-tests-agreement\">Jury and tests: Spearman ρ {}, Kendall τ-b {} over {} participants.</p>",
            num(&agreement["spearman"], 2),
            num(&agreement["kendall_tau_b"], 2),
            text(&agreement["n"])
        );
    }
}
