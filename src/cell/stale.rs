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
    // An image tagged with this run's id is this run's: a Harbor participant's kept file
    // system, waiting for its verifier (`images::final_images`).
    let this_run_image = format!(":{}", run_id.to_ascii_lowercase());
    let selector = Selector::cook(paths.name()).with(LABEL_ROOT, &paths.root_id());
    let mut stale: Vec<_> = runtime
        .list(&selector)
        .await?
        .into_iter()
        .filter(|o| {
            let name = on_node(&o.name);
            (o.kind == ObjectKind::Image && !name.ends_with(&this_run_image))
                || name.starts_with(&prefix)
                || stale_probe(name)
        })
        .collect();
    stale.sort_by_key(|o| o.kind);
    for object in &stale {
        runtime.remove(object).await?;
    }
    Ok(stale.len())
}

/// The name on its node of a cluster backend's node-side object (`node/<host>/<name>`).
pub(super) fn on_node(name: &str) -> &str {
    name.strip_prefix("node/")
        .and_then(|rest| rest.split_once('/'))
        .map_or(name, |(_, local)| local)
}

#[cfg(test)]
mod tests {
    use super::on_node;

    #[test]
    fn node_side_objects_are_matched_by_their_name_on_the_node() {
        assert_eq!(on_node("node/n2/mc-a-p-x.1.abc"), "mc-a-p-x.1.abc");
        assert_eq!(on_node("mc-a-p-x"), "mc-a-p-x");
        assert_eq!(on_node("node/only"), "node/only", "not a node-side name");
    }
}
