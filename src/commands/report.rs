//! `multicooker report <task>`: leaderboard.md and summary.json from the judges' scores.

use super::open_cook;
use crate::cli::TaskArgs;
use crate::error::ExitCode;
use crate::{pipeline, report, settings};

pub(super) fn run(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let (paths, loaded) = open_cook(&session, &args.task)?;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "report")?;
    let reported = pipeline::report(&paths, &loaded.brief)?;
    let printer = session.printer;
    for warning in &reported.warnings {
        printer.warn(warning);
    }
    let written = &reported.written;
    printer.json(&report::render_summary(&reported.report));
    if written.no_scores {
        printer.info(&format!(
            "no judge produced usable scores; see `{}`",
            written.summary.display()
        ));
        return Ok(ExitCode::NothingUsable);
    }
    let leaderboard = report::render_leaderboard(&reported.report);
    let summary = Summary::of(&leaderboard);
    for line in &summary.shown {
        printer.data(line);
    }
    if let Some(path) = &written.leaderboard {
        if summary.rest_lines > 0 {
            printer.data(&format!(
                "… {} more lines ({}) in `{}`",
                summary.rest_lines,
                summary.rest_sections.join(", "),
                path.display()
            ));
        }
        printer.info(&format!("\nleaderboard: {}", path.display()));
    }
    printer.info(&format!("summary:     {}", written.summary.display()));
    printer.info(&format!("html:        {}", written.html.display()));
    Ok(ExitCode::Success)
}

/// Lines of leaderboard.md the terminal always shows (their sections may be cut).
const READ_WITH: [&str; 6] = [
    "**Caveat:**",
    "Note:",
    "Separated:",
    "Not separated:",
    "Groups",
    "Agreement:",
];

/// What of leaderboard.md the terminal shows: whole sections, from the top through the one
/// that holds the ranking's intervals ("How sure is this ranking?"), else through the first
/// table's section; never a header without its table (issue 17); then, from the sections cut,
/// the lines that decide how to read the table ([`READ_WITH`]).
#[derive(Debug)]
struct Summary<'a> {
    shown: Vec<&'a str>,
    rest_lines: usize,
    rest_sections: Vec<&'a str>,
}

impl<'a> Summary<'a> {
    fn of(markdown: &'a str) -> Self {
        let lines: Vec<&str> = markdown.lines().collect();
        // Section starts: the top, then every `## ` header.
        let mut starts: Vec<usize> = vec![0];
        starts.extend((1..lines.len()).filter(|&i| lines[i].starts_with("## ")));
        let end_of = |k: usize| starts.get(k + 1).copied().unwrap_or(lines.len());
        let has = |k: usize, needle: &str| {
            lines[starts[k]..end_of(k)]
                .iter()
                .any(|l| l.starts_with('|') && l.contains(needle))
        };
        let last = (0..starts.len())
            .find(|&k| has(k, "Interval"))
            .or_else(|| (0..starts.len()).find(|&k| has(k, "")))
            .unwrap_or(starts.len() - 1);
        let cut = end_of(last);
        let mut shown: Vec<&str> = lines[..cut].to_vec();
        while shown.last().is_some_and(|l| l.trim().is_empty()) {
            shown.pop();
        }
        // The lines that decide how to read the table (issue 23): the caveat, why intervals
        // are missing, what the tests separate and the agreement, from the sections not shown.
        let key: Vec<&str> = lines[cut..]
            .iter()
            .copied()
            .filter(|l| READ_WITH.iter().any(|p| l.starts_with(p)))
            .collect();
        if !key.is_empty() {
            shown.push("");
            shown.extend(key);
        }
        Summary {
            shown,
            rest_lines: lines[cut..].iter().filter(|l| !l.trim().is_empty()).count(),
            rest_sections: lines[cut..]
                .iter()
                .filter_map(|l| l.strip_prefix("## "))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Summary;

    const LEADERBOARD: &str = "# Leaderboard\n\nJudges: j1\n\n| Rank | Participant |\n|---|---|\n| 1 | a |\n\n\
## How sure is this ranking?\n\n| Participant | Score % | Interval |\n|---|---|---|\n| a | 70.0 | 60 – 80 |\n\n\
No tied groups.\n\n## Judge run metrics\n\n| Judge |\n|---|\n| j1 |\n\n## Per-judge breakdown\n\n- a\n";

    #[test]
    fn the_terminal_shows_whole_sections_through_the_intervals_and_counts_the_rest() {
        let summary = Summary::of(LEADERBOARD);
        assert_eq!(summary.shown.last(), Some(&"No tied groups."));
        assert!(summary.shown.contains(&"| a | 70.0 | 60 – 80 |"));
        assert_eq!(
            summary.rest_sections,
            ["Judge run metrics", "Per-judge breakdown"]
        );
        assert_eq!(summary.rest_lines, 6);
    }

    #[test]
    fn without_an_interval_table_the_first_table_is_shown_whole() {
        let text = LEADERBOARD.replace("Interval", "Spread");
        let summary = Summary::of(&text);
        assert_eq!(summary.shown.last(), Some(&"| 1 | a |"));
        assert_eq!(summary.rest_sections.len(), 3);
    }

    // The caveat and the separations are shown even when their section is cut (issue 23: the
    // terminal left out what leaderboard.md says about few judges).
    #[test]
    fn the_caveat_and_the_separations_reach_the_terminal() {
        let text = LEADERBOARD.replace("Interval", "Spread").replace(
            "No tied groups.",
            "**Caveat:** only 2 judges.\n\nNot separated: a − b = +1.0.",
        );
        let summary = Summary::of(&text);
        assert!(summary.shown.contains(&"**Caveat:** only 2 judges."));
        assert_eq!(summary.shown.last(), Some(&"Not separated: a − b = +1.0."));
        assert!(!summary.shown.contains(&"No tied groups."));
    }
}
