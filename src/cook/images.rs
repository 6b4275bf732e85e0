//! Building the images a command's cells need, through the engine's build API from the
//! embedded `images/<flavor>/` contexts. Builds start at once and overlap with network
//! creation; cells wait on the shared result.

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::join_all;

use super::cell::ImagesReady;
use super::names::Names;
use crate::flavor::{FlavorError, build_context};
use crate::runtime::{ImageSpec, LABEL_FLAVOR, LABEL_ROOT, LABEL_RUN, Labels, Ledger, ObjectRef, Runtime};
use crate::state::CookPaths;

/// Label with the hash of an image's build context.
pub const LABEL_CONTEXT: &str = "io.multicooker.context";

/// The image specs for `flavors`, or the first flavor that has no image.
pub fn image_specs(paths: &CookPaths, names: &Names, flavors: &[String], run_id: &str) -> Result<Vec<ImageSpec>, FlavorError> {
    let (cook, root) = (paths.name(), paths.root_id());
    let mut unique: Vec<&String> = flavors.iter().collect();
    unique.sort();
    unique.dedup();
    unique
        .into_iter()
        .map(|flavor| {
            let context = build_context(flavor)?;
            let labels = Labels::new(cook, "image")
                .with(LABEL_ROOT, &root)
                .with(LABEL_FLAVOR, flavor)
                .with(LABEL_RUN, run_id)
                .with(LABEL_CONTEXT, &context.digest);
            Ok(ImageSpec { tag: names.image(flavor), labels, context: context.tar })
        })
        .collect()
}

/// Starts building every image (recorded in the ledger first) and returns the shared result.
pub fn start_builds<R: Runtime>(runtime: &Arc<R>, ledger: &Arc<Ledger>, specs: Vec<ImageSpec>) -> ImagesReady {
    for spec in &specs {
        ledger.record(ObjectRef::image(&spec.tag));
    }
    let runtime = runtime.clone();
    let build = async move {
        let results = join_all(specs.iter().map(|spec| runtime.build_image(spec))).await;
        match results.into_iter().find_map(Result::err) {
            Some(error) => Err(Arc::new(error.to_string())),
            None => Ok(()),
        }
    };
    let shared = build.boxed().shared();
    // Drive the build even before any cell awaits it.
    tokio::spawn(shared.clone());
    shared
}
