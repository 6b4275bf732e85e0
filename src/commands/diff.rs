//! `multicooker diff <task> [--from N] [--to M]`: which files each participant added, removed
//! or changed between two rounds. Round k is `rounds/<k>/<participant>/`, or, for the latest
//! round, the live `work/<participant>/out/`. Exit 0 when something changed, 1 when nothing did.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::select;
use crate::cli::DiffArgs;
use crate::error::{ExitCode, UserError};
use crate::settings;
use crate::state::CookPaths;

/// Relative path → SHA-256 of every regular file (links are not followed).
fn files(root: &Path) -> BTreeMap<String, (u64, String)> {
    use sha2::Digest as _;
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .min_depth(1)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let bytes = std::fs::read(e.path()).ok()?;
            let relative = e
                .path()
                .strip_prefix(root)
                .ok()?
                .to_string_lossy()
                .into_owned();
            let digest: String = sha2::Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            Some((relative, (bytes.len() as u64, digest)))
        })
        .collect()
}

fn round_dir(paths: &CookPaths, round: u32, latest: u32, participant: &str) -> Option<PathBuf> {
    let kept = paths
        .dir()
        .join("rounds")
        .join(round.to_string())
        .join(participant);
    if kept.is_dir() {
        Some(kept)
    } else if round == latest {
        Some(paths.out(participant)).filter(|p| p.is_dir())
    } else {
        None
    }
}

pub(super) fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.task.global)?;
    let (paths, loaded) = super::open_cook(&session, &args.task.task)?;
    let latest = super::refine::latest_round(&paths).ok_or_else(|| {
        UserError::new(
            format!("`{}` has no round yet", paths.name()),
            format!("run `multicooker cook {}` first", paths.name()),
        )
    })?;
    let to = args.to.unwrap_or(latest);
    let from = args.from.unwrap_or(to.saturating_sub(1).max(1));
    // A round that does not exist is a mistake, not "no change" (issue 25: `--to 9` on a
    // two-round cook exited 1 as if nothing had changed).
    if let Some(missing) = [from, to].into_iter().find(|r| *r == 0 || *r > latest) {
        return Err(UserError::new(
            format!("`{}` has no round {missing}", paths.name()),
            format!(
                "its rounds are 1 to {latest}; e.g. `--from {} --to {latest}`",
                latest.saturating_sub(1).max(1)
            ),
        )
        .into());
    }
    if from == to {
        // A one-round cook has nothing to compare yet: name the step that makes round 2
        // rather than suggest the same no-op (issue 17).
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
        return Err(
            UserError::new(format!("round {from} against itself shows nothing"), hint).into(),
        );
    }
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
            round_dir(&paths, from, latest, participant),
            round_dir(&paths, to, latest, participant),
        ) else {
            printer.data(&format!("# {participant}: round {from} or {to} not found"));
            report.push(json!({"participant": participant, "missing": true}));
            continue;
        };
        let (before, after) = (files(&a), files(&b));
        let mut changes = Vec::new();
        for (path, (size, hash)) in &after {
            match before.get(path) {
                None => changes.push(("added", path.clone(), None, Some(*size))),
                Some((old, old_hash)) if old_hash != hash => {
                    changes.push(("changed", path.clone(), Some(*old), Some(*size)));
                }
                Some(_) => {}
            }
        }
        for (path, (size, _)) in &before {
            if !after.contains_key(path) {
                changes.push(("removed", path.clone(), Some(*size), None));
            }
        }
        changes.sort_by(|x, y| x.1.cmp(&y.1));
        any |= !changes.is_empty();
        printer.data(&format!("# {participant}: round {from} → round {to}"));
        if changes.is_empty() {
            printer.data("  (no changes)");
        }
        for (kind, path, old, new) in &changes {
            let sizes = match (old, new) {
                (Some(o), Some(n)) => format!(" ({o} → {n} bytes)"),
                (None, Some(n)) => format!(" ({n} bytes)"),
                (Some(o), None) => format!(" ({o} bytes)"),
                (None, None) => String::new(),
            };
            // A participant chose the name: shown, never obeyed (escapes, CR, bidi, newlines).
            let path = crate::sanitize::one_line(path);
            printer.data(&format!("  {kind:<8} {path}{sizes}"));
        }
        report.push(json!({
            "participant": participant,
            "changes": changes.iter().map(|(kind, path, old, new)| json!({"change": kind, "path": path, "bytes_before": old, "bytes_after": new})).collect::<Vec<_>>(),
        }));
    }
    printer.json(&json!({"cook": paths.name(), "from": from, "to": to, "participants": report}));
    Ok(if any {
        ExitCode::Success
    } else {
        ExitCode::NothingUsable
    })
}
