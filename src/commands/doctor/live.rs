//! `doctor --live`: a short, authenticated probe per flavor. It runs a throwaway cook (one
//! participant per flavor, a one-line prompt) through exactly the machinery a real cook uses:
//! login snapshot, per-cell staging, hardened cell, egress proxy, output parsing. The cook
//! folder lives in a temporary directory and is removed afterwards, with its engine objects.

use std::path::Path;
use std::sync::Arc;

use super::Checks;
use crate::brief;
use crate::cook;
use crate::progress::Silent;
use crate::runtime::EngineInfo;
use crate::state::{CellState, CookPaths};

/// What each probed CLI is asked.
const PROMPT: &str = "# Health check\n\nReply with the single word OK and write it to out/RESULT.md. Do nothing else.\n";
/// How long a probe may take.
const PROBE_TIMEOUT_S: u64 = 180;

/// The probe's brief: one participant per flavor, under the task's network policy (JSON is
/// YAML) so the probe reaches the network exactly as the cook's cells would.
fn brief_yaml(flavors: &[String], network: &brief::Network) -> String {
    let network = serde_json::to_string(network).expect("a network policy serializes");
    let mut yaml = format!(
        "name: doctor-live\ntimeout_s: {PROBE_TIMEOUT_S}\nnetwork: {network}\nparticipants:\n"
    );
    for flavor in flavors {
        yaml.push_str(&format!("  - {{name: live-{flavor}, flavor: {flavor}}}\n"));
    }
    yaml.push_str("judges:\n  - {name: unused, flavor: dummy}\n");
    yaml.push_str("rubric:\n  scale: [0, 1]\n  dimensions:\n    - {id: answered, weight: 100}\n");
    yaml
}

/// Writes the throwaway cook (with the task's own `flavors/` images, if any).
fn write_cook(
    dir: &Path,
    flavors: &[String],
    task: Option<(&Path, &brief::Network)>,
) -> std::io::Result<()> {
    let network = task.map(|(_, n)| n.clone()).unwrap_or_default();
    fs_err::create_dir_all(dir.join("raw"))?;
    fs_err::write(dir.join("brief.yaml"), brief_yaml(flavors, &network))?;
    fs_err::write(dir.join("BRIEF.md"), PROMPT)?;
    fs_err::write(dir.join("JUDGE_BRIEF.md"), "unused\n")?;
    if let Some((task, _)) = task {
        for flavor in flavors {
            if let Some(source) = crate::flavor::cook_image_dir(task, flavor) {
                let target = dir.join("flavors").join(flavor);
                fs_err::create_dir_all(&target)?;
                for entry in fs_err::read_dir(&source)? {
                    let entry = entry?;
                    if entry.file_type()?.is_file() {
                        fs_err::copy(entry.path(), target.join(entry.file_name()))?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Probes every flavor in `flavors` (but the dummy, which has nothing to authenticate) and adds
/// one line each. `task`: the cook whose images and network policy to use.
pub(super) async fn probe(
    runtime: &crate::runtime::SharedRuntime,
    session: &crate::settings::Session,
    engine: &EngineInfo,
    flavors: &[String],
    task: Option<(&Path, &brief::Network)>,
    checks: &mut Checks,
) {
    let flavors: Vec<String> = flavors.iter().filter(|f| *f != "dummy").cloned().collect();
    if flavors.is_empty() {
        checks.add(
            "WARN",
            "live: no flavor has both a usable login and image to probe",
        );
        return;
    }
    let probe = match prepare(session, engine, &flavors, task) {
        Ok(probe) => probe,
        Err(line) => return checks.add("FAIL", line),
    };
    let names: Vec<String> = probe
        .brief
        .participants
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let outcome = cook::cook(
        runtime,
        &probe.paths,
        &probe.brief,
        &names,
        &probe.settings,
        Arc::new(Silent),
    )
    .await;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            let hint = crate::error::hint_for(&anyhow::Error::new(error))
                .map(|h| format!(" ({h})"))
                .unwrap_or_default();
            return checks.add("FAIL", format!("live: the probe could not run{hint}"));
        }
    };
    for result in &outcome.results {
        let (level, line) = describe(result, &probe.paths);
        checks.add(level, line);
    }
}

/// The throwaway cook, written and loaded, with its run settings; its folder goes with `_temp`.
struct Probe {
    _temp: tempfile::TempDir,
    paths: CookPaths,
    brief: brief::Brief,
    settings: cook::RunSettings,
}

/// Writes and loads the throwaway cook; the failure line when that cannot be done.
fn prepare(
    session: &crate::settings::Session,
    engine: &EngineInfo,
    flavors: &[String],
    task: Option<(&Path, &brief::Network)>,
) -> Result<Probe, String> {
    let temp = tempfile::Builder::new()
        .prefix("mc-doctor-live-")
        .tempdir()
        .map_err(|error| format!("live: cannot make a folder: {error}"))?;
    let dir = temp.path().join("000000-doctor-live");
    write_cook(&dir, flavors, task)
        .map_err(|error| format!("live: cannot write the probe cook: {error}"))?;
    let loaded = brief::load(&dir.join("brief.yaml")).map_err(|error| format!("live: {error}"))?;
    let paths = session.cook_paths(dir);
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut settings =
        crate::settings::run_settings(session, &loaded.brief, engine, None, flavors.len(), cancel)
            .map_err(|error| format!("live: {error:#}"))?;
    settings.sandbox_check = false;
    Ok(Probe {
        _temp: temp,
        paths,
        brief: loaded.brief,
        settings,
    })
}

/// One check line for a probed cell.
fn describe(result: &cook::ParticipantResult, paths: &CookPaths) -> (&'static str, String) {
    let flavor = &result.flavor;
    let tokens = result
        .usage
        .as_ref()
        .and_then(|u| u.get("total_tokens"))
        .and_then(serde_json::Value::as_u64);
    let model = result
        .usage
        .as_ref()
        .and_then(|u| u.get("models"))
        .and_then(|m| m.get(0))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    if result.status == CellState::Ok {
        return (
            "OK",
            format!(
                "live: flavor `{flavor}` answered in {:.1}s (model {}, {} tokens)",
                result.duration_s,
                model.as_deref().unwrap_or("not reported"),
                tokens.map_or_else(|| "?".to_owned(), |t| t.to_string())
            ),
        );
    }
    let why = result
        .rate_limit_evidence
        .clone()
        .or_else(|| result.error.clone())
        .or_else(|| last_line(&paths.dir().join(&result.stderr)))
        .unwrap_or_default();
    (
        "FAIL",
        format!(
            "live: flavor `{flavor}` ended {} (exit {}): {why}",
            result.status.as_str(),
            result
                .exit_code
                .map_or_else(|| "-".to_owned(), |c| c.to_string())
        ),
    )
}

/// The last non-empty line of a (redacted) log.
fn last_line(path: &Path) -> Option<String> {
    let text = fs_err::read_to_string(path).ok()?;
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take(200).collect())
}
