//! `multicooker new <name> [--from DIR]`: scaffolds `<root>/<yymmdd>-<name>/`. The brief is
//! checked before anything is written, so a bad example leaves no half-made cook.

use std::path::Path;

use serde_json::json;

use crate::brief::{self, KNOWN_FLAVORS};
use crate::cli::NewArgs;
use crate::error::{ExitCode, UserError};
use crate::fsx::{self, CopyOptions};
use crate::output::Printer;
use crate::settings;
use crate::state::{CookPaths, check_task_name, has_date_prefix, undated};

use crate::brief::templates::{TEMPLATE_BRIEF, TEMPLATE_BRIEF_MD, TEMPLATE_JUDGE_BRIEF_MD};

/// Top-level entries of a source folder that belong to a run, not to the task.
const RUN_ENTRIES: &[&str] = &[
    "work",
    "logs",
    "judging",
    "attempts",
    "rounds",
    "archive",
    "chef",
    "consult",
    "status.json",
    "events.jsonl",
    "RUN.json",
    "RUN_RESULT.json",
    "JUDGE_RESULT.json",
    "summary.json",
    "leaderboard.md",
    "artifacts.json",
    "compose.yaml",
];

/// What the new cook's `.gitignore` keeps out of version control.
const GITIGNORE: &str = "work/\nlogs/\njudging/\nattempts/\n.auth/\n.mc-lock\nRUN.json\nRUN_RESULT.json\nJUDGE_RESULT.json\nleaderboard.md\nsummary.json\nstatus.json\nevents.jsonl\n";

pub(super) fn run(args: &NewArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let name = free_name(&session.root, &args.name)?;
    let paths = session.cook_paths(session.root.join(&name));
    let staging = tempfile::Builder::new()
        .prefix(".new-")
        .tempdir_in(ensure_root(&session.root)?)
        .map_err(|e| unwritable_root(&session.root, &e))?;
    let staged = CookPaths::new(staging.path().join(&name));
    fs_err::create_dir_all(staged.dir())?;
    let harbor = args.from.as_deref().filter(|s| crate::harbor::is_task(s));
    write_brief(args, harbor, &staged, &name)?;
    let loaded = lay_out(&staged)?;
    // Appear all at once: a half-made cook is never visible.
    fs_err::rename(staged.dir(), paths.dir())?;
    print_created(session.printer, &paths, &name, &loaded);
    session.printer.info(&next_steps(
        &paths,
        &name,
        args.from.is_some(),
        harbor.is_some(),
    ));
    Ok(ExitCode::Success)
}

/// The cook's brief: from a Harbor task, copied from an example folder, or the template.
fn write_brief(
    args: &NewArgs,
    harbor: Option<&Path>,
    staged: &CookPaths,
    name: &str,
) -> anyhow::Result<()> {
    let participants = args.participants.clone();
    match (&args.from, harbor) {
        (_, Some(task)) => {
            let specs = match participants {
                Some(specs) => specs,
                None if args.oracle => Vec::new(),
                None => default_participants(),
            };
            let mut lines = parse_specs(&specs)?;
            if args.oracle {
                lines.push_str(&format!(
                    "  - {{name: oracle, flavor: {}}}   # the task's solution/solve.sh, no CLI\n",
                    brief::ORACLE_FLAVOR
                ));
            }
            brief::harbor::write_cook(task, staged.dir(), name, &lines)?;
        }
        (_, None) if args.oracle => {
            return Err(UserError::new(
                "`--oracle` needs a Harbor task",
                "make the cook with `--from <task folder>` (a folder with `task.toml` and `instruction.md`)",
            )
            .into());
        }
        (Some(source), None) => {
            if participants.is_some() {
                return Err(UserError::new(
                    "`--participants` does not apply to an example folder",
                    "an example names its participants in its brief.yaml: edit that copy after `new`, or leave out `--participants`",
                )
                .into());
            }
            copy_example(source, staged.dir())?;
        }
        (None, None) => {
            let specs = participants.unwrap_or_else(default_participants);
            write_template(staged, name, &parse_specs(&specs)?)?;
        }
    }
    Ok(())
}

/// Checks the staged brief, then adds `raw/`, each participant's `work/` and `.gitignore`.
fn lay_out(staged: &CookPaths) -> anyhow::Result<brief::Loaded> {
    let loaded = brief::load(&staged.brief_yaml())
        .map_err(|e| anyhow::Error::new(e).context("the new cook's brief.yaml is invalid"))?;
    fs_err::create_dir_all(staged.raw())?;
    if fs_err::read_dir(staged.raw())?.next().is_none() {
        fs_err::write(staged.raw().join(".gitkeep"), "")?;
    }
    for participant in &loaded.brief.participants {
        fs_err::create_dir_all(staged.work(&participant.name))?;
    }
    if !staged.gitignore().exists() {
        fs_err::write(staged.gitignore(), GITIGNORE)?;
    }
    Ok(loaded)
}

/// What was made: the folder, its participants, its Harbor task, the brief's warnings.
fn print_created(printer: Printer, paths: &CookPaths, name: &str, loaded: &brief::Loaded) {
    let participants: Vec<String> = loaded
        .brief
        .participants
        .iter()
        .map(|p| format!("{} ({})", p.name, p.flavor))
        .collect();
    printer.json(&json!({"cook": name, "path": paths.dir(), "participants": loaded.brief.participants.iter().map(|p| &p.name).collect::<Vec<_>>(), "harbor": loaded.brief.harbor}));
    printer.data(&format!("created cook: {}", paths.dir().display()));
    printer.data(&format!("participants: {}", participants.join(", ")));
    if let Some(harbor) = &loaded.brief.harbor {
        printer.data(&format!(
            "harbor task: {} (task hash {})",
            paths.dir().join(&harbor.task).display(),
            harbor.hash
        ));
    }
    for warning in &loaded.warnings {
        printer.warn(warning);
    }
}

/// What to do next. A cook copied from an example already has its task and material (issue
/// 17: it used to be told to "describe the task in BRIEF.md" anyway); the template's has not.
fn next_steps(paths: &CookPaths, name: &str, from_example: bool, harbor: bool) -> String {
    let mut steps: Vec<String> = Vec::new();
    if harbor {
        steps.push(format!(
            "read the task's instruction in {} (the task itself stays unchanged in {})",
            paths.brief_md().display(),
            paths.dir().join(crate::harbor::COOK_TASK_DIR).display()
        ));
    } else if !from_example || !paths.brief_md().is_file() {
        steps.push(format!(
            "describe the task in {}",
            paths.brief_md().display()
        ));
        steps.push(format!(
            "put reference material in {}",
            paths.raw().display()
        ));
    } else {
        steps.push(format!(
            "read the task in {} and adjust it, or keep it as it is",
            paths.brief_md().display()
        ));
    }
    for command in ["cook", "judge", "report"] {
        steps.push(format!("multicooker {command} {name}"));
    }
    let list: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, step)| format!("  {}. {step}", i + 1))
        .collect();
    format!("\nnext steps:\n{}", list.join("\n"))
}

/// The folder name for a new cook: `<yymmdd>-<name>`, or, when that exists already (the same
/// "Try it" line run twice in a day), the day's next free `<yymmdd>.<n>-<name>`, which `<task>`
/// then finds as the newest. A name given with its date is taken as it is, never twice.
fn free_name(root: &Path, name: &str) -> anyhow::Result<String> {
    let dated = dated_name(name)?;
    if !root.join(&dated).exists() {
        return Ok(dated);
    }
    if !has_date_prefix(name) {
        let day = &dated[..6];
        for sequence in 2..1000 {
            let next = format!("{day}.{sequence}-{name}");
            if !root.join(&next).exists() {
                return Ok(next);
            }
        }
    }
    Err(UserError::new(
        format!("`{}` already exists", root.join(&dated).display()),
        "pick another name",
    )
    .into())
}

fn dated_name(name: &str) -> anyhow::Result<String> {
    let bare = undated(name);
    check_task_name(name)?;
    if let Err((problem, hint)) = brief::check_actor_name(bare) {
        return Err(UserError::new(format!("cook name `{name}` {problem}"), hint).into());
    }
    if has_date_prefix(name) {
        return Ok(name.to_owned());
    }
    Ok(format!("{}-{name}", jiff::Zoned::now().strftime("%y%m%d")))
}

fn ensure_root(root: &Path) -> anyhow::Result<&Path> {
    std::fs::create_dir_all(root).map_err(|e| unwritable_root(root, &e))?;
    Ok(root)
}

/// The cooks folder cannot be written: said with the folder's name (never a temporary path)
/// and the fix (issue 25: a read-only root named a `.new-…` temp path and gave no hint).
fn unwritable_root(root: &Path, error: &std::io::Error) -> anyhow::Error {
    // The OS's words without the path a wrapper may have added (tempfile adds its own).
    let reason = error.raw_os_error().map_or_else(
        || error.kind().to_string(),
        |code| std::io::Error::from_raw_os_error(code).to_string(),
    );
    UserError::new(
        format!("cannot create a cook in `{}`: {reason}", root.display()),
        "make that folder writable, or choose another with `--root DIR` (or MULTICOOKER_ROOT)",
    )
    .into()
}

/// Copies an example folder's task files (not a previous run's results), following no link.
fn copy_example(source: &Path, dest: &Path) -> anyhow::Result<()> {
    if !source.join("brief.yaml").is_file() {
        return Err(UserError::new(
            format!("`{}` has no brief.yaml", source.display()),
            "point --from at an example folder such as `examples/hello-task`, or at a Harbor task folder (`task.toml` and `instruction.md`, docs/HARBOR.md)",
        )
        .into());
    }
    let options = CopyOptions {
        ignore: &[".auth"],
        max_bytes: 1 << 30,
        read_only: false,
        share: false,
    };
    for entry in fs_err::read_dir(source)? {
        let entry = entry?;
        let file_name = entry.file_name();
        let text = file_name.to_string_lossy();
        if text.starts_with('_')
            || text == ".auth"
            || text == ".mc-lock"
            || RUN_ENTRIES.contains(&text.as_ref())
        {
            continue;
        }
        let meta = fs_err::symlink_metadata(entry.path())?;
        if meta.is_dir() {
            fsx::copy_tree_no_follow(&entry.path(), &dest.join(&file_name), &options)?;
        } else if meta.is_file() {
            fs_err::copy(entry.path(), dest.join(&file_name))?;
        }
    }
    Ok(())
}

/// The participants a template or a Harbor task gets unless `--participants` names others.
fn default_participants() -> Vec<String> {
    ["claude", "codex", "agy", "grok"]
        .map(str::to_owned)
        .to_vec()
}

/// `--participants` as brief.yaml lines (`  - {name: a, flavor: b}`), each checked.
fn parse_specs(specs: &[String]) -> anyhow::Result<String> {
    let mut lines = String::new();
    let mut seen = Vec::new();
    for spec in specs.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let (participant, flavor) = match spec.split_once('=') {
            Some((n, f)) => (n.trim(), f.trim()),
            None => (spec, spec),
        };
        if participant.is_empty() || flavor.is_empty() {
            return Err(UserError::new(
                format!("bad participant spec `{spec}`"),
                "use NAME or NAME=FLAVOR",
            )
            .into());
        }
        if !KNOWN_FLAVORS.contains(&flavor) {
            return Err(UserError::new(
                format!("unknown flavor `{flavor}` in `{spec}`"),
                format!("known flavors: {}", KNOWN_FLAVORS.join(", ")),
            )
            .into());
        }
        if seen.contains(&participant) {
            return Err(UserError::new(
                format!("duplicate participant name `{participant}`"),
                "give each participant its own name",
            )
            .into());
        }
        seen.push(participant);
        lines.push_str(&format!("  - {{name: {participant}, flavor: {flavor}}}\n"));
    }
    Ok(lines)
}

fn write_template(paths: &CookPaths, name: &str, lines: &str) -> anyhow::Result<()> {
    let yaml = TEMPLATE_BRIEF
        .replace("@NAME@", name)
        .replace("@PARTICIPANTS@\n", lines);
    fs_err::write(paths.brief_yaml(), yaml)?;
    fs_err::write(paths.brief_md(), TEMPLATE_BRIEF_MD)?;
    fs_err::write(paths.judge_brief_md(), TEMPLATE_JUDGE_BRIEF_MD)?;
    Ok(())
}
