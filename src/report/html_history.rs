//! The history page (`history --html`), as a dashboard: the latest night's verdict and ranking
//! (intervals, groups, pass rates) at the top, one trend chart with every participant, then
//! every night (failed and partial ones with their reasons, what changed) with its per-brief
//! results a click away; an empty store says so. Self-contained like `leaderboard.html`: inline
//! CSS and SVG, every text escaped.

use std::fmt::Write as _;

use serde_json::Value;

use super::html::{escape, header, num, text};
use super::html_ranking::bar;
use super::html_trend::{chart, participants, style_of};

/// Renders the history page from `history --json`.
pub fn render_history_html(history: &Value) -> String {
    let name = history["nightly"].as_str().unwrap_or("?");
    let mut out = String::new();
    header(&format!("History — {name}"), &mut out);
    let _ = writeln!(out, "<h1>History — <code>{}</code></h1>", escape(name));
    let nights = history["nights"].as_array().cloned().unwrap_or_default();
    let Some(latest) = nights.last() else {
        out.push_str("<p class=\"verdict\" id=\"empty\">No night recorded yet: each <code>multicooker nightly</code> run of this config adds one, and this page then shows who leads and how the scores move.</p>\n</body></html>\n");
        return out;
    };
    let _ = writeln!(
        out,
        "<p class=\"verdict\" id=\"verdict\">{}</p>",
        super::html::unbroken_units(&escape(&headline(latest)))
    );
    if let Some(reasons) = not_ok(latest) {
        let _ = writeln!(
            out,
            "<p class=\"note warn\" id=\"latest-status\">{reasons}</p>"
        );
    }
    let first = nights
        .first()
        .map_or("?", |n| n["night"].as_str().unwrap_or("?"));
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} night(s), {} to {} · method {}</p>",
        nights.len(),
        escape(first),
        text(&latest["night"]),
        text(&latest["method"])
    );
    latest_ranking(&nights, latest, &mut out);
    out.push_str("<h2>Trend</h2>\n");
    out.push_str(&chart(&nights));
    nights_table(&nights, &mut out);
    per_brief(&nights, &mut out);
    out.push_str("</body></html>\n");
    out
}

/// `Night 2026-11-22: bee leads …`, or why the night has no ranking.
fn headline(night: &Value) -> String {
    let when = night["night"].as_str().unwrap_or("?");
    match super::verdict::of_night(night) {
        Some(verdict) => format!("Night {when}: {verdict}"),
        None => format!(
            "Night {when} ranked nobody ({}).",
            night["status"].as_str().unwrap_or("?")
        ),
    }
}

/// A night's status badge and, when it is not `ok`, its reasons.
fn status_cell(night: &Value) -> String {
    let status = night["status"].as_str().unwrap_or("?");
    let class = if status == "ok" { "ok" } else { "warn" };
    let mut cell = format!("<span class=\"badge {class}\">{}</span>", escape(status));
    let reasons = failures(night);
    if !reasons.is_empty() {
        let _ = write!(cell, "<ul class=\"reasons\">{}</ul>", reasons.join(""));
    }
    cell
}

fn failures(night: &Value) -> Vec<String> {
    night["failures"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| format!("<li>{}</li>", text(f)))
        .collect()
}

/// The latest night's note when it did not end `ok`.
fn not_ok(night: &Value) -> Option<String> {
    let status = night["status"].as_str().unwrap_or("?");
    if status == "ok" {
        return None;
    }
    let reasons = failures(night);
    Some(format!(
        "<b>This night is {}</b>{}",
        escape(status),
        if reasons.is_empty() {
            String::new()
        } else {
            format!(": <ul class=\"reasons\">{}</ul>", reasons.join(""))
        }
    ))
}

/// The latest night's ranking: rank, score, interval, group, pass rate, cells scored.
fn latest_ranking(nights: &[Value], night: &Value, out: &mut String) {
    let Some(rows) = night["participants"].as_array().filter(|r| !r.is_empty()) else {
        return;
    };
    let names = participants(nights);
    let tests = night["pass_rates"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    let rewards = night["task_rewards"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    let _ = write!(
        out,
        "<h2>Latest night: {}</h2>\n<div class=\"scroll\"><table id=\"latest\"><thead><tr><th class=\"num\">Rank</th><th>Participant</th><th class=\"num\">Score %</th><th class=\"num\">95 % interval</th><th class=\"fold\">0 — 100</th><th>Group</th>{}{}<th class=\"num\">Cells scored</th></tr></thead><tbody>\n",
        text(&night["night"]),
        if tests {
            "<th class=\"num\">Tests %</th>"
        } else {
            ""
        },
        if rewards {
            "<th class=\"num\">Task reward %</th>"
        } else {
            ""
        }
    );
    for p in rows {
        let name = p["participant"].as_str().unwrap_or("?");
        let colour = names
            .iter()
            .position(|n| n == name)
            .map_or("#888", |i| style_of(i).0);
        let (lo, hi) = (p["lo"].as_f64(), p["hi"].as_f64());
        let interval = match (lo, hi) {
            (Some(lo), Some(hi)) => format!("{lo:.1}–{hi:.1}"),
            _ => "none".to_owned(),
        };
        let rank = super::rank_words(night, p);
        let rank = rank
            .trim()
            .trim_start_matches("ranks ")
            .trim_start_matches("rank ");
        let incomplete = if p["incomplete"] == true {
            " <span class=\"badge warn\">incomplete</span>"
        } else {
            ""
        };
        let test_cell = rate_cell(tests, &night["pass_rates"], name);
        let reward_cell = rate_cell(rewards, &night["task_rewards"], name);
        let _ = writeln!(
            out,
            "<tr data-participant=\"{pe}\"><td class=\"num\">{}</td><th scope=\"row\"><span class=\"swatch\" style=\"background:{colour}\"></span>{pe}{incomplete}</th><td class=\"num\"><b>{}</b></td><td class=\"num\">{interval}</td><td class=\"fold\">{}</td><td>{}</td>{test_cell}{reward_cell}<td class=\"num\">{}/{}</td></tr>",
            if rank.is_empty() {
                "–".to_owned()
            } else {
                escape(rank)
            },
            num(&p["estimate"], 1),
            bar(p["estimate"].as_f64(), lo, hi),
            group_name(night, name),
            text(&p["scored_cells"]),
            text(&p["cells"]),
            pe = escape(name),
        );
    }
    out.push_str("</tbody></table></div>\n");
    if let Some(caveat) = night["caveat"].as_str() {
        let _ = writeln!(
            out,
            "<p class=\"note warn\"><b>Caveat:</b> {}</p>",
            escape(caveat)
        );
    }
    if let Some(conditioning) = night["conditioning"].as_str() {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", escape(conditioning));
    }
}

/// A pooled rate's cell (hidden tests' pass rate or the tasks' mean reward): the estimate with
/// its interval, `–` without one; nothing when the night has no such column.
fn rate_cell(shown: bool, rates: &Value, participant: &str) -> String {
    if !shown {
        return String::new();
    }
    let rate = rates
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["participant"] == participant)
        .filter(|r| r["estimate"].is_number());
    let value = rate.map_or_else(
        || "–".to_owned(),
        |r| {
            if r["lo"].is_number() && r["hi"].is_number() {
                format!(
                    "{} <small>({}–{})</small>",
                    num(&r["estimate"], 1),
                    num(&r["lo"], 0),
                    num(&r["hi"], 0)
                )
            } else {
                num(&r["estimate"], 1)
            }
        },
    );
    format!("<td class=\"num\">{value}</td>")
}

/// `A`, `B` … for the night's tied groups (groups of one say `alone`).
fn group_name(night: &Value, participant: &str) -> String {
    let groups = night["tied_groups"].as_array();
    let Some(index) = groups.and_then(|g| {
        g.iter().position(|g| {
            g.as_array()
                .is_some_and(|g| g.iter().any(|p| p == participant))
        })
    }) else {
        return "–".to_owned();
    };
    let size = groups
        .and_then(|g| g.get(index))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let letter = char::from(b'A' + u8::try_from(index % 26).unwrap_or(0));
    if size > 1 {
        format!("{letter} · tied with {}", size - 1)
    } else {
        format!("{letter} · alone")
    }
}

/// Every night, newest first: status with reasons, comparability, leader, what changed, and a
/// link to its per-brief results.
fn nights_table(nights: &[Value], out: &mut String) {
    out.push_str("<h2>Nights</h2>\n<div class=\"scroll\"><table id=\"nights\"><thead><tr><th>Night</th><th>Status</th><th>Comparable</th><th>Ranking</th><th>What changed</th><th>Briefs</th></tr></thead><tbody>\n");
    for (index, night) in nights.iter().enumerate().rev() {
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
        let briefs = night["briefs"].as_u64().map_or_else(
            || "–".to_owned(),
            |n| format!("<a href=\"#night-{index}\">{n} brief(s)</a>"),
        );
        // The caveat only where it differs from the latest night's (shown at the top).
        let caveat = night["caveat"]
            .as_str()
            .filter(|c| nights.last().and_then(|l| l["caveat"].as_str()) != Some(*c))
            .map_or_else(String::new, |c| {
                format!("<br><span class=\"badge warn\">caveat</span> {}", escape(c))
            });
        let _ = writeln!(
            out,
            "<tr><td class=\"when\">{}</td><td>{}</td><td>{comparable}</td><td class=\"rk\">{}{caveat}</td><td class=\"ch\">{}</td><td class=\"when\">{briefs}</td></tr>",
            text(&night["night"]),
            status_cell(night),
            night_ranking(night).join("<br>"),
            changes(night).join("<br>")
        );
    }
    out.push_str("</tbody></table></div>\n");
}

fn changes(night: &Value) -> Vec<String> {
    night["changes"]
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
                .map(|mdd| {
                    format!(
                        "<i>this design detects changes of {mdd:.1} points or more (80 % power)</i>"
                    )
                }),
        )
        .collect()
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
            let interval = match (p["lo"].as_f64(), p["hi"].as_f64()) {
                (Some(lo), Some(hi)) => format!(" [{lo:.1}–{hi:.1}]"),
                _ => String::new(),
            };
            let incomplete = if p["incomplete"] == true {
                " <span class=\"badge warn\">incomplete</span>"
            } else {
                ""
            };
            format!(
                "{} <b>{}</b> <small>{}</small>{incomplete}",
                text(&p["participant"]),
                num(&p["estimate"], 1),
                escape(&[interval.trim(), rank.trim()].join(" ")).trim_end()
            )
        })
        .collect()
}

/// Each night's cells by brief: one folded table per night, newest first.
fn per_brief(nights: &[Value], out: &mut String) {
    if nights
        .iter()
        .all(|n| n["cells"].as_array().is_none_or(Vec::is_empty))
    {
        return;
    }
    out.push_str("<h2>Per-brief results</h2>\n");
    for (index, night) in nights.iter().enumerate().rev() {
        let Some(cells) = night["cells"].as_array().filter(|c| !c.is_empty()) else {
            continue;
        };
        let _ = writeln!(
            out,
            "<details id=\"night-{index}\"{}><summary>{} · {} cell(s)</summary><div class=\"scroll\"><table class=\"cells\"><thead><tr><th>Brief</th><th class=\"num\">Repeat</th><th>Participant</th><th>Run</th><th class=\"num\">Score %</th><th>Cook</th></tr></thead><tbody>",
            if index + 1 == nights.len() {
                " open"
            } else {
                ""
            },
            text(&night["night"]),
            cells.len()
        );
        for cell in cells {
            let run = match cell["run_status"].as_str() {
                Some("ok") => "ok".to_owned(),
                Some(status) => format!("<span class=\"badge warn\">{}</span>", escape(status)),
                None => "–".to_owned(),
            };
            let score = if cell["score"].is_number() {
                num(&cell["score"], 1)
            } else {
                "<span class=\"unscored\">unscored</span>".to_owned()
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{run}</td><td class=\"num\">{score}</td><td><code>{}</code></td></tr>",
                text(&cell["brief"]),
                text(&cell["repeat"]),
                text(&cell["participant"]),
                text(&cell["cook"])
            );
        }
        out.push_str("</tbody></table></div></details>\n");
    }
}
