//! The images a command's cells need, built through the engine's build API.
//!
//! Each flavor has a shared *base* image built from the embedded `images/<flavor>/` context
//! and tagged by its content hash (`multicooker-base-<flavor>:<hash>`): built once, reused by
//! every cook, like the reference's `mc-base-<flavor>` images; `clean --base-images` removes
//! it. On Docker cells run that base as it is, so a phase whose bases exist builds nothing
//! (issue 28). A backend that needs an image of the cook's own
//! ([`Runtime::needs_cook_images`]: Swarm, which pushes it per cook) gets a thin image `FROM`
//! the base carrying the cook's labels, recorded in the ledger and removed at teardown. Builds
//! start at once and overlap with network creation; cells wait on the shared result.

use std::sync::Arc;

use std::collections::BTreeMap;

use futures_util::FutureExt;

use super::names::Names;
use super::run::ImagesReady;
use crate::flavor::build_args::BuildArg;
use crate::flavor::{
    FlavorError, base_tag_in, build_context, cook_image_dir, own_tag, thin_context,
};
use crate::runtime::{
    ImageSpec, LABEL_FLAVOR, LABEL_NAMESPACE, LABEL_ROOT, LABEL_RUN, Labels, Ledger, ObjectRef,
    Runtime, RuntimeError, Selector,
};
use crate::state::CookPaths;

/// Label with the hash of an image's build context.
pub const LABEL_CONTEXT: &str = "io.multicooker.context";

/// What the settings decide about every image a command builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageSettings {
    /// The session's namespace (`--namespace`): it names and labels the base images.
    pub namespace: Option<String>,
    /// `MULTICOOKER_BUILD_ARGS`: the defaults of the Dockerfiles' `ARG` lines.
    pub build_args: Vec<BuildArg>,
}

/// The two images behind one flavor of one cook.
#[derive(Debug, Clone)]
pub struct FlavorImages {
    /// The base (built only when missing).
    pub base: ImageSpec,
    /// The cook's own image.
    pub cook: ImageSpec,
    /// Whether the base outlives the run.
    pub lifetime: BaseLifetime,
    /// The bases (of images earlier in the same list) that must be built before this base,
    /// whose build names them (`FROM`, `COPY --from`): a CLI layered on a task's environment.
    pub requires: Vec<String>,
}

impl FlavorImages {
    /// The tag its cells run on `runtime`: the base itself, or the cook's thin image where the
    /// backend needs one.
    pub fn run_tag(&self, runtime: &dyn Runtime) -> &str {
        if runtime.needs_cook_images() {
            &self.cook.tag
        } else {
            &self.base.tag
        }
    }
}

/// Points every plan that names a cook image (its flavor's thin tag) at what its cells run on
/// `runtime` ([`FlavorImages::run_tag`]).
pub fn point_plans(
    runtime: &dyn Runtime,
    images: &[FlavorImages],
    plans: &mut [super::plan::CellPlan],
) {
    for plan in plans {
        if let Some(image) = images.iter().find(|i| i.cook.tag == plan.spec.image) {
            plan.spec.image = image.run_tag(runtime).to_owned();
        }
    }
}

/// How long a base image lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseLifetime {
    /// Shared by every cook, content-addressed, never torn down (a flavor's packaged image).
    Shared,
    /// The cook's own, removed at teardown: built from the cook's hidden `verify/` folder, it
    /// holds hidden material and must not outlive the run.
    Cook,
}

/// The base specs of `flavors`, or the first flavor that has no image. In a namespace
/// (`--namespace`) the tag and the `io.multicooker.namespace` label name it: namespaces never
/// share a base image, and each sees only its own ([`namespace_bases`]).
pub fn base_specs(
    flavors: &[String],
    cook: Option<&std::path::Path>,
    settings: &ImageSettings,
) -> Result<Vec<ImageSpec>, FlavorError> {
    let namespace = settings.namespace.as_deref();
    let mut unique: Vec<&String> = flavors.iter().collect();
    unique.sort();
    unique.dedup();
    unique
        .into_iter()
        .map(|flavor| {
            let context = build_context(flavor, cook, &settings.build_args)?;
            let mut labels = Labels::shared("base")
                .with(LABEL_FLAVOR, flavor)
                .with(LABEL_CONTEXT, &context.digest);
            if let Some(namespace) = namespace {
                labels = labels.with(LABEL_NAMESPACE, namespace);
            }
            let own = cook.and_then(|c| cook_image_dir(c, flavor)).is_some();
            Ok(ImageSpec {
                tag: if own {
                    own_tag(flavor, &context.digest, namespace)
                } else {
                    base_tag_in(flavor, &context.digest, namespace)
                },
                labels,
                context: context.tar,
            })
        })
        .collect()
}

/// The base images of `namespace` (the session's): labelled with it, or, in the default
/// namespace, labelled with none (which includes those of builds older than namespaced base
/// images). What `clean --base-images` removes and `doctor` may call stale: never another
/// namespace's.
pub async fn namespace_bases(
    runtime: &dyn Runtime,
    namespace: Option<&str>,
) -> Result<Vec<ObjectRef>, RuntimeError> {
    let bases = Selector::role("base");
    if let Some(namespace) = namespace {
        return runtime.list(&bases.with(LABEL_NAMESPACE, namespace)).await;
    }
    let namespaced = runtime.list(&bases.clone().has(LABEL_NAMESPACE)).await?;
    let mut own = runtime.list(&bases).await?;
    own.retain(|o| !namespaced.contains(o));
    Ok(own)
}

/// The images of `flavors` for one cook.
pub fn image_specs(
    paths: &CookPaths,
    names: &Names,
    flavors: &[String],
    run_id: &str,
    settings: &ImageSettings,
) -> Result<Vec<FlavorImages>, FlavorError> {
    base_specs(flavors, Some(paths.dir()), settings)?
        .into_iter()
        .map(|base| {
            let flavor = base.labels.get(LABEL_FLAVOR).unwrap_or_default().to_owned();
            let context = thin_context(&base.tag).map_err(|source| FlavorError::Context {
                flavor: flavor.clone(),
                source,
            })?;
            let labels = Labels::new(paths.name(), "image")
                .with(LABEL_ROOT, &paths.root_id())
                .with(LABEL_FLAVOR, &flavor)
                .with(LABEL_RUN, run_id)
                .with(
                    LABEL_CONTEXT,
                    base.labels.get(LABEL_CONTEXT).unwrap_or_default(),
                );
            let cook = ImageSpec {
                tag: names.image(&flavor),
                labels,
                context,
            };
            Ok(FlavorImages {
                base,
                cook,
                lifetime: BaseLifetime::Shared,
                requires: Vec::new(),
            })
        })
        .collect()
}

/// The verifier's images from the cook's `verify/Dockerfile` (context: the `verify/` folder):
/// a base labelled and named for this cook alone, and the thin image with the cell's init.
pub fn verifier_images(
    paths: &CookPaths,
    names: &Names,
    run_id: &str,
    settings: &ImageSettings,
) -> Result<FlavorImages, FlavorError> {
    const FLAVOR: &str = "verify";
    let context = crate::flavor::folder_context(FLAVOR, &paths.verify_dir(), &settings.build_args)?;
    let labels = |digest: &str| {
        Labels::new(paths.name(), "image")
            .with(LABEL_ROOT, &paths.root_id())
            .with(LABEL_FLAVOR, FLAVOR)
            .with(LABEL_RUN, run_id)
            .with(LABEL_CONTEXT, digest)
    };
    let base = ImageSpec {
        tag: format!("{}-verify-base:{}", names.project(), context.digest),
        labels: labels(&context.digest),
        context: context.tar,
    };
    let thin = thin_context(&base.tag).map_err(|source| FlavorError::Context {
        flavor: FLAVOR.to_owned(),
        source,
    })?;
    let cook = ImageSpec {
        tag: names.image(FLAVOR),
        labels: labels(&context.digest),
        context: thin,
    };
    Ok(FlavorImages {
        base,
        cook,
        lifetime: BaseLifetime::Cook,
        requires: Vec::new(),
    })
}

/// A Harbor task's environment image (its `environment/` folder, the task's Dockerfile with
/// the cell's init added last; or `FROM` its prebuilt `docker_image`, which the engine must have
/// or be able to pull): a base labelled and named for this cook alone, removed at teardown,
/// and the thin image the cells run.
pub fn task_images(
    paths: &CookPaths,
    names: &Names,
    (environment, prebuilt): (&std::path::Path, Option<&str>),
    run_id: &str,
    settings: &ImageSettings,
) -> Result<FlavorImages, FlavorError> {
    const FLAVOR: &str = "task-env";
    let context = match prebuilt {
        Some(image) => crate::flavor::dockerfile_context(
            FLAVOR,
            &format!("FROM {image}\n"),
            &settings.build_args,
        )?,
        None => crate::flavor::folder_context(FLAVOR, environment, &settings.build_args)?,
    };
    let labels = cook_image_labels(paths, FLAVOR, run_id, &context.digest);
    let base = ImageSpec {
        tag: format!("{}-task-env:{}", names.project(), context.digest),
        labels: labels.clone(),
        context: context.tar,
    };
    let cook = ImageSpec {
        tag: names.image(FLAVOR),
        labels,
        context: thin_context(&base.tag).map_err(|source| FlavorError::Context {
            flavor: FLAVOR.to_owned(),
            source,
        })?,
    };
    Ok(FlavorImages {
        base,
        cook,
        lifetime: BaseLifetime::Cook,
        requires: Vec::new(),
    })
}

/// A flavor's CLI layered on a Harbor task's environment image `environment` (docs/HARBOR.md,
/// §7), taking the CLI from the flavor's base `flavor`: a base labelled and named for this cook
/// alone, removed at teardown, built once both exist, and the thin image the cells run.
pub fn task_cli_images(
    paths: &CookPaths,
    names: &Names,
    (environment, flavor): (&FlavorImages, &FlavorImages),
    layer: &crate::flavor::task_layer::TaskLayer,
    run_id: &str,
) -> Result<FlavorImages, FlavorError> {
    use sha2::Digest;
    let name = format!("task-{}", layer.flavor);
    let failed = |source| FlavorError::Context {
        flavor: layer.flavor.to_owned(),
        source,
    };
    let context =
        crate::flavor::task_layer::context(layer, &environment.base.tag, &flavor.base.tag)
            .map_err(failed)?;
    let digest: String = sha2::Sha256::digest(&context)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    let labels = cook_image_labels(paths, &name, run_id, &digest);
    let base = ImageSpec {
        tag: format!("{}-{name}:{digest}", names.project()),
        labels: labels.clone(),
        context,
    };
    let cook = ImageSpec {
        tag: names.image(&name),
        labels,
        context: thin_context(&base.tag).map_err(failed)?,
    };
    Ok(FlavorImages {
        requires: vec![environment.base.tag.clone(), flavor.base.tag.clone()],
        base,
        cook,
        lifetime: BaseLifetime::Cook,
    })
}

/// The image a Harbor participant's final file system is kept as (by the engine's commit),
/// and the images its verifier cell runs: that one as the base (never built: it exists once
/// the participant ended) and a thin one on top, both removed at the verifier's teardown.
pub fn final_images(
    paths: &CookPaths,
    names: &Names,
    participant: &str,
    run_id: &str,
) -> FlavorImages {
    let flavor = format!("final-{}", participant.to_ascii_lowercase());
    let labels = cook_image_labels(paths, &flavor, run_id, "");
    let base_tag = format!(
        "{}-{flavor}:{}",
        names.project(),
        run_id.to_ascii_lowercase()
    );
    let context = thin_context(&base_tag).unwrap_or_default();
    FlavorImages {
        cook: ImageSpec {
            tag: names.image(&flavor),
            labels: labels.clone(),
            context,
        },
        base: ImageSpec {
            tag: base_tag,
            labels,
            context: Vec::new(),
        },
        lifetime: BaseLifetime::Cook,
        requires: Vec::new(),
    }
}

fn cook_image_labels(paths: &CookPaths, flavor: &str, run_id: &str, digest: &str) -> Labels {
    Labels::new(paths.name(), "image")
        .with(LABEL_ROOT, &paths.root_id())
        .with(LABEL_FLAVOR, flavor)
        .with(LABEL_RUN, run_id)
        .with(LABEL_CONTEXT, digest)
}

/// Label with the version of the CLI an image runs (see `images/<flavor>/Dockerfile`).
pub const LABEL_CLI_VERSION: &str = "io.multicooker.cli-version";

/// The CLI version each flavor's base image records, for the run record (flavors whose image
/// records none, like the dummy, are left out).
pub async fn cli_versions(
    runtime: &dyn Runtime,
    images: &[(String, String)],
) -> std::collections::BTreeMap<String, String> {
    let mut versions = std::collections::BTreeMap::new();
    for (flavor, tag) in images {
        if let Ok(Some(labels)) = runtime.image_labels(tag).await
            && let Some(version) = labels.get(LABEL_CLI_VERSION).filter(|v| !v.is_empty())
        {
            versions.insert(flavor.clone(), version.clone());
        }
    }
    versions
}

/// The (flavor, base tag) of each image, to ask for [`cli_versions`] once they are built.
pub fn base_tags(images: &[FlavorImages]) -> Vec<(String, String)> {
    images
        .iter()
        .map(|i| {
            (
                i.base
                    .labels
                    .get(LABEL_FLAVOR)
                    .unwrap_or_default()
                    .to_owned(),
                i.base.tag.clone(),
            )
        })
        .collect()
}

/// Builds a base image unless it exists already.
pub async fn ensure_base(runtime: &dyn Runtime, base: &ImageSpec) -> Result<(), RuntimeError> {
    if runtime.image_exists(&base.tag).await? {
        return Ok(());
    }
    runtime.build_image(base).await
}

/// Starts building every missing base (and, where the backend needs them, the cook's thin
/// images, recorded in the ledger first) and returns each image's shared build, keyed by the
/// tag its cells run.
pub fn start_builds(
    runtime: &crate::runtime::SharedRuntime,
    ledger: &Arc<Ledger>,
    images: Vec<FlavorImages>,
) -> ImagesReady {
    let thin = runtime.needs_cook_images();
    for image in &images {
        // A cook's own base holds hidden material: it goes at teardown like the thin image.
        if image.lifetime == BaseLifetime::Cook {
            ledger.record(ObjectRef::image(&image.base.tag));
        }
        if thin {
            ledger.record(ObjectRef::image(&image.cook.tag));
        }
    }
    let mut builds = BTreeMap::new();
    let mut by_base = BTreeMap::new();
    for image in images {
        let runtime = runtime.clone();
        let tag = image.run_tag(&*runtime).to_owned();
        let base_tag = image.base.tag.clone();
        let before: Vec<_> = image
            .requires
            .iter()
            .filter_map(|required| by_base.get(required).cloned())
            .collect();
        let build = async move {
            for required in before {
                if let Err(error) = required.await {
                    return Err(Arc::new(format!(
                        "the image it builds on did not build: {error}"
                    )));
                }
            }
            let built = async {
                ensure_base(&*runtime, &image.base).await?;
                if thin {
                    runtime.build_image(&image.cook).await?;
                }
                Ok::<(), RuntimeError>(())
            };
            built.await.map_err(|error| Arc::new(error.to_string()))
        };
        let shared = build.boxed().shared();
        // Drive the build even before any cell awaits it.
        tokio::spawn(shared.clone());
        by_base.insert(base_tag, shared.clone());
        builds.insert(tag, shared);
    }
    ImagesReady::new(builds)
}
