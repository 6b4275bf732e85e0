//! What judges are given besides the sealed outputs: the null participant's empty submission
//! (`judging.null_participant`), and each submission's hidden-test summary when `verify.jury`
//! is `summary` (counts only, never a test). Never the mapping, never `verify/`.

use serde_json::json;

use crate::brief::Brief;
use crate::cell::RunError;
use crate::fsx;
use crate::state::CookPaths;

pub use crate::state::NULL_PARTICIPANT;

/// The sealed outputs to judge, and the null participant's when the brief asks for it.
pub(super) fn available_outputs(paths: &CookPaths, brief: &Brief) -> Result<Vec<String>, RunError> {
    let mut available: Vec<String> = brief
        .participants
        .iter()
        .filter(|p| paths.sealed(&p.name).join("out").is_dir())
        .map(|p| p.name.clone())
        .collect();
    if brief.judging.null_participant && !available.is_empty() {
        seal_null(paths).map_err(|source| RunError::Prepare {
            path: paths.sealed(NULL_PARTICIPANT),
            source,
        })?;
        available.push(NULL_PARTICIPANT.to_owned());
    }
    Ok(available)
}

/// Seals the null participant's submission: an empty `out/` and the same `meta.json` every
/// sealed output has, so nothing but its emptiness tells it apart.
fn seal_null(paths: &CookPaths) -> std::io::Result<()> {
    let sealed = paths.sealed(NULL_PARTICIPANT);
    fsx::remove_tree(&sealed)?;
    fs_err::create_dir_all(sealed.join("out"))?;
    let meta = json!({"schema_version": 1, "exit_class": "ok", "round": 1});
    fsx::write_atomic(&sealed.join("meta.json"), &fsx::to_json_pretty(&meta))
}

/// Each verified participant's hidden-test line for the judges, when `verify.jury` is
/// `summary`: counts only (unreported tests counted as errors), or why it is unscored.
pub(super) fn test_summaries(paths: &CookPaths, brief: &Brief) -> Option<Vec<(String, String)>> {
    let verify = brief
        .verify
        .as_ref()
        .filter(|v| v.jury == crate::brief::JuryView::Summary)?;
    let results: Vec<Option<crate::state::verification::Verification>> = brief
        .participants
        .iter()
        .map(|p| crate::state::verification::Verification::read(paths, &p.name))
        .collect();
    let refs: Vec<Option<&crate::state::verification::Verification>> =
        results.iter().map(Option::as_ref).collect();
    let counts = crate::state::verification::pass_counts(&refs, verify.tests);
    let lines = brief
        .participants
        .iter()
        .zip(results.iter().zip(counts))
        .filter_map(|(participant, (result, count))| {
            let result = result.as_ref()?;
            let line = match count {
                Some(c) => format!(
                    "Hidden tests: {} of {} passed ({} did not).",
                    c.passed,
                    c.trials,
                    c.trials - c.passed
                ),
                None => format!(
                    "Hidden tests: unscored ({}); judge without them.",
                    result.outcome.as_str()
                ),
            };
            Some((participant.name.clone(), line))
        })
        .collect();
    Some(lines)
}
