//! `multicooker clean <task> | --all`: removes engine objects by label (cells first, then
//! networks, volumes, images). `--all` sweeps every cook of this root (`--root`), including
//! objects a killed run left behind, and login snapshots a killed run left in `.auth/`
//! (`state::folders`). Results in the cook folder are never touched.

use std::path::PathBuf;

use serde_json::json;

use super::connect;
use crate::cli::CleanArgs;
use crate::error::{ExitCode, UserError};
use crate::output::Printer;
use crate::runtime::{LABEL_ROOT, ObjectKind, ObjectRef, Runtime, Selector};
use crate::settings::{self, Session};
use crate::state::folders::{cook_dirs, remove_login_snapshots};
use crate::state::{StateError, check_task_name};

pub(super) async fn run(args: &CleanArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let printer = session.printer;
    let (selector, cook_dirs) = what_to_clean(&session, args)?;
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
    let (removed, mut failed) = remove_objects(&*runtime, &objects, args.dry_run, printer).await;
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
            "removed {removed} engine object(s) and {} login snapshot(s); results were not touched",
            snapshots.len()
        ));
    }
    if failed.is_empty() {
        Ok(ExitCode::Success)
    } else {
        Ok(ExitCode::Precondition)
    }
}

/// The labels of the objects to remove, and the cook folders whose login snapshots go too.
fn what_to_clean(session: &Session, args: &CleanArgs) -> anyhow::Result<(Selector, Vec<PathBuf>)> {
    match (&args.task, args.all) {
        (_, true) => Ok((
            Selector::any_cook().with(LABEL_ROOT, &session.root_id()),
            cook_dirs(&session.root).collect(),
        )),
        (Some(task), false) => {
            match session.find_cook(task) {
                Ok(paths) => Ok((
                    Selector::cook(paths.name()).with(LABEL_ROOT, &paths.root_id()),
                    vec![paths.dir().to_path_buf()],
                )),
                Err(StateError::NoCook { .. }) => {
                    check_task_name(task)?;
                    session.printer.info(&format!("no cook folder `{task}` under `{}`; removing engine objects labelled with it", session.root.display()));
                    Ok((
                        Selector::cook(task).with(LABEL_ROOT, &session.root_id()),
                        Vec::new(),
                    ))
                }
                Err(e) => Err(e.into()),
            }
        }
        (None, false) => Err(UserError::new("nothing to clean", "pass a task, or --all").into()),
    }
}

/// Removes the objects in order (or, with `dry_run`, says it would); how many were removed,
/// and the ones that could not be.
async fn remove_objects(
    runtime: &dyn Runtime,
    objects: &[ObjectRef],
    dry_run: bool,
    printer: Printer,
) -> (usize, Vec<String>) {
    let mut removed = 0;
    let mut failed = Vec::new();
    for object in objects {
        if dry_run {
            printer.data(&format!("would remove {object}"));
            continue;
        }
        match runtime.remove(object).await {
            Ok(()) => {
                printer.detail(&format!("removed {object}"));
                removed += 1;
            }
            Err(error) => {
                printer.warn(&format!("could not remove {object}: {error}"));
                failed.push(object.to_string());
            }
        }
    }
    (removed, failed)
}
