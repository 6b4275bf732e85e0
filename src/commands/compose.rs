//! `multicooker compose <task>`: the cook's cells as a compose file (`pipeline::compose`),
//! written to `<cook>/compose/compose.yaml` and printed, so an operator can audit a cell and
//! replay one by hand. Nothing is started.

use super::{connect, open_cook};
use crate::cli::TaskArgs;
use crate::error::ExitCode;
use crate::settings::{self, run_settings};

pub(super) async fn run(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let (paths, loaded) = open_cook(&session, &args.task)?;
    let brief = &loaded.brief;
    let (runtime, engine) = connect(&session).await?;
    let cells = brief.participants.len() + brief.judges.len();
    let settings = run_settings(
        &session,
        brief,
        &engine,
        None,
        cells,
        tokio_util::sync::CancellationToken::new(),
    )?;
    let composed = crate::pipeline::compose::compose(&*runtime, &paths, brief, &settings).await?;
    let yaml = composed.yaml(paths.name())?;
    let dir = paths.dir().join("compose");
    fs_err::create_dir_all(&dir)?;
    crate::fsx::write_atomic(&dir.join("compose.yaml"), yaml.as_bytes())?;
    session.printer.json(&composed.document);
    session.printer.data(yaml.trim_end());
    session.printer.info(&format!(
        "written to {}",
        dir.join("compose.yaml").display()
    ));
    Ok(ExitCode::Success)
}
