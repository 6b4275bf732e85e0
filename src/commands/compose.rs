//! `multicooker compose <task>`: the cook's cells as a compose file, rendered from the same
//! cell specs and engine requests `cook` and `judge` use, written to `<cook>/compose/compose.yaml`
//! and printed, so an operator can audit a cell and replay one by hand. Nothing is started.

use serde_json::json;

use super::{connect, open_cook};
use crate::cli::TaskArgs;
use crate::cook::names::Names;
use crate::cook::plan::{CellPlan, Egress, PROXY_PORT, proxy_name, read_only};
use crate::error::ExitCode;
use crate::runtime::{Labels, NetworkSpec, compose};
use crate::settings::{self, run_settings};
use crate::state::Role;

pub(super) async fn run(args: &TaskArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let (paths, loaded) = open_cook(&session, &args.task)?;
    let brief = &loaded.brief;
    let (_, engine) = connect(&session).await?;
    let cells = brief.participants.len() + brief.judges.len();
    let settings = run_settings(
        brief,
        &engine,
        None,
        cells,
        tokio_util::sync::CancellationToken::new(),
    )?;
    let names = Names::for_paths(&paths);
    let context = settings.plan_context(&paths, &names, brief);
    let mut plans: Vec<CellPlan> = brief
        .participants
        .iter()
        .map(|p| context.participant(p))
        .collect();
    plans.extend(
        brief
            .judges
            .iter()
            .map(|j| crate::judge::judge_plan(&context, j)),
    );
    let mut cells = Vec::new();
    let egress = format!("{}-egress", names.project());
    let tools = crate::cook::images::base_specs(&["dummy".to_owned()], None)?
        .remove(0)
        .tag;
    for mut plan in plans {
        // Logins are staged by `cook`/`judge` at run time, into this very folder.
        if !crate::creds::members(&plan.flavor).is_empty() {
            let dir = paths.auth(plan.role == Role::Judge, &plan.actor);
            plan.spec
                .mounts
                .push(read_only(dir, crate::creds::STAGING_TARGET));
        }
        let role = if plan.role == Role::Judge {
            "judge"
        } else {
            "participant"
        };
        if let Egress::Proxy {
            allow,
            allow_private,
        } = &plan.egress
        {
            let mut proxy = plan.spec.clone();
            proxy.name = proxy_name(&plan.spec.name);
            proxy.image.clone_from(&tools);
            proxy.env = Vec::new();
            proxy.mounts = Vec::new();
            proxy.tmpfs = Vec::new();
            let mut command = vec![
                "proxy".to_owned(),
                "--listen".to_owned(),
                format!("0.0.0.0:{PROXY_PORT}"),
                "--allow".to_owned(),
                allow.join(","),
            ];
            if *allow_private {
                command.push("--allow-private".to_owned());
            }
            proxy.command = Some(command);
            proxy.network = Some(egress.clone());
            cells.push((
                format!("proxy-{}", plan.actor),
                proxy,
                Some(NetworkSpec {
                    name: egress.clone(),
                    labels: Labels::new(paths.name(), "network")
                        .with(crate::runtime::LABEL_ROOT, &paths.root_id()),
                    internal: false,
                    isolated: true,
                }),
            ));
        }
        cells.push((format!("{role}-{}", plan.actor), plan.spec, plan.network));
    }
    let mut document = compose::document(names.project(), &cells);
    join_proxies(&mut document, &egress);
    let yaml = format!(
        "# `multicooker compose {}`: the cook's cells as the engine gets them (audit, or replay one with\n# `docker-compose -f compose/compose.yaml -p {} run --rm participant-<name>`). Nothing here ran.\n{}",
        paths.name(),
        names.project(),
        serde_saphyr::to_string(&document)?
    );
    let dir = paths.dir().join("compose");
    fs_err::create_dir_all(&dir)?;
    crate::fsx::write_atomic(&dir.join("compose.yaml"), yaml.as_bytes())?;
    session.printer.json(&document);
    session.printer.data(yaml.trim_end());
    session.printer.info(&format!(
        "written to {}",
        dir.join("compose.yaml").display()
    ));
    Ok(ExitCode::Success)
}

/// A proxy joins its cell's network too (the engine connects it after creating it).
fn join_proxies(document: &mut serde_json::Value, egress: &str) {
    let Some(services) = document["services"].as_object_mut() else {
        return;
    };
    let keys: Vec<String> = services
        .keys()
        .filter(|k| k.starts_with("proxy-"))
        .cloned()
        .collect();
    for key in keys {
        let actor = &key["proxy-".len()..];
        let cell_network = ["participant-", "judge-"].iter().find_map(|r| {
            services.get(&format!("{r}{actor}"))?["networks"][0]
                .as_str()
                .map(str::to_owned)
        });
        if let (Some(network), Some(proxy)) = (cell_network, services.get_mut(&key)) {
            proxy["networks"] = json!([egress, network]);
        }
    }
}
