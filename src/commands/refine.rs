//! `multicooker refine <task>`: round N+1 on top of each participant's previous output, with
//! shared feedback (`FEEDBACK.md` or `--feedback`) and personal feedback
//! (`FEEDBACK_<participant>.md`, else `FEEDBACK_<flavor>.md`).
//!
//! Nothing is lost: before anything runs, each participant's round-N output is copied to
//! `rounds/<N>/<participant>/` (and the sealed inbox to `rounds/<N>/_inbox/`). Round numbers
//! never skip (docs/BEHAVIOR.md §10.19): a refine that died leaves no `REFINE_<N>_RESULT.json`,
//! so the next one runs the same round again, starting from the snapshot it took, not from
//! whatever the dead run left in `out/`. Other participants' cells stay in status.json.

use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

use super::{Engine, cell_session, open_cook, select};
use crate::cli::RefineArgs;
use crate::cook::Refine;
use crate::error::{ExitCode, UserError};
use crate::fsx::{self, CopyOptions};
use crate::output::Printer;
use crate::pipeline::{self, CellsCooked, Round};
use crate::state::{CellState, CookPaths, now_iso};

/// The latest round with a result: N of the highest `REFINE_<N>_RESULT.json`, else 1 when
/// `RUN_RESULT.json` exists.
pub(super) fn latest_round(paths: &CookPaths) -> Option<u32> {
    let refined = std::fs::read_dir(paths.dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("REFINE_")?
                .strip_suffix("_RESULT.json")?
                .parse::<u32>()
                .ok()
        })
        .max();
    refined.or_else(|| paths.run_result().is_file().then_some(1))
}

fn copy_clean(from: &Path, to: &Path) -> std::io::Result<()> {
    fsx::remove_tree(to)?;
    fsx::copy_tree_no_follow(
        from,
        to,
        &CopyOptions {
            ignore: fsx::SEAL_IGNORE,
            max_bytes: u64::MAX,
            read_only: false,
            share: true,
        },
    )
    .map(|_| ())
}

/// Takes round `previous`'s snapshot, or, when an earlier attempt at this round already took
/// it, puts it back into `out/`.
fn snapshot(paths: &CookPaths, participants: &[String], previous: u32) -> std::io::Result<()> {
    let round_dir = paths.dir().join("rounds").join(previous.to_string());
    for participant in participants {
        let kept = round_dir.join(participant);
        if kept.is_dir() {
            let out = paths.out(participant);
            fsx::remove_tree(&out)?;
            copy_clean(&kept, &out)?;
        } else {
            copy_clean(&paths.out(participant), &kept)?;
        }
    }
    if paths.inbox().is_dir() && !round_dir.join("_inbox").is_dir() {
        copy_clean(&paths.inbox(), &round_dir.join("_inbox"))?;
    }
    Ok(())
}

/// The refine prompt: the round, the rules, the feedback, then the brief.
pub(super) fn refine_prompt(
    round: u32,
    shared: &str,
    personal: Option<&str>,
    brief_md: &str,
) -> String {
    let previous = round - 1;
    let mut parts = vec![
        format!(
            "This is round {round} of the brief below. ./out/ holds your round {previous} result: improve it in place.\n\n\
- Address the feedback below; keep what already works.\n- Stay inside this worktree; ./raw/ is read-only reference.\n\
- Add a section \"Round {round} changes\" to ./out/RESULT.md listing what you changed and why.\n- When you are done, just exit."
        ),
        "# Shared feedback (applies to all participants)".to_owned(),
        if shared.trim().is_empty() {
            "(none provided)".to_owned()
        } else {
            shared.trim().to_owned()
        },
    ];
    if let Some(personal) = personal.filter(|p| !p.trim().is_empty()) {
        parts.push("# Personal feedback (addressed specifically to you)".to_owned());
        parts.push(personal.trim().to_owned());
    }
    parts.push(format!("---\n\n# BRIEF.md\n\n{brief_md}"));
    parts.join("\n\n")
}

pub(super) async fn run(args: &RefineArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let brief = &loaded.brief;
    super::status::lint_gate(&paths, brief)?;
    if brief.harbor.is_some() {
        return Err(super::resume::harbor_cells_refused("refine", paths.name()).into());
    }
    let names = brief.participants.iter().map(|p| p.name.as_str());
    let selected = select(
        "participant",
        &names,
        &args.participants,
        &paths.brief_yaml(),
    )?;
    let Some(previous) = latest_round(&paths) else {
        return Err(UserError::new(
            format!("`{}` has no round to refine", paths.name()),
            format!("run `multicooker cook {}` first", paths.name()),
        )
        .into());
    };
    let shared = shared_feedback(session.printer, &paths, args.feedback.as_deref())?;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "refine")?;
    let round = previous + 1;
    snapshot(&paths, &selected, previous)?;
    let prompts = prompts(&paths, brief, &selected, round, &shared)?;
    fsx::write_json_atomic(
        &paths.dir().join(format!("REFINE_{round}.json")),
        &json!({"started_at": now_iso(), "round_num": round, "prev_round": previous, "participants": selected, "timeout_s": brief.timeout_s, "snapshot": format!("rounds/{previous}")}),
    )?;
    session.printer.info(&format!(
        "refining `{}`: round {round} for {} (round {previous} kept in rounds/{previous}/)",
        paths.name(),
        selected.join(", ")
    ));
    let engine = Engine::connect(&session, args.max_parallel).await?;
    let run = engine.run((&paths, brief), &cancel);
    let steps = Round {
        phase: "refine",
        refine: Some(Refine { round, prompts }),
        ..Round::default()
    };
    let cooked = pipeline::cook::cells(&run, &selected, steps).await?;
    Ok(print_refined(
        session.printer,
        &paths,
        (previous, round),
        &cooked,
    ))
}

/// The shared feedback: `--feedback`'s file, else the cook's FEEDBACK.md (none, with a
/// warning, when it is missing).
fn shared_feedback(
    printer: Printer,
    paths: &CookPaths,
    feedback: Option<&Path>,
) -> anyhow::Result<String> {
    if let Some(path) = feedback {
        return Ok(fs_err::read_to_string(path).map_err(|e| {
            UserError::new(
                format!("cannot read the feedback file `{}`: {e}", path.display()),
                "pass an existing file to --feedback",
            )
        })?);
    }
    let path = paths.dir().join("FEEDBACK.md");
    Ok(std::fs::read_to_string(&path).unwrap_or_else(|_| {
        printer.warn(&format!(
            "`{}` is missing: refining with no shared feedback",
            path.display()
        ));
        String::new()
    }))
}

/// Each selected participant's prompt for `round`, with its personal feedback
/// (`FEEDBACK_<participant>.md`, else `FEEDBACK_<flavor>.md`).
fn prompts(
    paths: &CookPaths,
    brief: &crate::brief::Brief,
    selected: &[String],
    round: u32,
    shared: &str,
) -> std::io::Result<BTreeMap<String, String>> {
    let brief_md = fs_err::read_to_string(paths.brief_md())?;
    let mut prompts = BTreeMap::new();
    for participant in brief
        .participants
        .iter()
        .filter(|p| selected.contains(&p.name))
    {
        let personal = [&participant.name, &participant.flavor]
            .iter()
            .find_map(|n| {
                std::fs::read_to_string(paths.dir().join(format!("FEEDBACK_{n}.md"))).ok()
            });
        prompts.insert(
            participant.name.clone(),
            refine_prompt(round, shared, personal.as_deref(), &brief_md),
        );
    }
    Ok(prompts)
}

/// The round's JSON and rows, and what to do next; the exit code.
fn print_refined(
    printer: Printer,
    paths: &CookPaths,
    (previous, round): (u32, u32),
    cooked: &CellsCooked,
) -> ExitCode {
    let (outcome, verified) = (&cooked.outcome, cooked.verified.as_ref());
    super::verify::print_after_cook(printer, paths, verified);
    printer.json(&json!({"cook": paths.name(), "round": round, "state": outcome.state, "participants": outcome.results}));
    super::print_results(printer, &outcome.results);
    if cooked.cancelled() {
        return ExitCode::Cancelled;
    }
    if super::verify::could_not_run(printer, verified) {
        return ExitCode::NothingUsable;
    }
    if outcome.results.iter().any(|r| r.status == CellState::Ok) {
        printer.info(&format!(
            "next: multicooker judge {name}; multicooker diff {name} --from {previous} --to {round}",
            name = paths.name()
        ));
        ExitCode::Success
    } else {
        ExitCode::NothingUsable
    }
}
