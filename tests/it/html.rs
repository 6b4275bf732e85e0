//! leaderboard.html in a real headless browser (Debian's chromium): it renders, logs nothing to
//! the console, requests nothing from the network, and shows the expected rows in order. The
//! console check is proven live by a control page with a script error.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::{TestCook, dummy_brief, show};

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
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
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
