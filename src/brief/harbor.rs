//! Strict checking of `harbor:`, which `new --from <harbor task>` writes: the folder the task is
//! kept in and the task hash taken when it was copied (docs/HARBOR.md).

use std::path::{Component, Path};

use super::model::HarborRef;
use super::parse::Checker;
use super::schema::{HASH_FIX, HarborDoc};

use super::templates::{TEMPLATE_BRIEF, TEMPLATE_JUDGE_BRIEF_MD};

/// Checks `harbor:` (its keys and kinds are the schema's); `has_verify` says whether the brief
/// also has `verify:`.
pub(super) fn check(doc: HarborDoc, has_verify: bool, checker: &mut Checker) -> Option<HarborRef> {
    let task = doc
        .task
        .unwrap_or_else(|| crate::harbor::COOK_TASK_DIR.to_owned());
    let inside = !task.is_empty()
        && Path::new(&task)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        checker.problem(
            "harbor.task",
            format!("`{task}` is not a folder inside the cook"),
            Some(format!(
                "use a relative path without `..`, such as `{}`",
                crate::harbor::COOK_TASK_DIR
            )),
        );
    }
    let well_formed = doc.hash.as_deref().is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if let Some(hash) = doc.hash.as_deref().filter(|_| !well_formed) {
        checker.problem(
            "harbor.hash",
            format!("`{hash}` is not a task hash (64 lower-case hex digits)"),
            Some(HASH_FIX.into()),
        );
    }
    if has_verify {
        checker.problem(
            "verify",
            "a Harbor task is verified by its own `tests/test.sh`, not by `verify:`",
            Some("remove `verify:` from this brief".into()),
        );
    }
    (inside && well_formed).then(|| HarborRef {
        task,
        hash: doc.hash.unwrap_or_default(),
    })
}

/// A cook made from a Harbor task: the task kept byte for byte in `task/` (each file checked
/// against its hash after the copy), `instruction.md` as BRIEF.md, and a brief.yaml whose
/// timeouts, resources and network come from `task.toml`, with the task hash recorded
/// (`harbor:`). Refusals (docs/HARBOR.md §3) stop here, before anything is visible.
/// `participants` is brief.yaml's participant lines (`  - {name: a, flavor: b}`, each ending in a
/// newline). Returns the task as read.
pub fn write_cook(
    source: &Path,
    dir: &Path,
    name: &str,
    participants: &str,
) -> anyhow::Result<crate::harbor::Task> {
    let task = crate::harbor::load(source)?;
    crate::harbor::files::copy(source, &task.files, &dir.join(crate::harbor::COOK_TASK_DIR))?;
    fs_err::write(
        dir.join("brief.yaml"),
        brief_yaml(&task, name, participants),
    )?;
    fs_err::write(dir.join("BRIEF.md"), &task.instruction)?;
    fs_err::write(dir.join("JUDGE_BRIEF.md"), TEMPLATE_JUDGE_BRIEF_MD)?;
    Ok(task)
}

/// The brief.yaml of a cook made from `task`: timeouts, resources and network from its
/// `task.toml`, the task hash under `harbor:`, the template's judging block.
pub fn brief_yaml(task: &crate::harbor::Task, name: &str, participants: &str) -> String {
    use crate::harbor::{COOK_TASK_DIR, Internet};
    let config = &task.config;
    let environment = &config.environment;
    let network = match &environment.internet {
        Internet::Open => "{mode: open}".to_owned(),
        Internet::Closed => "{mode: allowlist}".to_owned(),
        Internet::Hosts(hosts) => {
            let targets: Vec<String> = hosts
                .iter()
                .flat_map(|h| [format!("{h}:443"), format!("{h}:80")])
                .collect();
            format!("{{mode: allowlist, allow: [{}]}}", targets.join(", "))
        }
    };
    let judging = TEMPLATE_BRIEF
        .split_once("@PARTICIPANTS@\n")
        .map_or("", |(_, rest)| rest);
    format!(
        "# brief.yaml of the Harbor task `{task_name}` (docs/HARBOR.md).\n\
         # The task is kept unchanged in {COOK_TASK_DIR}/ and its instruction.md is BRIEF.md; timeouts,\n\
         # resources and network come from {COOK_TASK_DIR}/task.toml. Unknown fields are errors.\n\
         name: {name}\n\
         timeout_s: {timeout}          # [agent] timeout_sec\n\
         judge_timeout_s: 900\n\
         resources: {{cpus: {cpus}, mem_limit: {memory}m}}   # [environment] cpus, memory_mb\n\
         network: {network}   # [environment] allow_internet (the flavor's API is always reachable)\n\
         harbor:\n  task: {COOK_TASK_DIR}\n  hash: {hash}   # the task hash when it was copied in\n\n\
         participants:\n{participants}{judging}",
        task_name = task.name,
        timeout = config.agent_timeout.as_secs_f64().ceil().max(1.0),
        cpus = environment.cpus,
        memory = environment.memory_mb,
        hash = task.hash(),
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn problems(extra: &str) -> Vec<String> {
        let text = format!("name: t\nparticipants:\n  - {{name: a, flavor: dummy}}\n{extra}");
        match crate::brief::parse(Path::new("brief.yaml"), text.as_bytes()) {
            Err(crate::brief::BriefError::Invalid { problems, .. }) => problems
                .iter()
                .map(|p| format!("{}: {}", p.field, p.problem))
                .collect(),
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn a_harbor_section_is_read_with_its_hash() {
        let hash = "ab".repeat(32);
        let text = format!(
            "name: t\nparticipants:\n  - {{name: a, flavor: dummy}}\nharbor: {{task: task, hash: {hash}}}\n"
        );
        let brief = crate::brief::parse(Path::new("brief.yaml"), text.as_bytes())
            .unwrap()
            .brief;
        let harbor = brief.harbor.unwrap();
        assert_eq!((harbor.task.as_str(), harbor.hash), ("task", hash));
    }

    #[test]
    fn a_bad_harbor_section_names_each_field() {
        let hash = "ab".repeat(32);
        assert_eq!(
            problems("harbor: {task: ../elsewhere, hash: ABC}\n"),
            [
                "harbor.task: `../elsewhere` is not a folder inside the cook",
                "harbor.hash: `ABC` is not a task hash (64 lower-case hex digits)"
            ]
        );
        assert_eq!(
            problems("harbor: {task: /abs}\n"),
            [
                "harbor.task: `/abs` is not a folder inside the cook",
                "harbor.hash: is required"
            ]
        );
        assert_eq!(
            problems(&format!(
                "harbor: {{hash: {hash}}}\nverify: {{image: dummy}}\n"
            )),
            ["verify: a Harbor task is verified by its own `tests/test.sh`, not by `verify:`"]
        );
        assert_eq!(
            problems(&format!("harbor: {{hash: {hash}, oracle: yes}}\n")),
            ["harbor.oracle: unknown field (allowed: task, hash)"]
        );
    }
}
