//! The ranking table of `leaderboard.html`: the columns a reader needs first (rank, name, score
//! with its interval, the hidden tests, how the run ended), then the rest, in a container that
//! scrolls sideways on a narrow screen instead of the page; every figure with its unit; links
//! from each row to the submission, the judges' folders and the verification. The method and
//! the paired comparisons come below it.

use std::fmt::Write as _;

use serde_json::Value;

use super::format::thousands;
use super::html::{escape, href_segment, num, text};
use super::ranking::{range_text, rank_text};

/// An SVG error bar on a 0–100 axis; a dot only when there is no interval. Scales with its
/// cell (viewBox), never wider than 240 px.
pub(super) fn bar(estimate: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> String {
    const W: f64 = 220.0;
    let x = |v: f64| 10.0 + v.clamp(0.0, 100.0) / 100.0 * W;
    let mut svg = format!(
        "<svg class=\"bar\" viewBox=\"0 0 240 18\" width=\"130\" height=\"12\" role=\"img\" aria-label=\"score on 0 to 100\"><line x1=\"10\" y1=\"9\" x2=\"{:.1}\" y2=\"9\" stroke=\"#e1e4e8\"/>",
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

/// Bytes as B, KB or MB (powers of 1024), as leaderboard.md prints them.
#[expect(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
pub(super) fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// Seconds with their unit: `12.5 s`, `3 min 05 s`.
pub(super) fn duration(seconds: Option<f64>) -> String {
    match seconds {
        None => "–".to_owned(),
        Some(s) if s < 60.0 => format!("{s:.1} s"),
        Some(s) => {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a non-negative duration in whole seconds"
            )]
            let whole = s.round().max(0.0) as u64;
            format!("{} min {:02} s", whole / 60, whole % 60)
        }
    }
}

/// The estimate entry of a participant in the statistics, if any.
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

/// The header row: the important columns first.
fn head(tests: bool) -> String {
    let mut head = String::from(
        "<thead><tr><th class=\"num\">Rank</th><th>Participant</th><th class=\"num\">Score %</th><th class=\"num\">95 % interval</th><th class=\"fold\">0 — 100</th>",
    );
    if tests {
        head.push_str("<th class=\"num\">Tests %</th><th class=\"num\">Combined %</th>");
    }
    head.push_str("<th>Run</th><th class=\"num\">Rank range</th><th class=\"num\">Mean %</th><th class=\"num\">Size</th><th class=\"num\">Judges</th><th class=\"num\">Duration</th><th class=\"num\">Tokens</th><th class=\"num\" title=\"the CLIs' own estimate at API list prices, not a charge: a subscription is not billed per call\">API-equiv. cost</th></tr></thead>");
    head
}

/// The links of a row: the submission, each judge's folder that scored it, its verification.
fn links(summary: &Value, row: &Value, name: &str) -> String {
    let href = href_segment(name);
    let mut links = format!("<a href=\"work/{href}/out/\">output</a>");
    if row.get("tests_pct").is_some() {
        let _ = write!(
            links,
            " · <a href=\"verification/{href}/result.json\">tests</a>"
        );
    }
    // Rubric: the judges whose scores name it; pairwise: the judges of its pairs.
    let mut judges: Vec<&str> = summary["per_judge"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, entries)| entries.get(name).is_some())
        .map(|(judge, _)| judge.as_str())
        .collect();
    for pair in summary["pairwise"]["pairs"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if (pair["a"] == name || pair["b"] == name)
            && let Some(judge) = pair["judge"].as_str()
            && !judges.contains(&judge)
        {
            judges.push(judge);
        }
    }
    let reviews: Vec<String> = judges
        .iter()
        .map(|judge| {
            format!(
                "<a href=\"judging/{}/\">{}</a>",
                href_segment(judge),
                escape(judge)
            )
        })
        .collect();
    if !reviews.is_empty() {
        let _ = write!(links, "<br>reviews: {}", reviews.join(" · "));
    }
    links
}

/// The score, interval and bar cells.
fn score_cells(summary: &Value, row: &Value, name: &str) -> String {
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
    if !row["rank"].is_number() {
        return "<td class=\"num\"><span class=\"unscored\">unscored</span></td><td class=\"num\">–</td><td class=\"fold\"></td>".to_owned();
    }
    let interval = match (lo, hi) {
        (Some(lo), Some(hi)) => format!("{lo:.1}–{hi:.1}"),
        _ => "none".to_owned(),
    };
    format!(
        "<td class=\"num\"><b>{}</b></td><td class=\"num\">{interval}</td><td class=\"fold\">{}</td>",
        score.map_or_else(|| "–".to_owned(), |s| format!("{s:.1}")),
        bar(score, lo, hi)
    )
}

/// The rank cell: the group's competition rank (`1=` shared, `–` when the group has separated
/// members).
fn rank_cell(rows: &[Value], row: &Value) -> String {
    let group_size = rows
        .iter()
        .filter(|r| r["rank"].is_number() && r["rank"] == row["rank"])
        .count();
    // A summary older than the score-order rule has no rank_single: its rank was the best
    // rank and always printed.
    let single = row["rank_single"].as_bool().unwrap_or(true);
    let rank = row["rank"].as_u64().and_then(|v| usize::try_from(v).ok());
    rank_text(rank, single, group_size)
}

fn range_cell(row: &Value) -> String {
    let usize_of = |v: Option<u64>| v.and_then(|v| usize::try_from(v).ok());
    let best = row["rank_best"].as_u64().or_else(|| row["rank"].as_u64());
    range_text(usize_of(best), usize_of(row["rank_worst"].as_u64()))
}

/// How the run ended, as a badge when it did not end `ok`.
fn run_cell(row: &Value) -> String {
    match row["run_status"].as_str() {
        Some("ok") => "ok".to_owned(),
        Some(status) => format!("<span class=\"badge warn\">{}</span>", escape(status)),
        None => "–".to_owned(),
    }
}

/// The tests cells, when the brief has hidden tests.
fn tests_cells(row: &Value) -> String {
    let tests = match (
        row["tests_pct"].as_f64(),
        row["tests_lo"].as_f64(),
        row["tests_hi"].as_f64(),
    ) {
        (Some(p), Some(lo), Some(hi)) => format!("{p:.1} <small>({lo:.0}–{hi:.0})</small>"),
        (Some(p), ..) => format!("{p:.1}"),
        _ => "<span class=\"unscored\">unscored</span>".to_owned(),
    };
    format!(
        "<td class=\"num\">{tests}</td><td class=\"num\">{}</td>",
        num(&row["combined_pct"], 1)
    )
}

/// The ranking section.
pub(super) fn ranking(summary: &Value, out: &mut String) {
    let Some(rows) = summary["ranking"].as_array().filter(|r| !r.is_empty()) else {
        return;
    };
    let tests = rows.iter().any(|r| r.get("tests_pct").is_some());
    let _ = write!(
        out,
        "<h2>Ranking</h2>\n<div class=\"scroll\"><table id=\"ranking\">{}<tbody>\n",
        head(tests)
    );
    let mut previous_group = None;
    for row in rows {
        let name = row["participant"].as_str().unwrap_or("?");
        // A line above the first row of each tied group after the first.
        let group = group_of(summary, name);
        let class = if group.is_some() && group != previous_group && previous_group.is_some() {
            " class=\"new-group\""
        } else {
            ""
        };
        previous_group = group;
        let _ = writeln!(
            out,
            "<tr{class} data-participant=\"{pe}\"><td class=\"num\">{rank}</td><th scope=\"row\" class=\"who\">{pe} <small>{flavor}</small><br><small class=\"links\">{links}</small></th>{score}{tests}<td>{run}</td><td class=\"num\">{range}</td><td class=\"num\">{mean}</td><td class=\"num\">{size}</td><td class=\"num\">{judges}</td><td class=\"num\">{dur}</td><td class=\"num\">{tokens}</td><td class=\"num\">{cost}</td></tr>",
            pe = escape(name),
            rank = rank_cell(rows, row),
            flavor = text(&row["flavor"]),
            score = score_cells(summary, row, name),
            tests = if tests {
                tests_cells(row)
            } else {
                String::new()
            },
            run = run_cell(row),
            range = range_cell(row),
            mean = num(&row["mean_pct"], 1),
            size = row["output_bytes"]
                .as_u64()
                .map_or_else(|| "–".to_owned(), size),
            judges = text(&row["num_judges"]),
            dur = duration(row["duration_s"].as_f64()),
            tokens = row["tokens"]
                .as_u64()
                .map_or_else(|| "–".to_owned(), thousands),
            cost = row["cost_usd"]
                .as_f64()
                .map_or_else(|| "–".to_owned(), |c| format!("${c:.4}")),
            links = links(summary, row, name),
        );
    }
    out.push_str("</tbody></table></div>\n");
    if rows
        .iter()
        .any(|r| r["rank"].is_number() && r["rank_single"] == false)
    {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}</p>",
            escape(super::ranking::NO_SINGLE_RANK)
        );
    }
    method(summary, out);
}

/// How the ranking was made: below the table.
fn method(summary: &Value, out: &mut String) {
    let stats = &summary["statistics"];
    if let Some(caveat) = stats["caveat"].as_str() {
        let _ = writeln!(
            out,
            "<p class=\"note warn\" id=\"caveat\"><b>Caveat:</b> {}</p>",
            escape(caveat)
        );
    }
    if let Some(note) = stats["note"].as_str() {
        let _ = writeln!(out, "<p class=\"note\"><b>Note:</b> {}</p>", escape(note));
    }
    let _ = writeln!(
        out,
        "<p class=\"meta\" id=\"method\">Method: {} · level {} · seed {}. Ordered by score. Rank is the competition rank of the participant's group (2= shares it); groups are cut only where every pair across the cut is separated by its paired test (Holm-corrected); the rank range is what the participant's own tests allow.</p>",
        text(&stats["method"]),
        text(&stats["level"]),
        text(&stats["seed"])
    );
    notes(stats, out);
}

/// Leniency and the paired comparisons, under the method.
fn notes(stats: &Value, out: &mut String) {
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
