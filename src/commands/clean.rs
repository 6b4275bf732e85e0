//! `multicooker clean <task> | --all`: removes engine objects by label (cells first, then
//! networks, volumes, images). `--all` sweeps every cook of this root (`--root`), including
//! objects a killed run left behind. Results in the cook folder are never touched.

use serde_json::json;

use super::connect;
use crate::cli::CleanArgs;
use crate::error::{ExitCode, UserError};
use crate::runtime::{LABEL_ROOT, ObjectKind, ObjectRef, Runtime, Selector};
use crate::settings;
use crate::state::{StateError, check_task_name, find_cook, root_id};

pub(super) async fn run(args: &CleanArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let printer = session.printer;
    let selector = match (&args.task, args.all) {
        (_, true) => Selector::any_cook().with(LABEL_ROOT, &root_id(&session.root)),
        (Some(task), false) => {
            match find_cook(&session.root, task) {
                Ok(paths) => Selector::cook(paths.name()).with(LABEL_ROOT, &paths.root_id()),
                Err(StateError::NoCook { .. }) => {
                    check_task_name(task)?;
                    printer.info(&format!("no cook folder `{task}` under `{}`; removing engine objects labelled with it", session.root.display()));
                    Selector::cook(task).with(LABEL_ROOT, &root_id(&session.root))
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
        objects.extend(runtime.list(&Selector::role("base")).await?);
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
    let names: Vec<String> = objects.iter().map(ToString::to_string).collect();
    printer.json(&json!({"dry_run": args.dry_run, "objects": names, "failed": failed}));
    if !args.dry_run {
        printer.data(&format!(
            "removed {} engine object(s); results were not touched",
            removed.len()
        ));
    }
    if failed.is_empty() {
        Ok(ExitCode::Success)
    } else {
        Ok(ExitCode::Precondition)
    }
}
