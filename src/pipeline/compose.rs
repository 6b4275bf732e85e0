//! A cook's cells as a compose file (`multicooker compose <task>`), rendered from the same cell
//! plans, specs and engine requests `cook` and `judge` use, so an operator can audit a cell and
//! replay one by hand. Nothing is started; the only engine calls read an image's program (and
//! build a missing flavor base, as `doctor` and the next `cook` would).

use serde_json::Value;

use crate::brief::Brief;
use crate::cell::egress::{EgressContext, proxy_spec};
use crate::cell::images::{self, ImageSettings};
use crate::cell::names::Names;
use crate::cell::plan::{CellPlan, Egress};
use crate::cell::stage;
use crate::cook::RunSettings;
use crate::creds::CellLogin;
use crate::runtime::{CellSpec, LABEL_ROOT, Labels, NetworkSpec, Runtime, compose};
use crate::state::{CookPaths, Role};

/// A cook's compose file.
#[derive(Debug)]
pub struct Composed {
    /// The cook's compose project (its engine names' prefix).
    pub project: String,
    /// The compose document: services, networks, volumes.
    pub document: Value,
}

impl Composed {
    /// The file as written to `<cook>/compose/compose.yaml`: a header saying what it is, then
    /// the document as YAML.
    ///
    /// # Errors
    /// The document does not serialize (a bug).
    pub fn yaml(&self, cook: &str) -> anyhow::Result<String> {
        Ok(format!(
            "# `multicooker compose {cook}`: the cook's cells as the engine gets them, for audit (project {}).\n# Nothing here ran. A cell's areas are filled through the engine at run time: started by hand,\n# a cell waits for its inputs until its deadline.\n{}",
            self.project,
            serde_saphyr::to_string(&self.document)?
        ))
    }
}

/// Every participant and judge cell of the cook at `paths`, each with its proxy when it has
/// one, as a compose document.
///
/// # Errors
/// An image's specs cannot be made, the engine cannot say a program, or a cell's inputs cannot
/// be staged.
pub async fn compose(
    runtime: &dyn Runtime,
    paths: &CookPaths,
    brief: &Brief,
    settings: &RunSettings,
) -> anyhow::Result<Composed> {
    let names = Names::for_paths(paths);
    let plans = plans(runtime, paths, &names, brief, settings)?;
    let egress = egress_context(paths, &names, settings)?;
    let mut cells = Vec::new();
    for plan in plans {
        cells.extend(services(runtime, paths, settings, &egress, plan).await?);
    }
    Ok(Composed {
        project: names.project().to_owned(),
        document: compose::document(names.project(), &cells),
    })
}

/// The egress a proxied cell gets (the tools image, the outside network, the canary's direct
/// address) and the outside network's spec.
fn egress_context(
    paths: &CookPaths,
    names: &Names,
    settings: &RunSettings,
) -> anyhow::Result<(EgressContext, NetworkSpec)> {
    let egress = EgressContext {
        tools_image: images::base_specs(&["dummy".to_owned()], None, &settings.cells.images)?
            .remove(0)
            .tag,
        network: Some(
            settings
                .cells
                .egress
                .network
                .clone()
                .unwrap_or_else(|| format!("{}-egress", names.project())),
        ),
        direct: settings.cells.egress.canary_direct.clone(),
    };
    let network = NetworkSpec {
        name: egress.network.clone().unwrap_or_default(),
        labels: Labels::new(paths.name(), "network").with(LABEL_ROOT, &paths.root_id()),
        internal: false,
        isolated: true,
    };
    Ok((egress, network))
}

/// One cell's services: its proxy (when it has one), then the cell itself.
async fn services(
    runtime: &dyn Runtime,
    paths: &CookPaths,
    settings: &RunSettings,
    (egress, egress_network): &(EgressContext, NetworkSpec),
    mut plan: CellPlan,
) -> anyhow::Result<Vec<compose::Service>> {
    let images = &settings.cells.images;
    // Logins are snapshotted at run time; their area is there whenever the flavor has one.
    if !crate::creds::members(&plan.flavor).is_empty() {
        plan.files.login = Some(CellLogin { files: Vec::new() });
    }
    let role = if plan.role == Role::Judge {
        "judge"
    } else {
        "participant"
    };
    let own = plan.network.clone();
    let mut services = Vec::new();
    if matches!(plan.egress, Egress::Proxy { .. }) {
        // The very spec the engine gets; the engine then connects it to the cell's network.
        let proxy = proxy_spec(&plan, egress);
        let mut networks = vec![egress_network.clone()];
        networks.extend(own.clone());
        services.push(compose::Service {
            name: format!("proxy-{}", plan.actor),
            program: program_of(runtime, &proxy, "dummy", paths, images).await?,
            spec: proxy,
            networks,
        });
    }
    let staging = stage::prepare(&plan.files, settings.cells.user, plan.spec.init.launch)?;
    let mut spec = plan.spec.clone();
    spec.areas = staging.areas;
    spec.init.hold = !plan.files.writable.is_empty();
    services.push(compose::Service {
        name: format!("{role}-{}", plan.actor),
        program: program_of(runtime, &spec, &plan.flavor, paths, images).await?,
        spec,
        networks: own.into_iter().collect(),
    });
    Ok(services)
}

/// Every cell of the cook, each pointed at the image it would run, as `cook` and `judge` point
/// them (the shared base on Docker, the cook's thin image where the backend needs one).
fn plans(
    runtime: &dyn Runtime,
    paths: &CookPaths,
    names: &Names,
    brief: &Brief,
    settings: &RunSettings,
) -> anyhow::Result<Vec<CellPlan>> {
    let context = settings.cells.plan_context(paths, names, brief);
    let mut plans: Vec<CellPlan> = brief
        .participants
        .iter()
        .map(|p| crate::cook::plan::participant_plan(&context, p, String::new(), settings))
        .collect();
    plans.extend(
        brief
            .judges
            .iter()
            .map(|j| crate::judge::judge_plan(&context, j)),
    );
    let flavors: Vec<String> = plans.iter().map(|p| p.flavor.clone()).collect();
    let images = images::image_specs(
        paths,
        names,
        &flavors,
        &settings.cells.run_id,
        &settings.cells.images,
    )?;
    images::point_plans(runtime, &images, &mut plans);
    Ok(plans)
}

/// The program a cell's init would run. A cook's own image exists only while a run is in
/// progress (issue 25: `compose` then failed on a fresh or finished cook with "no such image"),
/// and it is its flavor's base image `FROM` which nothing is changed, so the base answers: it is
/// built when missing, as `doctor` and the next `cook` would build it (shared, kept).
async fn program_of(
    runtime: &dyn Runtime,
    spec: &CellSpec,
    flavor: &str,
    paths: &CookPaths,
    images: &ImageSettings,
) -> anyhow::Result<Vec<String>> {
    if spec.program.is_some() || runtime.image_exists(&spec.image).await? {
        return Ok(runtime.program(spec).await?);
    }
    let base = images::base_specs(&[flavor.to_owned()], Some(paths.dir()), images)?.remove(0);
    images::ensure_base(runtime, &base).await?;
    let mut from_base = spec.clone();
    from_base.image = base.tag;
    Ok(runtime.program(&from_base).await?)
}
