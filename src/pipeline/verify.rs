//! The verify step: each selected participant's sealed output against the hidden tests
//! (`verify/` of the cook).

use super::Run;
use crate::cell::CellSettings;
use crate::state::Role;
use crate::verify::{Rerun, VerifyOutcome};

/// Verifies `selected` participants (`rerun`: every one, or only those without a scored
/// result).
///
/// # Errors
/// A setting, the cook folder or the engine.
pub async fn verify(
    run: &Run<'_>,
    selected: &[String],
    rerun: Rerun,
) -> anyhow::Result<VerifyOutcome> {
    let settings = run.unpooled(selected.len())?;
    with(run, selected, rerun, &settings.cells).await
}

/// After a cook: verifies the participants that just ran when the brief asks for it and the
/// run was not cancelled, with the cook's own settings.
pub(super) async fn after_cook(
    run: &Run<'_>,
    selected: &[String],
    settings: &CellSettings,
) -> anyhow::Result<Option<VerifyOutcome>> {
    if run.brief.verify.is_none() || settings.cancel.is_cancelled() {
        return Ok(None);
    }
    with(run, selected, Rerun::Pending, settings)
        .await
        .map(Some)
}

async fn with(
    run: &Run<'_>,
    selected: &[String],
    rerun: Rerun,
    settings: &CellSettings,
) -> anyhow::Result<VerifyOutcome> {
    run.show.info(&format!(
        "verifying `{}`: {} output(s) against the hidden tests",
        run.paths.name(),
        selected.len()
    ));
    let progress = run.progress("verify", Role::Verifier, selected);
    let outcome = crate::verify::verify(run.venue(settings, &progress), selected, rerun).await?;
    run.show.leftovers(&outcome.leftovers);
    Ok(outcome)
}
