//! `multicooker prune --older-than DAYS`: removes cooks nobody has touched for that long.
//!
//! Fixes the reference's hazards (docs/BEHAVIOR.md §10.25): a cook some process is running on is
//! never pruned, `--older-than` must be more than 0 (prune never means "everything"), and
//! `--keep-results` keeps brief.yaml and the briefs with the results, so the cook can still be
//! listed, reported and cleaned.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::json;

use super::connect;
use crate::cli::PruneArgs;
use crate::error::{ExitCode, UserError};
use crate::runtime::{LABEL_ROOT, ObjectKind, Selector};
use crate::settings;

/// What `--keep-results` keeps.
const RESULTS: &[&str] = &[
    "brief.yaml",
    "BRIEF.md",
    "JUDGE_BRIEF.md",
    "RUN.json",
    "RUN_RESULT.json",
    "JUDGE_RESULT.json",
    "status.json",
    "events.jsonl",
    "leaderboard.md",
    "leaderboard.html",
    "summary.json",
    "artifacts.json",
];

/// The last time anything in the cook folder's top level changed.
fn last_activity(cook: &Path) -> SystemTime {
    let mut latest = std::fs::metadata(cook)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    for entry in std::fs::read_dir(cook).into_iter().flatten().flatten() {
        if let Ok(modified) = entry.metadata().and_then(|m| m.modified()) {
            latest = latest.max(modified);
        }
    }
    latest
}

pub(super) async fn run(args: &PruneArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    if !(args.older_than.is_finite() && args.older_than > 0.0) {
        return Err(UserError::new(
            format!("`--older-than {}` would prune every cook", args.older_than),
            "give a number of days above 0, e.g. `--older-than 30`; `multicooker clean` removes one cook's engine objects",
        )
        .into());
    }
    let limit = Duration::from_secs_f64(args.older_than * 86_400.0);
    let now = SystemTime::now();
    let mut cooks: Vec<PathBuf> = std::fs::read_dir(&session.root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("brief.yaml").is_file())
        .collect();
    cooks.sort();
    let printer = session.printer;
    let mut pruned = Vec::new();
    let mut kept_running = Vec::new();
    let mut runtime = None;
    for cook in cooks {
        let name = cook
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let age = now.duration_since(last_activity(&cook)).unwrap_or_default();
        if age < limit {
            continue;
        }
        if let Some(holder) = crate::state::holder(&cook) {
            printer.info(&format!(
                "kept `{name}`: `multicooker {}` (pid {}) is running on it",
                holder.command, holder.pid
            ));
            kept_running.push(name);
            continue;
        }
        let days = age.as_secs_f64() / 86_400.0;
        if args.dry_run {
            printer.data(&format!("would prune {name} (idle {days:.1} days)"));
            pruned.push(name);
            continue;
        }
        if runtime.is_none() {
            runtime = Some(connect(&session).await?.0);
        }
        let engine = runtime.as_ref().expect("connected above");
        let selector = Selector::cook(&name).with(LABEL_ROOT, &session.root_id());
        let mut objects = engine.list(&selector).await?;
        objects.retain(|o| args.prune_images || o.kind != ObjectKind::Image);
        objects.sort_by_key(|o| o.kind);
        for object in &objects {
            if let Err(error) = engine.remove(object).await {
                printer.warn(&format!("could not remove {object}: {error}"));
            }
        }
        remove_cook(&cook, args.keep_results)?;
        printer.data(&format!(
            "pruned {name} (idle {days:.1} days, {} engine object(s){})",
            objects.len(),
            if args.keep_results {
                ", results kept"
            } else {
                ""
            }
        ));
        pruned.push(name);
    }
    printer.json(&json!({"dry_run": args.dry_run, "pruned": pruned, "kept_running": kept_running, "older_than_days": args.older_than}));
    if pruned.is_empty() {
        printer.info(&format!(
            "nothing idle for more than {} day(s) under `{}`",
            args.older_than,
            session.root.display()
        ));
    }
    Ok(ExitCode::Success)
}

/// Deletes a cook folder, or with `keep_results` everything but its results and briefs.
fn remove_cook(cook: &Path, keep_results: bool) -> std::io::Result<()> {
    if !keep_results {
        return crate::fsx::remove_tree(cook);
    }
    for entry in fs_err::read_dir(cook)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if RESULTS.contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            crate::fsx::remove_tree(&path)?;
        } else {
            fs_err::remove_file(&path)?;
        }
    }
    Ok(())
}
