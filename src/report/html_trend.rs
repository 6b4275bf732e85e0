//! The history page's trend chart: one SVG with every participant (a line each, its interval
//! band where the nights have intervals, its last value labelled at the line's end), nights
//! that failed, were partial or are not comparable shaded, and an HTML legend that wraps.
//! The SVG scales with the page (viewBox), so it never makes the page wider than the screen.

use std::fmt::Write as _;

use serde_json::Value;

use super::html::escape;

/// Line colours (colour-blind safe order); beyond them the lines are dashed too.
const COLOURS: [&str; 8] = [
    "#1f6fb4", "#d9480f", "#2b8a3e", "#7048e8", "#c2255c", "#0b7285", "#5f3dc4", "#8d6e00",
];

/// The chart's geometry in viewBox units.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 330.0;
const LEFT: f64 = 38.0;
const RIGHT: f64 = 140.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

/// One participant's point on one night.
struct Point {
    night: usize,
    estimate: f64,
    interval: Option<(f64, f64)>,
}

/// A participant's colour and dash pattern.
pub(super) fn style_of(index: usize) -> (&'static str, &'static str) {
    let colour = COLOURS[index % COLOURS.len()];
    let dash = match index / COLOURS.len() {
        0 => "",
        1 => "6 3",
        _ => "2 3",
    };
    (colour, dash)
}

/// Every participant that appears in some night, first appearance first.
pub(super) fn participants(nights: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for night in nights {
        for p in night["participants"].as_array().into_iter().flatten() {
            if let Some(name) = p["participant"].as_str()
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_owned());
            }
        }
    }
    names
}

fn points(nights: &[Value], participant: &str) -> Vec<Point> {
    nights
        .iter()
        .enumerate()
        .filter_map(|(night, n)| {
            let p = n["participants"]
                .as_array()?
                .iter()
                .find(|p| p["participant"] == participant)?;
            Some(Point {
                night,
                estimate: p["estimate"].as_f64()?,
                interval: p["lo"].as_f64().zip(p["hi"].as_f64()),
            })
        })
        .collect()
}

#[expect(clippy::cast_precision_loss, reason = "a few thousand nights at most")]
fn x_of(night: usize, nights: usize) -> f64 {
    let plot = WIDTH - LEFT - RIGHT;
    if nights <= 1 {
        LEFT + plot / 2.0
    } else {
        LEFT + plot * night as f64 / (nights - 1) as f64
    }
}

fn y_of(value: f64) -> f64 {
    TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - value.clamp(0.0, 100.0) / 100.0)
}

/// The chart and its legend.
pub(super) fn chart(nights: &[Value]) -> String {
    let names = participants(nights);
    let mut svg = format!(
        "<svg class=\"trend\" id=\"trend\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"100%\" role=\"img\" aria-label=\"scores of every participant across nights\">"
    );
    shading(nights, &mut svg);
    axes(nights, &mut svg);
    let mut labels: Vec<(f64, f64, String, &str)> = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let (colour, dash) = style_of(index);
        let points = points(nights, name);
        band(&points, nights.len(), colour, &mut svg);
        line(&points, nights.len(), (colour, dash), name, &mut svg);
        if let Some(last) = points.last() {
            labels.push((
                x_of(last.night, nights.len()) + 8.0,
                y_of(last.estimate),
                format!("{} {:.1}", short(name), last.estimate),
                colour,
            ));
        }
    }
    spread(&mut labels);
    for (x, y, label, colour) in &labels {
        let _ = write!(
            svg,
            "<text class=\"last\" x=\"{x:.1}\" y=\"{:.1}\" fill=\"{colour}\" style=\"fill:{colour}\">{}</text>",
            y + 4.0,
            escape(label)
        );
    }
    svg.push_str("</svg>\n");
    svg.push_str(&legend(nights, &names));
    svg
}

/// A name cut to 13 characters for an end label (the legend has it whole).
fn short(name: &str) -> String {
    if name.chars().count() <= 13 {
        name.to_owned()
    } else {
        format!("{}…", name.chars().take(12).collect::<String>())
    }
}

/// Moves the end labels apart so that none overlaps the next (13 units apart at least).
fn spread(labels: &mut [(f64, f64, String, &str)]) {
    labels.sort_by(|a, b| a.1.total_cmp(&b.1));
    for i in 1..labels.len() {
        let floor = labels[i - 1].1 + 13.0;
        if labels[i].1 < floor {
            labels[i].1 = floor;
        }
    }
}

/// Shades the nights that are not plain `ok` and comparable, with the reason as a tooltip.
fn shading(nights: &[Value], svg: &mut String) {
    let n = nights.len();
    let half = if n <= 1 {
        20.0
    } else {
        ((x_of(1, n) - x_of(0, n)) / 2.0).min(20.0)
    };
    for (i, night) in nights.iter().enumerate() {
        let status = night["status"].as_str().unwrap_or("?");
        let (fill, why) = if status != "ok" {
            ("#fde2e1", format!("{status} night"))
        } else if night["comparable"] == false {
            ("#fff1db", "not comparable with the night before".to_owned())
        } else {
            continue;
        };
        let _ = write!(
            svg,
            "<rect class=\"shade\" x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{}: {}</title></rect>",
            x_of(i, n) - half,
            2.0 * half,
            HEIGHT - TOP - BOTTOM,
            escape(night["night"].as_str().unwrap_or("?")),
            escape(&why)
        );
    }
}

/// Grid lines at 0, 25, 50, 75, 100 and at most eight night labels.
fn axes(nights: &[Value], svg: &mut String) {
    for value in [0.0, 25.0, 50.0, 75.0, 100.0] {
        let y = y_of(value);
        let _ = write!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e1e4e8\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{value:.0}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let n = nights.len();
    let step = n.div_ceil(6).max(1);
    for (i, night) in nights.iter().enumerate() {
        let end = i == 0 || i + 1 == n;
        if i % step != 0 && !end {
            continue;
        }
        // Between the first and the last, labels fold on a narrow screen.
        let _ = write!(
            svg,
            "<text{} x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            if end { "" } else { " class=\"mid\"" },
            x_of(i, n),
            HEIGHT - BOTTOM + 18.0,
            escape(night["night"].as_str().unwrap_or("?"))
        );
    }
}

/// The interval band: one polygon per run of consecutive nights with intervals (a bar for a
/// run of one).
fn band(points: &[Point], nights: usize, colour: &str, svg: &mut String) {
    let mut runs: Vec<Vec<(usize, f64, f64)>> = Vec::new();
    for point in points {
        let Some((lo, hi)) = point.interval else {
            runs.push(Vec::new());
            continue;
        };
        match runs.last_mut() {
            Some(run)
                if run
                    .last()
                    .is_some_and(|(night, ..)| night + 1 == point.night) =>
            {
                run.push((point.night, lo, hi));
            }
            _ => runs.push(vec![(point.night, lo, hi)]),
        }
    }
    for run in runs.iter().filter(|r| !r.is_empty()) {
        if let [(night, lo, hi)] = run.as_slice() {
            let x = x_of(*night, nights);
            let _ = write!(
                svg,
                "<rect class=\"band\" x=\"{:.1}\" y=\"{:.1}\" width=\"6\" height=\"{:.1}\" fill=\"{colour}\" fill-opacity=\"0.18\"/>",
                x - 3.0,
                y_of(*hi),
                (y_of(*lo) - y_of(*hi)).max(1.0)
            );
            continue;
        }
        let upper = run
            .iter()
            .map(|(night, _, hi)| format!("{:.1},{:.1}", x_of(*night, nights), y_of(*hi)));
        let lower = run
            .iter()
            .rev()
            .map(|(night, lo, _)| format!("{:.1},{:.1}", x_of(*night, nights), y_of(*lo)));
        let _ = write!(
            svg,
            "<polygon class=\"band\" points=\"{}\" fill=\"{colour}\" fill-opacity=\"0.14\"/>",
            upper.chain(lower).collect::<Vec<_>>().join(" ")
        );
    }
}

/// The line and its points, each point with its value as a tooltip.
fn line(
    points: &[Point],
    nights: usize,
    (colour, dash): (&str, &str),
    name: &str,
    svg: &mut String,
) {
    let path: Vec<String> = points
        .iter()
        .map(|p| format!("{:.1},{:.1}", x_of(p.night, nights), y_of(p.estimate)))
        .collect();
    if path.len() > 1 {
        let _ = write!(
            svg,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2.2\" stroke-dasharray=\"{dash}\"/>",
            path.join(" ")
        );
    }
    for p in points {
        let interval = p
            .interval
            .map_or_else(String::new, |(lo, hi)| format!(" [{lo:.1}, {hi:.1}]"));
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{colour}\"><title>{}: {:.1}{interval}</title></circle>",
            x_of(p.night, nights),
            y_of(p.estimate),
            escape(name),
            p.estimate
        );
    }
}

/// The legend: a swatch, the name and the last value with its interval, per participant; then
/// what the shading means.
fn legend(nights: &[Value], names: &[String]) -> String {
    let mut out = String::from("<ul class=\"legend\" id=\"legend\">");
    for (index, name) in names.iter().enumerate() {
        let (colour, _) = style_of(index);
        let last = points(nights, name).pop().map_or_else(String::new, |p| {
            let interval = p
                .interval
                .map_or_else(String::new, |(lo, hi)| format!(" ({lo:.1}–{hi:.1})"));
            format!(" {:.1}{interval}", p.estimate)
        });
        let _ = write!(
            out,
            "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{}<small>{last}</small></li>",
            escape(name)
        );
    }
    out.push_str("<li><span class=\"swatch band-key\"></span><small>band: 95 % interval</small></li><li><span class=\"swatch\" style=\"background:#fde2e1\"></span><small>failed or partial night</small></li><li><span class=\"swatch\" style=\"background:#fff1db\"></span><small>not comparable</small></li></ul>\n");
    out
}
