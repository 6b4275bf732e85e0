//! `multicooker diff <task> [--from N] [--to M]`: which files each participant added, removed
//! or changed between two rounds (`state::rounds`). Round k is `rounds/<k>/<participant>/`, or,
//! for the latest round, the live `work/<participant>/out/`. Exit 0 when something changed, 1
//! when nothing did.

use serde_json::json;

use super::select;
use crate::cli::DiffArgs;
use crate::error::{ExitCode, UserError};
use crate::output::Printer;
use crate::settings;
use crate::state::CookPaths;
use crate::state::rounds::{self, Change};

pub(super) fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.task.global)?;
    let (paths, loaded) = super::open_cook(&session, &args.task.task)?;
    let latest = rounds::latest(&paths).ok_or_else(|| {
        UserError::new(
            format!("`{}` has no round yet", paths.name()),
            format!("run `multicooker cook {}` first", paths.name()),
        )
    })?;
    let to = args.to.unwrap_or(latest);
    let from = args.from.unwrap_or(to.saturating_sub(1).max(1));
    check_rounds(&paths, from, to, latest)?;
    let names = loaded.brief.participants.iter().map(|p| p.name.as_str());
    let selected = select(
        "participant",
        &names,
        &args.participants,
        &paths.brief_yaml(),
    )?;
    let printer = session.printer;
    let mut report = Vec::new();
    let mut any = false;
    for participant in &selected {
        let (Some(a), Some(b)) = (
            rounds::round_dir(&paths, from, latest, participant),
            rounds::round_dir(&paths, to, latest, participant),
        ) else {
            printer.data(&format!("# {participant}: round {from} or {to} not found"));
            report.push(json!({"participant": participant, "missing": true}));
            continue;
        };
        let changes = rounds::changes(&rounds::files(&a), &rounds::files(&b));
        any |= !changes.is_empty();
        print_changes(printer, participant, (from, to), &changes);
        report.push(json!({
            "participant": participant,
            "changes": changes.iter().map(|c| json!({"change": c.kind, "path": c.path, "bytes_before": c.bytes_before, "bytes_after": c.bytes_after})).collect::<Vec<_>>(),
        }));
    }
    printer.json(&json!({"cook": paths.name(), "from": from, "to": to, "participants": report}));
    Ok(if any {
        ExitCode::Success
    } else {
        ExitCode::NothingUsable
    })
}

/// Refuses a round that does not exist, and a round against itself.
fn check_rounds(paths: &CookPaths, from: u32, to: u32, latest: u32) -> Result<(), UserError> {
    // A round that does not exist is a mistake, not "no change" (issue 25: `--to 9` on a
    // two-round cook exited 1 as if nothing had changed).
    if let Some(missing) = [from, to].into_iter().find(|r| *r == 0 || *r > latest) {
        return Err(UserError::new(
            format!("`{}` has no round {missing}", paths.name()),
            format!(
                "its rounds are 1 to {latest}; e.g. `--from {} --to {latest}`",
                latest.saturating_sub(1).max(1)
            ),
        ));
    }
    if from != to {
        return Ok(());
    }
    // A one-round cook has nothing to compare yet: name the step that makes round 2 rather
    // than suggest the same no-op (issue 17).
    let hint = if latest < 2 {
        format!(
            "`{}` has only round 1; `multicooker refine {}` makes round 2",
            paths.name(),
            paths.name()
        )
    } else {
        format!(
            "pick two different rounds, e.g. `--from {} --to {latest}` (latest: {latest})",
            latest - 1
        )
    };
    Err(UserError::new(
        format!("round {from} against itself shows nothing"),
        hint,
    ))
}

/// One participant's changes as text.
fn print_changes(printer: Printer, participant: &str, (from, to): (u32, u32), changes: &[Change]) {
    printer.data(&format!("# {participant}: round {from} → round {to}"));
    if changes.is_empty() {
        printer.data("  (no changes)");
    }
    for change in changes {
        let sizes = match (change.bytes_before, change.bytes_after) {
            (Some(o), Some(n)) => format!(" ({o} → {n} bytes)"),
            (None, Some(n)) => format!(" ({n} bytes)"),
            (Some(o), None) => format!(" ({o} bytes)"),
            (None, None) => String::new(),
        };
        // A participant chose the name: shown, never obeyed (escapes, CR, bidi, newlines).
        let path = crate::sanitize::one_line(&change.path);
        printer.data(&format!("  {:<8} {path}{sizes}", change.kind));
    }
}
