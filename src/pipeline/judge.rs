//! The judge step: the selected judges over the sealed outputs (docs/BEHAVIOR.md §5.1);
//! `rejudge` (§5.8) first moves every earlier judging aside and puts it back when the new one
//! fails before its judges have run (issue 25).

use super::Run;
use crate::brief::Actor;
use crate::judge::{self, JudgeOutcome, Resume};
use crate::state::Role;

/// How a judge step runs.
#[derive(Debug, Clone, Copy)]
pub struct Judging {
    /// Seed of the label shuffles.
    pub seed: u64,
    /// Every judge afresh, or only the unfinished ones.
    pub resume: Resume,
    /// `rejudge`: move the earlier judging to `judging/_previous/<stamp>/` first.
    pub again: bool,
}

/// Runs `judges` over the run's sealed outputs.
///
/// # Errors
/// A setting, the cook folder or the engine; for `rejudge`, the earlier judging is back in
/// place when this fails.
pub async fn judge(
    run: &Run<'_>,
    judges: &[Actor],
    judging: Judging,
) -> anyhow::Result<JudgeOutcome> {
    let settings = run.settings(judges.len())?;
    let names: Vec<String> = judges.iter().map(|j| j.name.clone()).collect();
    let progress = run.progress("judge", Role::Judge, &names);
    let mut moved = judge::inbox::Moved::default();
    if judging.again {
        let stamp = crate::state::now_iso().replace(':', "-");
        if let Some(kept) = judge::inbox::archive_judging(run.paths, &stamp, &mut moved)? {
            run.show
                .info(&format!("earlier judging kept in `{}`", kept.display()));
        }
    }
    let venue = run.venue(&settings.cells, &progress);
    let outcome = judge::judge(venue, judges, judging.seed, judging.resume)
        .await
        .map_err(|cause| moved.restore(cause))?;
    run.show.leftovers(&outcome.leftovers);
    Ok(outcome)
}
