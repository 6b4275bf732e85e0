//! Nightly model comparison: every brief × repeat as a cook, judged and reported, then folded
//! into a history store with statistics pooled across briefs (`pool`: one additive model of
//! participant, brief and judge; the jackknife's clusters are the briefs, so a brief's repeats
//! and judges are left out together) and the provenance of every arm. The command (`commands::nightly`) runs the cooks; this module is the pure part:
//! cook folders, folding, comparability and the history document.

pub mod budget;
pub mod config;
mod history;
pub mod pass_rates;
pub mod pool;
pub mod rewards;
pub mod store;

pub use history::{changes, history_json, history_text};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use mc_stats::Comparison;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::fsx::{self, CopyOptions};
use config::Nightly;
use store::{ArmRecord, BriefRecord, CellRecord, NightRecord};

/// The brief's template name (its folder name).
pub fn brief_name(template: &Path) -> String {
    template
        .file_name()
        .map_or_else(|| "brief".into(), |n| n.to_string_lossy().into_owned())
}

/// The cook folder of one brief and repeat: `<night>-<config>-<brief>-r<k>`.
pub fn cook_name(nightly: &Nightly, night: &str, template: &Path, repeat: u32) -> String {
    let night: String = night.chars().filter(char::is_ascii_alphanumeric).collect();
    let brief: String = brief_name(template)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{night}-{}-{brief}-r{repeat}", nightly.name)
}

/// Writes a cook folder from a template with the nightly's arms and judging options.
/// brief.yaml is written as JSON, which YAML reads as is.
pub fn write_cook(
    nightly: &Nightly,
    template: &Path,
    dir: &Path,
    name: &str,
) -> anyhow::Result<()> {
    fs_err::create_dir_all(dir)?;
    if crate::harbor::is_task(template) {
        // A Harbor task: kept byte for byte in the cook (`task/`), its instruction as BRIEF.md.
        let task = crate::brief::harbor::write_cook(template, dir, name, "")?;
        fs_err::create_dir_all(dir.join("raw"))?;
        let text = crate::brief::harbor::brief_yaml(&task, name, "");
        return write_brief_over(nightly, template, &text, dir, name);
    }
    for entry in fs_err::read_dir(template)? {
        let entry = entry?;
        let file = entry.file_name().to_string_lossy().into_owned();
        // `verify/`: the hidden tests go with the brief (into the cook, never into a cell but a
        // verifier's).
        let keep = matches!(
            file.as_str(),
            "BRIEF.md" | "JUDGE_BRIEF.md" | "raw" | "flavors" | crate::state::VERIFY_DIR
        ) || (file.starts_with("FEEDBACK")
            && Path::new(&file)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md")));
        if !keep {
            continue;
        }
        if entry.file_type()?.is_dir() {
            fsx::copy_tree_no_follow(
                &entry.path(),
                &dir.join(&file),
                &CopyOptions {
                    ignore: &[],
                    max_bytes: u64::MAX,
                    read_only: false,
                    share: false,
                },
            )?;
        } else {
            fs_err::copy(entry.path(), dir.join(&file))?;
        }
    }
    fs_err::create_dir_all(dir.join("raw"))?;
    write_brief_yaml(nightly, template, dir, name)
}

/// (Re)writes the cook's brief.yaml from its template and the config: the config's arms and
/// judging options win, so a night resumed after fixing the config runs what it now says.
pub fn write_brief_yaml(
    nightly: &Nightly,
    template: &Path,
    dir: &Path,
    name: &str,
) -> anyhow::Result<()> {
    let text = if crate::harbor::is_task(template) {
        // Written from the task each time (its task.toml decides timeouts, resources, network).
        crate::brief::harbor::brief_yaml(&crate::harbor::load(template)?, name, "")
    } else {
        fs_err::read_to_string(template.join("brief.yaml"))?
    };
    write_brief_over(nightly, template, &text, dir, name)
}

/// Writes the cook's brief.yaml: the template's `text` with the config's arms and judging
/// options over it.
fn write_brief_over(
    nightly: &Nightly,
    template: &Path,
    text: &str,
    dir: &Path,
    name: &str,
) -> anyhow::Result<()> {
    let options = serde_saphyr::options! { with_snippet: false, strict_booleans: true };
    let mut brief: Value = serde_saphyr::from_str_with_options(text, options)?;
    let arms = |arms: &[config::Arm]| -> Vec<Value> {
        arms.iter()
            .map(|a| {
                let mut v = json!({"name": a.name, "flavor": a.flavor});
                if let Some(model) = &a.model {
                    v["model"] = json!(model);
                }
                if let Some(timeout) = a.timeout_s {
                    v["timeout_s"] = json!(timeout);
                }
                if let Some(budget) = &a.budget {
                    v["budget"] = json!(budget);
                }
                v
            })
            .collect()
    };
    brief["name"] = json!(name);
    brief["participants"] = json!(arms(&nightly.participants));
    brief["judges"] = json!(arms(&nightly.judges));
    if !nightly.judging.is_empty() {
        let mut judging = brief["judging"].as_object().cloned().unwrap_or_default();
        judging.extend(nightly.judging.clone());
        brief["judging"] = Value::Object(judging);
    }
    // The config's `verify:` are defaults for briefs with hidden tests: the brief's own win.
    if !nightly.verify.is_empty() && template.join(crate::state::VERIFY_DIR).is_dir() {
        let mut verify = nightly.verify.clone();
        verify.extend(brief["verify"].as_object().cloned().unwrap_or_default());
        brief["verify"] = Value::Object(verify);
    }
    let yaml = format!(
        "# Written by `multicooker nightly` ({}) from {}; JSON is YAML.\n{}\n",
        nightly.name,
        template.display(),
        serde_json::to_string_pretty(&brief)?
    );
    fs_err::write(dir.join("brief.yaml"), yaml)?;
    Ok(())
}

fn sha256_file(path: &Path) -> String {
    fs_err::read(path).map_or_else(|_| "missing".into(), |bytes| sha256_bytes(&bytes))
}

fn sha256_bytes(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A brief template's hashes. For a Harbor task, `brief_sha256` is the task hash (every file of
/// the task: task.toml, instruction, environment, tests, solution), `brief_md_sha256` its
/// `instruction.md`'s, and `judge_brief_sha256` the jury's `JUDGE_BRIEF.md`'s.
pub fn brief_record(template: &Path) -> BriefRecord {
    if crate::harbor::is_task(template) {
        let task = crate::harbor::load(template).ok();
        return BriefRecord {
            brief: brief_name(template),
            brief_sha256: task.map_or_else(|| "missing".into(), |t| t.hash().to_owned()),
            brief_md_sha256: sha256_file(&template.join(crate::harbor::INSTRUCTION)),
            judge_brief_sha256: sha256_bytes(
                crate::brief::templates::TEMPLATE_JUDGE_BRIEF_MD.as_bytes(),
            ),
        };
    }
    BriefRecord {
        brief: brief_name(template),
        brief_sha256: sha256_file(&template.join("brief.yaml")),
        brief_md_sha256: sha256_file(&template.join("BRIEF.md")),
        judge_brief_sha256: sha256_file(&template.join("JUDGE_BRIEF.md")),
    }
}

/// One cook of the night, as the fold reads it.
#[derive(Debug, Clone)]
pub struct NightCook {
    /// Folder.
    pub dir: std::path::PathBuf,
    /// Brief index (the cluster).
    pub brief: usize,
    /// Repeat, from 1.
    pub repeat: u32,
    /// Why the cook could not run, be judged or be reported, if it could not.
    pub error: Option<String>,
}

fn read(path: &Path) -> Value {
    fsx::read_capped(path, 64 << 20)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// Folds the night's cooks into a record: cells, pooled estimates, provenance, comparability.
pub fn fold(
    nightly: &Nightly,
    night: &str,
    started_at: &str,
    seed: u64,
    cooks: &[NightCook],
    images: &BTreeMap<String, String>,
) -> NightRecord {
    let names: Vec<&str> = nightly
        .participants
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    let judges: Vec<&str> = nightly.judges.iter().map(|j| j.name.as_str()).collect();
    let pairwise = nightly.judging.get("mode").and_then(Value::as_str) == Some("pairwise");
    let mut cells = Vec::new();
    let mut scores = Vec::new();
    let mut comparisons = Vec::new();
    let mut run_results = Vec::new();
    let mut pass_counts = Vec::new();
    let mut trials = Vec::new();
    for cook in cooks {
        let summary = read(&cook.dir.join("summary.json"));
        pass_counts.extend(pass_rates::cook_pass_counts(cook.brief, &summary, &names));
        trials.extend(rewards::cook_trials(cook.brief, &summary, &names));
        let run = read(&cook.dir.join("RUN_RESULT.json"));
        cells.extend(cook_cells(nightly, cook, &summary, &run, &names));
        if pairwise {
            comparisons.extend(cook_comparisons(cook.brief, &summary, &names));
        } else {
            scores.extend(cook_scores(cook.brief, &summary, &names, &judges));
        }
        run_results.push(run);
    }
    let pooled = if pairwise {
        pool::pool_verdicts(&names, &comparisons, &cells)
    } else {
        pool::pool_scores(
            &names,
            &scores,
            &cells,
            (nightly.briefs.len(), judges.len()),
        )
    };
    let arms = arm_records(nightly, cooks, &run_results, images);
    let reasons = not_comparable(&arms);
    let with_score = cells.iter().filter(|c| c.score.is_some()).count();
    let status = if pooled.estimates.iter().all(|e| e.estimate.is_none()) {
        "failed"
    } else if with_score < cells.len()
        || cells.iter().any(|c| c.run_status.as_deref() != Some("ok"))
    {
        "partial"
    } else {
        "ok"
    };
    let mut failures = failures(cooks, &cells, status == "failed");
    failures.splice(0..0, lost_nodes(&run_results));
    NightRecord {
        id: 0,
        config: nightly.name.clone(),
        night: night.to_owned(),
        started_at: started_at.to_owned(),
        finished_at: Some(crate::state::now_iso()),
        status: status.to_owned(),
        seed,
        method: if pairwise {
            "bradley_terry+cluster_jackknife_t".into()
        } else {
            "additive+cluster_jackknife_t".into()
        },
        comparable: reasons.is_empty(),
        reasons,
        tied_groups: pooled.tied_groups,
        failures,
        arms,
        briefs: nightly.briefs.iter().map(|b| brief_record(b)).collect(),
        cells,
        estimates: pooled.estimates,
        pass_rates: pass_rates::pool_pass_rates(&names, &pass_counts, nightly.briefs.len()),
        spend: spend_records(nightly, cooks),
        task_rewards: rewards::pool_rewards(&names, &trials, nightly.briefs.len()),
    }
}

/// The night's spend against its budget, then each arm's against its own cap.
fn spend_records(nightly: &Nightly, cooks: &[NightCook]) -> Vec<budget::SpendRecord> {
    let mut arms = Vec::new();
    for cook in cooks {
        budget::add_cook(&mut arms, &cook.dir);
    }
    let mut records = vec![budget::night_record(&arms, nightly.budget.map(|b| b.cap))];
    records.extend(arms);
    records
}

/// Why a night is not ok, one line each: the cooks that failed (with their error), then the
/// cells that were not scored (issue 17: a failed night used to say nothing about why).
fn failures(cooks: &[NightCook], cells: &[CellRecord], nothing_ranked: bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for cook in cooks {
        if let Some(error) = &cook.error {
            let name = cook
                .dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            lines.push(format!("cook `{name}`: {error}"));
        }
    }
    for cell in cells.iter().filter(|c| c.score.is_none()) {
        if cooks.iter().any(|c| {
            c.error.is_some()
                && c.dir
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy() == cell.cook)
        }) {
            continue;
        }
        let how = cell
            .run_status
            .as_deref()
            .map_or_else(|| "never ran".to_owned(), |s| format!("ended `{s}`"));
        lines.push(format!(
            "cook `{}`: `{}` not scored ({how})",
            cell.cook, cell.participant
        ));
    }
    // A cell that did not end ok is judged as it was left (docs/BEHAVIOR.md), so it is scored,
    // but it still makes the night partial: say so (issue 25: such nights said nothing).
    for cell in cells.iter().filter(|c| c.score.is_some()) {
        if let Some(status) = cell.run_status.as_deref().filter(|s| *s != "ok") {
            lines.push(format!(
                "cook `{}`: `{}` ended `{status}` (its output was judged as it was left)",
                cell.cook, cell.participant
            ));
        }
    }
    if nothing_ranked && lines.is_empty() {
        lines.push("no participant was scored in any cook".into());
    }
    lines
}

/// Each cluster node that was lost during the night and how many cells it cost (they are
/// unscored, never 0; running the same night again re-runs them), first among the reasons.
fn lost_nodes(run_results: &[Value]) -> Vec<String> {
    let mut lost: BTreeMap<String, usize> = BTreeMap::new();
    for run in run_results {
        for entry in run["participants"].as_array().into_iter().flatten() {
            if entry["status"] == "node_lost" {
                let node = entry["node"].as_str().unwrap_or("(unknown)");
                *lost.entry(node.to_owned()).or_default() += 1;
            }
        }
    }
    lost.into_iter()
        .map(|(node, cells)| {
            let noun = if cells == 1 { "cell" } else { "cells" };
            format!("node `{node}` was lost: {cells} {noun} not scored")
        })
        .collect()
}

/// One cell per participant of a cook: its run status, its score in that cook (the ranking's
/// score, else the older summaries' mean) and its output size.
fn cook_cells(
    nightly: &Nightly,
    cook: &NightCook,
    summary: &Value,
    run: &Value,
    names: &[&str],
) -> Vec<CellRecord> {
    let brief = brief_name(&nightly.briefs[cook.brief]);
    names
        .iter()
        .map(|name| {
            let entry = summary["ranking"]
                .as_array()
                .and_then(|r| r.iter().find(|e| e["participant"] == *name));
            let score =
                entry.and_then(|e| e["score_pct"].as_f64().or_else(|| e["mean_pct"].as_f64()));
            let run_status = run["participants"]
                .as_array()
                .and_then(|p| p.iter().find(|e| e["name"] == *name))
                .and_then(|e| e["status"].as_str().map(str::to_owned));
            CellRecord {
                cook: cook
                    .dir
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                brief: brief.clone(),
                repeat: cook.repeat,
                participant: (*name).to_owned(),
                run_status,
                score,
                output_bytes: entry.and_then(|e| e["output_bytes"].as_u64()),
            }
        })
        .collect()
}

/// Every counted score of a cook, judge by judge (`per_judge`; same-flavor pairs excluded,
/// rejected ones have no score).
fn cook_scores(
    brief: usize,
    summary: &Value,
    names: &[&str],
    judges: &[&str],
) -> Vec<pool::JudgedScore> {
    let mut scores = Vec::new();
    let Some(per_judge) = summary["per_judge"].as_object() else {
        return scores;
    };
    for (judge, entries) in per_judge {
        let Some(judge) = judges.iter().position(|j| j == judge) else {
            continue;
        };
        for (participant, name) in names.iter().enumerate() {
            let entry = &entries[*name];
            if entry["excluded"] == true {
                continue;
            }
            if let Some(value) = entry["score_pct"].as_f64() {
                let output_bytes = summary["ranking"]
                    .as_array()
                    .and_then(|r| r.iter().find(|e| e["participant"] == *name))
                    .and_then(|e| e["output_bytes"].as_u64());
                scores.push(pool::JudgedScore {
                    brief,
                    judge,
                    participant,
                    value,
                    output_bytes,
                });
            }
        }
    }
    scores
}

/// A pairwise cook's pair outcomes as comparisons clustered by brief.
fn cook_comparisons(brief: usize, summary: &Value, names: &[&str]) -> Vec<Comparison> {
    summary["pairwise"]["pairs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|pair| {
            let index = |key: &str| names.iter().position(|n| pair[key] == *n);
            Some(Comparison {
                cluster: brief,
                a: index("a")?,
                b: index("b")?,
                score_a: match pair["outcome"].as_str() {
                    Some("a") => 1.0,
                    Some("b") => 0.0,
                    _ => 0.5,
                },
            })
        })
        .collect()
}

fn arm_records(
    nightly: &Nightly,
    cooks: &[NightCook],
    runs: &[Value],
    images: &BTreeMap<String, String>,
) -> Vec<ArmRecord> {
    let brief = cooks
        .first()
        .and_then(|c| crate::brief::load(&c.dir.join("brief.yaml")).ok())
        .map(|l| l.brief);
    nightly
        .participants
        .iter()
        .map(|arm| {
            let entries: Vec<&Value> = runs
                .iter()
                .filter_map(|r| r["participants"].as_array()?.iter().find(|e| e["name"] == arm.name.as_str()))
                .collect();
            let mut models: Vec<String> = entries
                .iter()
                .flat_map(|e| e["usage"]["models"].as_array().cloned().unwrap_or_default())
                .filter_map(|m| m.as_str().map(str::to_owned))
                .collect();
            models.sort();
            models.dedup();
            let versions: Vec<String> = runs
                .iter()
                .filter_map(|r| r["cli_versions"][arm.flavor.as_str()].as_str().map(str::to_owned))
                .collect();
            let limits = brief.as_ref().and_then(|b| b.participant(&arm.name)).map_or_else(
                || json!({}),
                |actor| {
                    let b = brief.as_ref().expect("checked above");
                    json!({"timeout_s": b.timeout_for(actor, crate::state::Role::Participant), "mem_limit": actor.resources.mem_limit, "cpus": actor.resources.cpus})
                },
            );
            let egress = brief
                .as_ref()
                .and_then(|b| b.participant(&arm.name).map(|a| b.network_for(a).mode.as_str().to_owned()));
            let web_tools = entries.iter().any(|e| e["egress"]["web_tools"] == true);
            let backend = entries.iter().find_map(|e| e["backend"].as_str().map(str::to_owned));
            let nodes: BTreeSet<String> =
                entries.iter().filter_map(|e| e["node"].as_str().map(str::to_owned)).collect();
            ArmRecord {
                participant: arm.name.clone(),
                flavor: arm.flavor.clone(),
                model: arm.model.clone(),
                models_reported: models,
                cli_version: if versions.windows(2).all(|w| w[0] == w[1]) {
                    versions.first().cloned()
                } else {
                    Some(format!("mixed: {}", versions.join(", ")))
                },
                image: entries
                    .iter()
                    .find_map(|e| e["image"].as_str().map(str::to_owned))
                    .or_else(|| images.get(&arm.flavor).cloned()),
                limits: limits.to_string(),
                egress,
                web_tools,
                backend,
                nodes: nodes.into_iter().collect(),
            }
        })
        .collect()
}

/// Why the night's arms are not comparable (empty: they are).
pub fn not_comparable(arms: &[ArmRecord]) -> Vec<String> {
    let mut reasons = Vec::new();
    for arm in arms {
        if arm
            .cli_version
            .as_deref()
            .is_some_and(|v| v.starts_with("mixed"))
        {
            reasons.push(format!(
                "`{}` ran with different CLI versions within the night ({})",
                arm.participant,
                arm.cli_version.as_deref().unwrap_or("")
            ));
        }
    }
    let mut by_flavor: BTreeMap<&str, Vec<&ArmRecord>> = BTreeMap::new();
    for arm in arms {
        by_flavor.entry(arm.flavor.as_str()).or_default().push(arm);
    }
    for (flavor, group) in by_flavor {
        let versions: Vec<&Option<String>> = group.iter().map(|a| &a.cli_version).collect();
        if versions.windows(2).any(|w| w[0] != w[1]) {
            reasons.push(format!("arms of flavor `{flavor}` ran unequal CLI pins"));
        }
        let images: Vec<&Option<String>> = group.iter().map(|a| &a.image).collect();
        if images.windows(2).any(|w| w[0] != w[1]) {
            reasons.push(format!("arms of flavor `{flavor}` ran different images"));
        }
    }
    let differs = |what: &str, value: &dyn Fn(&ArmRecord) -> String| {
        let values: Vec<String> = arms.iter().map(value).collect();
        values.windows(2).any(|w| w[0] != w[1]).then(|| {
            format!(
                "arms differ in {what}: {}",
                arms.iter()
                    .zip(&values)
                    .map(|(a, v)| format!("{} {v}", a.participant))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    };
    reasons.extend(differs("limits", &|a| a.limits.clone()));
    reasons.extend(differs("egress", &|a| a.egress.clone().unwrap_or_default()));
    reasons.extend(differs("web tools", &|a| a.web_tools.to_string()));
    reasons.extend(differs("backend", &|a| {
        a.backend.clone().unwrap_or_default()
    }));
    reasons
}

#[cfg(test)]
mod tests;
