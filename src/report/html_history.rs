//! The history page (`history --html`): trends per participant with interval bands, and each
//! night's ranking (ranks, incomplete participants) and what changed, score moves marked
//! significant or not. Self-contained like `leaderboard.html`: inline CSS and SVG, every text
//! escaped.

use std::fmt::Write as _;

use serde_json::Value;

use super::html::{escape, header, num, text};

/// Renders the history page from `history --json`.
pub fn render_history_html(history: &Value) -> String {
    let name = history["nightly"].as_str().unwrap_or("?");
    let mut out = String::new();
    header(&format!("History — {name}"), &mut out);
    let _ = writeln!(out, "<h1>History — <code>{}</code></h1>", escape(name));
    let nights = history["nights"].as_array().cloned().unwrap_or_default();
    let mut participants: Vec<String> = Vec::new();
    for night in &nights {
        for p in night["participants"].as_array().into_iter().flatten() {
            if let Some(name) = p["participant"].as_str()
                && !participants.iter().any(|x| x == name)
            {
                participants.push(name.to_owned());
            }
        }
    }
    out.push_str("<h2>Trends</h2>\n");
    for participant in &participants {
        let _ = write!(
            out,
            "<h3>{}</h3>\n{}",
            escape(participant),
            trend(&nights, participant)
        );
    }
    out.push_str("<h2>Nights</h2>\n<table id=\"nights\"><thead><tr><th>Night</th><th>Status</th><th>Comparable</th><th>Ranking</th><th>What changed</th></tr></thead><tbody>\n");
    for night in nights.iter().rev() {
        let comparable = if night["comparable"] == false {
            let reasons: Vec<String> = night["not_comparable_reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            format!(
                "<span class=\"badge warn\">not comparable</span> {}",
                reasons.join("; ")
            )
        } else {
            "<span class=\"badge ok\">yes</span>".to_owned()
        };
        let ranking = night_ranking(night);
        let changes: Vec<String> = night["changes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let significance = if c["kind"] != "score" {
                    String::new()
                } else if c["significant"] == true {
                    format!(" ({}, <b>significant</b>)", num(&c["difference"], 1))
                } else {
                    format!(" ({}, not significant)", num(&c["difference"], 1))
                };
                format!(
                    "{} {}: {} → {}{significance}",
                    text(&c["participant"]),
                    text(&c["kind"]),
                    text(&c["from"]),
                    text(&c["to"])
                )
            })
            .chain(
                night["change_design"]["minimum_detectable_difference"]
                    .as_f64()
                    .map(|mdd| format!("<i>this design detects changes of {mdd:.1} points or more (80 % power)</i>")),
            )
            .collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{comparable}</td><td>{}{}</td><td>{}</td></tr>",
            text(&night["night"]),
            text(&night["status"]),
            ranking.join(", "),
            night["caveat"]
                .as_str()
                .map_or_else(String::new, |c| format!(
                    "<br><span class=\"badge warn\">caveat</span> {}",
                    escape(c)
                )),
            changes.join("<br>")
        );
    }
    out.push_str("</tbody></table>\n</body></html>\n");
    out
}

/// A night's ranking cell: each participant with its estimate, interval, ranks and whether it
/// is incomplete.
fn night_ranking(night: &Value) -> Vec<String> {
    night["participants"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let rank = super::rank_words(night, p);
            let rank = if rank.is_empty() {
                rank
            } else {
                format!(" ({})", rank.trim_start())
            };
            let interval = match (p["lo"].as_f64(), p["hi"].as_f64()) {
                (Some(lo), Some(hi)) => format!(" [{lo:.1}, {hi:.1}]"),
                _ => String::new(),
            };
            let incomplete = if p["incomplete"] == true {
                " <span class=\"badge warn\">incomplete</span>"
            } else {
                ""
            };
            format!(
                "{} {}{interval}{rank}{incomplete}",
                text(&p["participant"]),
                num(&p["estimate"], 1)
            )
        })
        .collect()
}

/// A night's point: (night index, estimate, lo, hi, comparable).
type Point = (usize, f64, Option<f64>, Option<f64>, bool);

/// One participant's estimates across nights: a line with an interval band.
#[expect(clippy::cast_precision_loss, reason = "a few hundred nights at most")]
fn trend(nights: &[Value], participant: &str) -> String {
    let points: Vec<Point> = nights
        .iter()
        .enumerate()
        .filter_map(|(i, night)| {
            let p = night["participants"]
                .as_array()?
                .iter()
                .find(|p| p["participant"] == participant)?;
            Some((
                i,
                p["estimate"].as_f64()?,
                p["lo"].as_f64(),
                p["hi"].as_f64(),
                night["comparable"] != false,
            ))
        })
        .collect();
    let width = 60.0 + 80.0 * nights.len().max(1) as f64;
    let x = |i: usize| 40.0 + 80.0 * i as f64;
    let y = |v: f64| 130.0 - v.clamp(0.0, 100.0) * 1.2;
    let mut svg = format!(
        "<svg class=\"trend\" width=\"{width:.0}\" height=\"150\" role=\"img\" aria-label=\"trend of {}\"><line x1=\"30\" y1=\"130\" x2=\"{:.0}\" y2=\"130\" stroke=\"#c9cdd2\"/><text x=\"0\" y=\"134\">0</text><text x=\"0\" y=\"14\">100</text>",
        escape(participant),
        width - 10.0
    );
    for (i, _, lo, hi, comparable) in &points {
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let _ = write!(
                svg,
                "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{3}\" stroke-width=\"8\" stroke-opacity=\"0.35\"/>",
                x(*i),
                y(*lo),
                y(*hi),
                if *comparable { "#3b6ea5" } else { "#c2410c" }
            );
        }
    }
    let path: Vec<String> = points
        .iter()
        .map(|(i, e, ..)| format!("{:.1},{:.1}", x(*i), y(*e)))
        .collect();
    if path.len() > 1 {
        let _ = write!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#1d3f66\" stroke-width=\"2\"/>",
            path.join(" ")
        );
    }
    for (i, e, _, _, comparable) in &points {
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{e:.1}</title></circle>",
            x(*i),
            y(*e),
            if *comparable { "#1d3f66" } else { "#c2410c" }
        );
    }
    for (i, night) in nights.iter().enumerate() {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"146\" text-anchor=\"middle\">{}</text>",
            x(i),
            text(&night["night"])
        );
    }
    svg.push_str("</svg>\n");
    svg
}
