//! Which flavors `doctor` checks, and how strictly: a cook's (`doctor <task>`, each with its
//! cells' longest timeout), the listed ones (`--flavors`), or every packaged one.

use super::{Checks, Target};
use crate::brief::KNOWN_FLAVORS;
use crate::cli::DoctorArgs;
use crate::flavor::has_image;
use crate::settings::Session;
use crate::state::Role;

/// A cook's folder and network policy (for `--live`).
pub(super) type Cook = Option<(std::path::PathBuf, crate::brief::Network)>;

pub(super) fn flavors_to_check(
    session: &Session,
    args: &DoctorArgs,
    checks: &mut Checks,
) -> (Vec<Target>, Cook) {
    let default_timeout = crate::brief::DEFAULT_TIMEOUT_S;
    if let Some(task) = &args.task {
        let (targets, cook) = task_targets(session, task, checks);
        return (only_listed(targets, &args.flavors, task, checks), cook);
    }
    if !args.flavors.is_empty() {
        let mut targets = Vec::new();
        for flavor in &args.flavors {
            if KNOWN_FLAVORS.contains(&flavor.as_str()) {
                targets.push(Target {
                    flavor: flavor.clone(),
                    strict: true,
                    build: true,
                    timeout_s: default_timeout,
                });
            } else {
                checks.add(
                    "FAIL",
                    format!(
                        "flavor `{flavor}` is unknown (known: {}; a cook's own flavors are checked with `doctor <task>`)",
                        KNOWN_FLAVORS.join(", ")
                    ),
                );
            }
        }
        return (targets, None);
    }
    for flavor in KNOWN_FLAVORS.iter().filter(|f| !has_image(f)) {
        checks.add(
            "WARN",
            format!("flavor `{flavor}`: no image in this build of multicooker"),
        );
    }
    // The dummy is hermetic and always checked; the real flavors are reported, and built
    // only when asked (their images need the vendors' registries).
    let targets = KNOWN_FLAVORS
        .iter()
        .filter(|f| has_image(f))
        .map(|f| Target {
            flavor: (*f).to_owned(),
            strict: *f == "dummy",
            build: *f == "dummy",
            timeout_s: default_timeout,
        })
        .collect();
    (targets, None)
}

/// `doctor <task> --flavors a,b`: only the listed flavors of the cook; a listed flavor the
/// cook does not use fails, naming the ones it does.
fn only_listed(
    targets: Vec<Target>,
    listed: &[String],
    task: &str,
    checks: &mut Checks,
) -> Vec<Target> {
    if listed.is_empty() {
        return targets;
    }
    let used: Vec<&str> = targets.iter().map(|t| t.flavor.as_str()).collect();
    for flavor in listed.iter().filter(|f| !used.contains(&f.as_str())) {
        checks.add(
            "FAIL",
            format!(
                "flavor `{flavor}` is not used by `{task}` (it uses: {}); `doctor --flavors {flavor}` checks it alone",
                used.join(", ")
            ),
        );
    }
    targets
        .into_iter()
        .filter(|t| listed.contains(&t.flavor))
        .collect()
}

/// The flavors a cook uses, each with the longest timeout of its cells, and the cook's folder
/// and network policy (for `--live`).
fn task_targets(session: &Session, task: &str, checks: &mut Checks) -> (Vec<Target>, Cook) {
    match crate::commands::open_cook(session, task) {
        Ok((paths, loaded)) => {
            checks.add("OK", format!("`{}` is valid", paths.brief_yaml().display()));
            let brief = &loaded.brief;
            let mut targets: Vec<Target> = Vec::new();
            let cells = brief
                .participants
                .iter()
                .map(|a| (a, Role::Participant))
                .chain(brief.judges.iter().map(|a| (a, Role::Judge)));
            for (actor, role) in cells {
                let timeout_s = brief.timeout_for(actor, role);
                match targets.iter_mut().find(|t| t.flavor == actor.flavor) {
                    Some(target) => target.timeout_s = target.timeout_s.max(timeout_s),
                    None => targets.push(Target {
                        flavor: actor.flavor.clone(),
                        strict: true,
                        build: true,
                        timeout_s,
                    }),
                }
            }
            targets.sort_by(|a, b| a.flavor.cmp(&b.flavor));
            (
                targets,
                Some((paths.dir().to_path_buf(), brief.network.clone())),
            )
        }
        Err(error) => {
            checks.add("FAIL", format!("{error:#}"));
            (Vec::new(), None)
        }
    }
}
