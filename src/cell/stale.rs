//! Engine objects a killed run left behind for the same role are removed before anything is
//! created.

use super::names::Names;
use crate::runtime::{LABEL_ROOT, ObjectKind, Runtime, RuntimeError, Selector};
use crate::state::{CookPaths, Role};

/// Removes this cook's leftover cells and networks of `role`, its images, and (for the
/// participant phase) sandbox probes of other runs, all left by a run that was killed; the
/// current run (`run_id`) is never touched. Returns how many objects were removed.
pub async fn sweep_engine(
    runtime: &dyn Runtime,
    paths: &CookPaths,
    role: Role,
    run_id: &str,
) -> Result<usize, RuntimeError> {
    let prefix = Names::for_paths(paths).cell(role, "");
    let this_run = super::names::run_tag(run_id);
    let stale_probe = |name: &str| {
        role == Role::Participant && name.ends_with("-sandbox-probe") && !name.contains(&this_run)
    };
    let selector = Selector::cook(paths.name()).with(LABEL_ROOT, &paths.root_id());
    let mut stale: Vec<_> = runtime
        .list(&selector)
        .await?
        .into_iter()
        .filter(|o| {
            o.kind == ObjectKind::Image || o.name.starts_with(&prefix) || stale_probe(&o.name)
        })
        .collect();
    stale.sort_by_key(|o| o.kind);
    for object in &stale {
        runtime.remove(object).await?;
    }
    Ok(stale.len())
}
