//! `multicooker prune --older-than DAYS`: removes cooks nobody has touched for that long
//! (`state::folders` lists them, dates them and removes them).
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
use crate::runtime::{LABEL_ROOT, ObjectKind, Selector, SharedRuntime};
use crate::settings::{self, Session};
use crate::state::folders::{cook_dirs, last_activity, remove_cook};

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
    let mut cooks: Vec<PathBuf> = cook_dirs(&session.root).collect();
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
        } else {
            if runtime.is_none() {
                runtime = Some(connect(&session).await?.0);
            }
            if let Some(engine) = &runtime {
                prune(&session, engine, (&cook, &name), days, args).await?;
            }
        }
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

/// Removes one idle cook's engine objects (its images only with `--prune-images`), then its
/// folder (or all but its results), and says so.
async fn prune(
    session: &Session,
    engine: &SharedRuntime,
    (cook, name): (&Path, &str),
    days: f64,
    args: &PruneArgs,
) -> anyhow::Result<()> {
    let selector = Selector::cook(name).with(LABEL_ROOT, &session.root_id());
    let mut objects = engine.list(&selector).await?;
    objects.retain(|o| args.prune_images || o.kind != ObjectKind::Image);
    objects.sort_by_key(|o| o.kind);
    for object in &objects {
        if let Err(error) = engine.remove(object).await {
            session
                .printer
                .warn(&format!("could not remove {object}: {error}"));
        }
    }
    remove_cook(cook, args.keep_results)?;
    session.printer.data(&format!(
        "pruned {name} (idle {days:.1} days, {} engine object(s){})",
        objects.len(),
        if args.keep_results {
            ", results kept"
        } else {
            ""
        }
    ));
    Ok(())
}
