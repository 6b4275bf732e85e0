//! `multicooker chef <task> [--chef NAME[=FLAVOR]]`: one synthesis participant over the sealed
//! outputs, anonymized as for judges: normalized copies (no vendor files or attribution) under
//! shuffled labels, with a ranking by label only. The label mapping stays on the host
//! (`chef/<chef>/_mapping.json`, never mounted). The chef is registered in brief.yaml as a
//! participant (unless `--no-register`), so `rejudge` judges it beside the others. Engine names
//! come from the cook and namespace like every other cell (the reference's chef ignored
//! namespaces, docs/BEHAVIOR.md §10.12).

use std::sync::Arc;

use serde_json::json;

use super::{cell_session, connect, open_cook, report_leftovers};
use crate::brief::{Actor, KNOWN_FLAVORS};
use crate::cli::ChefArgs;
use crate::cook::{self, Chef};
use crate::error::{ExitCode, UserError};
use crate::fsx;
use crate::judge::chef_input;
use crate::judge::labels::random_seed;
use crate::settings::run_settings;
use crate::state::{CellState, CookPaths, Role, now_iso};

pub(super) async fn run(args: &ChefArgs) -> anyhow::Result<ExitCode> {
    let (session, cancel) = cell_session(&args.task.global)?;
    let (paths, loaded) = open_cook(&session, &args.task.task)?;
    let mut brief = loaded.brief.clone();
    super::status::lint_gate(&paths, &brief)?;
    let (name, flavor) = parse_chef(&paths, &args.chef)?;
    check_existing(&paths, &brief, name, flavor, args.force)?;
    let _lock = crate::state::RunLock::acquire(paths.dir(), "chef")?;
    let sources = sources(&paths, &brief, name)?;
    let seed = args.seed.unwrap_or_else(random_seed);
    let labels = chef_input::prepare(&paths, name, &sources, seed)?;
    register(&paths, &mut brief, name, flavor, args.no_register)?;
    let brief_md = fs_err::read_to_string(paths.brief_md())?;
    let meta = json!({"started_at": now_iso(), "chef": name, "flavor": flavor, "submissions": labels.len(), "registered": !args.no_register});
    fsx::write_json_atomic(&paths.dir().join(format!("CHEF_{name}.json")), &meta)?;
    session.printer.info(&format!(
        "chef `{name}` ({flavor}) over {} anonymized submission(s)",
        labels.len()
    ));
    let (runtime, engine) = connect(&session).await?;
    let mut settings = run_settings(&session, &brief, &engine, None, 1, cancel)?;
    settings.merge = true;
    settings.chef = Some(Chef {
        name: name.to_owned(),
        prompt: chef_input::prompt(
            &labels,
            paths.chef_input(name).join("RANKING.md").is_file(),
            &brief_md,
        ),
    });
    let overview = super::overview(&paths, &brief, Role::Participant, &[name.to_owned()]);
    let progress = Arc::new(session.printer.progress("chef", overview));
    let names = [name.to_owned()];
    let outcome = cook::cook(&runtime, &paths, &brief, &names, &settings, progress).await?;
    report_leftovers(&session, &outcome.leftovers);
    let mut result = meta;
    result["finished_at"] = json!(now_iso());
    result["result"] = json!(outcome.results.first());
    fsx::write_json_atomic(
        &paths.dir().join(format!("CHEF_{name}_RESULT.json")),
        &result,
    )?;
    session.printer.json(&result);
    super::print_results(session.printer, &outcome.results);
    if outcome.results.iter().any(|r| r.status == CellState::Ok) {
        session
            .printer
            .info(&format!("next: multicooker rejudge {}", paths.name()));
        Ok(ExitCode::Success)
    } else {
        Ok(ExitCode::NothingUsable)
    }
}

/// `--chef NAME[=FLAVOR]` as (name, flavor), the flavor known or one of the cook's own.
fn parse_chef<'a>(paths: &CookPaths, chef: &'a str) -> Result<(&'a str, &'a str), UserError> {
    let (name, flavor) = chef
        .split_once('=')
        .map_or((chef.trim(), chef.trim()), |(n, f)| (n.trim(), f.trim()));
    if name.is_empty()
        || !KNOWN_FLAVORS.contains(&flavor)
            && !crate::flavor::cook_flavors(paths.dir())
                .iter()
                .any(|f| f == flavor)
    {
        return Err(UserError::new(
            format!("bad --chef `{chef}`"),
            format!(
                "use NAME=FLAVOR with a known flavor ({})",
                KNOWN_FLAVORS.join(", ")
            ),
        ));
    }
    Ok((name, flavor))
}

/// The participants with sealed output the chef works from (never the chef itself).
fn sources(
    paths: &CookPaths,
    brief: &crate::brief::Brief,
    chef: &str,
) -> Result<Vec<String>, UserError> {
    let sources: Vec<String> = brief
        .participants
        .iter()
        .filter(|p| p.name != chef && paths.sealed(&p.name).join("out").is_dir())
        .map(|p| p.name.clone())
        .collect();
    if sources.is_empty() {
        return Err(UserError::new(
            format!(
                "no sealed output in `{}` for the chef to work from",
                paths.inbox().display()
            ),
            format!("run `multicooker cook {}` first", paths.name()),
        ));
    }
    Ok(sources)
}

/// A chef may reuse its own name only, and runs again only with `--force`.
fn check_existing(
    paths: &CookPaths,
    brief: &crate::brief::Brief,
    name: &str,
    flavor: &str,
    force: bool,
) -> anyhow::Result<()> {
    if let Some(existing) = brief.participant(name) {
        let trace: serde_json::Value = fsx::read_capped(&paths.trace(name), 16 << 20)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let is_chef = paths.dir().join("chef").join(name).is_dir();
        if !is_chef || existing.flavor != flavor {
            return Err(UserError::new(
                format!("`{name}` is already a participant that is not this chef"),
                "choose another --chef name",
            )
            .into());
        }
        if trace.is_object() && !force {
            return Err(UserError::new(
                format!("chef `{name}` already cooked"),
                "pass --force to cook it again (its earlier output is kept in attempts/)",
            )
            .into());
        }
    }
    Ok(())
}

/// Adds the chef to brief.yaml (or, with `no_register`, only to this run's brief).
fn register(
    paths: &CookPaths,
    brief: &mut crate::brief::Brief,
    name: &str,
    flavor: &str,
    no_register: bool,
) -> anyhow::Result<()> {
    if brief.participant(name).is_none() {
        if no_register {
            brief.participants.push(Actor {
                name: name.to_owned(),
                flavor: flavor.to_owned(),
                timeout_s: None,
                model: None,
                resources: crate::brief::Resources::default(),
                network: None,
                budget: None,
            });
        } else {
            let text = fs_err::read_to_string(paths.brief_yaml())?;
            let edited = crate::brief::edit::insert_participant(
                &text,
                &format!("{{name: {name}, flavor: {flavor}}}"),
            )
            .ok_or_else(|| {
                UserError::new(
                    "cannot find a block-style `participants:` list in brief.yaml",
                    "add the chef by hand, or pass --no-register",
                )
            })?;
            fsx::write_atomic(&paths.brief_yaml(), edited.as_bytes())?;
            *brief = crate::brief::load(&paths.brief_yaml())?.brief;
        }
    }
    Ok(())
}
