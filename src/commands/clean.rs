//! `multicooker clean <task> | --all`: removes engine objects by label (cells first, then
//! networks, volumes, images). `--all` sweeps every cook of this root (`--root`), including
//! objects a killed run left behind, and login snapshots a killed run left in `.auth/`.
//! Results in the cook folder are never touched.

use std::path::PathBuf;

use serde_json::json;

use super::connect;
use crate::cli::CleanArgs;
use crate::error::{ExitCode, UserError};
use crate::runtime::{LABEL_ROOT, ObjectKind, ObjectRef, Selector};
use crate::settings;
use crate::state::{StateError, check_task_name};

pub(super) async fn run(args: &CleanArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let printer = session.printer;
    let mut cook_dirs: Vec<PathBuf> = Vec::new();
    let selector = match (&args.task, args.all) {
        (_, true) => {
            cook_dirs.extend(
                std::fs::read_dir(&session.root)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.join("brief.yaml").is_file()),
            );
            Selector::any_cook().with(LABEL_ROOT, &session.root_id())
        }
        (Some(task), false) => {
            match session.find_cook(task) {
                Ok(paths) => {
                    cook_dirs.push(paths.dir().to_path_buf());
                    Selector::cook(paths.name()).with(LABEL_ROOT, &paths.root_id())
                }
                Err(StateError::NoCook { .. }) => {
                    check_task_name(task)?;
                    printer.info(&format!("no cook folder `{task}` under `{}`; removing engine objects labelled with it", session.root.display()));
                    Selector::cook(task).with(LABEL_ROOT, &session.root_id())
                }
                Err(e) => return Err(e.into()),
            }
        }
        (None, false) => {
            return Err(UserError::new("nothing to clean", "pass a task, or --all").into());
        }
    };
    let (runtime, _) = connect(&session).await?;
    let mut objects = runtime.list(&selector).await?;
    if args.base_images {
        objects.extend(
            crate::cell::images::namespace_bases(&*runtime, session.namespace.as_deref()).await?,
        );
    }
    objects.sort_by_key(|o| match o.kind {
        ObjectKind::Cell => 0,
        ObjectKind::Network => 1,
        ObjectKind::Volume => 2,
        ObjectKind::Image => 3,
    });
    let mut removed: Vec<&ObjectRef> = Vec::new();
    let mut failed = Vec::new();
    for object in &objects {
        if args.dry_run {
            printer.data(&format!("would remove {object}"));
            continue;
        }
        match runtime.remove(object).await {
            Ok(()) => {
                printer.detail(&format!("removed {object}"));
                removed.push(object);
            }
            Err(error) => {
                printer.warn(&format!("could not remove {object}: {error}"));
                failed.push(object.to_string());
            }
        }
    }
    let snapshots = remove_login_snapshots(&cook_dirs, args.dry_run, &mut failed);
    for snapshot in &snapshots {
        if args.dry_run {
            printer.data(&format!(
                "would remove login snapshot {}",
                snapshot.display()
            ));
        } else {
            printer.detail(&format!("removed login snapshot {}", snapshot.display()));
        }
    }
    let names: Vec<String> = objects.iter().map(ToString::to_string).collect();
    printer.json(&json!({"dry_run": args.dry_run, "objects": names, "login_snapshots": snapshots, "failed": failed}));
    if !args.dry_run {
        printer.data(&format!(
            "removed {} engine object(s) and {} login snapshot(s); results were not touched",
            removed.len(),
            snapshots.len()
        ));
    }
    if failed.is_empty() {
        Ok(ExitCode::Success)
    } else {
        Ok(ExitCode::Precondition)
    }
}

/// Login snapshots a killed run left in `<cook>/.auth/` (a finished cell's is already gone).
fn remove_login_snapshots(
    cook_dirs: &[PathBuf],
    dry_run: bool,
    failed: &mut Vec<String>,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in cook_dirs {
        let auth = dir.join(".auth");
        let Ok(entries) = std::fs::read_dir(&auth) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !dry_run && let Err(error) = crate::fsx::remove_tree(&path) {
                failed.push(format!("{}: {error}", path.display()));
                continue;
            }
            found.push(path);
        }
        if !dry_run {
            let _ = std::fs::remove_dir(&auth);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_login_snapshots_are_removed_and_results_kept() {
        let root = tempfile::tempdir().unwrap();
        let cook = root.path().join("251122-a");
        fs_err::create_dir_all(cook.join(".auth/p-x/claude")).unwrap();
        fs_err::write(cook.join(".auth/p-x/claude/.credentials.json"), "{}").unwrap();
        fs_err::write(cook.join("RUN_RESULT.json"), "{}").unwrap();
        let mut failed = Vec::new();
        let dry = remove_login_snapshots(std::slice::from_ref(&cook), true, &mut failed);
        assert_eq!(dry, [cook.join(".auth/p-x")]);
        assert!(cook.join(".auth/p-x/claude/.credentials.json").is_file());
        let removed = remove_login_snapshots(std::slice::from_ref(&cook), false, &mut failed);
        assert_eq!(removed, dry);
        assert!(failed.is_empty());
        assert!(!cook.join(".auth").exists());
        assert!(cook.join("RUN_RESULT.json").is_file());
    }
}
