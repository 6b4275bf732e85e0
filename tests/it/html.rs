//! leaderboard.html and the history page in a real headless browser (Debian's chromium): they
//! render, log nothing to the console, request nothing from the network, show the expected rows
//! in order, and fit the screen: at 1280×900 and 390×844 the page never scrolls sideways, opens
//! with a headline naming the leader, and every number sits under its column's header. The
//! screenshots are saved in `target/tmp/screenshots/` (CI keeps them). The console check is
//! proven live by a control page with a script error, the layout check by a page too wide.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::browser::{assert_fits, layout};
use crate::common::{TestCook, dummy_brief, show};

/// The two screens every page is checked at: a laptop and a phone.
const SIZES: [(u32, u32); 2] = [(1280, 900), (390, 844)];

/// Checks `page` at both sizes (screenshots named after `name`).
fn fits_both_screens(page: &Path, name: &str, leader: &str) {
    for size in SIZES {
        assert_fits(&layout(page, name, size), size, leader);
    }
}

/// What chromium printed: the DOM, the console lines of the page, and the screenshot's size.
struct Rendered {
    dom: String,
    console: Vec<String>,
    failed_loads: Vec<String>,
    screenshot_bytes: u64,
}

fn render(page: &Path) -> Rendered {
    let profile = tempfile::tempdir().unwrap();
    let screenshot = profile.path().join("shot.png");
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--window-size=1280,1600",
    ];
    let url = format!("file://{}", page.display());
    let run = |extra: &str| {
        Command::new(crate::common::browser::chromium())
            .args(common)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(extra)
            .arg(&url)
            .output()
            .unwrap()
    };
    let dumped = run("--dump-dom");
    assert!(dumped.status.success(), "{}", show(&dumped));
    let shot = run(&format!("--screenshot={}", screenshot.display()));
    assert!(shot.status.success(), "{}", show(&shot));
    let stderr = format!(
        "{}{}",
        String::from_utf8_lossy(&dumped.stderr),
        String::from_utf8_lossy(&shot.stderr)
    );
    // Chromium's own startup noise (dbus, GPU, crash reporter) is not the page's: only
    // `:CONSOLE` lines come from the page, and net errors from its loads.
    Rendered {
        dom: String::from_utf8_lossy(&dumped.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_owned)
            .collect(),
        failed_loads: stderr
            .lines()
            .filter(|l| l.contains("net::ERR"))
            .map(str::to_owned)
            .collect(),
        screenshot_bytes: fs_err::metadata(&screenshot).map_or(0, |m| m.len()),
    }
}

#[test]
fn the_console_check_sees_a_broken_page() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    fs_err::write(
        &page,
        "<!DOCTYPE html><p>x</p><script>notDefined()</script>",
    )
    .unwrap();
    let rendered = render(&page);
    assert!(
        rendered
            .console
            .iter()
            .any(|l| l.contains("Uncaught ReferenceError")),
        "the control page's error must be seen: {:?}",
        rendered.console
    );
}

fn row_order(dom: &str) -> Vec<String> {
    dom.split("data-participant=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

#[test]
fn a_real_pairwise_leaderboard_renders_cleanly_with_its_rows_in_order() {
    let brief = dummy_brief(
        &[
            ("mid", "quality:3"),
            ("high", "quality:5"),
            ("low", "quality:1"),
        ],
        "",
    )
    .replace(
        "judging: {policy: allow_self}\n",
        "judging: {policy: allow_self, mode: pairwise}\n",
    )
    .replace(
        "judges:\n  - {name: referee, flavor: dummy, model: \"\"}\n",
        "judges:\n  - {name: referee, flavor: dummy}\n  - {name: umpire, flavor: dummy}\n",
    );
    let cook = TestCook::new("html", &brief);
    cook.cook_judge_report();
    let page = cook.dir().join("leaderboard.html");
    let html = fs_err::read_to_string(&page).unwrap();
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    let rendered = render(&page);
    assert!(
        rendered.console.is_empty(),
        "console: {:?}",
        rendered.console
    );
    assert!(
        rendered.failed_loads.is_empty(),
        "loads: {:?}",
        rendered.failed_loads
    );
    assert!(
        rendered.screenshot_bytes > 20_000,
        "a rendered page, not a blank one: {} bytes",
        rendered.screenshot_bytes
    );
    assert_eq!(row_order(&rendered.dom), ["high", "mid", "low"]);
    for id in [
        "id=\"ranking\"",
        "id=\"agreement\"",
        "id=\"pairwise\"",
        "id=\"coverage\"",
        "id=\"caveat\"",
        "href=\"work/high/out/\"",
        "href=\"judging/umpire/\"",
    ] {
        assert!(rendered.dom.contains(id), "{id} missing");
    }
    // Two dummy judges give identical verdicts: no spread between them, but the verdicts' own
    // sampling error floors the interval (issue 23: a zero-width one would claim certainty,
    // none at all hid what the verdicts do say), and the caveat says why it is wide.
    assert!(rendered.dom.contains("class=\"interval\""));
    assert!(
        rendered
            .dom
            .contains("floored at the verdicts' own sampling error")
    );
    assert!(rendered.dom.contains("Position consistency"));
    fits_both_screens(&page, "leaderboard-pairwise", "high");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

#[test]
fn the_layout_check_sees_a_page_too_wide_and_one_without_a_headline() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("wide.html");
    let wide = multicooker::report::html::render_leaderboard_html(&json!({"cook": "c", "round": 1, "ranking": []}))
        .replace("<body>", "<body><div style=\"width:900px\">wide</div><table><thead><tr><th>Name</th></tr></thead><tbody><tr><td class=\"num\">1</td></tr></tbody></table>");
    fs_err::write(&page, wide).unwrap();
    let measured = layout(&page, "control-wide", (390, 844));
    assert_eq!(measured.inner_width, 390);
    assert!(measured.scroll_width > 390, "{measured:?}");
    assert!(
        !measured.too_wide.is_empty() && !measured.misaligned.is_empty(),
        "{measured:?}"
    );
}

#[test]
fn a_rubric_leaderboard_with_hidden_tests_fits_both_screens_and_opens_with_the_verdict() {
    let cook = crate::verify::verify_cook(
        "htmltests",
        &[
            ("good", "quality:4,solve:42"),
            ("best", "quality:5,solve:42"),
            ("poor", "quality:2,solve:1"),
        ],
        "",
        "junit",
    );
    let brief = cook.text("brief.yaml").replace(
        "judges:\n  - {name: referee, flavor: dummy, model: \"\"}\n",
        "judges:\n  - {name: referee, flavor: dummy}\n  - {name: umpire, flavor: dummy}\n  - {name: lenient, flavor: dummy, model: generous}\n",
    ) + "scoring: {verify: 50, jury: 50}\n";
    fs_err::write(cook.dir().join("brief.yaml"), brief).unwrap();
    cook.cook_judge_report();
    let page = cook.dir().join("leaderboard.html");
    let html = fs_err::read_to_string(&page).unwrap();
    for link in [
        "href=\"work/best/out/\"",
        "href=\"judging/referee/\"",
        "href=\"verification/best/result.json\"",
    ] {
        assert!(html.contains(link), "{link} missing");
    }
    let verdict = cook.json("summary.json")["verdict"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        verdict
            .contains("Hidden tests passed: best 3/3 (100 %), good 3/3 (100 %), poor 1/3 (33 %)"),
        "{verdict}"
    );
    assert!(
        cook.text("leaderboard.md")
            .contains(&format!("**Verdict:** {verdict}")),
        "the markdown opens with the same verdict"
    );
    let rendered = render(&page);
    assert!(rendered.console.is_empty(), "{:?}", rendered.console);
    assert_eq!(row_order(&rendered.dom)[0], "best");
    fits_both_screens(&page, "leaderboard-rubric-tests", "best");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Six nights of three participants: intervals, a partial night with its reasons, a night not
/// comparable, a participant that joins late, per-brief cells.
fn history_fixture() -> serde_json::Value {
    let mut nights = Vec::new();
    for (i, (status, comparable)) in [
        ("ok", true),
        ("ok", true),
        ("partial", true),
        ("ok", false),
        ("ok", true),
        ("ok", true),
    ]
    .into_iter()
    .enumerate()
    {
        let base = f64::from(u8::try_from(i).unwrap());
        let mut participants = vec![
            json!({"participant": "claude-opus", "estimate": 70.0 + base, "lo": 62.0 + base, "hi": 78.0 + base, "rank": 1, "rank_best": 1, "rank_worst": 2, "rank_single": true, "scored_cells": 6, "cells": 6}),
            json!({"participant": "codex-high", "estimate": 64.0 - base, "lo": 55.0 - base, "hi": 73.0 - base, "rank": 1, "rank_best": 1, "rank_worst": 2, "rank_single": true, "scored_cells": 6, "cells": 6}),
        ];
        if i >= 2 {
            participants.push(json!({"participant": "a-very-long-participant-name-that-wraps", "estimate": 30.0 + 2.0 * base, "lo": null, "hi": null, "rank": 3, "rank_best": 3, "rank_worst": 3, "rank_single": true, "incomplete": status == "partial", "scored_cells": 4, "cells": 6}));
        }
        let cells: Vec<serde_json::Value> = ["fizzbuzz", "proposal", "landing"]
            .iter()
            .flat_map(|brief| {
                ["claude-opus", "codex-high"].map(|p| json!({"cook": format!("2611{:02}-{brief}-1", 20 + i), "brief": brief, "repeat": 1, "participant": p, "run_status": if status == "partial" && p == "codex-high" && *brief == "landing" { "start_failed" } else { "ok" }, "score": 60.0 + base}))
            })
            .collect();
        nights.push(json!({
            "id": i + 1, "night": format!("2026-11-{:02}", 20 + i), "status": status, "comparable": comparable,
            "not_comparable_reasons": if comparable { json!([]) } else { json!(["unequal CLI pins: codex 0.40 → 0.41"]) },
            "method": "brief_mean+t", "briefs": 3,
            "participants": participants,
            "tied_groups": [["claude-opus", "codex-high"], ["a-very-long-participant-name-that-wraps"]],
            "failures": if status == "partial" { json!(["cell `codex-high` of brief `landing` ended `start_failed`: the image did not start"]) } else { json!([]) },
            "caveat": "only 3 briefs: each interval is ±4.3 standard errors (2 degree(s) of freedom), so it is wide and only large gaps separate; more briefs narrow it fast",
            "changes": [], "cells": cells,
            "pass_rates": [{"participant": "claude-opus", "estimate": 83.3, "lo": 43.6, "hi": 97.0, "passed": 5, "counted": 6}],
            "task_rewards": [{"participant": "claude-opus", "estimate": 66.7, "lo": 20.1, "hi": 100.0, "passed": 2, "trials": 3, "missing": 0, "tasks": 3},
                             {"participant": "codex-high", "estimate": null, "lo": null, "hi": null, "passed": 0, "trials": 0, "missing": 3, "tasks": 0}],
        }));
    }
    json!({"nightly": "night-config", "nights": nights})
}

#[test]
fn the_history_page_is_a_dashboard_that_fits_both_screens() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("history.html");
    let html = multicooker::report::html::render_history_html(&history_fixture());
    assert_eq!(
        html,
        multicooker::report::html::render_history_html(&history_fixture()),
        "byte-identical"
    );
    assert_eq!(
        html.matches("<polyline").count(),
        3,
        "one chart, a line per participant"
    );
    assert_eq!(html.matches("<svg class=\"trend\"").count(), 1);
    assert!(
        html.contains("<th class=\"num\">Task reward %</th>")
            && html.contains("<td class=\"num\">66.7 <small>(20–100)</small></td>"),
        "the tasks' pooled reward has its column, a participant without one a dash"
    );
    for part in [
        "id=\"legend\"",
        "class=\"band\"",
        "class=\"last\"",
        "id=\"latest\"",
        "ended `start_failed`",
        "href=\"#night-2\"",
        "id=\"night-2\"",
    ] {
        assert!(html.contains(part), "{part} missing");
    }
    fs_err::write(&page, &html).unwrap();
    let rendered = render(&page);
    assert!(rendered.console.is_empty(), "{:?}", rendered.console);
    fits_both_screens(&page, "history", "claude-opus");

    let empty = dir.path().join("empty.html");
    fs_err::write(
        &empty,
        multicooker::report::html::render_history_html(&json!({"nightly": "n", "nights": []})),
    )
    .unwrap();
    for size in SIZES {
        assert_fits(
            &layout(&empty, "history-empty", size),
            size,
            "No night recorded yet",
        );
    }
}

#[test]
fn hostile_names_ties_unscored_rows_and_history_render_escaped() {
    let summary = json!({
        "cook": "c<b>&", "round": 1, "judging_mode": "rubric",
        "ranking": [
            {"rank": 1, "rank_worst": 2, "participant": "a<b>&", "flavor": "claude", "mean_pct": 70.0, "num_judges": 2, "run_status": "ok"},
            {"rank": 1, "rank_worst": 2, "participant": "bee", "flavor": "codex", "mean_pct": 65.0, "num_judges": 2, "run_status": "ok"},
            {"rank": null, "participant": "cee", "flavor": "agy", "mean_pct": null, "num_judges": 0, "run_status": "rate_limited", "unscored": true}
        ],
        "statistics": {"method": "mean+cluster_bootstrap", "clusters": "judges", "resamples": 2000, "level": 0.95, "seed": 1,
            "estimates": [{"participant": "a<b>&", "estimate": 70.0, "lo": 60.0, "hi": 80.0, "clusters": 2}, {"participant": "bee", "estimate": 65.0, "lo": 55.0, "hi": 75.0, "clusters": 2}],
            "tied_groups": [["a<b>&", "bee"]]},
        "self_preference": [{"judge": "j", "flavor": "claude", "self_mean_pct": 80.0, "others_mean_pct": 70.0, "delta_pct": 10.0, "n": 1}],
        "blinding_probe": [{"judge": "j", "guesses": 3, "hits": 2, "chance": 0.333, "hit_rate": 0.667, "p_value": 0.259}],
        "coverage": [{"participant": "cee", "scored_by": 0, "eligible": 2, "reason": "its run ended `rate_limited`"}]
    });
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("leaderboard.html");
    fs_err::write(
        &page,
        multicooker::report::html::render_leaderboard_html(&summary),
    )
    .unwrap();
    let rendered = render(&page);
    assert!(
        rendered.console.is_empty(),
        "console: {:?}",
        rendered.console
    );
    assert_eq!(row_order(&rendered.dom), ["a&lt;b&gt;&amp;", "bee", "cee"]);
    assert!(
        !rendered.dom.contains("<b>&"),
        "names are text, never markup"
    );
    assert_eq!(
        rendered.dom.matches(">1=<").count(),
        2,
        "nothing separates them: both 1="
    );
    assert!(
        rendered.dom.contains("id=\"self-preference\"") && rendered.dom.contains("id=\"blinding\"")
    );
    fits_both_screens(&page, "leaderboard-hostile", "a<b>&");

    let history = json!({"nightly": "n", "nights": [
        {"night": "2026-11-21", "status": "ok", "comparable": true, "participants": [{"participant": "bee", "estimate": 60.0, "lo": 50.0, "hi": 70.0}], "changes": []},
        {"night": "2026-11-22", "status": "partial", "comparable": false, "not_comparable_reasons": ["unequal CLI pins"], "participants": [{"participant": "bee", "estimate": 66.0, "lo": 58.0, "hi": 74.0}], "changes": [{"participant": "bee", "kind": "cli_version", "from": "1.0", "to": "1.1"}]}
    ]});
    let page = dir.path().join("history.html");
    fs_err::write(
        &page,
        multicooker::report::html::render_history_html(&history),
    )
    .unwrap();
    let rendered = render(&page);
    assert!(
        rendered.console.is_empty(),
        "console: {:?}",
        rendered.console
    );
    assert!(rendered.dom.contains("unequal CLI pins") && rendered.dom.contains("<polyline"));
}
