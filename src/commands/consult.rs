//! `multicooker consult <task> [--target P] [--reviewers NAME=FLAVOR,…] [--refine]`: the
//! reviewer role ([`crate::review`]) on one candidate, then, with `--refine`, a refine round of
//! that candidate with the merged feedback.

use std::sync::Arc;

use super::{cell_session, connect, open_cook};
use crate::brief::Actor;
use crate::cell::Venue;
use crate::cli::{ConsultArgs, RefineArgs};
use crate::error::{ExitCode, UserError};
use crate::progress::Progress;
use crate::review;
use crate::settings::run_settings;
use crate::state::{CookPaths, Role};

pub(super) async fn run(args: &ConsultArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let brief = &loaded.brief;
    let target = review::target(&paths, brief, args.target.as_deref(), args.refine)?;
    let reviewers = review::reviewers(&args.reviewers, brief)?;
    warn_same_flavor(session.printer, brief, &target, &reviewers);
    let lock = crate::state::RunLock::acquire(paths.dir(), "consult")?;
    let (runtime, engine) = connect(&session).await?;
    let settings = run_settings(&session, brief, &engine, None, reviewers.len(), cancel)?.cells;
    let progress: Arc<dyn Progress> = Arc::new(
        session
            .printer
            .progress("consult", overview(&paths, brief, &reviewers)),
    );
    let venue = Venue {
        runtime: &runtime,
        paths: &paths,
        brief,
        settings: &settings,
        progress: &progress,
    };
    let run = review::review(venue, &target, &reviewers).await?;
    super::report_leftovers(&session, &run.leftovers);
    if let Err(message) = run.build {
        return Err(UserError::new(
            format!("an image did not build: {message}"),
            "see `multicooker doctor`",
        )
        .into());
    }
    let recorded = review::record(&paths, &target, &run.outputs)?;
    session.printer.json(&recorded.result);
    print_reviews(session.printer, &run.outputs);
    let Some(feedback) = recorded.feedback else {
        session
            .printer
            .info("no reviewer wrote a review; FEEDBACK.md is unchanged");
        return Ok(ExitCode::NothingUsable);
    };
    session
        .printer
        .info(&format!("reviews merged into {}", feedback.display()));
    drop(lock);
    if args.refine {
        let refine = RefineArgs {
            task: args.task.clone(),
            participants: vec![target],
            feedback: None,
            max_parallel: None,
        };
        return super::refine::run(&refine).await;
    }
    session.printer.info(&format!(
        "next: multicooker refine {} --participants {target}",
        paths.name()
    ));
    Ok(ExitCode::Success)
}

/// A reviewer of the candidate's own flavor is allowed, and said.
fn warn_same_flavor(
    printer: crate::output::Printer,
    brief: &crate::brief::Brief,
    target: &str,
    reviewers: &[Actor],
) {
    for reviewer in reviewers {
        if brief
            .participant(target)
            .is_some_and(|t| t.flavor == reviewer.flavor)
        {
            printer.warn(&format!(
                "reviewer `{}` has the candidate's flavor `{}`",
                reviewer.name, reviewer.flavor
            ));
        }
    }
}

/// One line per reviewer: its name, how its cell ended, how long it took.
fn print_reviews(printer: crate::output::Printer, outputs: &[review::Review]) {
    for review in outputs {
        printer.data(&format!(
            "{:<20} {:<12} {:.1}s",
            review.name, review.status, review.duration_s
        ));
    }
}

/// The progress display's overall line for the reviewers' cells.
fn overview(
    paths: &CookPaths,
    brief: &crate::brief::Brief,
    reviewers: &[Actor],
) -> crate::output::Overview {
    crate::output::Overview {
        cells: reviewers.len(),
        timeout_s: reviewers
            .iter()
            .map(|r| brief.timeout_for(r, Role::Reviewer))
            .max()
            .unwrap_or(0),
        cook: paths.name().to_owned(),
        logs: reviewers
            .iter()
            .map(|r| {
                let log = review::logs(paths, &r.name).join(format!("{}.stderr.log", r.flavor));
                ((Role::Reviewer, r.name.clone()), log)
            })
            .collect(),
    }
}
