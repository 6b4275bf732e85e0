//! `multicooker add-participant <task> NAME[=FLAVOR]`: one more participant in brief.yaml.
//!
//! The line is inserted into the file as written (`brief::edit`), so its comments and layout stay (the
//! reference re-dumped the YAML and lost them). The edited text is parsed before it is written:
//! if it would not be a valid brief with the new participant in it, the file is left untouched.

use serde_json::json;

use crate::brief::{self, KNOWN_FLAVORS};
use crate::cli::AddParticipantArgs;
use crate::error::{ExitCode, UserError};
use crate::settings;
use crate::state::CookPaths;

pub(super) fn run(args: &AddParticipantArgs) -> anyhow::Result<ExitCode> {
    let session = settings::session(&args.global)?;
    let paths = session.find_cook(&args.task)?;
    let (name, flavor) = parse_spec(&paths, args.participant.trim())?;
    let path = paths.brief_yaml();
    let loaded = brief::load(&path)?;
    if loaded.brief.participant(name).is_some() {
        return Err(UserError::new(
            format!("participant `{name}` is already in `{}`", path.display()),
            "pick another name",
        )
        .into());
    }
    let edited = edited_brief(&paths, name, flavor)?;
    crate::fsx::write_atomic(&path, edited.as_bytes())?;
    fs_err::create_dir_all(paths.work(name))?;
    session
        .printer
        .json(&json!({"cook": paths.name(), "added": {"name": name, "flavor": flavor}}));
    session.printer.data(&format!(
        "added participant: {name} (flavor: {flavor}) → {}",
        path.display()
    ));
    session.printer.info(&format!(
        "next: multicooker cook {} --participants {name}",
        paths.name()
    ));
    Ok(ExitCode::Success)
}

/// `NAME` or `NAME=FLAVOR` as (name, flavor), the flavor known or one of the cook's own.
fn parse_spec<'a>(paths: &CookPaths, spec: &'a str) -> Result<(&'a str, &'a str), UserError> {
    let (name, flavor) = match spec.split_once('=') {
        Some((n, f)) => (n.trim(), f.trim()),
        None => (spec, spec),
    };
    if name.is_empty() || flavor.is_empty() {
        return Err(UserError::new(
            format!("bad participant spec `{spec}`"),
            "use NAME or NAME=FLAVOR",
        ));
    }
    let custom = crate::flavor::cook_flavors(paths.dir());
    if !KNOWN_FLAVORS.contains(&flavor) && !custom.iter().any(|c| c == flavor) {
        return Err(UserError::new(
            format!("unknown flavor `{flavor}` in `{spec}`"),
            format!(
                "known flavors: {}; a custom flavor needs {}/flavors/{flavor}/Dockerfile",
                KNOWN_FLAVORS.join(", "),
                paths.dir().display()
            ),
        ));
    }
    Ok((name, flavor))
}

/// brief.yaml's text with the participant added, checked as a brief (and by lint) before
/// anything is written.
fn edited_brief(paths: &CookPaths, name: &str, flavor: &str) -> anyhow::Result<String> {
    let path = paths.brief_yaml();
    let text = fs_err::read_to_string(&path)?;
    let line = format!("{{name: {name}, flavor: {flavor}}}");
    let Some(edited) = brief::edit::insert_participant(&text, &line) else {
        return Err(UserError::new(
            format!(
                "cannot find a block-style `participants:` list in `{}`",
                path.display()
            ),
            format!("add `- {line}` to the participants list by hand"),
        )
        .into());
    };
    let reparsed = brief::parse(&path, edited.as_bytes()).map_err(|e| {
        anyhow::Error::new(e)
            .context("brief.yaml would not be valid with that participant; nothing was changed")
    })?;
    if reparsed.brief.participant(name).is_none() {
        return Err(UserError::new(
            format!("the edit would not add `{name}` to `{}`", path.display()),
            format!("add `- {line}` to the participants list by hand"),
        )
        .into());
    }
    refuse_lint(paths, &reparsed.brief, name)?;
    Ok(edited)
}

/// Refuses a participant the cook's lint would refuse for its network (`network: none` for a
/// flavor that needs its model API), before brief.yaml is touched.
fn refuse_lint(paths: &CookPaths, brief: &brief::Brief, name: &str) -> anyhow::Result<()> {
    let mut findings = Vec::new();
    brief::lint_network::lint_network(paths.dir(), brief, &mut findings);
    let subject = format!("participant `{name}` ");
    let Some(finding) = findings.iter().find(|f| f.problem.contains(&subject)) else {
        return Ok(());
    };
    Err(UserError::new(
        format!("{}: {}; nothing was changed", finding.file, finding.problem),
        finding.fix.clone(),
    )
    .into())
}
