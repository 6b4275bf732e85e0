//! `multicooker artifacts <task>` and `multicooker archive <task>`.

use serde_json::json;

use crate::artifacts::{self, Format, Visibility};
use crate::cli::{ArchiveArgs, ArchiveFormat, TaskArgs};
use crate::error::ExitCode;
use crate::settings;

pub(super) fn artifacts(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let (paths, loaded) = super::open_cook(&session, &args.task)?;
    let list = artifacts::write_manifest(&paths, &loaded.brief)?;
    session
        .printer
        .json(&json!({"cook": paths.name(), "artifacts": list}));
    session
        .printer
        .data(&format!("{}: {} file(s)", paths.name(), list.len()));
    for class in [
        Visibility::Public,
        Visibility::Operator,
        Visibility::Secret,
        Visibility::HostOnly,
    ] {
        let count = list.iter().filter(|a| a.visibility == class).count();
        if count > 0 {
            session
                .printer
                .data(&format!("  {:<10} {count}", class.as_str()));
        }
    }
    session.printer.info(&format!(
        "manifest: {}",
        paths.dir().join("artifacts.json").display()
    ));
    Ok(ExitCode::Success)
}

pub(super) fn archive(args: &ArchiveArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.task.global)?;
    let (paths, loaded) = super::open_cook(&session, &args.task.task)?;
    let format = match args.format {
        ArchiveFormat::Dir => Format::Dir,
        ArchiveFormat::Tar => Format::Tar,
    };
    let mut also = Vec::new();
    if args.include_operator {
        also.push(artifacts::Visibility::Operator);
    }
    if args.include_hidden {
        also.push(artifacts::Visibility::Hidden);
    }
    let archived = artifacts::archive(&paths, &loaded.brief, &also, format, args.out.as_deref())?;
    let classes = std::iter::once("public")
        .chain(also.iter().map(|v| v.as_str()))
        .collect::<Vec<_>>()
        .join(" + ");
    session.printer.json(&json!({"cook": paths.name(), "dest": archived.dest, "files": archived.files, "skipped": archived.skipped, "classes": classes}));
    session.printer.data(&format!(
        "{}: {} file(s) ({classes}) → {}",
        paths.name(),
        archived.files,
        archived.dest.display()
    ));
    if archived.skipped > 0 {
        session.printer.info(&format!(
            "skipped {} link(s) or special file(s)",
            archived.skipped
        ));
    }
    session.printer.info(
        "secret (logins) and host_only (label mapping, sealed inboxes) files are never archived; hidden ones (verify/, verification/) only with --include-hidden",
    );
    Ok(ExitCode::Success)
}
