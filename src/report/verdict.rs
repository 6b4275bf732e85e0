//! The verdict: the one sentence a reader sees first, above every table (leaderboard.md and
//! .html, the terminal `report`, the history page). It names the leader or the participants
//! tied for first, says whether the paired tests separate them and, when they do not, why (one
//! judge, judges agreeing exactly, too few judges or briefs); then the hidden tests' pass rates
//! when they ran, and who is unscored. Read from summary.json's data (or a night of
//! `history --json`), so old summaries get one too. Pure.

use serde_json::Value;

use super::ranking::FEW_CLUSTERS;

/// One scored participant, in score order.
struct Row<'a> {
    name: &'a str,
    score: f64,
    lo: Option<f64>,
    hi: Option<f64>,
    /// Best and worst rank its own paired tests allow.
    best: u64,
    worst: u64,
}

/// What the intervals stand on.
struct Grounds<'a> {
    /// Judges (a cook) or briefs (a night) counted.
    clusters: u64,
    /// `judge` or `brief`.
    unit: &'static str,
    /// The statistics' note (why an interval is missing), if any.
    note: Option<&'a str>,
    /// Pairwise verdicts (their sampling error floors the intervals).
    pairwise: bool,
}

/// The verdict of a cook, from summary.json's data; `None` when nobody is scored.
pub fn of_summary(summary: &Value) -> Option<String> {
    let stats = &summary["statistics"];
    let rows: Vec<Row<'_>> = summary["ranking"]
        .as_array()?
        .iter()
        .filter(|r| r["rank"].is_number())
        .filter_map(|r| {
            let name = r["participant"].as_str()?;
            let estimate = stats["estimates"]
                .as_array()
                .and_then(|e| e.iter().find(|e| e["participant"] == name));
            let score = estimate
                .and_then(|e| e["estimate"].as_f64())
                .or_else(|| r["score_pct"].as_f64())
                .or_else(|| r["mean_pct"].as_f64())?;
            let interval = |key: &str| {
                estimate
                    .and_then(|e| e[key].as_f64())
                    .or_else(|| r[key].as_f64())
            };
            Some(row(name, score, (interval("lo"), interval("hi")), r))
        })
        .collect();
    let grounds = Grounds {
        clusters: judges_counted(summary),
        unit: "judge",
        note: stats["note"].as_str(),
        pairwise: summary["judging_mode"] == "pairwise",
    };
    let mut text = lead(&rows, &grounds)?;
    let unscored: Vec<String> = summary["ranking"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| !r["rank"].is_number())
        .map(|r| {
            let name = r["participant"].as_str().unwrap_or("?");
            match r["run_status"].as_str() {
                Some(outcome) if outcome != "ok" => format!("{name} ({outcome})"),
                _ => name.to_owned(),
            }
        })
        .collect();
    if !unscored.is_empty() {
        text.push_str(&format!(" Unscored: {}.", unscored.join(", ")));
    }
    let order: Vec<&str> = summary["ranking"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["participant"].as_str())
        .collect();
    if let Some(tests) = pass_rates(summary["verification"]["participants"].as_array(), &order) {
        text.push(' ');
        text.push_str(&tests);
    }
    Some(text)
}

/// The verdict of one night of `history --json`; `None` when nobody is scored.
pub fn of_night(night: &Value) -> Option<String> {
    let rows: Vec<Row<'_>> = night["participants"]
        .as_array()?
        .iter()
        .filter_map(|p| {
            let score = p["estimate"].as_f64()?;
            Some(row(
                p["participant"].as_str()?,
                score,
                (p["lo"].as_f64(), p["hi"].as_f64()),
                p,
            ))
        })
        .collect();
    let mut rows = rows;
    rows.sort_by(|x, y| super::by_score(y.score, x.score));
    let grounds = Grounds {
        clusters: night["briefs"].as_u64().unwrap_or(0),
        unit: "brief",
        note: None,
        pairwise: false,
    };
    let mut text = lead(&rows, &grounds)?;
    let rates: Vec<String> = night["pass_rates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(format!(
                "{} {}/{} ({:.0} %)",
                r["participant"].as_str()?,
                r["passed"].as_u64()?,
                r["counted"].as_u64()?,
                r["estimate"].as_f64()?
            ))
        })
        .collect();
    if !rates.is_empty() {
        text.push_str(&format!(" Hidden tests passed: {}.", rates.join(", ")));
    }
    let rewards: Vec<String> = night["task_rewards"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(format!(
                "{} {:.0} % ({}/{} full)",
                r["participant"].as_str()?,
                r["estimate"].as_f64()?,
                r["passed"].as_u64()?,
                r["trials"].as_u64()?
            ))
        })
        .collect();
    if !rewards.is_empty() {
        text.push_str(&format!(" Mean task reward: {}.", rewards.join(", ")));
    }
    Some(text)
}

fn row<'a>(name: &'a str, score: f64, (lo, hi): (Option<f64>, Option<f64>), r: &Value) -> Row<'a> {
    let best = r["rank_best"].as_u64().or_else(|| r["rank"].as_u64());
    let best = best.unwrap_or(1);
    Row {
        name,
        score,
        lo,
        hi,
        best,
        worst: r["rank_worst"].as_u64().unwrap_or(best),
    }
}

/// How many judges' scores the intervals stand on: the most any participant had.
fn judges_counted(summary: &Value) -> u64 {
    let from_estimates = summary["statistics"]["estimates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["clusters"].as_u64())
        .max();
    from_estimates.unwrap_or_else(|| {
        summary["ranking"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["num_judges"].as_u64())
            .max()
            .unwrap_or(0)
    })
}

/// `ada`, `ada and basil`, `ada, basil and cleo`.
fn list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

/// The first sentence: who leads and how sure.
fn lead(rows: &[Row<'_>], grounds: &Grounds<'_>) -> Option<String> {
    let top = rows.first()?;
    if rows.len() == 1 {
        return Some(format!(
            "{} is the only participant scored ({}), so there is no one to rank it against.",
            top.name,
            pct(top.score)
        ));
    }
    let interval = match (top.lo, top.hi) {
        (Some(lo), Some(hi)) => format!(", 95 % interval {lo:.1}–{hi:.1}"),
        _ => String::new(),
    };
    let tied: Vec<&Row<'_>> = rows.iter().filter(|r| r.best == 1).collect();
    if top.worst == 1 && tied.len() == 1 {
        return Some(format!(
            "{} leads with {}{interval}: the paired tests separate it from every other participant ({}).",
            top.name,
            pct(top.score),
            count(grounds.clusters, grounds.unit)
        ));
    }
    if tied.len() <= 1 {
        return Some(format!(
            "{} scores highest ({}{interval}) and nobody is placed above it, but the paired tests do not separate it from every other participant (its rank could be 1–{}): {}.",
            top.name,
            pct(top.score),
            top.worst,
            why_not(grounds, top.lo.is_none())
        ));
    }
    let names: Vec<String> = tied
        .iter()
        .map(|r| format!("{} ({})", r.name, pct(r.score)))
        .collect();
    Some(format!(
        "No clear leader: {} could each be first; the paired tests do not separate them because {}.",
        list(&names),
        why_not(grounds, tied.iter().any(|r| r.lo.is_none()))
    ))
}

/// `1 judge`, `3 judges`.
fn count(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// Why the paired tests separate nobody from the leader.
fn why_not(grounds: &Grounds<'_>, no_interval: bool) -> String {
    let unit = grounds.unit;
    let n = grounds.clusters;
    // The note says why an interval is missing: the reason only when a leader has none.
    let note = if no_interval {
        grounds.note.unwrap_or("")
    } else {
        ""
    };
    if n < 2 {
        return format!("only one {unit} counted, and one {unit}'s scores give no interval");
    }
    if note.contains("agreed exactly") {
        return format!(
            "the {n} {unit}s agreed exactly, which leaves no spread to measure how sure they are"
        );
    }
    if note.contains("every score is needed") {
        return "every score went into fixing the judges' leniencies, leaving none to measure how much they disagree".to_owned();
    }
    if note.contains("do not connect") {
        return "the judges' scores do not connect every participant".to_owned();
    }
    if grounds.pairwise && n < mc_stats::FLOOR_BELOW as u64 {
        return format!(
            "with {} the verdicts' own sampling error keeps the intervals wide",
            count(n, unit)
        );
    }
    if n < FEW_CLUSTERS as u64 {
        return format!(
            "with only {} the intervals are wide and the gaps between them are smaller",
            count(n, unit)
        );
    }
    format!(
        "their gaps are within what the {unit}s' disagreement allows ({})",
        count(n, unit)
    )
}

/// `Hidden tests passed: ada 6/6 (100 %), basil 3/6 (50 %); not verified: cleo (build_failed).`
fn pass_rates(rows: Option<&Vec<Value>>, order: &[&str]) -> Option<String> {
    let mut rows: Vec<&Value> = rows?.iter().collect();
    // In the ranking's order (a participant the ranking lacks last).
    rows.sort_by_key(|r| {
        order
            .iter()
            .position(|p| r["participant"] == *p)
            .unwrap_or(usize::MAX)
    });
    let mut passed = Vec::new();
    let mut missing = Vec::new();
    for row in rows {
        let name = row["participant"].as_str().unwrap_or("?");
        match (
            row["passed"].as_u64(),
            row["counted"].as_u64(),
            row["pass_pct"].as_f64(),
        ) {
            (Some(p), Some(n), Some(pct)) => passed.push(format!("{name} {p}/{n} ({pct:.0} %)")),
            _ => missing.push(match row["outcome"].as_str() {
                Some(outcome) => format!("{name} ({outcome})"),
                None => format!("{name} (not run)"),
            }),
        }
    }
    let text = match (passed.is_empty(), missing.is_empty()) {
        (true, true) => return None,
        (false, true) => format!("Hidden tests passed: {}.", passed.join(", ")),
        (true, false) => format!("Hidden tests unscored: {}.", missing.join(", ")),
        (false, false) => format!(
            "Hidden tests passed: {}; unscored: {}.",
            passed.join(", "),
            missing.join(", ")
        ),
    };
    Some(text)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{of_night, of_summary};

    /// `(participant, score, interval, (best rank, worst rank))`.
    type Row<'a> = (&'a str, f64, Option<(f64, f64)>, (u64, u64));

    fn summary(rows: &[Row<'_>], judges: u64, note: Option<&str>) -> Value {
        let ranking: Vec<Value> = rows
            .iter()
            .map(|(p, s, _, (best, worst))| json!({"participant": p, "rank": best, "rank_best": best, "rank_worst": worst, "score_pct": s, "run_status": "ok"}))
            .collect();
        let estimates: Vec<Value> = rows
            .iter()
            .map(|(p, s, i, _)| json!({"participant": p, "estimate": s, "lo": i.map(|i| i.0), "hi": i.map(|i| i.1), "clusters": judges}))
            .collect();
        json!({"judging_mode": "rubric", "ranking": ranking, "statistics": {"estimates": estimates, "note": note}})
    }

    #[test]
    fn a_separated_leader_is_named_with_its_interval() {
        let s = summary(
            &[
                ("ada", 82.0, Some((75.0, 89.0)), (1, 1)),
                ("bo", 50.0, Some((40.0, 60.0)), (2, 2)),
            ],
            6,
            None,
        );
        assert_eq!(
            of_summary(&s).unwrap(),
            "ada leads with 82.0 %, 95 % interval 75.0–89.0: the paired tests separate it from every other participant (6 judges)."
        );
    }

    /// The hello example: one judge, three participants, nothing separated.
    #[test]
    fn one_judge_names_every_tied_leader_and_says_why() {
        let s = summary(
            &[
                ("ada", 100.0, None, (1, 3)),
                ("cleo", 80.0, None, (1, 3)),
                ("basil", 60.0, None, (1, 3)),
            ],
            1,
            Some("an interval needs at least 2 judges whose scores differ"),
        );
        assert_eq!(
            of_summary(&s).unwrap(),
            "No clear leader: ada (100.0 %), cleo (80.0 %) and basil (60.0 %) could each be first; the paired tests do not separate them because only one judge counted, and one judge's scores give no interval."
        );
    }

    #[test]
    fn judges_agreeing_exactly_and_few_judges_are_told_apart() {
        let note =
            "the 2 judges agreed exactly: leaving out any one of them gives the same estimates";
        let exact = summary(
            &[("a", 90.0, None, (1, 2)), ("b", 70.0, None, (1, 2))],
            2,
            Some(note),
        );
        assert!(
            of_summary(&exact)
                .unwrap()
                .contains("the 2 judges agreed exactly")
        );
        let few = summary(
            &[
                ("a", 90.0, Some((70.0, 100.0)), (1, 2)),
                ("b", 70.0, Some((50.0, 90.0)), (1, 2)),
            ],
            3,
            Some(note),
        );
        assert!(
            of_summary(&few)
                .unwrap()
                .contains("with only 3 judges the intervals are wide"),
            "the note is about missing intervals; these have some"
        );
    }

    #[test]
    fn pass_rates_follow_the_ranking_and_unscored_ones_say_why() {
        let mut s = summary(&[("a", 90.0, None, (1, 1))], 1, None);
        s["ranking"]
            .as_array_mut()
            .unwrap()
            .push(json!({"participant": "z", "rank": null, "run_status": "start_failed"}));
        s["verification"] = json!({"participants": [
            {"participant": "z", "outcome": "build_failed"},
            {"participant": "a", "passed": 5, "counted": 6, "pass_pct": 83.33},
        ]});
        assert_eq!(
            of_summary(&s).unwrap(),
            "a is the only participant scored (90.0 %), so there is no one to rank it against. Unscored: z (start_failed). Hidden tests passed: a 5/6 (83 %); unscored: z (build_failed)."
        );
        assert_eq!(of_summary(&json!({"ranking": []})), None);
    }

    #[test]
    fn a_night_is_judged_over_its_briefs() {
        let night = json!({"briefs": 2, "participants": [
            {"participant": "b", "estimate": 60.0, "rank": 1, "rank_best": 1, "rank_worst": 2},
            {"participant": "a", "estimate": 70.0, "lo": 60.0, "hi": 80.0, "rank": 1, "rank_best": 1, "rank_worst": 2},
        ], "pass_rates": [{"participant": "a", "estimate": 50.0, "passed": 3, "counted": 6}]});
        assert_eq!(
            of_night(&night).unwrap(),
            "No clear leader: a (70.0 %) and b (60.0 %) could each be first; the paired tests do not separate them because with only 2 briefs the intervals are wide and the gaps between them are smaller. Hidden tests passed: a 3/6 (50 %)."
        );
    }

    #[test]
    fn a_night_of_tasks_gives_the_mean_reward_and_skips_one_without_any() {
        let night = json!({"briefs": 3, "participants": [
            {"participant": "a", "estimate": 70.0, "lo": 65.0, "hi": 75.0, "rank": 1, "rank_best": 1, "rank_worst": 1},
            {"participant": "b", "estimate": 40.0, "lo": 35.0, "hi": 45.0, "rank": 2, "rank_best": 2, "rank_worst": 2},
        ], "task_rewards": [
            {"participant": "a", "estimate": 66.666, "passed": 2, "trials": 3},
            {"participant": "b", "estimate": null, "passed": 0, "trials": 0, "missing": 3},
        ]});
        let verdict = of_night(&night).unwrap();
        assert!(
            verdict.ends_with(" Mean task reward: a 67 % (2/3 full)."),
            "{verdict}"
        );
    }
}
