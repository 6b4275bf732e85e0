//! Base images this build of multicooker would not use: every build gives the packaged flavors
//! new content hashes, so older builds' base images pile up (issue 17); `doctor` lists them with
//! the command that removes them. Only the session's namespace is looked at
//! ([`super::images::namespace_bases`]).

use super::images::{ImageSettings, base_specs, namespace_bases};
use crate::runtime::{ObjectKind, Runtime};

/// The names of the namespace's base images that none of the packaged flavors' current bases
/// is, sorted; `None` when the current bases or the listing cannot be had.
pub async fn unused_bases(
    runtime: &dyn Runtime,
    images: &ImageSettings,
    namespace: Option<&str>,
) -> Option<Vec<String>> {
    let packaged: Vec<String> = crate::brief::KNOWN_FLAVORS
        .iter()
        .filter(|f| crate::flavor::has_image(f))
        .map(|f| (*f).to_owned())
        .collect();
    let current = base_specs(&packaged, None, images).ok()?;
    let listed = namespace_bases(runtime, namespace).await.ok()?;
    // A cluster node's copy is named `node/<host>/…`: by a registry tag, or by its id (a copy
    // pulled by digest), which is the same id as the image it was pushed from.
    let mut in_use: Vec<String> = Vec::new();
    for spec in &current {
        in_use.push(spec.tag.clone());
        if let Ok(Some(id)) = runtime.image_id(&spec.tag).await {
            in_use.push(id);
        }
    }
    let mut unused: Vec<String> = listed
        .into_iter()
        .filter(|o| o.kind == ObjectKind::Image && !used(&in_use, &o.name))
        .map(|o| o.name)
        .collect();
    unused.sort();
    unused.dedup();
    Some(unused)
}

/// Whether an image name (maybe a node's copy) is one of the images in use.
fn used(in_use: &[String], name: &str) -> bool {
    let local = super::stale::on_node(name);
    in_use
        .iter()
        .any(|u| local == u || local.ends_with(&format!("/{u}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_copy_counts_as_the_image_it_was_pushed_from() {
        let in_use = [
            "multicooker-base-dummy:abc".to_owned(),
            "sha256:123".to_owned(),
        ];
        assert!(used(&in_use, "multicooker-base-dummy:abc"));
        assert!(used(
            &in_use,
            "node/n1/registry:5000/multicooker-base-dummy:abc"
        ));
        assert!(used(&in_use, "node/n1/sha256:123"));
        assert!(!used(&in_use, "multicooker-base-dummy:old"));
        assert!(!used(&in_use, "node/n1/multicooker-base-dummy:old"));
    }
}
